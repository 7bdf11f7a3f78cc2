/* SPDX-License-Identifier: MIT */
/* The MPI surface issue 12 asked for: MPI_Is_thread_main in another
 * thread, user error classes above MPI_ERR_LASTCODE, a generalized
 * request's free_fn error reaching MPI_Wait, MPI_Error_string a
 * function of the code alone, re-entrant attribute callbacks and freed-keyval
 * semantics on communicators and datatypes, datatype decoding, subarray/darray
 * layouts, external32 bytes, and the small calls (Pcontrol, weights objects,
 * intercommunicator creation failing cleanly). */
#include <pthread.h>

#include "mpitest.h"

/* ---- threads, error classes, requests, error strings ---------------- */

static void *thread_main_probe(void *arg)
{
    MPI_Is_thread_main((int *)arg);
    return NULL;
}

static void test_thread_main(void)
{
    int flag = -1;
    MT_MPI(MPI_Is_thread_main(&flag));
    MT_EQ(flag, 1, "Is_thread_main on the main thread");
    pthread_t t;
    flag = -1;
    MT_CHECK(pthread_create(&t, NULL, thread_main_probe, &flag) == 0,
             "pthread_create");
    pthread_join(t, NULL);
    MT_EQ(flag, 0, "Is_thread_main on another thread");
}

static void test_error_classes(void)
{
    int cls, code, got, flag, *last;
    MT_MPI(MPI_Add_error_class(&cls));
    MT_CHECK(cls > MPI_ERR_LASTCODE, "new class %d above MPI_ERR_LASTCODE",
             cls);
    MT_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    MT_CHECK(flag && *last >= MPI_ERR_LASTCODE && *last == cls,
             "MPI_LASTUSEDCODE %d follows the new class %d", *last, cls);
    MT_MPI(MPI_Add_error_code(cls, &code));
    MT_MPI(MPI_Error_class(code, &got));
    MT_EQ(got, cls, "class of the added code");
    MT_MPI(MPI_Add_error_string(code, "surface test code"));
    char s[MPI_MAX_ERROR_STRING];
    int len;
    MT_MPI(MPI_Error_string(code, s, &len));
    MT_CHECK(strcmp(s, "surface test code") == 0, "string \"%s\"", s);
}

static int greq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int greq_free_fails(void *extra)
{
    ++*(int *)extra;
    return MPI_ERR_BUFFER;
}
static int greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static int greq_cancel_fails(void *extra, int complete)
{
    *(int *)extra = complete ? 2 : 1;
    return MPI_ERR_ARG;
}

/* cancel_fn's error is MPI_Cancel's (MPI 4.0 13.2), and it is told
 * whether the request is complete. */
static void test_greq_cancel_error(void)
{
    int seen = 0;
    MPI_Request r;
    MT_MPI(MPI_Grequest_start(greq_query, greq_free_fails, greq_cancel_fails,
                              &seen, &r));
    MT_ERRCLASS(MPI_Cancel(&r), MPI_ERR_ARG,
                "MPI_Cancel after cancel_fn failed");
    MT_EQ(seen, 1, "cancel_fn saw an incomplete request");
    MT_MPI(MPI_Grequest_complete(r));
    MT_ERRCLASS(MPI_Cancel(&r), MPI_ERR_ARG, "MPI_Cancel once complete");
    MT_EQ(seen, 2, "cancel_fn saw a complete request");
    /* free_fn counts in 'seen' now: it was given the same extra state. */
    MT_ERRCLASS(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_BUFFER,
                "MPI_Wait after free_fn failed");
}

static void test_greq_free_error(void)
{
    int freed = 0;
    MPI_Request r;
    MT_MPI(MPI_Grequest_start(greq_query, greq_free_fails, greq_cancel, &freed,
                              &r));
    MT_MPI(MPI_Grequest_complete(r));
    MT_ERRCLASS(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_BUFFER,
                "MPI_Wait after free_fn failed");
    MT_EQ(freed, 1, "free_fn ran once");
    MT_CHECK(r == MPI_REQUEST_NULL, "request freed");
}

static void test_error_string_once(void)
{
    int buf = 0;
    MT_ERRCLASS(MPI_Send(&buf, 1, MPI_INT, mt_size + 5, 0, MPI_COMM_WORLD),
                MPI_ERR_RANK, "send to a bad rank");
    char s[MPI_MAX_ERROR_STRING];
    int len;
    char s2[MPI_MAX_ERROR_STRING];
    MT_MPI(MPI_Error_string(MPI_ERR_RANK, s, &len));
    MT_CHECK(strstr(s, "MPI_Send") == NULL, "no stale detail: %s", s);
    MT_MPI(MPI_Error_string(MPI_ERR_RANK, s2, &len));
    MT_CHECK(strcmp(s, s2) == 0, "the same code reads the same");
}

/* ---- attributes ------------------------------------------------------ */

static int kv_a = MPI_KEYVAL_INVALID, kv_b = MPI_KEYVAL_INVALID;
static int n_del_a, n_del_b, last_keyval_seen;

/* Deleting attribute A sets B on the same object and deletes B again,
 * then reads A back: list surgery from inside the walk. */
static int comm_del_a(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)val;
    (void)extra;
    n_del_a++;
    last_keyval_seen = keyval;
    void *got;
    int flag;
    if (kv_b != MPI_KEYVAL_INVALID) {
        MT_MPI(MPI_Comm_set_attr(comm, kv_b, (void *)2));
        MT_MPI(MPI_Comm_get_attr(comm, kv_b, &got, &flag));
        MT_CHECK(flag && got == (void *)2, "set inside a delete callback");
        MT_MPI(MPI_Comm_delete_attr(comm, kv_b));
        MT_MPI(MPI_Comm_set_attr(comm, kv_b, (void *)3));
    }
    return MPI_SUCCESS;
}
static int comm_del_b(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    (void)extra;
    n_del_b++;
    return MPI_SUCCESS;
}

static void test_comm_attrs(void)
{
    MPI_Comm c;
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MT_MPI(
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_del_a, &kv_a, NULL));
    MT_MPI(
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_del_b, &kv_b, NULL));
    MT_MPI(MPI_Comm_set_attr(c, kv_a, (void *)1));
    MT_MPI(MPI_Comm_delete_attr(c, kv_a)); /* sets b=3 inside */
    MT_EQ(n_del_a, 1, "delete callback A ran");
    MT_EQ(n_del_b, 1, "B deleted inside A's callback");
    MT_MPI(MPI_Comm_set_attr(c, kv_a, (void *)1));
    /* Free A's keyval while the attribute uses it: the handle must stay
     * reserved, and the callback later gets the original value. */
    int old_a = kv_a, kv_c;
    MT_MPI(MPI_Comm_free_keyval(&kv_a));
    MT_CHECK(kv_a == MPI_KEYVAL_INVALID, "free_keyval resets the handle");
    MT_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
                                  MPI_COMM_NULL_DELETE_FN, &kv_c, NULL));
    MT_CHECK(kv_c != old_a, "a freed keyval in use keeps its handle");
    int flag = 0, again = old_a;
    void *got = NULL;
    /* MPI 4.0, 7.7.2: the attributes a freed key still has are deleted by
     * the program (MPI_Comm_delete_attr with the key's value) or by
     * freeing their objects; reading them is allowed too, setting a new
     * one is not, and freeing the key again changes nothing. */
    MT_ERRCLASS(MPI_Comm_set_attr(c, old_a, (void *)2), MPI_ERR_KEYVAL,
                "no new attribute with a freed keyval");
    MT_MPI(MPI_Comm_get_attr(c, old_a, &got, &flag));
    MT_CHECK(flag && got == (void *)1, "a freed key's attribute is read");
    MT_MPI(MPI_Comm_free_keyval(&again));
    MT_CHECK(again == MPI_KEYVAL_INVALID, "a second free resets the handle");
    MT_EQ(n_del_a, 1, "freeing the key again ran no callback");
    /* Comm_free runs A, whose callback replaces B=3 (delete), deletes
     * B=2 and sets B=3 again; then B itself goes. */
    MT_MPI(MPI_Comm_free(&c));
    MT_EQ(n_del_a, 2, "A's callback ran at Comm_free");
    MT_EQ(last_keyval_seen, old_a, "callback got the original keyval");
    MT_EQ(n_del_b, 4, "B deleted inside A's callback and at Comm_free");
    MT_MPI(MPI_Comm_free_keyval(&kv_b));
    MT_MPI(MPI_Comm_free_keyval(&kv_c));
    kv_b = MPI_KEYVAL_INVALID;
}

/* A library's teardown hook: an attribute on MPI_COMM_SELF, deleted first
 * by MPI_Finalize while MPI is fully usable (MPI 4.0, 11.2.2). */
static int n_self_del;

static int self_del(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)val;
    (void)extra;
    int flag = 1, sum = 0, one = 1;
    MT_MPI(MPI_Finalized(&flag));
    MT_CHECK(!flag, "MPI_Finalized is false in MPI_COMM_SELF's callbacks");
    MT_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MT_EQ(sum, mt_size, "a collective inside MPI_COMM_SELF's callback");
    /* Freeing its own key inside the callback, twice: no-ops but the first. */
    int k = keyval;
    MT_MPI(MPI_Comm_free_keyval(&k));
    k = keyval;
    MT_MPI(MPI_Comm_free_keyval(&k));
    n_self_del++;
    return MPI_SUCCESS;
}

static void test_self_attr_at_finalize(void)
{
    int kv;
    MT_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_del, &kv, NULL));
    MT_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, kv, NULL));
}

static int type_kv_a, type_kv_a_orig, type_kv_b, n_type_del, n_type_copy;

static int type_del(MPI_Datatype t, int keyval, void *val, void *extra)
{
    (void)val;
    (void)extra;
    n_type_del++;
    if (keyval == type_kv_a_orig) {
        /* Touch another attribute of the type being freed. */
        MT_MPI(MPI_Type_set_attr(t, type_kv_b, (void *)9));
        MT_MPI(MPI_Type_delete_attr(t, type_kv_b));
    }
    return MPI_SUCCESS;
}
static int type_copy(MPI_Datatype t, int keyval, void *extra, void *in,
                     void *out, int *flag)
{
    (void)t;
    (void)keyval;
    (void)extra;
    n_type_copy++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static void test_type_attrs(void)
{
    MPI_Datatype t, d;
    MT_MPI(MPI_Type_contiguous(2, MPI_INT, &t));
    MT_MPI(MPI_Type_create_keyval(type_copy, type_del, &type_kv_a, NULL));
    MT_MPI(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_del, &type_kv_b,
                                  NULL));
    type_kv_a_orig = type_kv_a;
    MT_MPI(MPI_Type_set_attr(t, type_kv_a, (void *)40));
    void *got;
    int flag;
    MT_MPI(MPI_Type_get_attr(t, type_kv_a, &got, &flag));
    MT_CHECK(flag && got == (void *)40, "type attribute read back");
    MT_ERRCLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, type_kv_a, NULL),
                MPI_ERR_KEYVAL, "a type keyval on a communicator");
    MT_MPI(MPI_Type_dup(t, &d));
    MT_EQ(n_type_copy, 1, "copy callback ran on Type_dup");
    MT_MPI(MPI_Type_get_attr(d, type_kv_a, &got, &flag));
    MT_CHECK(flag && got == (void *)41, "copied value on the dup");
    MT_MPI(MPI_Type_free_keyval(&type_kv_a));
    MT_MPI(MPI_Type_free(&t)); /* A's delete sets and deletes B */
    MT_EQ(n_type_del, 2, "A deleted, B deleted inside it");
    MT_MPI(MPI_Type_free(&d));
    MT_EQ(n_type_del, 4, "and again for the dup");
    MT_MPI(MPI_Type_free_keyval(&type_kv_b));
}

/* ---- datatype decoding and array types ------------------------------- */

static void test_decode(void)
{
    MPI_Datatype v, s, r;
    int ni, na, nt, comb;
    MT_MPI(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nt, &comb));
    MT_EQ(comb, MPI_COMBINER_NAMED, "MPI_INT is named");
    /* MPI_C_COMPLEX and MPI_C_FLOAT_COMPLEX are one handle in the MPICH
     * ABI; the name is MPICH's, the one both names accept (MPICH's
     * datatype/typename). */
    char tname[MPI_MAX_OBJECT_NAME];
    int tlen = 0;
    MT_MPI(MPI_Type_get_name(MPI_C_COMPLEX, tname, &tlen));
    MT_CHECK(strcmp(tname, "MPI_C_COMPLEX") == 0 && tlen == 13,
             "name of MPI_C_COMPLEX: '%s' (%d)", tname, tlen);
    MT_MPI(MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &v));
    MT_MPI(MPI_Type_get_envelope(v, &ni, &na, &nt, &comb));
    MT_CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nt == 1,
             "vector envelope %d %d %d %d", comb, ni, na, nt);
    int ints[8];
    MPI_Aint aints[8];
    MPI_Datatype types[8];
    MT_MPI(MPI_Type_get_contents(v, 8, 8, 8, ints, aints, types));
    MT_CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 &&
                 types[0] == MPI_DOUBLE,
             "vector contents");

    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 64};
    MPI_Datatype tv[2] = {MPI_INT, v};
    MT_MPI(MPI_Type_create_struct(2, bl, disp, tv, &s));
    MT_MPI(MPI_Type_free(&v)); /* s keeps it; get_contents revives it */
    MT_MPI(MPI_Type_get_envelope(s, &ni, &na, &nt, &comb));
    MT_CHECK(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nt == 2,
             "struct envelope");
    MT_MPI(MPI_Type_get_contents(s, 8, 8, 8, ints, aints, types));
    MT_CHECK(ints[0] == 2 && aints[1] == 64 && types[0] == MPI_INT,
             "struct contents");
    MPI_Count size;
    MT_MPI(MPI_Type_size_x(types[1], &size));
    MT_EQ(size, 6 * 8, "the returned vector handle works");
    MT_MPI(MPI_Type_get_envelope(types[1], &ni, &na, &nt, &comb));
    MT_EQ(comb, MPI_COMBINER_VECTOR, "decoding recurses");
    MT_MPI(MPI_Type_free(&types[1]));
    MT_ERRCLASS(MPI_Type_get_contents(MPI_INT, 8, 8, 8, ints, aints, types),
                MPI_ERR_TYPE, "contents of a named type");
    MT_ERRCLASS(MPI_Type_get_contents(s, 0, 8, 8, ints, aints, types),
                MPI_ERR_ARG, "arrays too small");
    MT_MPI(MPI_Type_create_resized(s, -8, 200, &r));
    MT_MPI(MPI_Type_get_contents(r, 8, 8, 8, ints, aints, types));
    MT_CHECK(aints[0] == -8 && aints[1] == 200, "resized contents");
    MT_MPI(MPI_Type_free(&types[0]));
    MT_MPI(MPI_Type_free(&r));
    MT_MPI(MPI_Type_free(&s));
}

/* Pack 'dt' over a 0..n-1 int array and compare with 'want'. */
static void expect_ints(MPI_Datatype dt, const int *want, int nwant,
                        const char *what)
{
    int src[64], out[64], pos = 0, size;
    for (int i = 0; i < 64; i++)
        src[i] = i;
    MT_MPI(MPI_Type_commit(&dt));
    MT_MPI(MPI_Type_size(dt, &size));
    MT_EQ(size, nwant * (int)sizeof(int), what);
    MT_MPI(MPI_Pack(src, 1, dt, out, sizeof(out), &pos, MPI_COMM_WORLD));
    for (int i = 0; i < nwant; i++)
        if (out[i] != want[i])
            MT_FAIL("%s: element %d is %d, expected %d", what, i, out[i],
                    want[i]);
}

static void test_arrays(void)
{
    /* 4x6 C array, 2x3 block at (1,2). */
    int sizes[2] = {4, 6}, sub[2] = {2, 3}, start[2] = {1, 2};
    MPI_Datatype t;
    MPI_Aint lb, ext;
    MT_MPI(MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT,
                                    &t));
    const int want_c[] = {8, 9, 10, 14, 15, 16};
    expect_ints(t, want_c, 6, "subarray C order");
    MT_MPI(MPI_Type_get_extent(t, &lb, &ext));
    MT_CHECK(lb == 0 && ext == 24 * (MPI_Aint)sizeof(int), "subarray extent");
    int ints[16], ni, na, nt, comb;
    MT_MPI(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
    MT_CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8 && nt == 1,
             "subarray envelope");
    MPI_Datatype old;
    MT_MPI(MPI_Type_get_contents(t, 16, 0, 1, ints, NULL, &old));
    MT_CHECK(ints[0] == 2 && ints[3] == 2 && ints[6] == 2 &&
                 ints[7] == MPI_ORDER_C && old == MPI_INT,
             "subarray contents");
    MT_MPI(MPI_Type_free(&t));
    /* Fortran order: dimension 0 is fastest. */
    MT_MPI(MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_FORTRAN,
                                    MPI_INT, &t));
    const int want_f[] = {9, 10, 13, 14, 17, 18};
    expect_ints(t, want_f, 6, "subarray Fortran order");
    MT_MPI(MPI_Type_free(&t));
    int bad_start[2] = {3, 2};
    MT_ERRCLASS(MPI_Type_create_subarray(2, sizes, sub, bad_start, MPI_ORDER_C,
                                         MPI_INT, &t),
                MPI_ERR_ARG, "subarray beyond the array");

    /* darray: 8 elements, cyclic(2) over 2 processes: rank 1 owns
     * 2,3,6,7. Then 4x4 block x block over a 2x2 grid, rank 3. */
    int g1 = 8, dcyc = MPI_DISTRIBUTE_CYCLIC, darg = 2, p1 = 2;
    MT_MPI(MPI_Type_create_darray(2, 1, 1, &g1, &dcyc, &darg, &p1, MPI_ORDER_C,
                                  MPI_INT, &t));
    const int want_cyc[] = {2, 3, 6, 7};
    expect_ints(t, want_cyc, 4, "darray cyclic(2)");
    MT_MPI(MPI_Type_get_extent(t, &lb, &ext));
    MT_EQ(ext, 8 * (MPI_Aint)sizeof(int), "darray extent");
    MT_MPI(MPI_Type_free(&t));
    int g2[2] = {4, 4}, blk[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
    int dflt[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
    int p2[2] = {2, 2};
    MT_MPI(MPI_Type_create_darray(4, 3, 2, g2, blk, dflt, p2, MPI_ORDER_C,
                                  MPI_INT, &t));
    const int want_blk[] = {10, 11, 14, 15};
    expect_ints(t, want_blk, 4, "darray block x block");
    MT_MPI(MPI_Type_free(&t));
    MT_ERRCLASS(MPI_Type_create_darray(3, 0, 2, g2, blk, dflt, p2, MPI_ORDER_C,
                                       MPI_INT, &t),
                MPI_ERR_ARG, "darray grid larger than size");
}

static void test_external32(void)
{
    int in[2] = {0x01020304, -2}, back[2];
    unsigned char buf[64];
    MPI_Aint pos = 0, size;
    MT_MPI(MPI_Pack_external_size("external32", 2, MPI_INT, &size));
    MT_EQ(size, 8, "external32 size of 2 ints");
    MT_MPI(MPI_Pack_external("external32", in, 2, MPI_INT, buf, sizeof(buf),
                             &pos));
    MT_EQ(pos, 8, "position after packing");
    const unsigned char want[8] = {1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe};
    MT_CHECK(memcmp(buf, want, 8) == 0, "big-endian bytes");
    pos = 0;
    MT_MPI(MPI_Unpack_external("external32", buf, 8, &pos, back, 2, MPI_INT));
    MT_CHECK(back[0] == in[0] && back[1] == in[1], "round trip");

    long l = -5, lback = 0;
    MT_MPI(MPI_Pack_external_size("external32", 1, MPI_LONG, &size));
    MT_EQ(size, 4, "MPI_LONG is 4 bytes in external32");
    pos = 0;
    MT_MPI(MPI_Pack_external("external32", &l, 1, MPI_LONG, buf, sizeof(buf),
                             &pos));
    pos = 0;
    MT_MPI(
        MPI_Unpack_external("external32", buf, 4, &pos, &lback, 1, MPI_LONG));
    MT_EQ(lback, -5, "long round trip");
    l = 1L << 40;
    pos = 0;
    MT_ERRCLASS(MPI_Pack_external("external32", &l, 1, MPI_LONG, buf,
                                  sizeof(buf), &pos),
                MPI_ERR_CONVERSION, "a long beyond 32 bits");

    double d[2] = {1.0, -0.5}, dback[2];
    long double ld = 3.25L, ldback = 0;
    pos = 0;
    MT_MPI(MPI_Pack_external("external32", d, 2, MPI_DOUBLE, buf, sizeof(buf),
                             &pos));
    MT_CHECK(buf[0] == 0x3f && buf[1] == 0xf0 && buf[8] == 0xbf,
             "IEEE big-endian doubles");
    MT_MPI(MPI_Pack_external("external32", &ld, 1, MPI_LONG_DOUBLE, buf,
                             sizeof(buf), &pos));
    /* 3.25 = 1.625 * 2^1: quad exponent 0x4000, fraction 0xa000... */
    MT_CHECK(buf[16] == 0x40 && buf[17] == 0x00 && buf[18] == 0xa0,
             "IEEE quad long double");
    pos = 0;
    MT_MPI(
        MPI_Unpack_external("external32", buf, 32, &pos, dback, 2, MPI_DOUBLE));
    MT_MPI(MPI_Unpack_external("external32", buf, 32, &pos, &ldback, 1,
                               MPI_LONG_DOUBLE));
    MT_CHECK(dback[0] == 1.0 && dback[1] == -0.5 && ldback == 3.25L,
             "double and long double round trip");
    pos = 0;
    MT_ERRCLASS(
        MPI_Pack_external("native", in, 2, MPI_INT, buf, sizeof(buf), &pos),
        MPI_ERR_UNSUPPORTED_DATAREP, "datarep other than external32");
    pos = 0;
    MT_ERRCLASS(MPI_Pack_external("external32", in, 2, MPI_INT, buf, 7, &pos),
                MPI_ERR_NO_SPACE, "output too small");
}

static int s_eh_calls, s_eh_class, s_eh_comm_was_self;

static void eh_record(MPI_Comm *comm, int *err, ...)
{
    s_eh_calls++;
    MPI_Error_class(*err, &s_eh_class);
    int result;
    MPI_Comm_compare(*comm, MPI_COMM_SELF, &result);
    s_eh_comm_was_self = result == MPI_CONGRUENT;
}

static void test_small_calls(void)
{
    MT_MPI(MPI_Pcontrol(1));
    MT_CHECK(MPI_UNWEIGHTED != NULL && MPI_WEIGHTS_EMPTY != NULL &&
                 MPI_UNWEIGHTED != MPI_WEIGHTS_EMPTY,
             "weights objects are distinct");
    int v, sv;
    MT_MPI(MPI_Get_version(&v, &sv));
    MT_CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION, "version %d.%d", v, sv);
    MPI_Comm ic = MPI_COMM_WORLD;
    MT_ERRCLASS(
        MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, mt_size, 7, &ic),
        MPI_ERR_RANK, "Intercomm_create with a bad remote leader");
    MT_CHECK(ic == MPI_COMM_NULL, "no communicator on failure");
    MT_ERRCLASS(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &ic), MPI_ERR_COMM,
                "merging an intracommunicator");

    /* The refusal goes through the local communicator's error handler,
     * like any other error, and says why. */
    MPI_Comm self;
    MPI_Errhandler eh;
    MT_MPI(MPI_Comm_dup(MPI_COMM_SELF, &self));
    MT_MPI(MPI_Comm_create_errhandler(eh_record, &eh));
    MT_MPI(MPI_Comm_set_errhandler(self, eh));
    s_eh_calls = 0;
    s_eh_class = MPI_SUCCESS;
    int rc = MPI_Intercomm_create(self, 0, MPI_COMM_WORLD, mt_size, 7, &ic);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    MT_EQ(cls, MPI_ERR_RANK, "returned class");
    MT_EQ(s_eh_calls, 1, "the handler ran once");
    MT_EQ(s_eh_class, MPI_ERR_RANK, "the handler's class");
    MT_CHECK(s_eh_comm_was_self, "the handler got the local communicator");
    MT_MPI(MPI_Errhandler_free(&eh));
    MT_MPI(MPI_Comm_free(&self));
}

static void eh_count(MPI_Comm *comm, int *err, ...)
{
    (void)comm;
    (void)err;
}

static void test_fortran_and_old_names(void)
{
    MPI_Status st = {0}, back;
    st.MPI_SOURCE = 3;
    st.MPI_TAG = 11;
    st.MPI_ERROR = MPI_ERR_TAG;
    MPI_Status_set_elements(&st, MPI_BYTE, 77);
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MT_MPI(MPI_Status_c2f(&st, f));
    MT_CHECK(f[MPI_F_SOURCE] == 3 && f[MPI_F_TAG] == 11 &&
                 f[MPI_F_ERROR] == MPI_ERR_TAG,
             "c2f fields");
    MT_MPI(MPI_Status_f2c(f, &back));
    int n;
    MT_MPI(MPI_Get_count(&back, MPI_BYTE, &n));
    MT_CHECK(n == 77 && back.MPI_SOURCE == 3, "f2c round trip");
    MT_CHECK(MPI_F_STATUS_IGNORE != NULL &&
                 MPI_F_STATUS_IGNORE != MPI_F_STATUSES_IGNORE,
             "Fortran ignore objects");
    MT_ERRCLASS(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &back), MPI_ERR_ARG,
                "f2c of MPI_F_STATUS_IGNORE");

    MPI_Datatype r8, r8b, i4;
    MT_MPI(MPI_Type_create_f90_real(10, 100, &r8));
    MT_MPI(MPI_Type_create_f90_real(10, 100, &r8b));
    MT_CHECK(r8 == r8b, "same (p, r), same handle");
    MPI_Count sz;
    MT_MPI(MPI_Type_size_x(r8, &sz));
    MT_EQ(sz, 8, "real with p=10 is 8 bytes");
    int ni, na, nt, comb, ints[2];
    MT_MPI(MPI_Type_get_envelope(r8, &ni, &na, &nt, &comb));
    MT_CHECK(comb == MPI_COMBINER_F90_REAL && ni == 2 && nt == 0,
             "f90 real envelope");
    MT_MPI(MPI_Type_get_contents(r8, 2, 0, 0, ints, NULL, NULL));
    MT_CHECK(ints[0] == 10 && ints[1] == 100, "f90 real contents");
    MT_ERRCLASS(MPI_Type_free(&r8b), MPI_ERR_TYPE, "freeing an f90 type");
    MT_MPI(MPI_Type_create_f90_integer(5, &i4));
    MT_MPI(MPI_Type_size_x(i4, &sz));
    MT_EQ(sz, 4, "integer with r=5 is 4 bytes");
    MT_ERRCLASS(MPI_Type_create_f90_real(40, MPI_UNDEFINED, &r8), MPI_ERR_ARG,
                "no real kind with 40 digits");

    MPI_Errhandler eh, got;
    MT_MPI(MPI_Errhandler_create(eh_count, &eh));
    MT_MPI(MPI_Errhandler_set(MPI_COMM_SELF, eh));
    MT_MPI(MPI_Errhandler_get(MPI_COMM_SELF, &got));
    MT_CHECK(got == eh, "Errhandler_get returns what was set");
    MT_MPI(MPI_Errhandler_free(&got));
    MT_MPI(MPI_Errhandler_set(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MT_MPI(MPI_Errhandler_free(&eh));
}

/* Dynamic processes are refused with the class MPI names for each call,
 * on every rank, with nothing left behind; the job carries on. */
static void test_dynproc(void)
{
    MPI_Comm parent = MPI_COMM_WORLD, ic = MPI_COMM_WORLD;
    MT_MPI(MPI_Comm_get_parent(&parent));
    MT_CHECK(parent == MPI_COMM_NULL, "no parent");
    int codes[3] = {-1, -1, -1};
    MT_ERRCLASS(MPI_Comm_spawn("/bin/true", MPI_ARGV_NULL, 3, MPI_INFO_NULL, 0,
                               MPI_COMM_WORLD, &ic, codes),
                MPI_ERR_SPAWN, "Comm_spawn");
    MT_CHECK(ic == MPI_COMM_NULL, "no intercommunicator from Comm_spawn");
    if (mt_rank == 0)
        for (int i = 0; i < 3; i++)
            MT_EQ(codes[i], MPI_ERR_SPAWN, "errcodes at the root");
    char *cmds[2] = {"/bin/true", "/bin/false"};
    int maxprocs[2] = {1, 1};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    ic = MPI_COMM_WORLD;
    MT_ERRCLASS(MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, maxprocs,
                                        infos, 0, MPI_COMM_WORLD, &ic,
                                        MPI_ERRCODES_IGNORE),
                MPI_ERR_SPAWN, "Comm_spawn_multiple");
    MT_CHECK(ic == MPI_COMM_NULL, "no intercommunicator from spawn_multiple");
    MT_ERRCLASS(MPI_Comm_spawn("/bin/true", MPI_ARGV_NULL, 1, MPI_INFO_NULL,
                               mt_size, MPI_COMM_WORLD, &ic, NULL),
                MPI_ERR_ROOT, "Comm_spawn with a bad root");

    char port[MPI_MAX_PORT_NAME] = "x";
    MT_ERRCLASS(MPI_Open_port(MPI_INFO_NULL, port),
                MPI_ERR_UNSUPPORTED_OPERATION, "Open_port");
    MT_CHECK(port[0] == '\0', "no port name");
    MT_ERRCLASS(MPI_Close_port("tcp://nowhere"), MPI_ERR_PORT, "Close_port");
    ic = MPI_COMM_WORLD;
    MT_ERRCLASS(MPI_Comm_accept("p", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic),
                MPI_ERR_PORT, "Comm_accept");
    MT_CHECK(ic == MPI_COMM_NULL, "no communicator from Comm_accept");
    ic = MPI_COMM_WORLD;
    MT_ERRCLASS(MPI_Comm_connect("p", MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic),
                MPI_ERR_PORT, "Comm_connect");
    MT_CHECK(ic == MPI_COMM_NULL, "no communicator from Comm_connect");
    MT_ERRCLASS(MPI_Publish_name("svc", MPI_INFO_NULL, "p"),
                MPI_ERR_UNSUPPORTED_OPERATION, "Publish_name");
    MT_ERRCLASS(MPI_Unpublish_name("svc", MPI_INFO_NULL, "p"), MPI_ERR_SERVICE,
                "Unpublish_name");
    MT_ERRCLASS(MPI_Lookup_name("svc", MPI_INFO_NULL, port), MPI_ERR_NAME,
                "Lookup_name");
    ic = MPI_COMM_WORLD;
    MT_ERRCLASS(MPI_Comm_join(0, &ic), MPI_ERR_UNSUPPORTED_OPERATION,
                "Comm_join");
    MT_CHECK(ic == MPI_COMM_NULL, "no communicator from Comm_join");
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    test_thread_main();
    test_error_classes();
    test_greq_free_error();
    test_greq_cancel_error();
    test_error_string_once();
    test_comm_attrs();
    test_type_attrs();
    test_decode();
    test_arrays();
    test_external32();
    test_small_calls();
    test_fortran_and_old_names();
    test_dynproc();
    test_self_attr_at_finalize();
    int rc = mt_finish("mpi_surface");
    MT_EQ(n_self_del, 1, "MPI_COMM_SELF's delete callback ran at finalize");
    return rc;
}
