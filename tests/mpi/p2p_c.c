/* SPDX-License-Identifier: MIT */
/* The large-count (MPI-4 "_c") point-to-point calls beyond Send/Recv:
 * the synchronous, ready and buffered modes blocking and nonblocking,
 * the persistent requests (Send/Ssend/Rsend/Bsend/Recv_init_c),
 * Buffer_attach_c/detach_c, Mrecv_c/Imrecv_c, Get_count_c and
 * Get_elements_c, each around a ring (to the right, from the left) and
 * checked byte for byte and against the int form's status. Counts beyond
 * INT_MAX where they cost no memory: a status set to 3 GiB of bytes (the
 * int queries say MPI_UNDEFINED, the _c ones the count) and a 3 GiB
 * buffer attach (address space only: the int detach refuses its size).
 * Also the mpi_f08 status conversions. */
#include "mpitest.h"

#include <stdbool.h>
#include <sys/mman.h>

enum { N = 3000, BIG_GIB = 3 };

static int left, right;
static char sbuf[N], rbuf[N + 16];

/* The message rank 'src' sends with 'tag'. */
static void expect(int tag, MPI_Status *st, const char *what)
{
    MT_VERIFY(rbuf, N, (uint32_t)(left * 131 + tag), what);
    MT_EQ(st->MPI_SOURCE, left, what);
    MT_EQ(st->MPI_TAG, tag, what);
    int n;
    MPI_Count nc;
    MT_MPI(MPI_Get_count(st, MPI_BYTE, &n));
    MT_MPI(MPI_Get_count_c(st, MPI_BYTE, &nc));
    MT_EQ(n, N, what);
    MT_EQ(nc, N, what);
    MT_MPI(MPI_Get_elements_c(st, MPI_BYTE, &nc));
    MT_EQ(nc, N, what);
}

enum kind {
    K_SSEND,
    K_RSEND,
    K_BSEND,
    K_ISSEND,
    K_IRSEND,
    K_IBSEND,
    K_SEND_INIT,
    K_SSEND_INIT,
    K_RSEND_INIT,
    K_BSEND_INIT,
    K_NKINDS
};

static const char *const kind_name[] = {
    "Ssend_c",  "Rsend_c",     "Bsend_c",      "Issend_c",     "Irsend_c",
    "Ibsend_c", "Send_init_c", "Ssend_init_c", "Rsend_init_c", "Bsend_init_c"};

/* One ring exchange: the receive is posted (as a persistent Recv_init_c
 * for every other kind) before a barrier, so ready sends are legal. */
static void ring(enum kind k)
{
    int tag = 10 + (int)k;
    const char *what = kind_name[k];
    mt_fill(sbuf, N, (uint32_t)(mt_rank * 131 + tag));
    memset(rbuf, 0, sizeof(rbuf));
    MPI_Request rr, sr = MPI_REQUEST_NULL;
    bool persistent_recv = k % 2;
    if (persistent_recv) {
        MT_MPI(
            MPI_Recv_init_c(rbuf, N, MPI_BYTE, left, tag, MPI_COMM_WORLD, &rr));
        MT_MPI(MPI_Start(&rr));
    } else {
        MT_MPI(MPI_Irecv_c(rbuf, N, MPI_BYTE, left, tag, MPI_COMM_WORLD, &rr));
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Count n = N;
    MPI_Comm w = MPI_COMM_WORLD;
    switch (k) {
    case K_SSEND:
        MT_MPI(MPI_Ssend_c(sbuf, n, MPI_BYTE, right, tag, w));
        break;
    case K_RSEND:
        MT_MPI(MPI_Rsend_c(sbuf, n, MPI_BYTE, right, tag, w));
        break;
    case K_BSEND:
        MT_MPI(MPI_Bsend_c(sbuf, n, MPI_BYTE, right, tag, w));
        break;
    case K_ISSEND:
        MT_MPI(MPI_Issend_c(sbuf, n, MPI_BYTE, right, tag, w, &sr));
        break;
    case K_IRSEND:
        MT_MPI(MPI_Irsend_c(sbuf, n, MPI_BYTE, right, tag, w, &sr));
        break;
    case K_IBSEND:
        MT_MPI(MPI_Ibsend_c(sbuf, n, MPI_BYTE, right, tag, w, &sr));
        break;
    case K_SEND_INIT:
        MT_MPI(MPI_Send_init_c(sbuf, n, MPI_BYTE, right, tag, w, &sr));
        break;
    case K_SSEND_INIT:
        MT_MPI(MPI_Ssend_init_c(sbuf, n, MPI_BYTE, right, tag, w, &sr));
        break;
    case K_RSEND_INIT:
        MT_MPI(MPI_Rsend_init_c(sbuf, n, MPI_BYTE, right, tag, w, &sr));
        break;
    case K_BSEND_INIT:
        MT_MPI(MPI_Bsend_init_c(sbuf, n, MPI_BYTE, right, tag, w, &sr));
        break;
    default:
        MT_FAIL("kind %d", (int)k);
    }
    bool persistent_send = k >= K_SEND_INIT;
    if (persistent_send)
        MT_MPI(MPI_Start(&sr));
    MPI_Status st;
    MT_MPI(MPI_Wait(&rr, &st));
    MT_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    expect(tag, &st, what);
    for (int i = N; i < N + 16; i++)
        MT_EQ(rbuf[i], 0, "guard after the message");
    if (persistent_send)
        MT_MPI(MPI_Request_free(&sr));
    if (persistent_recv)
        MT_MPI(MPI_Request_free(&rr));
}

static void modes(void)
{
    /* Room for two buffered messages at a time. */
    MPI_Count bsize = 2 * (N + MPI_BSEND_OVERHEAD);
    void *bbuf = mt_malloc((size_t)bsize);
    MT_MPI(MPI_Buffer_attach_c(bbuf, bsize));
    for (int k = 0; k < K_NKINDS; k++)
        ring((enum kind)k);
    void *back;
    MPI_Count bback;
    MT_MPI(MPI_Buffer_detach_c(&back, &bback));
    MT_CHECK(back == bbuf, "Buffer_detach_c gave another address");
    MT_EQ(bback, bsize, "Buffer_detach_c size");
    /* The int twins see the same buffer. */
    MT_MPI(MPI_Buffer_attach_c(bbuf, bsize));
    int ib;
    MT_MPI(MPI_Buffer_detach(&back, &ib));
    MT_EQ(ib, bsize, "Buffer_detach of a Buffer_attach_c buffer");
    free(bbuf);

    /* A 3 GiB buffer (address space only, never touched): the int detach
     * cannot say its size and refuses, leaving it attached. */
    size_t big = (size_t)BIG_GIB << 30;
    void *vm = mmap(NULL, big, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (vm != MAP_FAILED) {
        MT_MPI(MPI_Buffer_attach_c(vm, (MPI_Count)big));
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MT_ERRCLASS(MPI_Buffer_detach(&back, &ib), MPI_ERR_COUNT,
                    "Buffer_detach of a 3 GiB buffer");
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MT_MPI(MPI_Buffer_detach_c(&back, &bback));
        MT_CHECK(back == vm, "Buffer_detach_c of the 3 GiB buffer");
        MT_EQ(bback, (MPI_Count)big, "Buffer_detach_c 3 GiB size");
        munmap(vm, big);
    }
}

static void matched(void)
{
    for (int nb = 0; nb < 2; nb++) {
        int tag = 40 + nb;
        mt_fill(sbuf, N, (uint32_t)(mt_rank * 131 + tag));
        memset(rbuf, 0, sizeof(rbuf));
        MPI_Request sr;
        MT_MPI(MPI_Isend_c(sbuf, N, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sr));
        MPI_Message msg;
        MPI_Status st;
        if (!nb) {
            MT_MPI(MPI_Mprobe(left, tag, MPI_COMM_WORLD, &msg, &st));
            MPI_Count c;
            MT_MPI(MPI_Get_count_c(&st, MPI_BYTE, &c));
            MT_EQ(c, N, "Mprobe count");
            MT_MPI(MPI_Mrecv_c(rbuf, c, MPI_BYTE, &msg, &st));
        } else {
            int flag = 0;
            while (!flag)
                MT_MPI(MPI_Improbe(left, tag, MPI_COMM_WORLD, &flag, &msg,
                                   MPI_STATUS_IGNORE));
            MPI_Request rr;
            MT_MPI(MPI_Imrecv_c(rbuf, (MPI_Count)N, MPI_BYTE, &msg, &rr));
            MT_MPI(MPI_Wait(&rr, &st));
        }
        MT_CHECK(msg == MPI_MESSAGE_NULL, "message handle not consumed");
        expect(tag, &st, nb ? "Imrecv_c" : "Mrecv_c");
        MT_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    }
    /* MPI_PROC_NULL: the empty-message status. */
    MPI_Message msg;
    MPI_Status st;
    MT_MPI(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    MT_MPI(MPI_Mrecv_c(rbuf, 5, MPI_BYTE, &msg, &st));
    MT_EQ(st.MPI_SOURCE, MPI_PROC_NULL, "Mrecv_c from MPI_PROC_NULL");
}

/* Counts beyond INT_MAX, from a status set by hand. */
static void big_status(void)
{
    MPI_Status st;
    MPI_Count big = (MPI_Count)BIG_GIB << 30, c;
    int n;
    MT_MPI(MPI_Status_set_elements_x(&st, MPI_BYTE, big));
    MT_MPI(MPI_Get_count(&st, MPI_BYTE, &n));
    MT_EQ(n, MPI_UNDEFINED, "Get_count of 3 GiB");
    MT_MPI(MPI_Get_count_c(&st, MPI_BYTE, &c));
    MT_EQ(c, big, "Get_count_c of 3 GiB");
    MT_MPI(MPI_Get_elements(&st, MPI_BYTE, &n));
    MT_EQ(n, MPI_UNDEFINED, "Get_elements of 3 GiB");
    MT_MPI(MPI_Get_elements_c(&st, MPI_BYTE, &c));
    MT_EQ(c, big, "Get_elements_c of 3 GiB");
    MT_MPI(MPI_Get_count_c(&st, MPI_INT, &c));
    MT_EQ(c, big / 4, "Get_count_c in ints");
    /* The same through a 3 GiB contiguous type: one element. */
    MPI_Datatype t;
    MT_MPI(MPI_Type_contiguous_c(big, MPI_BYTE, &t));
    MT_MPI(MPI_Type_commit(&t));
    MT_MPI(MPI_Get_count_c(&st, t, &c));
    MT_EQ(c, 1, "Get_count_c of one 3 GiB element");
    MT_MPI(MPI_Get_elements_c(&st, t, &c));
    MT_EQ(c, big, "Get_elements_c counts the basic elements");
    MT_MPI(MPI_Type_free(&t));
    /* MPI_Status_set_elements_c (MPI 4.0; missing until MPICH's
     * datatype/large_count failed to link): 2 GiB + 3 ints. */
    MPI_Count ints = ((MPI_Count)1 << 31) + 3;
    MT_MPI(MPI_Status_set_elements_c(&st, MPI_INT, ints));
    MT_MPI(MPI_Get_elements_c(&st, MPI_INT, &c));
    MT_EQ(c, ints, "Get_elements_c after Status_set_elements_c");
    MT_MPI(MPI_Get_count_c(&st, MPI_BYTE, &c));
    MT_EQ(c, ints * 4, "bytes after Status_set_elements_c");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MT_ERRCLASS(MPI_Status_set_elements_c(&st, MPI_INT, -1), MPI_ERR_COUNT,
                "Status_set_elements_c with a negative count");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void f08_status(void)
{
    MPI_Status st, back;
    memset(&st, 0, sizeof(st));
    st.MPI_SOURCE = 3;
    st.MPI_TAG = 77;
    st.MPI_ERROR = MPI_ERR_TRUNCATE;
    MT_MPI(MPI_Status_set_elements_x(&st, MPI_BYTE, 12345));
    MPI_F08_status f08, f08b;
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MT_MPI(MPI_Status_c2f08(&st, &f08));
    MT_EQ(f08.MPI_SOURCE, 3, "c2f08 source");
    MT_EQ(f08.MPI_TAG, 77, "c2f08 tag");
    MT_EQ(f08.MPI_ERROR, MPI_ERR_TRUNCATE, "c2f08 error");
    MT_MPI(MPI_Status_f082f(&f08, f));
    MT_EQ(f[MPI_F_SOURCE], 3, "f082f source");
    MT_EQ(f[MPI_F_TAG], 77, "f082f tag");
    MT_EQ(f[MPI_F_ERROR], MPI_ERR_TRUNCATE, "f082f error");
    MT_MPI(MPI_Status_f2f08(f, &f08b));
    MT_CHECK(memcmp(&f08, &f08b, sizeof(f08)) == 0, "f2f08 round trip");
    MT_MPI(MPI_Status_f082c(&f08b, &back));
    MT_CHECK(memcmp(&st, &back, sizeof(st)) == 0, "f082c round trip");
    MPI_Count c;
    MT_MPI(MPI_Get_count_c(&back, MPI_BYTE, &c));
    MT_EQ(c, 12345, "count after the round trip");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MT_ERRCLASS(MPI_Status_c2f08(&st, MPI_F08_STATUS_IGNORE), MPI_ERR_ARG,
                "c2f08 into MPI_F08_STATUS_IGNORE");
    MT_ERRCLASS(MPI_Status_f082c(&f08, MPI_STATUS_IGNORE), MPI_ERR_ARG,
                "f082c into MPI_STATUS_IGNORE");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    right = (mt_rank + 1) % mt_size;
    left = (mt_rank + mt_size - 1) % mt_size;
    modes();
    matched();
    big_status();
    f08_status();
    return mt_finish("p2p_c");
}
