#!/bin/bash
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
P=${P:-/tmp/s26/red/bb}; n=${N:-4}
for r in $(seq ${R:-5}); do
  for v in "$@"; do
    name=${v%%:*}; envs=$(echo "${v#*:}" | tr , " ")
    bld=/work/main/build; [ "$name" = before ] && bld=/tmp/s26/before/build
    if [ $name = ompi ]; then out=$(timeout 60 mpirun.openmpi --oversubscribe --bind-to none -n $n ${P}_ompi $ARGS 2>&1)
    else out=$(env $envs LD_LIBRARY_PATH=$bld/lib timeout 60 $bld/bin/mpiexec -n $n $P $ARGS 2>&1); fi
    echo "$name $out"
  done
done
