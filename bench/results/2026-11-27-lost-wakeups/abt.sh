#!/bin/bash
B=/work/main/build/bin; O=/tmp/ncoll2/meas/w1/osu-ferry; N=/tmp/s25/npbw/npb-ferry/bin
export LD_LIBRARY_PATH=/work/main/build/lib
IFS="|" read -r -a VV <<<"$VARIANTS"
for i in $(seq 1 $ROUNDS); do for v in "${VV[@]}"; do
 export XT=$v
 echo "barrier4 $v $($B/mpiexec -n 4 --bind-to none $O/osu_barrier -i 5000 2>&1 | tail -1 | awk "{print \$NF}")"
 echo "allreduce4 $v $($B/mpiexec -n 4 --bind-to none $O/osu_allreduce -m 8:8 -i 5000 2>&1 | awk '$1==8{print $2}')"
 echo "ibarrier4 $v $($B/mpiexec -n 4 --bind-to none $O/osu_ibarrier -i 1000 2>&1 | tail -1 | awk '{print $2}')"
 echo "iallgather4 $v $($B/mpiexec -n 4 --bind-to none $O/osu_iallgather -m 8:8 -i 1000 2>&1 | awk '$1==8{print $2}')"
 echo "ialltoall4 $v $($B/mpiexec -n 4 --bind-to none $O/osu_ialltoall -m 8:8 -i 1000 2>&1 | awk '$1==8{print $2}')"
 echo "bcast4_64k $v $($B/mpiexec -n 4 --bind-to none $O/osu_bcast -m 65536:65536 -i 1000 2>&1 | awk '$1==65536{print $2}')"
 echo "e $v $($B/mpiexec -n 4 --bind-to none /tmp/s25/prof/mixed_ferry -n 1000 | grep -o 'time_s=[0-9.]*' | cut -d= -f2)"
 echo "f $v $($B/mpiexec -n 8 --bind-to none /tmp/s25/prof/mixed_ferry -n 500 | grep -o 'time_s=[0-9.]*' | cut -d= -f2)"
 echo "g $v $($B/mpiexec -n 3 --bind-to none /tmp/s25/prof/mixed_ferry --flood -n 20000 | grep -o 'time_s=[0-9.]*' | cut -d= -f2)"
 (cd /tmp/s25 && echo "mg4 $v $($B/mpiexec -n 4 --bind-to none $N/mg.A.x 2>&1 | awk '/Mop\/s total/{print 1000/$4}')")
 (cd /tmp/s25 && echo "is4 $v $($B/mpiexec -n 4 --bind-to none $N/is.A.x 2>&1 | awk '/Mop\/s total/{print 1000/$4}')")
done; done
