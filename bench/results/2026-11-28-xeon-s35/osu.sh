#!/bin/bash
# usage: osu.sh BENCH SIZE [NP] [REPS] [impls]  -> one line per impl per rep
B=$1; S=$2; NP=${3:-2}; R=${4:-3}; IM=${5:-"ferry ompi mpich"}
D=/tmp/ferry-compare-tns_g61u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
FB=${FB:-/work/main/build}
if [ $NP -gt 2 ]; then FBIND="--bind-to none"; OBIND="--oversubscribe --bind-to none"; MBIND=""; else FBIND="--bind-to core"; OBIND="--bind-to core"; MBIND="-bind-to core"; fi
for r in $(seq $R); do for im in $IM; do
 case $im in
 ferry) cmd="$FB/bin/mpiexec -n $NP $FBIND $D/osu-ferry/$B";;
 ompi) cmd="mpirun.openmpi -n $NP $OBIND $D/osu-ompi/$B";;
 mpich) cmd="mpiexec.mpich -n $NP $MBIND $D/osu-mpich/$B";;
 esac
 if [ "$B" = osu_barrier -o "$B" = osu_ibarrier ]; then a=""; else a="-m $S:$S"; fi
 out=$(LD_LIBRARY_PATH=$FB/lib $cmd -i ${IT:-200} -x 20 $a 2>&1 | grep -E "^ *[0-9]" | tail -1)
 echo "$im $B $S: $out"
done; done
