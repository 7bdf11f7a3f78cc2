/* SPDX-License-Identifier: MIT */
/* The tool information interface: initialised before MPI_Init and after
 * MPI_Finalize, FERRY_* settings as control variables (tests/CMakeLists.txt
 * sets FERRY_EAGER_MAX=2048), protocol counters as performance variables
 * that count known traffic (every rank sends itself one message; with two
 * ranks or more rank 0 sends rank 1 ten 8-byte messages, the mailbox, and
 * one of 64 KiB, above the eager limit), session-private resets, the
 * error codes and the reference-counted MPI_T_finalize. */
#include "mpitest.h"

/* An MPI_T call must return 'want' (MPI_T calls call no error handler). */
#define T_RC(call, want)                                                       \
    do {                                                                       \
        int t_rc_ = (call);                                                    \
        if (t_rc_ != (want))                                                   \
            MT_FAIL("%s returned %d, expected %s (%d)", #call, t_rc_, #want,   \
                    (want));                                                   \
    } while (0)
#define T_OK(call) T_RC(call, MPI_SUCCESS)

#define SMALL 8
#define NSMALL 10
#define BIG (64 * 1024)

static int pvar_index(const char *name)
{
    int i = -1;
    T_OK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &i));
    return i;
}

static unsigned long long pvar_read(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ull;
    T_OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Control variables: FERRY_EAGER_MAX (an integer), FERRY_STATS (a
 * boolean), FERRY_COLL (a string), the string rules, the error codes. */
static void check_cvars(void)
{
    int n = 0, idx = -1, count = -1;
    T_OK(MPI_T_cvar_get_num(&n));
    MT_CHECK(n >= 20, "%d control variables, want every FERRY_* one", n);
    char name[64], desc[256];
    int name_len, desc_len, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum en;
    int seen_eager = 0;
    for (int i = 0; i < n; i++) {
        name_len = sizeof(name);
        desc_len = sizeof(desc);
        T_OK(MPI_T_cvar_get_info(i, name, &name_len, &verb, &dt, &en, desc,
                                 &desc_len, &bind, &scope));
        MT_CHECK(starts_with(name, "FERRY_"), "cvar %d is '%s'", i, name);
        MT_EQ(name_len, strlen(name) + 1, "name_len counts the NUL");
        MT_CHECK(desc_len > 1, "cvar %s has a description", name);
        MT_EQ(bind, MPI_T_BIND_NO_OBJECT, "cvar bind");
        int writable = !strcmp(name, "FERRY_PROTO") ||
                       !strcmp(name, "FERRY_BTP") ||
                       !strcmp(name, "FERRY_RECV_WRITE") ||
                       !strcmp(name, "FERRY_RECV_WRITE_MIN") ||
                       !strcmp(name, "FERRY_NET_PUSH_MAX");
        MT_CHECK(scope == (writable ? MPI_T_SCOPE_LOCAL : MPI_T_SCOPE_READONLY),
                 "cvar %s scope %d", name, scope);
        MT_CHECK(en == MPI_T_ENUM_NULL, "cvar %s: no enumeration", name);
        MT_CHECK(dt == MPI_LONG_LONG || dt == MPI_INT || dt == MPI_CHAR,
                 "cvar %s datatype", name);
        int j = -1;
        T_OK(MPI_T_cvar_get_index(name, &j));
        MT_EQ(j, i, "MPI_T_cvar_get_index of its own name");
        seen_eager += !strcmp(name, "FERRY_EAGER_MAX");
    }
    MT_EQ(seen_eager, 1, "FERRY_EAGER_MAX listed once");

    /* The integer: the value in force, here from the environment. */
    T_OK(MPI_T_cvar_get_index("FERRY_EAGER_MAX", &idx));
    T_OK(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, &dt, NULL, NULL, NULL, NULL,
                             NULL));
    MT_CHECK(dt == MPI_LONG_LONG, "FERRY_EAGER_MAX is an MPI_LONG_LONG");
    MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
    T_OK(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
    MT_EQ(count, 1, "FERRY_EAGER_MAX count");
    long long eager = -1;
    T_OK(MPI_T_cvar_read(h, &eager));
    const char *env = getenv("FERRY_EAGER_MAX");
    if (env)
        MT_EQ(eager, atoll(env), "FERRY_EAGER_MAX from the environment");
    else
        MT_CHECK(eager > 0, "FERRY_EAGER_MAX is %lld", eager);
    /* Settings are read at MPI_Init: most never written through MPI_T. */
    long long two = 2;
    T_RC(MPI_T_cvar_write(h, &two), MPI_T_ERR_CVAR_SET_NEVER);
    T_OK(MPI_T_cvar_handle_free(&h));
    MT_CHECK(h == MPI_T_CVAR_HANDLE_NULL, "freed handle set to NULL");
    T_RC(MPI_T_cvar_read(h, &eager), MPI_T_ERR_INVALID_HANDLE);
    T_RC(MPI_T_cvar_handle_free(&h), MPI_T_ERR_INVALID_HANDLE);

    /* The boolean. */
    T_OK(MPI_T_cvar_get_index("FERRY_STATS", &idx));
    T_OK(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, &dt, NULL, NULL, NULL, NULL,
                             NULL));
    MT_CHECK(dt == MPI_INT, "FERRY_STATS is an MPI_INT");
    T_OK(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
    int stats = -1;
    T_OK(MPI_T_cvar_read(h, &stats));
    env = getenv("FERRY_STATS");
    MT_EQ(stats, env && !strcmp(env, "1"), "FERRY_STATS");
    T_OK(MPI_T_cvar_handle_free(&h));

    /* The string: count is its length with the NUL. */
    T_OK(MPI_T_cvar_get_index("FERRY_COLL", &idx));
    T_OK(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, &dt, NULL, NULL, NULL, NULL,
                             NULL));
    MT_CHECK(dt == MPI_CHAR, "FERRY_COLL is MPI_CHAR");
    T_OK(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
    env = getenv("FERRY_COLL");
    const char *want = env && *env ? env : "auto";
    MT_EQ(count, strlen(want) + 1, "FERRY_COLL count");
    char *sv = mt_malloc((size_t)count);
    T_OK(MPI_T_cvar_read(h, sv));
    MT_CHECK(!strcmp(sv, want), "FERRY_COLL is '%s', want '%s'", sv, want);
    free(sv);
    T_OK(MPI_T_cvar_handle_free(&h));

    /* Strings out: the needed length alone, then a cut copy. */
    T_OK(MPI_T_cvar_get_index("FERRY_EAGER_MAX", &idx));
    name_len = 0;
    T_OK(MPI_T_cvar_get_info(idx, NULL, &name_len, NULL, NULL, NULL, NULL, NULL,
                             NULL, NULL));
    MT_EQ(name_len, strlen("FERRY_EAGER_MAX") + 1, "length asked with NULL");
    memset(name, 'x', sizeof(name));
    name_len = 4;
    T_OK(MPI_T_cvar_get_info(idx, name, &name_len, NULL, NULL, NULL, NULL, NULL,
                             NULL, NULL));
    MT_CHECK(!strcmp(name, "FER") && name_len == 4,
             "cut to 4: '%s', name_len %d", name, name_len);

    /* Errors. */
    T_RC(MPI_T_cvar_get_info(n, name, &name_len, NULL, NULL, NULL, NULL, NULL,
                             NULL, NULL),
         MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                             NULL),
         MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_cvar_handle_alloc(n, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_cvar_get_index("FERRY_NO_SUCH_SETTING", &idx),
         MPI_T_ERR_INVALID_NAME);
}

/* Every performance variable is a continuous, resettable, unsigned 64-bit
 * counter named ferry_*. Returns how many there are. */
static int check_pvar_infos(void)
{
    int n = 0;
    T_OK(MPI_T_pvar_get_num(&n));
    MT_CHECK(n >= 4, "%d performance variables", n);
    for (int i = 0; i < n; i++) {
        char name[64], desc[256];
        int name_len = sizeof(name), desc_len = sizeof(desc);
        int verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;
        T_OK(MPI_T_pvar_get_info(i, name, &name_len, &verb, &cls, &dt, &en,
                                 desc, &desc_len, &bind, &ro, &cont, &atomic));
        MT_CHECK(starts_with(name, "ferry_"), "pvar %d is '%s'", i, name);
        MT_EQ(cls, MPI_T_PVAR_CLASS_COUNTER, "pvar class");
        MT_CHECK(dt == MPI_UNSIGNED_LONG_LONG, "pvar %s datatype", name);
        MT_EQ(bind, MPI_T_BIND_NO_OBJECT, "pvar bind");
        MT_EQ(ro, 0, "pvar readonly (a handle can be reset)");
        MT_EQ(cont, 1, "pvar continuous");
        MT_EQ(atomic, 0, "pvar atomic");
        MT_CHECK(desc_len > 1, "pvar %s has a description", name);
        MT_EQ(pvar_index(name), i, "MPI_T_pvar_get_index of its own name");
    }
    int idx;
    T_RC(MPI_T_pvar_get_index("ferry_eager_mailbox_msgs",
                              MPI_T_PVAR_CLASS_TIMER, &idx),
         MPI_T_ERR_INVALID_NAME);
    T_RC(MPI_T_pvar_get_index("ferry_no_such_counter", MPI_T_PVAR_CLASS_COUNTER,
                              &idx),
         MPI_T_ERR_INVALID_NAME);
    T_RC(MPI_T_pvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                             NULL, NULL, NULL, NULL),
         MPI_T_ERR_INVALID_INDEX);
    return n;
}

/* The protocol choices a running program may write (scope LOCAL): not
 * before MPI_Init or after MPI_Finalize ('live' 0), read back as written,
 * bad values refused with nothing changed; FERRY_PROTO=pushall written on
 * rank 0 makes its next 64 KiB send to rank 1 a pushed one (rank 1 counts
 * it in ferry_pushed_msgs), and writing back the old value restores it. */
static void check_cvar_write(int live)
{
    int idx, count;
    MPI_T_cvar_handle hp, hb, hw;
    T_OK(MPI_T_cvar_get_index("FERRY_PROTO", &idx));
    T_OK(MPI_T_cvar_handle_alloc(idx, NULL, &hp, &count));
    MT_CHECK(count >= 9, "FERRY_PROTO count %d holds \"pushzero\"", count);
    T_OK(MPI_T_cvar_get_index("FERRY_BTP", &idx));
    T_OK(MPI_T_cvar_handle_alloc(idx, NULL, &hb, &count));
    T_OK(MPI_T_cvar_get_index("FERRY_RECV_WRITE", &idx));
    T_OK(MPI_T_cvar_handle_alloc(idx, NULL, &hw, &count));
    char old[32], now[32];
    T_OK(MPI_T_cvar_read(hp, old));
    long long btp0, btp;
    T_OK(MPI_T_cvar_read(hb, &btp0));
    if (!live) {
        T_RC(MPI_T_cvar_write(hp, "pushall"), MPI_T_ERR_CVAR_SET_NOT_NOW);
        T_OK(MPI_T_cvar_read(hp, now));
        MT_CHECK(!strcmp(now, old), "FERRY_PROTO unchanged: '%s'", now);
    } else {
        long long v = 4096;
        T_OK(MPI_T_cvar_write(hb, &v));
        T_OK(MPI_T_cvar_read(hb, &btp));
        MT_EQ(btp, 4096, "FERRY_BTP as written");
        v = -1;
        T_RC(MPI_T_cvar_write(hb, &v), MPI_T_ERR_INVALID);
        v = 1LL << 40;
        T_RC(MPI_T_cvar_write(hb, &v), MPI_T_ERR_INVALID);
        T_OK(MPI_T_cvar_read(hb, &btp));
        MT_EQ(btp, 4096, "FERRY_BTP kept after bad writes");
        T_OK(MPI_T_cvar_write(hb, &btp0));
        int inp;
        MPI_T_cvar_handle hn;
        long long npm0, npm, big = 4 << 20, neg = -1;
        T_OK(MPI_T_cvar_get_index("FERRY_NET_PUSH_MAX", &inp));
        T_OK(MPI_T_cvar_handle_alloc(inp, NULL, &hn, &count));
        T_OK(MPI_T_cvar_read(hn, &npm0));
        MT_EQ(npm0, 1 << 20, "FERRY_NET_PUSH_MAX defaults to 1 MiB");
        T_OK(MPI_T_cvar_write(hn, &big));
        T_RC(MPI_T_cvar_write(hn, &neg), MPI_T_ERR_INVALID);
        T_OK(MPI_T_cvar_read(hn, &npm));
        MT_EQ(npm, big, "FERRY_NET_PUSH_MAX as written, kept after a bad one");
        T_OK(MPI_T_cvar_write(hn, &npm0));
        T_OK(MPI_T_cvar_handle_free(&hn));
        int two = 2;
        T_RC(MPI_T_cvar_write(hw, &two), MPI_T_ERR_INVALID);
        T_RC(MPI_T_cvar_write(hp, "fastest"), MPI_T_ERR_INVALID);
        T_RC(MPI_T_cvar_write(hp, NULL), MPI_T_ERR_INVALID);
        T_OK(MPI_T_cvar_read(hp, now));
        MT_CHECK(!strcmp(now, old), "FERRY_PROTO kept: '%s'", now);
        if (mt_size >= 2 && mt_rank <= 1) {
            MPI_T_pvar_session ses;
            MPI_T_pvar_handle hpush;
            T_OK(MPI_T_pvar_session_create(&ses));
            T_OK(MPI_T_pvar_handle_alloc(ses, pvar_index("ferry_pushed_msgs"),
                                         NULL, &hpush, &count));
            unsigned long long p0 = pvar_read(ses, hpush);
            unsigned char *m = mt_malloc(BIG);
            if (mt_rank == 0) {
                T_OK(MPI_T_cvar_write(hp, "pushall"));
                T_OK(MPI_T_cvar_read(hp, now));
                MT_CHECK(!strcmp(now, "pushall"), "FERRY_PROTO is '%s'", now);
                mt_fill(m, BIG, 5);
                MT_MPI(MPI_Send(m, BIG, MPI_BYTE, 1, 5, MPI_COMM_WORLD));
                T_OK(MPI_T_cvar_write(hp, old));
            } else {
                /* Offered, a blocking receive of 64 KiB would take the
                 * write protocol, which wins under any FERRY_PROTO: off
                 * for this receive (a control variable written too). */
                int rw0 = 0, off = 0;
                T_OK(MPI_T_cvar_read(hw, &rw0));
                T_OK(MPI_T_cvar_write(hw, &off));
                MT_MPI(MPI_Recv(m, BIG, MPI_BYTE, 0, 5, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
                T_OK(MPI_T_cvar_write(hw, &rw0));
                MT_VERIFY(m, BIG, 5, "64 KiB message pushed");
                MT_EQ(pvar_read(ses, hpush) - p0, 1,
                      "the 64 KiB message was pushed (FERRY_PROTO written)");
            }
            free(m);
            T_OK(MPI_T_pvar_handle_free(ses, &hpush));
            T_OK(MPI_T_pvar_session_free(&ses));
        }
        T_OK(MPI_T_cvar_read(hp, now));
        MT_CHECK(!strcmp(now, old), "FERRY_PROTO back to '%s'", old);
    }
    T_OK(MPI_T_cvar_handle_free(&hp));
    T_OK(MPI_T_cvar_handle_free(&hb));
    T_OK(MPI_T_cvar_handle_free(&hw));
}

static void check_categories(int ncvars, int npvars)
{
    int n = 0, idx = -1, nc, np, ncat;
    T_OK(MPI_T_category_get_num(&n));
    MT_CHECK(n >= 2, "%d categories", n);
    T_OK(MPI_T_category_get_index("ferry_settings", &idx));
    T_OK(MPI_T_category_get_info(idx, NULL, NULL, NULL, NULL, &nc, &np, &ncat));
    MT_EQ(nc, ncvars, "ferry_settings holds every control variable");
    int *ind = mt_malloc(sizeof(int) * (size_t)(ncvars + npvars));
    T_OK(MPI_T_category_get_cvars(idx, nc, ind));
    for (int i = 0; i < nc; i++)
        MT_CHECK(ind[i] >= 0 && ind[i] < ncvars, "cvar index %d", ind[i]);
    T_OK(MPI_T_category_get_index("ferry_protocols", &idx));
    T_OK(MPI_T_category_get_info(idx, NULL, NULL, NULL, NULL, &nc, &np, &ncat));
    MT_EQ(np, npvars, "ferry_protocols holds every performance variable");
    T_OK(MPI_T_category_get_pvars(idx, np, ind));
    for (int i = 0; i < np; i++)
        MT_CHECK(ind[i] >= 0 && ind[i] < npvars, "pvar index %d", ind[i]);
    free(ind);
    T_OK(MPI_T_category_get_categories(idx, 0, NULL));
    T_RC(MPI_T_category_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_category_get_index("no_such_category", &idx),
         MPI_T_ERR_INVALID_NAME);
    int upd = -1;
    T_OK(MPI_T_category_changed(&upd));
    /* No events, no enumerations. */
    int k = -1;
    T_OK(MPI_T_source_get_num(&k));
    MT_EQ(k, 0, "event sources");
    T_OK(MPI_T_event_get_num(&k));
    MT_EQ(k, 0, "event types");
    T_RC(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &k, NULL, NULL),
         MPI_T_ERR_INVALID_HANDLE);
}

int main(int argc, char **argv)
{
    int provided = -1;
    /* Nothing works before MPI_T_init_thread. */
    int n;
    T_RC(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_RC(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MT_EQ(provided, MPI_THREAD_SINGLE, "MPI_T thread level");

    /* Before MPI_Init: the settings and counters (all zero) are there. */
    check_cvars();
    check_cvar_write(0);
    int ncvars;
    T_OK(MPI_T_cvar_get_num(&ncvars));
    int npvars = check_pvar_infos();
    check_categories(ncvars, npvars);
    MPI_T_pvar_session early;
    MPI_T_pvar_handle he;
    int count = -1;
    T_OK(MPI_T_pvar_session_create(&early));
    T_OK(MPI_T_pvar_handle_alloc(early, pvar_index("ferry_eager_mailbox_msgs"),
                                 NULL, &he, &count));
    MT_EQ(count, 1, "pvar count");
    MT_EQ(pvar_read(early, he), 0, "a counter before MPI_Init");

    mt_init(&argc, &argv);
    /* A second MPI_T_init_thread, after MPI_Init: counted. */
    T_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    MT_CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE,
             "provided %d", provided);
    check_cvars();
    check_cvar_write(1);

    /* Session a: the mailbox, self, and every protocol's message count
     * (ferry_<proto>_msgs, not the per-mechanism ferry_xfer_*). Session
     * b: the mailbox again, to see that a's resets stay in a. */
    MPI_T_pvar_session a, b;
    T_OK(MPI_T_pvar_session_create(&a));
    T_OK(MPI_T_pvar_session_create(&b));
    MPI_T_pvar_handle mbox_a, mbox_b, self_a, cells_a;
    T_OK(MPI_T_pvar_handle_alloc(a, pvar_index("ferry_eager_mailbox_msgs"),
                                 NULL, &mbox_a, &count));
    T_OK(MPI_T_pvar_handle_alloc(b, pvar_index("ferry_eager_mailbox_msgs"),
                                 NULL, &mbox_b, &count));
    T_OK(MPI_T_pvar_handle_alloc(a, pvar_index("ferry_self_msgs"), NULL,
                                 &self_a, &count));
    T_OK(MPI_T_pvar_handle_alloc(a, pvar_index("ferry_eager_cells_msgs"), NULL,
                                 &cells_a, &count));
    MPI_T_pvar_handle *proto = mt_malloc(sizeof(*proto) * (size_t)npvars);
    int nproto = 0;
    for (int i = 0; i < npvars; i++) {
        char name[64];
        int len = sizeof(name);
        T_OK(MPI_T_pvar_get_info(i, name, &len, NULL, NULL, NULL, NULL, NULL,
                                 NULL, NULL, NULL, NULL, NULL));
        if (ends_with(name, "_msgs") && !starts_with(name, "ferry_xfer_") &&
            strcmp(name, "ferry_eager_mailbox_msgs") != 0 &&
            strcmp(name, "ferry_eager_cells_msgs") != 0 &&
            strcmp(name, "ferry_self_msgs") != 0)
            T_OK(MPI_T_pvar_handle_alloc(a, i, NULL, &proto[nproto++], &count));
    }
    MT_CHECK(nproto >= 1, "no large-message protocol counter");

    /* Errors on handles and sessions. */
    unsigned long long v;
    T_RC(MPI_T_pvar_read(b, mbox_a, &v), MPI_T_ERR_INVALID_HANDLE);
    T_RC(MPI_T_pvar_read(a, MPI_T_PVAR_HANDLE_NULL, &v),
         MPI_T_ERR_INVALID_HANDLE);
    T_RC(MPI_T_pvar_read(a, MPI_T_PVAR_ALL_HANDLES, &v),
         MPI_T_ERR_INVALID_HANDLE);
    T_RC(MPI_T_pvar_read(MPI_T_PVAR_SESSION_NULL, mbox_a, &v),
         MPI_T_ERR_INVALID_SESSION);
    T_RC(MPI_T_pvar_handle_alloc(a, npvars, NULL, &he, &count),
         MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_pvar_handle_alloc(a, -1, NULL, &he, &count),
         MPI_T_ERR_INVALID_INDEX);
    /* Continuous and not writable. */
    T_RC(MPI_T_pvar_start(a, mbox_a), MPI_T_ERR_PVAR_NO_STARTSTOP);
    T_RC(MPI_T_pvar_stop(a, mbox_a), MPI_T_ERR_PVAR_NO_STARTSTOP);
    T_OK(MPI_T_pvar_start(a, MPI_T_PVAR_ALL_HANDLES));
    T_OK(MPI_T_pvar_stop(a, MPI_T_PVAR_ALL_HANDLES));
    v = 5;
    T_RC(MPI_T_pvar_write(a, mbox_a, &v), MPI_T_ERR_PVAR_NO_WRITE);

    /* Readreset in a: the counts from here on. b keeps the whole count. */
    unsigned long long a0, b0, self0, big0 = 0, cells0;
    T_OK(MPI_T_pvar_readreset(a, mbox_a, &a0));
    b0 = pvar_read(b, mbox_b);
    MT_CHECK(b0 >= a0, "b %llu, a %llu", b0, a0);
    MT_EQ(pvar_read(a, mbox_a), 0, "right after readreset");
    self0 = pvar_read(a, self_a);
    cells0 = pvar_read(a, cells_a);
    for (int i = 0; i < nproto; i++)
        big0 += pvar_read(a, proto[i]);

    /* Every rank sends itself one message. */
    int x = mt_rank, y = -1;
    MPI_Request rq;
    MT_MPI(MPI_Irecv(&y, 1, MPI_INT, mt_rank, 7, MPI_COMM_WORLD, &rq));
    MT_MPI(MPI_Send(&x, 1, MPI_INT, mt_rank, 7, MPI_COMM_WORLD));
    MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MT_EQ(y, mt_rank, "self message");
    MT_EQ(pvar_read(a, self_a) - self0, 1, "ferry_self_msgs grew by one");

    if (mt_size >= 2 && mt_rank <= 1) {
        unsigned char small[NSMALL][SMALL];
        unsigned char *big = mt_malloc(BIG);
        if (mt_rank == 0) {
            MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
            for (int i = 0; i < NSMALL; i++) {
                mt_fill(small[i], SMALL, (uint32_t)i);
                MT_MPI(
                    MPI_Send(small[i], SMALL, MPI_BYTE, 1, i, MPI_COMM_WORLD));
            }
            mt_fill(big, BIG, 99);
            MT_MPI(MPI_Send(big, BIG, MPI_BYTE, 1, 99, MPI_COMM_WORLD));
        } else {
            MPI_Request r[NSMALL];
            for (int i = 0; i < NSMALL; i++)
                MT_MPI(MPI_Irecv(small[i], SMALL, MPI_BYTE, 0, i,
                                 MPI_COMM_WORLD, &r[i]));
            MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
            MT_MPI(MPI_Waitall(NSMALL, r, MPI_STATUSES_IGNORE));
            for (int i = 0; i < NSMALL; i++)
                MT_VERIFY(small[i], SMALL, (uint32_t)i, "8-byte message");
            MT_EQ(pvar_read(a, mbox_a), NSMALL,
                  "ferry_eager_mailbox_msgs grew by exactly 10 (session a)");
            MT_EQ(pvar_read(b, mbox_b) - b0, NSMALL,
                  "ferry_eager_mailbox_msgs grew by exactly 10 (session b)");
            MT_MPI(MPI_Recv(big, BIG, MPI_BYTE, 0, 99, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            MT_VERIFY(big, BIG, 99, "64 KiB message");
            unsigned long long big1 = 0;
            for (int i = 0; i < nproto; i++)
                big1 += pvar_read(a, proto[i]);
            /* Which large-message protocol carried it may change (Push-
             * Pull, the write protocol): at least one counted it, and it
             * went neither through the mailbox nor a cell. */
            MT_CHECK(big1 > big0, "no protocol counted the 64 KiB message");
            MT_EQ(pvar_read(a, mbox_a), NSMALL, "64 KiB not in the mailbox");
            MT_EQ(pvar_read(a, cells_a), cells0, "64 KiB not in a cell");
        }
        free(big);
    } else if (mt_size >= 2) {
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    /* A reset in a (every handle) leaves b and a new session alone. */
    unsigned long long bnow = pvar_read(b, mbox_b);
    T_OK(MPI_T_pvar_reset(a, MPI_T_PVAR_ALL_HANDLES));
    MT_EQ(pvar_read(a, mbox_a), 0, "a's mailbox after reset");
    MT_EQ(pvar_read(a, self_a), 0, "a's self count after reset");
    MT_EQ(pvar_read(b, mbox_b), bnow, "b's mailbox after a's reset");
    MPI_T_pvar_session c;
    MPI_T_pvar_handle mbox_c;
    T_OK(MPI_T_pvar_session_create(&c));
    T_OK(MPI_T_pvar_handle_alloc(c, pvar_index("ferry_eager_mailbox_msgs"),
                                 NULL, &mbox_c, &count));
    MT_EQ(pvar_read(c, mbox_c), bnow, "a new session reads the whole count");
    T_OK(MPI_T_pvar_handle_free(c, &mbox_c));
    MT_CHECK(mbox_c == MPI_T_PVAR_HANDLE_NULL, "freed handle set to NULL");
    T_RC(MPI_T_pvar_handle_free(c, &mbox_c), MPI_T_ERR_INVALID_HANDLE);
    T_OK(MPI_T_pvar_session_free(&c));
    MT_CHECK(c == MPI_T_PVAR_SESSION_NULL, "freed session set to NULL");
    T_RC(MPI_T_pvar_session_free(&c), MPI_T_ERR_INVALID_SESSION);

    /* Reference counting: two inits so far (early session still open). */
    T_OK(MPI_T_finalize());
    T_OK(MPI_T_cvar_get_num(&n));
    MT_EQ(pvar_read(b, mbox_b), bnow, "handles live until the last finalize");
    T_OK(MPI_T_pvar_session_free(&a));
    T_OK(MPI_T_pvar_session_free(&b));
    free(proto);
    T_OK(MPI_T_finalize()); /* the last one: frees 'early' too */
    T_RC(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_RC(MPI_T_pvar_session_create(&a), MPI_T_ERR_NOT_INITIALIZED);
    T_RC(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);

    mt_finish("mpit");

    /* After MPI_Finalize: MPI_T works, the counters keep their values. */
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    T_OK(MPI_T_pvar_session_create(&a));
    T_OK(MPI_T_pvar_handle_alloc(a, pvar_index("ferry_self_msgs"), NULL,
                                 &self_a, &count));
    MT_CHECK(pvar_read(a, self_a) >= 1, "self count after MPI_Finalize");
    check_cvars();
    check_cvar_write(0);
    T_OK(MPI_T_finalize());
    return 0;
}
