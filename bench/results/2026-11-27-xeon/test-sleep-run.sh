#!/bin/bash
# usage: run.sh ROUNDS variant... ; variant "name:ENV=V,ENV=V"
R=$1; shift
for r in $(seq $R); do
  for v in "$@"; do
    name=${v%%:*}; envs=${v#*:}
    for np in 4 8; do
      n=1000; [ $np = 8 ] && n=500
      t=$(env ${envs//,/ } /work/main/build/bin/mpiexec -n $np /tmp/s28/mixed_ferry -n $n | awk -F'[ =]' '/^mixed/{print $3}')
      echo "$name np$np $t"
    done
    t=$(env ${envs//,/ } /work/main/build/bin/mpiexec -n 3 /tmp/s28/mixed_ferry --flood -n 20000 | awk -F'[ =]' '/^mixed/{print $3}')
    echo "$name flood $t"
  done
done
