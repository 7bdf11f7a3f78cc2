/* SPDX-License-Identifier: MIT */
/* Info objects: set/get/get_string/get_valuelen/nkeys/nthkey/delete/dup/
 * free with MPI's length limits and error classes, MPI_INFO_ENV,
 * MPI_Comm_get_info, and MPI_Alloc_mem/MPI_Free_mem. */
#include "mpitest.h"

static void check_get(MPI_Info info, const char *key, const char *want)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = -1, len = -1;
    MT_MPI(MPI_Info_get_valuelen(info, key, &len, &flag));
    MT_EQ(flag, want != NULL, key);
    if (!want) {
        MT_MPI(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
        MT_EQ(flag, 0, key);
        return;
    }
    MT_EQ(len, (int)strlen(want), key);
    MT_MPI(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    MT_EQ(flag, 1, key);
    MT_CHECK(strcmp(v, want) == 0, "%s: got \"%s\", expected \"%s\"", key, v,
             want);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Info info, dup;
    int n = -1, flag = -1;
    char key[MPI_MAX_INFO_KEY + 1], v[MPI_MAX_INFO_VAL + 1];
    MT_MPI(MPI_Info_create(&info));
    MT_MPI(MPI_Info_get_nkeys(info, &n));
    MT_EQ(n, 0, "empty info");
    MT_MPI(MPI_Info_set(info, "alpha", "1"));
    MT_MPI(MPI_Info_set(info, "beta", "two"));
    MT_MPI(MPI_Info_set(info, "gamma", ""));
    MT_MPI(MPI_Info_set(info, "alpha", "one")); /* replaces, keeps place */
    MT_MPI(MPI_Info_get_nkeys(info, &n));
    MT_EQ(n, 3, "nkeys");
    const char *order[] = {"alpha", "beta", "gamma"};
    for (int i = 0; i < 3; i++) {
        MT_MPI(MPI_Info_get_nthkey(info, i, key));
        MT_CHECK(strcmp(key, order[i]) == 0, "nthkey %d: %s", i, key);
    }
    MT_ERRCLASS(MPI_Info_get_nthkey(info, 3, key), MPI_ERR_ARG, "nthkey 3");
    check_get(info, "alpha", "one");
    check_get(info, "beta", "two");
    check_get(info, "gamma", "");
    check_get(info, "delta", NULL);

    /* Truncating reads. */
    memset(v, 'x', sizeof v);
    MT_MPI(MPI_Info_get(info, "beta", 2, v, &flag));
    MT_CHECK(flag && strcmp(v, "tw") == 0, "Info_get valuelen 2: %s", v);
    int buflen = 3;
    MT_MPI(MPI_Info_get_string(info, "beta", &buflen, v, &flag));
    MT_CHECK(flag && strcmp(v, "tw") == 0, "get_string buflen 3: %s", v);
    MT_EQ(buflen, 4, "get_string needed size");
    buflen = 0;
    MT_MPI(MPI_Info_get_string(info, "alpha", &buflen, NULL, &flag));
    MT_EQ(buflen, 4, "get_string size query");
    buflen = (int)sizeof v;
    MT_MPI(MPI_Info_get_string(info, "nope", &buflen, v, &flag));
    MT_EQ(flag, 0, "get_string absent");

    /* Limits and errors. */
    char longkey[MPI_MAX_INFO_KEY + 2];
    memset(longkey, 'k', sizeof longkey);
    longkey[MPI_MAX_INFO_KEY] = '\0'; /* exactly the maximum: fine */
    MT_MPI(MPI_Info_set(info, longkey, "max key"));
    longkey[MPI_MAX_INFO_KEY] = 'k';
    longkey[MPI_MAX_INFO_KEY + 1] = '\0';
    MT_ERRCLASS(MPI_Info_set(info, longkey, "x"), MPI_ERR_INFO_KEY,
                "key too long");
    MT_ERRCLASS(MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY, "empty key");
    static char longval[MPI_MAX_INFO_VAL + 2];
    memset(longval, 'v', sizeof longval - 1);
    MT_ERRCLASS(MPI_Info_set(info, "big", longval), MPI_ERR_INFO_VALUE,
                "value too long");
    longval[MPI_MAX_INFO_VAL] = '\0';
    MT_MPI(MPI_Info_set(info, "big", longval));
    MT_ERRCLASS(MPI_Info_delete(info, "nope"), MPI_ERR_INFO_NOKEY,
                "delete absent key");
    MT_ERRCLASS(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO,
                "MPI_INFO_NULL");

    /* Dup is deep; delete shifts the order. */
    MT_MPI(MPI_Info_dup(info, &dup));
    MT_MPI(MPI_Info_delete(info, "beta"));
    MT_MPI(MPI_Info_get_nkeys(info, &n));
    MT_EQ(n, 4, "nkeys after delete");
    MT_MPI(MPI_Info_get_nthkey(info, 1, key));
    MT_CHECK(strcmp(key, "gamma") == 0, "nthkey 1 after delete: %s", key);
    check_get(info, "beta", NULL);
    check_get(dup, "beta", "two");
    MT_MPI(MPI_Info_set(dup, "alpha", "changed"));
    check_get(info, "alpha", "one");
    MT_MPI(MPI_Info_get_nkeys(dup, &n));
    MT_EQ(n, 5, "dup nkeys");
    MT_MPI(MPI_Info_free(&dup));
    MT_EQ(dup, MPI_INFO_NULL, "freed handle");
    MT_MPI(MPI_Info_free(&info));
    MT_ERRCLASS(MPI_Info_free(&info), MPI_ERR_INFO, "free MPI_INFO_NULL");

    /* MPI_INFO_ENV: predefined, read-only. */
    MT_MPI(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
    MT_CHECK(n >= 1, "MPI_INFO_ENV has %d keys", n);
    MT_MPI(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, v, &flag));
    if (flag && !mt_on_mpich())
        MT_EQ(atoi(v), mt_size, "MPI_INFO_ENV maxprocs");
    MPI_Info env = MPI_INFO_ENV;
    if (!mt_on_mpich()) {
        MT_ERRCLASS(MPI_Info_free(&env), MPI_ERR_INFO, "free MPI_INFO_ENV");
        MT_ERRCLASS(MPI_Info_set(MPI_INFO_ENV, "a", "b"), MPI_ERR_INFO,
                    "set on MPI_INFO_ENV");
    }
    MT_MPI(MPI_Info_dup(MPI_INFO_ENV, &dup));
    MT_MPI(MPI_Info_free(&dup));

    /* MPI_Comm_get_info: a new object, the caller's to free. */
    MT_MPI(MPI_Info_create(&info));
    MT_MPI(MPI_Comm_set_info(MPI_COMM_WORLD, info));
    MT_MPI(MPI_Info_free(&info));
    MT_MPI(MPI_Comm_get_info(MPI_COMM_WORLD, &info));
    MT_CHECK(info != MPI_INFO_NULL, "Comm_get_info returned MPI_INFO_NULL");
    MT_MPI(MPI_Info_get_nkeys(info, &n));
    MT_MPI(MPI_Info_free(&info));

    /* MPI_Alloc_mem. */
    for (MPI_Aint sz = 0; sz <= 4 * MT_MIB; sz = sz ? sz * 8 : 1) {
        unsigned char *p = NULL;
        MT_MPI(MPI_Alloc_mem(sz, MPI_INFO_NULL, &p));
        MT_CHECK(p != NULL, "Alloc_mem(%ld) gave NULL", (long)sz);
        mt_fill(p, (size_t)sz, (uint32_t)sz);
        MT_VERIFY(p, (size_t)sz, (uint32_t)sz, "Alloc_mem memory");
        MT_MPI(MPI_Free_mem(p));
    }
    MT_MPI(MPI_Info_create(&info));
    MT_MPI(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    void *q = NULL;
    MT_MPI(MPI_Alloc_mem(100, info, &q));
    MT_MPI(MPI_Free_mem(q));
    MT_MPI(MPI_Info_free(&info));
    MT_ERRCLASS(MPI_Alloc_mem(-1, MPI_INFO_NULL, &q), MPI_ERR_SIZE,
                "Alloc_mem(-1)");
    return mt_finish("info");
}
