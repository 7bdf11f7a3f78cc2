/* SPDX-License-Identifier: MIT */
/* Helpers shared by the multi-process tests in tests/mpi: fatal checks that
 * name the rank and line and abort the whole job, and a byte pattern that
 * depends on a per-message seed and the offset, so a misplaced, shifted,
 * reordered or torn message is detected byte for byte. Only standard MPI is
 * used, so every program also builds with Debian's mpicc.mpich. */
#ifndef FY_MPITEST_H
#define FY_MPITEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MT_KIB 1024
#define MT_MIB (1024 * 1024)

static int mt_rank = -1, mt_size = 0;

/* Abort the job: MPI_Abort when MPI is up, plain exit otherwise. The code
 * 1 is what the launcher reports; the reason goes to stderr. */
__attribute__((noreturn)) static inline void mt_die(void)
{
    int up = 0, down = 0;
    fflush(stdout);
    fflush(stderr);
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down)
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* Report a failure as one write, so lines from several ranks do not
 * interleave, then abort the job. 'expr' (may be NULL) is the failed
 * condition's source text. */
__attribute__((noreturn, format(printf, 4, 5))) static inline void
mt_fail_at(const char *file, int line, const char *expr, const char *fmt, ...)
{
    char msg[1024];
    int off =
        snprintf(msg, sizeof msg, "rank %d: FAIL %s:%d: %s%s%s", mt_rank, file,
                 line, expr ? "(" : "", expr ? expr : "", expr ? ") " : "");
    va_list ap;
    va_start(ap, fmt);
    if (off > 0 && (size_t)off < sizeof msg)
        vsnprintf(msg + off, sizeof msg - (size_t)off, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", msg);
    mt_die();
}

#define MT_FAIL(...) mt_fail_at(__FILE__, __LINE__, NULL, __VA_ARGS__)

/* Check a condition; the message (printf-style) says what was expected. */
#define MT_CHECK(cond, ...)                                                    \
    do {                                                                       \
        if (!(cond))                                                           \
            mt_fail_at(__FILE__, __LINE__, #cond, __VA_ARGS__);                \
    } while (0)

/* Compare two integers and print both on a mismatch. */
#define MT_EQ(got, want, what)                                                 \
    do {                                                                       \
        long long mt_g_ = (long long)(got), mt_w_ = (long long)(want);         \
        if (mt_g_ != mt_w_)                                                    \
            MT_FAIL("%s: got %lld, expected %lld", (what), mt_g_, mt_w_);      \
    } while (0)

/* A call that must succeed (the world handler may be MPI_ERRORS_RETURN). */
#define MT_MPI(call)                                                           \
    do {                                                                       \
        int mt_rc_ = (call);                                                   \
        if (mt_rc_ != MPI_SUCCESS) {                                           \
            char mt_s_[MPI_MAX_ERROR_STRING];                                  \
            int mt_l_ = 0;                                                     \
            MPI_Error_string(mt_rc_, mt_s_, &mt_l_);                           \
            MT_FAIL("%s returned %d: %s", #call, mt_rc_, mt_s_);               \
        }                                                                      \
    } while (0)

/* Expect 'rc' to carry error class 'cls'. */
#define MT_ERRCLASS(rc, cls, what)                                             \
    do {                                                                       \
        int mt_c_ = -1, mt_r_ = (rc);                                          \
        if (mt_r_ == MPI_SUCCESS)                                              \
            MT_FAIL("%s: returned MPI_SUCCESS, expected %s", (what), #cls);    \
        MPI_Error_class(mt_r_, &mt_c_);                                        \
        if (mt_c_ != (cls))                                                    \
            MT_FAIL("%s: error class %d, expected %s (%d)", (what), mt_c_,     \
                    #cls, (cls));                                              \
    } while (0)

/* Byte 'off' of the message with seed 'seed'. A multiplicative hash keeps
 * neighbouring bytes and neighbouring seeds distinct, so shifted copies and
 * swapped messages both show up. */
static inline uint8_t mt_byte(uint32_t seed, size_t off)
{
    uint32_t x = (uint32_t)off * 2654435761u + seed * 40503u + 0x9e37u;
    return (uint8_t)(x >> 24 ^ x >> 11 ^ (uint32_t)(off >> 16));
}

static inline void mt_fill(void *buf, size_t n, uint32_t seed)
{
    uint8_t *b = buf;
    for (size_t i = 0; i < n; i++)
        b[i] = mt_byte(seed, i);
}

/* Returns the first bad offset, or n when the whole buffer matches. */
static inline size_t mt_find_bad(const void *buf, size_t n, uint32_t seed)
{
    const uint8_t *b = buf;
    for (size_t i = 0; i < n; i++)
        if (b[i] != mt_byte(seed, i))
            return i;
    return n;
}

#define MT_VERIFY(buf, n, seed, what)                                          \
    do {                                                                       \
        size_t mt_n_ = (n), mt_o_ = mt_find_bad((buf), mt_n_, (seed));         \
        if (mt_o_ != mt_n_)                                                    \
            MT_FAIL("%s: %zu bytes seed %u: first bad byte at offset %zu "     \
                    "(got 0x%02x, expected 0x%02x)",                           \
                    (what), mt_n_, (unsigned)(seed), mt_o_,                    \
                    ((const uint8_t *)(buf))[mt_o_], mt_byte((seed), mt_o_));  \
    } while (0)

/* Every byte of buf[0..n) must equal 'v' (guard zones, untouched buffers). */
#define MT_ALL(buf, n, v, what)                                                \
    do {                                                                       \
        const uint8_t *mt_b_ = (const void *)(buf);                            \
        for (size_t mt_i_ = 0; mt_i_ < (size_t)(n); mt_i_++)                   \
            if (mt_b_[mt_i_] != (uint8_t)(v))                                  \
                MT_FAIL("%s: byte %zu is 0x%02x, expected 0x%02x", (what),     \
                        mt_i_, mt_b_[mt_i_], (unsigned)(uint8_t)(v));          \
    } while (0)

/* A 64-bit pseudo-random number from the state *x (splitmix64), for the
 * randomised tests: seeded, so a failing run can be repeated. */
static inline uint64_t mt_splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void *mt_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        MT_FAIL("malloc(%zu) failed", n);
    return p;
}

/* True when running on MPICH itself (validating the tests), so a check
 * can tolerate a documented MPICH deviation from the standard. */
static inline int mt_on_mpich(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    return strncmp(v, "MPICH Version:", 14) == 0;
}

/* This rank's MPI_T counter 'name' (0 if this MPI has no such pvar);
 * MPI_T_init_thread must have been called. */
static inline unsigned long long mt_pvar(const char *name)
{
    int i = -1, count = 0;
    unsigned long long v = 0;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    if (MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &i) ==
            MPI_SUCCESS &&
        MPI_T_pvar_session_create(&s) == MPI_SUCCESS) {
        if (MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count) == MPI_SUCCESS) {
            MT_MPI(MPI_T_pvar_read(s, h, &v));
            MT_MPI(MPI_T_pvar_handle_free(s, &h));
        }
        MT_MPI(MPI_T_pvar_session_free(&s));
    }
    return v;
}

/* How many ranks of MPI_COMM_WORLD share this rank's node. */
static inline int mt_node_size(void)
{
    MPI_Comm node;
    int n = 0;
    MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &node));
    MT_MPI(MPI_Comm_size(node, &n));
    MT_MPI(MPI_Comm_free(&node));
    return n;
}

/* Whether world rank r shares this process's node (collective over
 * MPI_COMM_WORLD). */
static inline int mt_same_node(int r)
{
    MPI_Comm node;
    MPI_Group wg, ng;
    int tr = MPI_UNDEFINED;
    MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &node));
    MT_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MT_MPI(MPI_Comm_group(node, &ng));
    MT_MPI(MPI_Group_translate_ranks(wg, 1, &r, ng, &tr));
    MT_MPI(MPI_Group_free(&wg));
    MT_MPI(MPI_Group_free(&ng));
    MT_MPI(MPI_Comm_free(&node));
    return tr != MPI_UNDEFINED;
}

/* MPI_Init plus rank/size. */
static inline void mt_init(int *argc, char ***argv)
{
    MT_MPI(MPI_Init(argc, argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
}

/* The one success line, from rank 0 once every rank has passed. */
static inline int mt_finish(const char *name)
{
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        printf("%s: OK (%d ranks)\n", name, mt_size);
        fflush(stdout);
    }
    MT_MPI(MPI_Finalize());
    return 0;
}

#endif /* FY_MPITEST_H */
