#!/bin/bash
# usage: B=osu_barrier ARGS=... R=5 ab.sh "name:ENV=.. ENV2=.." ... ; 'ompi' = open mpi
F=${F:-/tmp/ncoll2/meas/w1/osu-ferry}; O=/tmp/ncoll2/meas/w1/osu-ompi
BUILD=${BUILD:-/work/main/build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
b=${B:-osu_barrier}; args=${ARGS:-}; n=${N:-4}
for r in $(seq ${R:-5}); do
  for v in "$@"; do
    name=${v%%:*}; envs=$(echo "${v#*:}" | tr , " ")
    if [ "$name" = ompi ]; then
      out=$(timeout 60 mpirun.openmpi --oversubscribe --bind-to none -n $n $O/$b $args 2>&1)
    else
      bld=$BUILD; [ "$name" = before ] && bld=/tmp/s26/before/build
      out=$(env $envs LD_LIBRARY_PATH=$bld/lib timeout 60 $bld/bin/mpiexec -n $n $F/$b $args 2>&1)
    fi
    echo "$name $(echo "$out" | grep -E "^ *[0-9]" | awk '{print $1":"$2}' | tr '\n' ' ')"
  done
done
