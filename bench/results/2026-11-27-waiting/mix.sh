#!/bin/bash
# usage: R=5 mix.sh "name:ENV=..,ENV2=.." ... ; prints name m4:.. m8:.. fl:.. nb:..
BUILD=${BUILD:-/work/main/build}; B=$BUILD/bin
for r in $(seq ${R:-5}); do
  for v in "$@"; do
    name=${v%%:*}; envs=$(echo "${v#*:}" | tr , " ")
    line="$name"; B=$BUILD/bin; [ "$name" = before ] && B=/tmp/s26/before/build/bin
    for c in "m4:4:-n 1000" "m8:8:-n 500" "fl:3:--flood -n 20000" "nb:4:--nbstress -n 1000"; do
      k=${c%%:*}; rest=${c#*:}; n=${rest%%:*}; a=${rest#*:}; [[ $k =~ ${ONLY:-.} ]] || continue
      t=$(env $envs timeout 120 $B/mpiexec -n $n $B/bench_mixed $a 2>&1 | grep '^mixed ' | sed 's/.*time_s=\([0-9.]*\).*/\1/')
      line="$line $k:$t"
    done
    echo "$line"
  done
done
