#!/bin/bash
# late_reply.sh RUNS NEW_BUILD BEFORE_BUILD TUNING_FILE: seed 001's late
# receiver (bench_earlylate --mode late), auto of two builds (alternate jobs)
# against push-zero and the write protocol interleaved in each job; medians
# of each setting's median comm (us) over the jobs. TUNING_FILE: an empty
# file, so every build runs its built-in defaults.
N=$1; NEW=$2; BEFORE=$3; TUNE=$4; shift 4
for i in $(seq $N); do
 for B in $NEW $BEFORE; do
  tag=$( [ $B = $NEW ] && echo new || echo before )
  FERRY_TUNING=$TUNE $B/bin/mpiexec -n 2 $B/bin/bench_earlylate --mode late -s 131072,262144,524288,1048576,2097152,4194304 "$@" \
   --setting 'auto:' --setting 'push-zero:FERRY_PROTO=pushzero;FERRY_RECV_WRITE=0' \
   --setting 'write:FERRY_PROTO=pushzero;FERRY_RECV_WRITE=1;FERRY_RECV_WRITE_MIN=8192' | grep -v '^#' | grep -v setting | sed "s/^/$tag-/"
 done
done | python3 -c '
import sys,collections,statistics as st
d=collections.defaultdict(list)
for l in sys.stdin:
    f=l.strip().split(",")
    if len(f)<6: continue
    d[(f[0],int(f[2]))].append(float(f[5]))
sizes=sorted({k[1] for k in d})
labs=["new-auto","before-auto","new-push-zero","before-push-zero","new-write","before-write"]
print("| size | auto (new) | auto (before) | push-zero | write | auto new / push-zero | auto before / push-zero | write / push-zero |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
for s in sizes:
    m={l:st.median(d[(l,s)]) for l in labs}
    pz=st.median(d[("new-push-zero",s)]+d[("before-push-zero",s)])
    wr=st.median(d[("new-write",s)]+d[("before-write",s)])
    print("| %d KiB | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f |"%(s//1024,m["new-auto"],m["before-auto"],pz,wr,m["new-auto"]/pz,m["before-auto"]/pz,wr/pz))
'
