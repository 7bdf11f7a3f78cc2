#!/bin/bash
# bench_latency -d 0 and -d 16 under Ferry (auto and FERRY_COPY_ALIAS=off), MPICH, Open MPI; interleaved rounds
cd /tmp/s27/dist
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
S=${SIZES:-4096,16384,65536,262144,1048576}
for r in $(seq 1 ${ROUNDS:-5}); do
 for d in 0 16; do
  echo "=== ferry d=$d round=$r"; LD_LIBRARY_PATH=/work/main/build/lib /work/main/build/bin/mpiexec -n 2 ./lat_ferry -s $S -i 2000 -b -d $d | grep -v '#'
  echo "=== ferryoff d=$d round=$r"; FERRY_COPY_ALIAS=off LD_LIBRARY_PATH=/work/main/build/lib /work/main/build/bin/mpiexec -n 2 ./lat_ferry -s $S -i 2000 -b -d $d | grep -v '#'
  echo "=== mpich d=$d round=$r"; mpiexec.mpich -n 2 ./lat_mpich -s $S -i 2000 -b -d $d | grep -v '#'
  echo "=== ompi d=$d round=$r"; mpiexec.openmpi -n 2 --bind-to none ./lat_ompi -s $S -i 2000 -b -d $d | grep -v '#'
 done
done
