#!/bin/bash
# R rounds x benches; variants as ab.sh args
for r in $(seq ${R:-5}); do
 for b in ${BENCHES:-osu_barrier osu_allreduce osu_allgather osu_alltoall osu_reduce osu_bcast}; do
  a="-m 8:8"; [ $b = osu_barrier ] && a=""
  B=$b ARGS="$a" R=1 ./ab.sh "$@" | sed "s/^/$b /"
 done
done
