#!/bin/bash
B=/work/main/build/bin; O=/tmp/ncoll2/meas/w1/osu-ferry
for i in $(seq 1 $ROUNDS); do for v in before after; do
 if [ $v = before ]; then L=/tmp/s25/before-src/build/lib; else L=/work/main/build/lib; fi
 export LD_LIBRARY_PATH=$L
 echo "ibarrier4 $v $($B/mpiexec -n 4 --bind-to none $O/osu_ibarrier -i 1000 2>&1 | tail -1 | awk '{print $2}')"
 echo "iallgather4 $v $($B/mpiexec -n 4 --bind-to none $O/osu_iallgather -m 8:8 -i 1000 2>&1 | awk '$1==8{print $2}')"
 echo "ialltoall4 $v $($B/mpiexec -n 4 --bind-to none $O/osu_ialltoall -m 8:8 -i 1000 2>&1 | awk '$1==8{print $2}')"
 echo "ibcast4 $v $($B/mpiexec -n 4 --bind-to none $O/osu_ibcast -m 8:8 -i 1000 2>&1 | awk '$1==8{print $2}')"
 echo "iallgatherv4 $v $($B/mpiexec -n 4 --bind-to none $O/osu_iallgatherv -m 8:8 -i 1000 2>&1 | awk '$1==8{print $2}')"
 echo "barrier4 $v $($B/mpiexec -n 4 --bind-to none $O/osu_barrier -i 5000 2>&1 | tail -1 | awk '{print $NF}')"
done; done
