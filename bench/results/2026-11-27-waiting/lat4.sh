#!/bin/bash
B=/work/main/build/bin
for r in $(seq ${R:-5}); do
  for v in "$@"; do
    name=${v%%:*}; envs=$(echo "${v#*:}" | tr , " ")
    t=$(env $envs timeout 120 $B/mpiexec -n 4 $B/bench_latency -s 8 -i 500 -w 50 -t 2 2>&1 | grep -E "^ *8 " | awk '{print $2}')
    echo "$name $t"
  done
done
