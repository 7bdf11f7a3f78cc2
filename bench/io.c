/* SPDX-License-Identifier: MIT */
/* MPI-IO strided write bandwidth: each of P ranks writes every P-th block
 * of B bytes (4 KiB by default) of a file of S bytes (256 MiB) under a
 * directory (/tmp) through a strided view, once with independent writes
 * (MPI_File_write) and once collectively (MPI_File_write_all), each
 * timed from open to close. Prints the median of R runs of each. Plain
 * MPI: builds against any MPI (bench/README.md, "MPI-IO").
 *
 *   bench_io [-s MiB] [-b bytes] [-r runs] [-d dir] [-a cb_nodes]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long long mib = 256;
    int blk = 4096, runs = 5;
    const char *dir = "/tmp", *cb_nodes = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "s:b:r:d:a:")) != -1) {
        if (opt == 's')
            mib = atoll(optarg);
        else if (opt == 'b')
            blk = atoi(optarg);
        else if (opt == 'r')
            runs = atoi(optarg);
        else if (opt == 'd')
            dir = optarg;
        else if (opt == 'a')
            cb_nodes = optarg;
    }
    long long total = mib << 20;
    long long nblk = total / blk / size; /* blocks per rank */
    char path[512];
    snprintf(path, sizeof(path), "%s/bench_io.%d.tmp", dir, (int)getppid());
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);

    /* Rank r's blocks: r, r + P, r + 2P, ... of the file. */
    MPI_Datatype ft, one;
    MPI_Type_contiguous(blk, MPI_BYTE, &one);
    MPI_Type_create_resized(one, 0, (MPI_Aint)blk * size, &ft);
    MPI_Type_commit(&ft);
    char *buf = malloc((size_t)nblk * blk);
    for (long long i = 0; i < nblk * blk; i++)
        buf[i] = (char)(i * 7 + rank);

    double *t[2];
    t[0] = calloc((size_t)runs, sizeof(double));
    t[1] = calloc((size_t)runs, sizeof(double));
    for (int r = 0; r < runs; r++) {
        for (int coll = 0; coll < 2; coll++) {
            MPI_File fh;
            MPI_Info info = MPI_INFO_NULL;
            if (cb_nodes) {
                MPI_Info_create(&info);
                MPI_Info_set(info, "cb_nodes", cb_nodes);
            }
            MPI_File_open(MPI_COMM_WORLD, path,
                          MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh);
            if (info != MPI_INFO_NULL)
                MPI_Info_free(&info);
            MPI_File_set_view(fh, (MPI_Offset)rank * blk, MPI_BYTE, ft,
                              "native", MPI_INFO_NULL);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            /* Large counts in pieces of at most 64 MiB per call. */
            long long left = nblk * blk, done = 0;
            while (left > 0) {
                int n = left > (64 << 20) ? (64 << 20) : (int)left;
                if (coll)
                    MPI_File_write_all(fh, buf + done, n, MPI_BYTE,
                                       MPI_STATUS_IGNORE);
                else
                    MPI_File_write(fh, buf + done, n, MPI_BYTE,
                                   MPI_STATUS_IGNORE);
                left -= n;
                done += n;
            }
            MPI_File_close(&fh); /* no sync: page cache bandwidth */
            double dt = MPI_Wtime() - t0, mx;
            MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            t[coll][r] = mx;
            if (rank == 0)
                unlink(path);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        qsort(t[0], (size_t)runs, sizeof(double), cmp_d);
        qsort(t[1], (size_t)runs, sizeof(double), cmp_d);
        double bytes = (double)nblk * blk * size;
        printf("# ranks %d, file %lld MiB, block %d B, median of %d\n", size,
               mib, blk, runs);
        printf("independent %.1f MB/s (%.3f s)\n", bytes / t[0][runs / 2] / 1e6,
               t[0][runs / 2]);
        printf("collective  %.1f MB/s (%.3f s)\n", bytes / t[1][runs / 2] / 1e6,
               t[1][runs / 2]);
    }
    free(buf);
    free(t[0]);
    free(t[1]);
    MPI_Type_free(&ft);
    MPI_Type_free(&one);
    MPI_Finalize();
    return 0;
}
