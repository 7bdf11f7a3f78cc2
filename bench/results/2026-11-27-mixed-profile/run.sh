#!/bin/bash
# bench_mixed --profile under Ferry, MPICH, Open MPI, interleaved
set -u
cd /tmp/s25/prof
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
M=/work/main/bench/mixed.c
[[ -x mixed_ferry ]] || /work/main/build/bin/mpicc -O2 -o mixed_ferry $M
[[ -x mixed_mpich ]] || mpicc.mpich -O2 -o mixed_mpich $M
[[ -x mixed_ompi ]] || mpicc.openmpi -O2 -o mixed_ompi $M
R=${ROUNDS:-5}
for i in $(seq 1 $R); do
  for np in 2 4; do
    if [[ $np == 2 ]]; then a="-n 10000 -b"; else a="-n 1000"; fi
    echo "=== ferry np=$np round=$i"; /work/main/build/bin/mpiexec -n $np --bind-to none ./mixed_ferry $a --profile
    echo "=== mpich np=$np round=$i"; mpiexec.mpich -n $np ./mixed_mpich $a --profile
    echo "=== ompi np=$np round=$i"; mpiexec.openmpi -n $np --oversubscribe --bind-to none ./mixed_ompi $a --profile
  done
done
