/* SPDX-License-Identifier: MIT */
/* MPI_Status_c2f / MPI_Status_f2c: a received status survives the round
 * trip through a Fortran INTEGER array (source at MPI_F_SOURCE, ...), and
 * a NULL or ignored status is MPI_ERR_ARG. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int peer = (mt_rank + 1) % mt_size,
        from = (mt_rank + mt_size - 1) % mt_size;
    int out[3] = {1, 2, 3}, in[3];
    MPI_Status st, back;
    MT_MPI(MPI_Sendrecv(out, 3, MPI_INT, peer, 9, in, 3, MPI_INT, from, 9,
                        MPI_COMM_WORLD, &st));
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MT_MPI(MPI_Status_c2f(&st, f));
    MT_EQ(f[MPI_F_SOURCE], from, "Fortran source");
    MT_EQ(f[MPI_F_TAG], 9, "Fortran tag");
    MT_MPI(MPI_Status_f2c(f, &back));
    int n = -1;
    MT_MPI(MPI_Get_count(&back, MPI_INT, &n));
    MT_EQ(n, 3, "count after the round trip");
    MT_EQ(back.MPI_SOURCE, from, "C source after the round trip");
    MT_ERRCLASS(MPI_Status_c2f(MPI_STATUS_IGNORE, f), MPI_ERR_ARG,
                "c2f of MPI_STATUS_IGNORE");
    MT_ERRCLASS(MPI_Status_f2c(NULL, &back), MPI_ERR_ARG, "f2c of NULL");
    return mt_finish("status_f2c");
}
