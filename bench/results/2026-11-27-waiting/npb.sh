#!/bin/bash
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
p=${PROG:-mg}; n=${N:-4}
for r in $(seq ${R:-5}); do
  for v in "$@"; do
    name=${v%%:*}; envs=$(echo "${v#*:}" | tr , " ")
    bld=/work/main/build; [ "$name" = before ] && bld=/tmp/s26/before/build
    if [ $name = ompi ]; then out=$(cd /tmp/s25/npbw/npb-ompi/bin && timeout 300 mpirun.openmpi --oversubscribe --bind-to none -n $n ./$p.A.x 2>&1)
    else out=$(cd /tmp/s25/npbw/npb-ferry/bin && env $envs LD_LIBRARY_PATH=$bld/lib timeout 300 $bld/bin/mpiexec -n $n ./$p.A.x 2>&1); fi
    t=$(echo "$out" | grep "Time in seconds" | awk '{print $NF}'); v=$(echo "$out" | grep -c "SUCCESSFUL")
    echo "$name $t:$v"
  done
done
