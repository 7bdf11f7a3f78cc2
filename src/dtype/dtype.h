/* SPDX-License-Identifier: MIT */
/* Datatypes and reduction operations. A datatype is flattened at creation
 * into its type map: a list of runs of one basic type at a displacement, in
 * the order MPI packs them. Copies walk that list; contiguous types take a
 * single memcpy. */
#ifndef FY_DTYPE_H
#define FY_DTYPE_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Basic (predefined, non-derived) types, the leaves of every type map. */
enum fy_basic {
    FY_B_CHAR,
    FY_B_SIGNED_CHAR,
    FY_B_UNSIGNED_CHAR,
    FY_B_BYTE,
    FY_B_WCHAR,
    FY_B_SHORT,
    FY_B_UNSIGNED_SHORT,
    FY_B_INT,
    FY_B_UNSIGNED,
    FY_B_LONG,
    FY_B_UNSIGNED_LONG,
    FY_B_LONG_LONG,
    FY_B_UNSIGNED_LONG_LONG,
    FY_B_FLOAT,
    FY_B_DOUBLE,
    FY_B_LONG_DOUBLE,
    FY_B_C_BOOL,
    FY_B_INT8,
    FY_B_INT16,
    FY_B_INT32,
    FY_B_INT64,
    FY_B_UINT8,
    FY_B_UINT16,
    FY_B_UINT32,
    FY_B_UINT64,
    FY_B_AINT,
    FY_B_OFFSET,
    FY_B_COUNT,
    FY_B_PACKED,
    FY_B_C_FLOAT_COMPLEX,
    FY_B_C_DOUBLE_COMPLEX,
    FY_B_C_LONG_DOUBLE_COMPLEX,
    FY_B_COUNT_OF /* number of basic types */
};

/* Value-index pair types for MPI_MINLOC/MPI_MAXLOC (struct fy_dtype.pair).
 * A derived type built only from one pair type inherits its kind, so a
 * contiguous or vector of MPI_DOUBLE_INT reduces pairwise too. */
enum fy_pair_kind {
    FY_PAIR_NONE,
    FY_PAIR_FLOAT_INT,
    FY_PAIR_DOUBLE_INT,
    FY_PAIR_LONG_INT,
    FY_PAIR_SHORT_INT,
    FY_PAIR_2INT, /* also MPI_2INTEGER */
    FY_PAIR_LONG_DOUBLE_INT,
    FY_PAIR_2FLOAT,  /* MPI_2REAL: the index is a float too */
    FY_PAIR_2DOUBLE, /* MPI_2DOUBLE_PRECISION */
};

/* One run of 'count' consecutive elements of basic type 'basic' starting
 * 'disp' bytes from the buffer address. */
struct fy_dtype_seg {
    MPI_Aint disp;
    MPI_Count count;
    uint32_t basic; /* enum fy_basic */
};

struct fy_attr;
struct fy_dtype_contents;

struct fy_dtype {
    MPI_Datatype handle;
    int refcount; /* handles + in-flight operations using it */
    bool builtin; /* predefined: never freed */
    bool committed;
    bool contig;    /* one run at disp 0 with size == extent: memcpy */
    MPI_Count size; /* bytes of data in one element */
    MPI_Aint lb, ub, extent;
    MPI_Aint true_lb, true_ub;
    MPI_Count nbasic; /* basic elements in one element */
    uint32_t nsegs;
    struct fy_dtype_seg *segs; /* the flattened type map of one element */
    /* Pair types (MPI_FLOAT_INT, ...) are flagged for MINLOC/MAXLOC. */
    int pair;     /* 0, or an enum fy_pair_kind value */
    int combiner; /* MPI_COMBINER_* */
    /* The type map is 'segs' repeated 'rep' times, the r-th copy shifted
     * by r * rep_stride bytes. Keeps MPI_Type_vector(10M, ...) at one
     * block's worth of segments. rep is 1 when there is no repetition. */
    MPI_Count rep;
    MPI_Aint rep_stride;
    int align;            /* alignment for MPI's struct extent padding */
    bool explicit_bounds; /* lb/ub set by resized or MPI_LB/MPI_UB */
    bool marker;          /* MPI_LB or MPI_UB themselves (no data) */
    bool freed;           /* MPI_Type_free'd: handle no longer resolves */
    char name[MPI_MAX_OBJECT_NAME]; /* MPI_Type_set_name, "" if unset */
    struct fy_attr *attrs;          /* cached attributes (src/comm/attr.c) */
    /* Handles the user holds on this object: 1 from the constructor, one
     * more per MPI_Type_get_contents that returned it. */
    int user_refs;
    struct fy_dtype_contents *contents; /* constructor arguments, or NULL */
};

/* The datatype behind a handle, or NULL for an invalid handle. */
struct fy_dtype *fy_dtype_get(MPI_Datatype h);

/* Set up predefined datatypes and ops; called once from MPI_Init. */
int fy_dtype_init(void);
void fy_dtype_finalize(void);

/* The predefined type of dt's elements when its type map holds one basic
 * type only (and it is not a MINLOC/MAXLOC pair type), else NULL. */
struct fy_dtype *fy_dtype_single_basic(const struct fy_dtype *dt);

/* Size in bytes of one basic type. */
size_t fy_basic_size(enum fy_basic b);

/* Pack 'count' elements of 'dt' from 'inbuf' into contiguous 'out'
 * (count * dt->size bytes). */
void fy_dtype_pack(const void *inbuf, MPI_Count count,
                   const struct fy_dtype *dt, void *out);
/* Unpack at most 'bytes' bytes of packed data from 'in' into 'count'
 * elements of 'dt' at 'outbuf'. Never writes outside those elements; a
 * partial last element is unpacked as far as its bytes go. */
void fy_dtype_unpack(const void *in, MPI_Count bytes, void *outbuf,
                     MPI_Count count, const struct fy_dtype *dt);
/* Number of basic elements covered by 'bytes' bytes of packed data of dt
 * (MPI_Get_elements), or MPI_UNDEFINED-style -1 if 'bytes' ends inside a
 * basic element. */
MPI_Count fy_dtype_elements(const struct fy_dtype *dt, MPI_Count bytes);
/* The inverse: packed bytes taken by the first 'n' basic elements of a
 * message of dt (MPI_Status_set_elements). */
MPI_Count fy_dtype_element_bytes(const struct fy_dtype *dt, MPI_Count n);

/* Constructors: output parameter last; return 0 or -ENOMEM/-EINVAL. */
int fy_dtype_contiguous(MPI_Count count, struct fy_dtype *old,
                        struct fy_dtype **out);
int fy_dtype_vector(MPI_Count count, MPI_Count blocklen, MPI_Aint stride_bytes,
                    struct fy_dtype *old, int combiner, struct fy_dtype **out);
int fy_dtype_indexed(MPI_Count count, const MPI_Count *blocklens,
                     const MPI_Aint *disps_bytes, struct fy_dtype *old,
                     int combiner, struct fy_dtype **out);
int fy_dtype_struct(MPI_Count count, const MPI_Count *blocklens,
                    const MPI_Aint *disps, struct fy_dtype *const *types,
                    struct fy_dtype **out);
int fy_dtype_resized(struct fy_dtype *old, MPI_Aint lb, MPI_Aint extent,
                     struct fy_dtype **out);
int fy_dtype_dup(struct fy_dtype *old, struct fy_dtype **out);
/* Give the new type a handle (MPI layer calls this). */
int fy_dtype_register(struct fy_dtype *dt);
void fy_dtype_release(struct fy_dtype *dt); /* drop one reference */
/* Take a reference (a pending operation that uses dt). */
void fy_dtype_retain(struct fy_dtype *dt);
/* MPI_Type_free: the handle stops resolving at once; the type itself lives
 * until the last pending operation releases it. */
void fy_dtype_free_handle(struct fy_dtype *dt);

/* Copy packed bytes [offset, offset + len) of 'count' elements of dt at
 * 'buf' to/from contiguous 'packed' (for protocols that move a message in
 * pieces). The range must lie inside count * dt->size. */
void fy_dtype_pack_range(const void *buf, MPI_Count count,
                         const struct fy_dtype *dt, MPI_Count offset,
                         MPI_Count len, void *packed);
void fy_dtype_unpack_range(const void *packed, MPI_Count offset, MPI_Count len,
                           void *buf, MPI_Count count,
                           const struct fy_dtype *dt);

/* Describe packed bytes [offset, ...) of 'count' elements of dt at 'buf'
 * as at most 'max' (address, length) pieces, in packed order, adjacent
 * pieces merged (for scatter/gather single-copy transfers). Returns the
 * number of pieces filled; *bytes_out gets the packed bytes they cover. */
struct iovec;
int fy_dtype_iov(const void *buf, MPI_Count count, const struct fy_dtype *dt,
                 MPI_Count offset, struct iovec *iov, int max,
                 MPI_Count *bytes_out);

/* The predefined type (basic or value-index pair) every element of dt is
 * built from, for one-sided accumulates that ship packed data and apply
 * the op elsewhere; NULL when dt mixes basic types. Predefined types are
 * never freed. */
struct fy_dtype *fy_dtype_elem_type(const struct fy_dtype *dt);

/* ---- reduction operations -------------------------------------------- */

struct fy_op {
    MPI_Op handle;
    bool builtin;
    bool commute;
    MPI_User_function *user_fn; /* NULL for predefined ops */
    int refcount;
    MPI_User_function_c *user_fn_c; /* MPI_Op_create_c; else NULL */
    bool freed;                     /* MPI_Op_free'd */
};

struct fy_op *fy_op_get(MPI_Op h);
/* inout[i] = in[i] op inout[i] for 'count' elements of dt. Returns 0, or
 * -EINVAL when the op is not defined on that datatype (the MPI layer maps
 * it to MPI_ERR_OP). */
int fy_op_apply(struct fy_op *op, const void *in, void *inout, MPI_Count count,
                struct fy_dtype *dt);
/* inout[i] = in[i] op inout[i] for n consecutive elements of one basic
 * type (MPI_REPLACE copies, MPI_NO_OP does nothing; not for MINLOC/MAXLOC,
 * whose elements are pairs, nor user ops). For callers that walk a type map
 * themselves, e.g. one-sided per-element atomics. The caller has checked
 * the op against the type (fy_op_valid_for_accumulate). */
void fy_op_apply_basic(const struct fy_op *op, uint32_t basic, const void *in,
                       void *inout, MPI_Count n);
/* Whether op is defined for dt (checked before any communication). */
bool fy_op_valid_for(const struct fy_op *op, const struct fy_dtype *dt);
/* Whether predefined element type b (FY_B_*) is one of C's or MPI's
 * integer types (MPI's "C integer" class, MPI_AINT/OFFSET/COUNT too). */
bool fy_basic_is_int(uint32_t b);
/* Create a user op and give it a handle. Returns 0 or -ENOMEM. */
int fy_op_create(MPI_User_function *fn, bool commute, struct fy_op **out);
int fy_op_create_c(MPI_User_function_c *fn, bool commute, struct fy_op **out);
void fy_op_release(struct fy_op *op);
void fy_op_retain(struct fy_op *op);
/* MPI_Op_free: the handle stops resolving; pending operations keep it. */
void fy_op_free_handle(struct fy_op *op);
/* Like fy_op_valid_for, for one-sided accumulates: predefined ops only,
 * MPI_REPLACE and MPI_NO_OP allowed too. */
bool fy_op_valid_for_accumulate(const struct fy_op *op,
                                const struct fy_dtype *dt);

/* ---- decoding and array constructors (contents.c) ---------------------- */

/* The arguments a derived type was built from, as MPI_Type_get_contents
 * returns them. 'types' hold references. */
struct fy_dtype_contents {
    int combiner;
    int ni, na, nc, nt;
    int *ints;
    MPI_Aint *aints;
    MPI_Count *counts;
    struct fy_dtype **types;
};

/* Record dt's constructor arguments (copied; the types are retained) and
 * set dt->combiner. Returns 0 or -ENOMEM (dt unchanged). */
int fy_dtype_set_contents(struct fy_dtype *dt, int combiner, int ni,
                          const int *ints, int na, const MPI_Aint *aints,
                          int nc, const MPI_Count *counts, int nt,
                          struct fy_dtype *const *types);
void fy_dtype_contents_free(struct fy_dtype *dt);
/* Give the user one more handle reference to dt (MPI_Type_get_contents):
 * a type the user had freed is revived under its old handle. */
MPI_Datatype fy_dtype_hand_out(struct fy_dtype *dt);

/* The runs of one dimension of an array type: n runs, run i covering
 * len[i] elements from index start[i]. */
struct fy_dtype_runs {
    int n;
    const MPI_Count *start;
    const MPI_Count *len;
};
/* An ndims-dimensional array of old with global sizes gsizes, selecting
 * runs[d] along each dimension d; extent the whole global array. C order
 * has the last dimension fastest. Returns 0, -EINVAL, -EOVERFLOW or
 * -ENOMEM. */
int fy_dtype_grid(int ndims, const MPI_Count *gsizes,
                  const struct fy_dtype_runs *runs, bool fortran_order,
                  struct fy_dtype *old, int combiner, struct fy_dtype **out);

/* ---- external32 (external.c) ------------------------------------------- */

/* Bytes that 'count' elements of dt take in external32, or -EINVAL if dt
 * holds a type external32 does not define. */
MPI_Count fy_dtype_external_size(const struct fy_dtype *dt, MPI_Count count);
/* Pack 'count' elements of dt at 'inbuf' into external32 at 'out' (which
 * holds fy_dtype_external_size bytes), or unpack the reverse. Return 0,
 * -ERANGE when a value does not fit its external32 size (MPI_LONG is 4
 * bytes there), -EINVAL for a type external32 lacks, -ENOMEM. */
int fy_dtype_pack_external(const void *inbuf, MPI_Count count,
                           const struct fy_dtype *dt, void *out);
int fy_dtype_unpack_external(const void *in, MPI_Count count,
                             const struct fy_dtype *dt, void *outbuf);

#endif /* FY_DTYPE_H */
