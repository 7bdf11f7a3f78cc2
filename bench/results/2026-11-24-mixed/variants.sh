#!/bin/sh
# Interleaved Ferry variants on the mixed benchmark (same binary).
F=/work/wt-bench/build/bin/mpiexec
B=/work/wt-bench/build/bin/bench_mixed
for round in 1 2 3; do
 for np_n in "4 1000" "8 500" "3 flood"; do
  set -- $np_n; np=$1
  if [ "$2" = flood ]; then args="--flood -n 20000"; else args="-n $2"; fi
  for v in default "FERRY_XFER=cma" "FERRY_XFER=shmbuf" "FERRY_XFER=queue" "FERRY_WAIT=block" "FERRY_XFER=cma FERRY_SPLIT_MIN=0" "FERRY_SPIN=100"; do
   if [ "$v" = default ]; then e=""; else e="$v"; fi
   t=$(env $e timeout 120 $F -n $np --bind-to none $B $args -T 60 2>&1 | grep '^mixed' | sed 's/.*time_s=\([0-9.]*\).*/\1/')
   echo "np=$np args='$args' [$v] ${t:-FAILED}"
  done
 done
done
