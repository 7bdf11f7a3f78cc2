#!/bin/bash
# Seed 002's Table 2 for Ferry: NPB class A at 4 ranks with FERRY_STATS=1.
cd /tmp/npb-cmp/npb-ferry/bin
out=/tmp/table2
mkdir -p $out
for p in ep mg cg is lu sp bt ft; do
  LD_LIBRARY_PATH=/work/main/build/lib FERRY_STATS=1 timeout 300 /work/main/build/bin/mpiexec -n 4 ./$p.A.x > $out/$p.log 2>&1
  echo "$p rc=$?"
done
