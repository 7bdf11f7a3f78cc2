#!/bin/bash
# A/B of reduce_direct: off (FERRY_COLL_DIRECT_MIN=1G) vs on (the default), and Open MPI; osu_allreduce/osu_reduce, NP ranks
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
NP=${NP:-4}; R=${R:-4}
for i in $(seq $R); do
 for b in osu_allreduce osu_reduce; do
  off=$(FERRY_COLL_DIRECT_MIN=1G /work/main/build/bin/mpiexec -n $NP /tmp/s44/cw/osu-ferry/$b -m 65536:1048576 | awk '/^(65536|262144|1048576) /{printf "%s ", $2}')
  on=$(/work/main/build/bin/mpiexec -n $NP /tmp/s44/cw/osu-ferry/$b -m 65536:1048576 | awk '/^(65536|262144|1048576) /{printf "%s ", $2}')
  o=$(mpiexec.openmpi -n $NP --oversubscribe --bind-to none /tmp/s44/cw/osu-ompi/$b -m 65536:1048576 | awk '/^(65536|262144|1048576) /{printf "%s ", $2}')
  echo "$b off: $off| on: $on| ompi: $o"
 done
done
