#!/bin/bash
# usage: rmabw.sh REPS ; prints per-run rows for put_bw/get_bw at selected sizes
. /tmp/s45/env.sh
cd /work/main
sizes="8 256 1024 4096 8192 16384 32768 65536 1048576"
sel() { awk -v s="$sizes" 'BEGIN{n=split(s,a," ");for(i=1;i<=n;i++)w[a[i]]=1} !/^#/ && ($1 in w) {printf "%s:%s ", $1,$2} END{print ""}'; }
for r in $(seq $1); do
  for b in pbw gbw; do
    echo -n "$b base: "; LD_LIBRARY_PATH=/tmp/s45/base/b/lib FERRY_NODES=2 timeout 300 build/bin/mpiexec -n 2 /tmp/s45/${b}_ferry -w allocate -s flush 2>&1 | sel
    echo -n "$b new:  "; FERRY_NODES=2 timeout 300 build/bin/mpiexec -n 2 /tmp/s45/${b}_ferry -w allocate -s flush 2>&1 | sel
    echo -n "$b ompi: "; timeout 300 mpirun.openmpi --oversubscribe --mca btl tcp,self --mca osc pt2pt -n 2 /tmp/s45/${b}_openmpi -w allocate -s flush 2>&1 | sel
  done
done
