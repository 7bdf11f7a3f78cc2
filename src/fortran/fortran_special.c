/* SPDX-License-Identifier: MIT */
/* Fortran entry points whose arguments do not follow their C prototype
 * (MPI_INIT without argc/argv, functions, MPI-1 routines with INTEGER
 * addresses, attribute callbacks with Fortran conventions), the common
 * blocks holding the special addresses, and the CHARACTER helpers. Each
 * routine exists only when libmpi implements its C counterpart
 * (FY_F_HAVE_*, generated from the library's symbols). */
#include "fortran.h"

#include <limits.h>
#include <string.h>

#define FY_F_EXPORT __attribute__((visibility("default")))

/* Every Fortran linker name of one routine: gfortran's (defined), g77's,
 * the bare lower-case one and the upper-case one, and the same with PMPI.
 * The PMPI names of these hand-written routines share the MPI code. */
#define FY_F_NAMES(low, up)                                                    \
    FY_F_ALIAS(low##_, low##__)                                                \
    FY_F_ALIAS(low##_, low)                                                    \
    FY_F_ALIAS(low##_, up)                                                     \
    FY_F_ALIAS(low##_, p##low##_)                                              \
    FY_F_ALIAS(low##_, p##low##__)                                             \
    FY_F_ALIAS(low##_, p##low)                                                 \
    FY_F_ALIAS(low##_, P##up)

/* ---- common blocks ------------------------------------------------------ */

/* Aligned as gfortran aligns common blocks (the mpi module object in this
 * library names them too). */
#define FY_F_COMMON FY_F_EXPORT __attribute__((aligned(16)))
FY_F_COMMON struct fy_f_priv1 mpipriv1_;
FY_F_COMMON struct fy_f_priv2 mpipriv2_;
FY_F_COMMON struct fy_f_privc mpiprivc_;
FY_F_COMMON MPI_Fint mpifcmb5_;
FY_F_COMMON MPI_Fint mpifcmb9_;

/* ---- CHARACTER arguments ------------------------------------------------ */

char *fy_f_str_in(const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, s, len);
        c[len] = '\0';
    }
    return c;
}

char *fy_f_str_tmp(size_t len)
{
    /* MPI writes at most its own maximum (MPI_MAX_LIBRARY_VERSION_STRING
     * is the largest), whatever the Fortran length. */
    return calloc(1, len + MPI_MAX_LIBRARY_VERSION_STRING + 1);
}

void fy_f_str_out(char *dst, size_t len, char *c, int rc)
{
    if (rc == MPI_SUCCESS) {
        size_t n = strlen(c);
        if (n > len)
            n = len;
        memcpy(dst, c, n);
        memset(dst + n, ' ', len - n);
    }
    free(c);
}

/* An MPI error raised here, where no C entry point saw the argument: the
 * handler of MPI_COMM_WORLD decides (fatal by default). */
static int fy_f_error(int errclass)
{
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, errclass);
    return errclass;
}

/* An address in a default INTEGER (MPI-1 routines), or MPI_ERR_ARG. */
static int fy_f_aint_to_int(MPI_Aint a, MPI_Fint *out)
{
    if (a < INT_MIN || a > INT_MAX)
        return fy_f_error(MPI_ERR_ARG);
    *out = (MPI_Fint)a;
    return MPI_SUCCESS;
}

/* ---- environment --------------------------------------------------------- */

#ifdef FY_F_HAVE_Init
void mpi_init_(MPI_Fint *ierr);
void mpi_init_(MPI_Fint *ierr)
{
    fy_f_ierr(ierr, MPI_Init(NULL, NULL));
}
FY_F_NAMES(mpi_init, MPI_INIT)
#endif

#ifdef FY_F_HAVE_Init_thread
void mpi_init_thread_(const MPI_Fint *required, MPI_Fint *provided,
                      MPI_Fint *ierr);
void mpi_init_thread_(const MPI_Fint *required, MPI_Fint *provided,
                      MPI_Fint *ierr)
{
    fy_f_ierr(ierr, MPI_Init_thread(NULL, NULL, *required, provided));
}
FY_F_NAMES(mpi_init_thread, MPI_INIT_THREAD)
#endif

#ifdef FY_F_HAVE_Pcontrol
void mpi_pcontrol_(const MPI_Fint *level, MPI_Fint *ierr);
void mpi_pcontrol_(const MPI_Fint *level, MPI_Fint *ierr)
{
    fy_f_ierr(ierr, MPI_Pcontrol(*level));
}
FY_F_NAMES(mpi_pcontrol, MPI_PCONTROL)
#endif

/* MPI_WTIME, MPI_WTICK: Fortran functions without arguments. */
#define FY_F_DOUBLE_FN(Name, low, up)                                          \
    double low##_(void);                                                       \
    double low##_(void)                                                        \
    {                                                                          \
        return MPI_##Name();                                                   \
    }                                                                          \
    FY_F_NAMES(low, up)

#ifdef FY_F_HAVE_Wtime
FY_F_DOUBLE_FN(Wtime, mpi_wtime, MPI_WTIME)
#endif
#ifdef FY_F_HAVE_Wtick
FY_F_DOUBLE_FN(Wtick, mpi_wtick, MPI_WTICK)
#endif

/* MPI_AINT_ADD, MPI_AINT_DIFF: functions of two address-kind integers. */
#define FY_F_AINT_FN(Name, low, up)                                            \
    MPI_Aint low##_(const MPI_Aint *a, const MPI_Aint *b);                     \
    MPI_Aint low##_(const MPI_Aint *a, const MPI_Aint *b)                      \
    {                                                                          \
        return MPI_##Name(*a, *b);                                             \
    }                                                                          \
    FY_F_NAMES(low, up)

#ifdef FY_F_HAVE_Aint_add
FY_F_AINT_FN(Aint_add, mpi_aint_add, MPI_AINT_ADD)
#endif
#ifdef FY_F_HAVE_Aint_diff
FY_F_AINT_FN(Aint_diff, mpi_aint_diff, MPI_AINT_DIFF)
#endif

#ifdef FY_F_HAVE_Buffer_detach
/* Fortran cannot use the returned address: it goes to a scratch word, not
 * into the caller's buffer argument. */
void mpi_buffer_detach_(void *buffer, MPI_Fint *size, MPI_Fint *ierr);
void mpi_buffer_detach_(void *buffer, MPI_Fint *size, MPI_Fint *ierr)
{
    void *addr;
    (void)buffer;
    fy_f_ierr(ierr, MPI_Buffer_detach(&addr, size));
}
FY_F_NAMES(mpi_buffer_detach, MPI_BUFFER_DETACH)
#endif

/* ---- MPI-1 routines with addresses in default INTEGERs ------------------- */

#ifdef FY_F_HAVE_Address
void mpi_address_(void *location, MPI_Fint *address, MPI_Fint *ierr);
void mpi_address_(void *location, MPI_Fint *address, MPI_Fint *ierr)
{
    MPI_Aint a;
    int rc = MPI_Address(fy_f_buf(location), &a);
    if (rc == MPI_SUCCESS)
        rc = fy_f_aint_to_int(a, address);
    fy_f_ierr(ierr, rc);
}
FY_F_NAMES(mpi_address, MPI_ADDRESS)
#endif

#ifdef FY_F_HAVE_Type_hvector
void mpi_type_hvector_(const MPI_Fint *count, const MPI_Fint *blocklength,
                       const MPI_Fint *stride, const MPI_Datatype *oldtype,
                       MPI_Datatype *newtype, MPI_Fint *ierr);
void mpi_type_hvector_(const MPI_Fint *count, const MPI_Fint *blocklength,
                       const MPI_Fint *stride, const MPI_Datatype *oldtype,
                       MPI_Datatype *newtype, MPI_Fint *ierr)
{
    fy_f_ierr(ierr, MPI_Type_hvector(*count, *blocklength, *stride, *oldtype,
                                     newtype));
}
FY_F_NAMES(mpi_type_hvector, MPI_TYPE_HVECTOR)
#endif

/* Widen 'count' INTEGER displacements (NULL when out of memory or when
 * count is negative: the C routine reports the bad count then). */
static MPI_Aint *fy_f_widen(const MPI_Fint *d, MPI_Fint count)
{
    MPI_Aint *a = malloc(sizeof(*a) * (count > 0 ? (size_t)count : 1));
    for (MPI_Fint i = 0; a && i < count; i++)
        a[i] = d[i];
    return a;
}

#ifdef FY_F_HAVE_Type_hindexed
void mpi_type_hindexed_(const MPI_Fint *count, MPI_Fint *blocklengths,
                        const MPI_Fint *displs, const MPI_Datatype *oldtype,
                        MPI_Datatype *newtype, MPI_Fint *ierr);
void mpi_type_hindexed_(const MPI_Fint *count, MPI_Fint *blocklengths,
                        const MPI_Fint *displs, const MPI_Datatype *oldtype,
                        MPI_Datatype *newtype, MPI_Fint *ierr)
{
    MPI_Aint *a = fy_f_widen(displs, *count);
    if (!a) {
        fy_f_ierr(ierr, fy_f_error(MPI_ERR_NO_MEM));
        return;
    }
    fy_f_ierr(ierr,
              MPI_Type_hindexed(*count, blocklengths, a, *oldtype, newtype));
    free(a);
}
FY_F_NAMES(mpi_type_hindexed, MPI_TYPE_HINDEXED)
#endif

#ifdef FY_F_HAVE_Type_struct
void mpi_type_struct_(const MPI_Fint *count, MPI_Fint *blocklengths,
                      const MPI_Fint *displs, MPI_Datatype *types,
                      MPI_Datatype *newtype, MPI_Fint *ierr);
void mpi_type_struct_(const MPI_Fint *count, MPI_Fint *blocklengths,
                      const MPI_Fint *displs, MPI_Datatype *types,
                      MPI_Datatype *newtype, MPI_Fint *ierr)
{
    MPI_Aint *a = fy_f_widen(displs, *count);
    if (!a) {
        fy_f_ierr(ierr, fy_f_error(MPI_ERR_NO_MEM));
        return;
    }
    fy_f_ierr(ierr, MPI_Type_struct(*count, blocklengths, a, types, newtype));
    free(a);
}
FY_F_NAMES(mpi_type_struct, MPI_TYPE_STRUCT)
#endif

/* MPI_TYPE_EXTENT, _LB, _UB: an MPI_Aint result narrowed to INTEGER. */
#define FY_F_TYPE_AINT_QUERY(Name, low, up)                                    \
    void low##_(const MPI_Datatype *type, MPI_Fint *out, MPI_Fint *ierr);      \
    void low##_(const MPI_Datatype *type, MPI_Fint *out, MPI_Fint *ierr)       \
    {                                                                          \
        MPI_Aint a;                                                            \
        int rc = MPI_##Name(*type, &a);                                        \
        if (rc == MPI_SUCCESS)                                                 \
            rc = fy_f_aint_to_int(a, out);                                     \
        fy_f_ierr(ierr, rc);                                                   \
    }                                                                          \
    FY_F_NAMES(low, up)

#ifdef FY_F_HAVE_Type_extent
FY_F_TYPE_AINT_QUERY(Type_extent, mpi_type_extent, MPI_TYPE_EXTENT)
#endif
#ifdef FY_F_HAVE_Type_lb
FY_F_TYPE_AINT_QUERY(Type_lb, mpi_type_lb, MPI_TYPE_LB)
#endif
#ifdef FY_F_HAVE_Type_ub
FY_F_TYPE_AINT_QUERY(Type_ub, mpi_type_ub, MPI_TYPE_UB)
#endif

/* ---- attribute callbacks -------------------------------------------------
 * Fortran copy and delete callbacks take every argument by reference,
 * attribute values as integers and report errors through a last argument;
 * C calls its callbacks by value. A keyval created from Fortran gets C
 * adaptors whose extra_state points to the Fortran functions. */

typedef void(fy_f_copy_fn)(MPI_Fint *oldobj, MPI_Fint *keyval, void *extra,
                           void *val_in, void *val_out, MPI_Fint *flag,
                           MPI_Fint *ierr);
typedef void(fy_f_delete_fn)(MPI_Fint *obj, MPI_Fint *keyval, void *val,
                             void *extra, MPI_Fint *ierr);

/* One keyval's Fortran side. Lives as long as the process: MPI may call the
 * callbacks until the last object carrying the attribute is freed, after
 * MPI_Comm_free_keyval. */
struct fy_f_keyval {
    fy_f_copy_fn *copy;
    fy_f_delete_fn *del;
    MPI_Aint extra_state; /* MPI_ADDRESS_KIND, or INTEGER when mpi1 */
    int mpi1;             /* MPI_KEYVAL_CREATE: INTEGER values */
};

static int fy_f_copy_adaptor(MPI_Comm old, int keyval, void *extra, void *in,
                             void *out, int *flag)
{
    struct fy_f_keyval *k = extra;
    MPI_Fint o = old, kv = keyval, fl = 0, ierr = MPI_SUCCESS;
    if (k->mpi1) {
        MPI_Fint ex = (MPI_Fint)k->extra_state, vin = (MPI_Fint)(MPI_Aint)in;
        MPI_Fint vout = 0;
        k->copy(&o, &kv, &ex, &vin, &vout, &fl, &ierr);
        *(void **)out = (void *)(MPI_Aint)vout;
    } else {
        MPI_Aint vin = (MPI_Aint)in, vout = 0;
        k->copy(&o, &kv, &k->extra_state, &vin, &vout, &fl, &ierr);
        *(void **)out = (void *)vout;
    }
    *flag = fl != 0;
    return ierr;
}

static int fy_f_delete_adaptor(MPI_Comm comm, int keyval, void *val,
                               void *extra)
{
    struct fy_f_keyval *k = extra;
    MPI_Fint c = comm, kv = keyval, ierr = MPI_SUCCESS;
    if (k->mpi1) {
        MPI_Fint ex = (MPI_Fint)k->extra_state, v = (MPI_Fint)(MPI_Aint)val;
        k->del(&c, &kv, &v, &ex, &ierr);
    } else {
        MPI_Aint v = (MPI_Aint)val;
        k->del(&c, &kv, &v, &k->extra_state, &ierr);
    }
    return ierr;
}

/* The predefined Fortran callbacks (MPI_COMM_NULL_COPY_FN, ...). The
 * address-kind and the INTEGER (MPI-1) forms differ only in the value's
 * width, which the dup callback copies. */
void mpi_comm_null_copy_fn_(MPI_Fint *o, MPI_Fint *k, void *e, void *in,
                            void *out, MPI_Fint *flag, MPI_Fint *ierr);
void mpi_comm_null_copy_fn_(MPI_Fint *o, MPI_Fint *k, void *e, void *in,
                            void *out, MPI_Fint *flag, MPI_Fint *ierr)
{
    *flag = 0;
    *ierr = MPI_SUCCESS;
}
void mpi_comm_dup_fn_(MPI_Fint *o, MPI_Fint *k, void *e, void *in, void *out,
                      MPI_Fint *flag, MPI_Fint *ierr);
void mpi_comm_dup_fn_(MPI_Fint *o, MPI_Fint *k, void *e, void *in, void *out,
                      MPI_Fint *flag, MPI_Fint *ierr)
{
    *(MPI_Aint *)out = *(MPI_Aint *)in;
    *flag = 1;
    *ierr = MPI_SUCCESS;
}
void mpi_dup_fn_(MPI_Fint *o, MPI_Fint *k, void *e, void *in, void *out,
                 MPI_Fint *flag, MPI_Fint *ierr);
void mpi_dup_fn_(MPI_Fint *o, MPI_Fint *k, void *e, void *in, void *out,
                 MPI_Fint *flag, MPI_Fint *ierr)
{
    *(MPI_Fint *)out = *(MPI_Fint *)in;
    *flag = 1;
    *ierr = MPI_SUCCESS;
}
void mpi_comm_null_delete_fn_(MPI_Fint *c, MPI_Fint *k, void *v, void *e,
                              MPI_Fint *ierr);
void mpi_comm_null_delete_fn_(MPI_Fint *c, MPI_Fint *k, void *v, void *e,
                              MPI_Fint *ierr)
{
    *ierr = MPI_SUCCESS;
}

/* Linker names of the callbacks; the type and window forms are the same
 * functions (their object handle is an INTEGER too). */
#define FY_F_FN_NAMES(low, up)                                                 \
    FY_F_ALIAS(low##_, low##__)                                                \
    FY_F_ALIAS(low##_, low)                                                    \
    FY_F_ALIAS(low##_, up)
#define FY_F_FN_ALIAS(target, low, up)                                         \
    FY_F_ALIAS(target, low##_)                                                 \
    FY_F_FN_NAMES(low, up)
/* mpi.h defines the C names of these as macros. */
#undef MPI_DUP_FN
#undef MPI_NULL_COPY_FN
#undef MPI_NULL_DELETE_FN
#undef MPI_COMM_DUP_FN
#undef MPI_COMM_NULL_COPY_FN
#undef MPI_COMM_NULL_DELETE_FN
#undef MPI_TYPE_DUP_FN
#undef MPI_TYPE_NULL_COPY_FN
#undef MPI_TYPE_NULL_DELETE_FN
#undef MPI_WIN_DUP_FN
#undef MPI_WIN_NULL_COPY_FN
#undef MPI_WIN_NULL_DELETE_FN
FY_F_FN_NAMES(mpi_comm_null_copy_fn, MPI_COMM_NULL_COPY_FN)
FY_F_FN_NAMES(mpi_comm_dup_fn, MPI_COMM_DUP_FN)
FY_F_FN_NAMES(mpi_dup_fn, MPI_DUP_FN)
FY_F_FN_NAMES(mpi_comm_null_delete_fn, MPI_COMM_NULL_DELETE_FN)
FY_F_FN_ALIAS(mpi_comm_null_copy_fn_, mpi_null_copy_fn, MPI_NULL_COPY_FN)
FY_F_FN_ALIAS(mpi_comm_null_delete_fn_, mpi_null_delete_fn, MPI_NULL_DELETE_FN)
FY_F_FN_ALIAS(mpi_comm_null_copy_fn_, mpi_type_null_copy_fn,
              MPI_TYPE_NULL_COPY_FN)
FY_F_FN_ALIAS(mpi_comm_null_delete_fn_, mpi_type_null_delete_fn,
              MPI_TYPE_NULL_DELETE_FN)
FY_F_FN_ALIAS(mpi_comm_dup_fn_, mpi_type_dup_fn, MPI_TYPE_DUP_FN)
FY_F_FN_ALIAS(mpi_comm_null_copy_fn_, mpi_win_null_copy_fn,
              MPI_WIN_NULL_COPY_FN)
FY_F_FN_ALIAS(mpi_comm_null_delete_fn_, mpi_win_null_delete_fn,
              MPI_WIN_NULL_DELETE_FN)
FY_F_FN_ALIAS(mpi_comm_dup_fn_, mpi_win_dup_fn, MPI_WIN_DUP_FN)

#if defined(FY_F_HAVE_Comm_create_keyval) || defined(FY_F_HAVE_Keyval_create)
/* Create a communicator keyval from Fortran callbacks; the predefined null
 * callbacks become C's null callbacks (no adaptor call per copy). */
static int fy_f_comm_keyval(fy_f_copy_fn *copy, fy_f_delete_fn *del,
                            MPI_Aint extra_state, int mpi1, MPI_Fint *keyval)
{
    struct fy_f_keyval *k = malloc(sizeof(*k));
    if (!k)
        return fy_f_error(MPI_ERR_NO_MEM);
    *k = (struct fy_f_keyval){copy, del, extra_state, mpi1};
    /* (The C null callbacks are null pointers, as in MPICH.) */
    MPI_Comm_copy_attr_function *c_copy = fy_f_copy_adaptor;
    MPI_Comm_delete_attr_function *c_del = fy_f_delete_adaptor;
    if (copy == (fy_f_copy_fn *)mpi_comm_null_copy_fn_)
        c_copy = NULL;
    if (del == (fy_f_delete_fn *)mpi_comm_null_delete_fn_)
        c_del = NULL;
    int rc = MPI_Comm_create_keyval(c_copy, c_del, keyval, k);
    if (rc != MPI_SUCCESS)
        free(k);
    return rc;
}
#endif

/* MPI_COMM_CREATE_KEYVAL (address-kind extra state) and MPI_KEYVAL_CREATE
 * (INTEGER extra state, MPI-1 callbacks). */
#define FY_F_KEYVAL_CREATE(low, up, extra_t, mpi1)                             \
    void low##_(fy_f_copy_fn *copy, fy_f_delete_fn *del, MPI_Fint *keyval,     \
                const extra_t *extra_state, MPI_Fint *ierr);                   \
    void low##_(fy_f_copy_fn *copy, fy_f_delete_fn *del, MPI_Fint *keyval,     \
                const extra_t *extra_state, MPI_Fint *ierr)                    \
    {                                                                          \
        fy_f_ierr(ierr,                                                        \
                  fy_f_comm_keyval(copy, del, *extra_state, mpi1, keyval));    \
    }                                                                          \
    FY_F_NAMES(low, up)

#ifdef FY_F_HAVE_Comm_create_keyval
FY_F_KEYVAL_CREATE(mpi_comm_create_keyval, MPI_COMM_CREATE_KEYVAL, MPI_Aint, 0)
#endif
#ifdef FY_F_HAVE_Keyval_create
FY_F_KEYVAL_CREATE(mpi_keyval_create, MPI_KEYVAL_CREATE, MPI_Fint, 1)
#endif

/* ---- attribute values ------------------------------------------------------
 * Fortran stores an integer as the attribute value itself. The predefined
 * attributes have other keys in Fortran (MPICH's: the C key + 1) and are
 * pointers to ints in C: Fortran reads the int. */

/* The C key of a Fortran key; *predef says whether it is predefined. */
static int fy_f_attr_key(int keyval, int *predef)
{
    switch (keyval) {
    case MPI_TAG_UB + 1:
    case MPI_HOST + 1:
    case MPI_IO + 1:
    case MPI_WTIME_IS_GLOBAL + 1:
    case MPI_UNIVERSE_SIZE + 1:
    case MPI_LASTUSEDCODE + 1:
    case MPI_APPNUM + 1:
        *predef = 1;
        return keyval - 1;
    default:
        *predef = 0;
        return keyval;
    }
}

/* Comm_get_attr or Attr_get (same C arguments) for Fortran: the value as
 * an integer in *val_out when found. */
static int fy_f_comm_get_attr(int (*get)(MPI_Comm, int, void *, int *),
                              MPI_Comm comm, int keyval, MPI_Aint *val_out,
                              MPI_Fint *flag)
{
    void *v = NULL;
    int fl = 0, predef;
    int rc = get(comm, fy_f_attr_key(keyval, &predef), &v, &fl);
    if (rc == MPI_SUCCESS) {
        *flag = fl != 0;
        if (fl)
            *val_out = predef ? *(int *)v : (MPI_Aint)v;
    }
    return rc;
}

#ifdef FY_F_HAVE_Comm_set_attr
void mpi_comm_set_attr_(const MPI_Comm *comm, const MPI_Fint *keyval,
                        const MPI_Aint *val, MPI_Fint *ierr);
void mpi_comm_set_attr_(const MPI_Comm *comm, const MPI_Fint *keyval,
                        const MPI_Aint *val, MPI_Fint *ierr)
{
    fy_f_ierr(ierr, MPI_Comm_set_attr(*comm, *keyval, (void *)*val));
}
FY_F_NAMES(mpi_comm_set_attr, MPI_COMM_SET_ATTR)
#endif

#ifdef FY_F_HAVE_Attr_put
void mpi_attr_put_(const MPI_Comm *comm, const MPI_Fint *keyval,
                   const MPI_Fint *val, MPI_Fint *ierr);
void mpi_attr_put_(const MPI_Comm *comm, const MPI_Fint *keyval,
                   const MPI_Fint *val, MPI_Fint *ierr)
{
    fy_f_ierr(ierr, MPI_Attr_put(*comm, *keyval, (void *)(MPI_Aint)*val));
}
FY_F_NAMES(mpi_attr_put, MPI_ATTR_PUT)
#endif

#ifdef FY_F_HAVE_Comm_get_attr
void mpi_comm_get_attr_(const MPI_Comm *comm, const MPI_Fint *keyval,
                        MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierr);
void mpi_comm_get_attr_(const MPI_Comm *comm, const MPI_Fint *keyval,
                        MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierr)
{
    fy_f_ierr(ierr,
              fy_f_comm_get_attr(MPI_Comm_get_attr, *comm, *keyval, val, flag));
}
FY_F_NAMES(mpi_comm_get_attr, MPI_COMM_GET_ATTR)
#endif

#ifdef FY_F_HAVE_Attr_get
void mpi_attr_get_(const MPI_Comm *comm, const MPI_Fint *keyval, MPI_Fint *val,
                   MPI_Fint *flag, MPI_Fint *ierr);
void mpi_attr_get_(const MPI_Comm *comm, const MPI_Fint *keyval, MPI_Fint *val,
                   MPI_Fint *flag, MPI_Fint *ierr)
{
    MPI_Aint v = 0;
    int rc = fy_f_comm_get_attr(MPI_Attr_get, *comm, *keyval, &v, flag);
    if (rc == MPI_SUCCESS && *flag)
        *val = (MPI_Fint)v;
    fy_f_ierr(ierr, rc);
}
FY_F_NAMES(mpi_attr_get, MPI_ATTR_GET)
#endif
