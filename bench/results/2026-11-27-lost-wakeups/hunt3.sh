#!/bin/bash
export LD_LIBRARY_PATH=/work/main/build/lib FY_DBG_TIMEOUT=1
O=/tmp/ncoll2/meas/w1/osu-ferry; B=/work/main/build/bin
tot=0
for i in $(seq 1 ${N:-40}); do
  for p in "osu_ibarrier -i 1000" "osu_iallgather -m 8:8 -i 1000" "osu_ialltoall -m 8:8 -i 1000" "osu_ibcast -m 8:8 -i 1000"; do
    $B/mpiexec -n 4 --bind-to none $O/$p > /tmp/s25/h3.out 2>&1
    n=$(grep -c 'timed out' /tmp/s25/h3.out); tot=$((tot+n))
    [ $n -gt 0 ] && echo "run $i $p: $n"
  done
done
echo "total timeouts $tot in $i rounds"
