/* SPDX-License-Identifier: MIT */
/* MPI 4.0 sessions without MPI_Init: Session_init with a thread level in
 * its info and MPI_ERRORS_RETURN; the process sets (count, names with the
 * length query, mpi_size); groups from mpi://WORLD and mpi://SELF;
 * communicators from groups (the whole world, the even ranks only) that
 * carry collectives and point-to-point traffic; an intercommunicator from
 * two groups (halves of the world); errors through the session's handler
 * (an unknown process set, a user handler called by
 * MPI_Session_call_errhandler); MPI_Initialized false all along; a second
 * session after the first is finalized; a thread_level naming no level
 * refused, and MPI_THREAD_MULTIPLE for every session once one asked for
 * it; then the world model (MPI_Init)
 * in the same process, with MPI_COMM_WORLD working; MPI_Info_create_env
 * before anything. With --sessions-only
 * the program ends after the sessions, never calling MPI_Init. */
#include "mpitest.h"

static int handler_calls, handler_code;
static MPI_Session handler_session;

static void on_error(MPI_Session *s, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_session = *s;
}

/* A communicator made from a group: collective and ring traffic. */
static void check_comm(MPI_Comm c, int want_size, const char *what)
{
    int n = -1, r = -1;
    MT_MPI(MPI_Comm_size(c, &n));
    MT_MPI(MPI_Comm_rank(c, &r));
    MT_EQ(n, want_size, what);
    int sum = -1;
    MT_MPI(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    MT_EQ(sum, n * (n - 1) / 2, what);
    enum { LEN = 100000 };
    static unsigned char out[LEN], in[LEN];
    int right = (r + 1) % n, left = (r + n - 1) % n;
    mt_fill(out, LEN, 500u + (unsigned)r);
    MT_MPI(MPI_Sendrecv(out, LEN, MPI_BYTE, right, 3, in, LEN, MPI_BYTE, left,
                        3, c, MPI_STATUS_IGNORE));
    MT_VERIFY(in, LEN, 500u + (unsigned)left, what);
}

static int one_session(int round)
{
    MPI_Info info;
    MT_MPI(MPI_Info_create(&info));
    MT_MPI(MPI_Info_set(info, "thread_level", "MPI_THREAD_FUNNELED"));
    MPI_Session s = MPI_SESSION_NULL;
    MT_MPI(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
    MT_MPI(MPI_Info_free(&info));
    MT_CHECK(s != MPI_SESSION_NULL, "session handle");
    int flag = 1;
    MT_MPI(MPI_Initialized(&flag));
    MT_EQ(flag, 0, "MPI_Initialized with a session only");

    MPI_Info used;
    char val[MPI_MAX_INFO_VAL + 1];
    MT_MPI(MPI_Session_get_info(s, &used));
    MT_MPI(MPI_Info_get(used, "thread_level", MPI_MAX_INFO_VAL, val, &flag));
    MT_CHECK(flag && !strcmp(val, "MPI_THREAD_FUNNELED"),
             "thread_level in the session's info: %s", flag ? val : "absent");
    MT_MPI(MPI_Info_free(&used));

    /* Process sets. */
    int npsets = 0;
    MT_MPI(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &npsets));
    MT_CHECK(npsets >= 2, "%d process sets", npsets);
    int seen_world = 0, seen_self = 0;
    for (int i = 0; i < npsets; i++) {
        int len = 0;
        MT_MPI(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        MT_CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "length %d", len);
        char name[MPI_MAX_PSET_NAME_LEN];
        memset(name, 'x', sizeof(name));
        MT_MPI(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        MT_EQ(strlen(name) + 1, len, "pset name length");
        seen_world += !strcmp(name, "mpi://WORLD");
        seen_self += !strcmp(name, "mpi://SELF");
        /* A short buffer gets a truncated, terminated name. */
        char small[4] = {'z', 'z', 'z', 'z'};
        int slen = 4;
        MT_MPI(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &slen, small));
        MT_CHECK(small[3] == '\0' && !strncmp(small, name, 3),
                 "truncated name");
    }
    MT_CHECK(seen_world == 1 && seen_self == 1, "mpi://WORLD and mpi://SELF");

    MPI_Group wg, sg;
    MT_MPI(MPI_Group_from_session_pset(s, "mpi://WORLD", &wg));
    MT_MPI(MPI_Group_from_session_pset(s, "mpi://SELF", &sg));
    int n = -1, me = -1, one = -1;
    MT_MPI(MPI_Group_size(wg, &n));
    MT_MPI(MPI_Group_rank(wg, &me));
    MT_MPI(MPI_Group_size(sg, &one));
    MT_EQ(one, 1, "size of mpi://SELF");
    mt_rank = me;
    mt_size = n;
    MT_MPI(MPI_Session_get_pset_info(s, "mpi://WORLD", &used));
    MT_MPI(MPI_Info_get(used, "mpi_size", MPI_MAX_INFO_VAL, val, &flag));
    MT_CHECK(flag && atoi(val) == n, "mpi_size %s for %d ranks",
             flag ? val : "absent", n);
    MT_MPI(MPI_Info_free(&used));

    /* Unknown process set: MPI_ERR_ARG through MPI_ERRORS_RETURN. */
    MPI_Group bad = MPI_GROUP_NULL;
    MT_ERRCLASS(MPI_Group_from_session_pset(s, "mpi://NOWHERE", &bad),
                MPI_ERR_ARG, "unknown process set");

    /* Communicators from groups. */
    MPI_Comm wc, selfc;
    MT_MPI(MPI_Comm_create_from_group(wg, "org.ferry.test.world", MPI_INFO_NULL,
                                      MPI_ERRORS_RETURN, &wc));
    check_comm(wc, n, "communicator of mpi://WORLD");
    MT_MPI(MPI_Comm_create_from_group(sg, "org.ferry.test.self", MPI_INFO_NULL,
                                      MPI_ERRORS_RETURN, &selfc));
    check_comm(selfc, 1, "communicator of mpi://SELF");
    MPI_Errhandler eh;
    MT_MPI(MPI_Comm_get_errhandler(wc, &eh));
    MT_CHECK(eh == MPI_ERRORS_RETURN, "errhandler of the new communicator");
    MT_MPI(MPI_Errhandler_free(&eh));

    /* The even ranks only; the odd ones build theirs at the same time. */
    int half = (n + 1) / 2;
    int ranks[64];
    MPI_Group evens, odds, mine_g;
    for (int i = 0; i < half; i++)
        ranks[i] = 2 * i;
    MT_MPI(MPI_Group_incl(wg, half, ranks, &evens));
    MT_MPI(MPI_Group_difference(wg, evens, &odds));
    mine_g = me % 2 == 0 ? evens : odds;
    int mine_n = me % 2 == 0 ? half : n - half;
    if (mine_n > 0) {
        MPI_Comm pc;
        MT_MPI(MPI_Comm_create_from_group(
            mine_g, me % 2 == 0 ? "org.ferry.test.even" : "org.ferry.test.odd",
            MPI_INFO_NULL, MPI_ERRORS_RETURN, &pc));
        check_comm(pc, mine_n, "communicator of the even/odd ranks");
        MT_MPI(MPI_Comm_free(&pc));
    }

    /* An empty group: the call is local and gives MPI_COMM_NULL (MPI 4.0
     * 7.4.2; MPICH's session/session_mod_group found the error Ferry
     * returned). Ranks call it at different times, one of them only. */
    MPI_Comm none = MPI_COMM_WORLD;
    if (me == n - 1) {
        MT_MPI(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "org.ferry.test.e",
                                          MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                          &none));
        MT_CHECK(none == MPI_COMM_NULL, "MPI_GROUP_EMPTY gives MPI_COMM_NULL");
    }
    MPI_Group nobody;
    MT_MPI(MPI_Group_difference(wg, wg, &nobody));
    none = MPI_COMM_WORLD;
    MT_MPI(MPI_Comm_create_from_group(nobody, "org.ferry.test.e2",
                                      MPI_INFO_NULL, MPI_ERRORS_RETURN, &none));
    MT_CHECK(none == MPI_COMM_NULL, "an empty group gives MPI_COMM_NULL");
    MT_MPI(MPI_Group_free(&nobody));

    /* An intercommunicator between the even and the odd ranks. */
    if (n >= 2) {
        MPI_Group other_g = me % 2 == 0 ? odds : evens;
        MPI_Comm ic;
        MT_MPI(MPI_Intercomm_create_from_groups(
            mine_g, 0, other_g, 0, "org.ferry.test.inter", MPI_INFO_NULL,
            MPI_ERRORS_RETURN, &ic));
        int rsize = -1, lsize = -1, lrank = -1, inter = 0;
        MT_MPI(MPI_Comm_test_inter(ic, &inter));
        MT_EQ(inter, 1, "MPI_Comm_test_inter");
        MT_MPI(MPI_Comm_remote_size(ic, &rsize));
        MT_MPI(MPI_Comm_size(ic, &lsize));
        MT_MPI(MPI_Comm_rank(ic, &lrank));
        MT_EQ(lsize, mine_n, "local size");
        MT_EQ(rsize, n - mine_n, "remote size");
        /* Rank i of one side talks with rank i of the other. */
        if (lrank < rsize) {
            int token = 7000 + me, got = -1;
            MT_MPI(MPI_Sendrecv(&token, 1, MPI_INT, lrank, 9, &got, 1, MPI_INT,
                                lrank, 9, ic, MPI_STATUS_IGNORE));
            int partner = me % 2 == 0 ? 2 * lrank + 1 : 2 * lrank;
            MT_EQ(got, 7000 + partner, "message across the intercommunicator");
        }
        MT_MPI(MPI_Comm_free(&ic));
    }

    /* A user handler on the session. */
    MPI_Errhandler uh;
    MT_MPI(MPI_Session_create_errhandler(on_error, &uh));
    MT_MPI(MPI_Session_set_errhandler(s, uh));
    handler_calls = 0;
    MT_MPI(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    MT_EQ(handler_calls, 1, "user handler calls");
    MT_EQ(handler_code, MPI_ERR_OTHER, "code given to the handler");
    MT_CHECK(handler_session == s, "session given to the handler");
    (void)MPI_Group_from_session_pset(s, "no-such-set", &bad);
    MT_EQ(handler_calls, 2, "user handler called for an unknown set");
    MT_EQ(handler_code, MPI_ERR_ARG, "class of an unknown set");
    MPI_Errhandler got_eh;
    MT_MPI(MPI_Session_get_errhandler(s, &got_eh));
    MT_CHECK(got_eh == uh, "MPI_Session_get_errhandler");
    MT_MPI(MPI_Errhandler_free(&got_eh));
    MT_MPI(MPI_Errhandler_free(&uh));

    MT_MPI(MPI_Group_free(&evens));
    MT_MPI(MPI_Group_free(&odds));
    MT_MPI(MPI_Group_free(&wg));
    MT_MPI(MPI_Group_free(&sg));
    MT_MPI(MPI_Comm_free(&selfc));
    /* Something in flight on wc must be done before the session ends. */
    MT_MPI(MPI_Barrier(wc));
    MT_MPI(MPI_Comm_free(&wc));
    MT_MPI(MPI_Session_finalize(&s));
    MT_CHECK(s == MPI_SESSION_NULL, "handle after MPI_Session_finalize");
    (void)round;
    return n;
}

/* The session's thread level as its info reports it. */
static void expect_level(MPI_Session s, const char *want, const char *what)
{
    MPI_Info used;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MT_MPI(MPI_Session_get_info(s, &used));
    MT_MPI(MPI_Info_get(used, "thread_level", MPI_MAX_INFO_VAL, val, &flag));
    MT_CHECK(flag && !strcmp(val, want), "%s: %s", what, flag ? val : "absent");
    MT_MPI(MPI_Info_free(&used));
}

/* A thread_level that names no level is refused; once one session asked
 * for MPI_THREAD_MULTIPLE, a session that asks for nothing has it too
 * (the process runs MULTIPLE: threads may be in MPI at once). */
static void thread_levels(void)
{
    MPI_Info info;
    MPI_Session a = MPI_SESSION_NULL, b = MPI_SESSION_NULL;
    MT_MPI(MPI_Info_create(&info));
    MT_MPI(MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTPLE"));
    MT_ERRCLASS(MPI_Session_init(info, MPI_ERRORS_RETURN, &a),
                MPI_ERR_INFO_VALUE, "thread_level naming no level");
    MT_CHECK(a == MPI_SESSION_NULL, "no session made");
    MT_MPI(MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE"));
    MT_MPI(MPI_Session_init(info, MPI_ERRORS_RETURN, &a));
    MT_MPI(MPI_Info_free(&info));
    MT_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &b));
    expect_level(a, "MPI_THREAD_MULTIPLE", "the session that asked");
    expect_level(b, "MPI_THREAD_MULTIPLE", "a session in a MULTIPLE process");
    MT_MPI(MPI_Session_finalize(&b));
    MT_MPI(MPI_Session_finalize(&a));
}

int main(int argc, char **argv)
{
    /* MPI_Info_create_env works before any initialisation. */
    MPI_Info env;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MT_MPI(MPI_Info_create_env(argc, argv, &env));
    MT_MPI(MPI_Info_get(env, "command", MPI_MAX_INFO_VAL, val, &flag));
    MT_CHECK(flag && !strcmp(val, argv[0]), "command %s",
             flag ? val : "absent");
    MT_MPI(MPI_Info_free(&env));
    int n = one_session(0);
    /* Sessions may come and go. */
    MT_EQ(one_session(1), n, "ranks in the second session");
    flag = 1;
    MT_MPI(MPI_Initialized(&flag));
    MT_EQ(flag, 0, "MPI_Initialized after the sessions");
    thread_levels();
    if (argc > 1 && !strcmp(argv[1], "--sessions-only")) {
        /* Leave without the world model: the library goes down at exit,
         * after the node's other ranks are done too. */
        if (mt_rank == 0)
            printf("session: OK (%d ranks)\n", n);
        return 0;
    }

    /* The world model in the same process. */
    MT_MPI(MPI_Init(&argc, &argv));
    MT_MPI(MPI_Initialized(&flag));
    MT_EQ(flag, 1, "MPI_Initialized after MPI_Init");
    int size = -1, rank = -1;
    MT_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MT_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MT_EQ(size, n, "MPI_COMM_WORLD size");
    int sum = 0;
    MT_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MT_EQ(sum, n * (n - 1) / 2, "Allreduce on MPI_COMM_WORLD");
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("session: OK (%d ranks)\n", size);
    MT_MPI(MPI_Finalize());
    MT_MPI(MPI_Finalized(&flag));
    MT_EQ(flag, 1, "MPI_Finalized");
    return 0;
}
