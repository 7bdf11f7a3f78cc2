#!/bin/bash
# BUILD=<ferry build> TUNE=<empty file> lab11.sh RUNS MODE SIZES [args]:
# bench_earlylate with the protocol laboratory's eleven settings
# interleaved (as ferry-bench --protocols runs them), RUNS jobs; prints
# each setting's median over the jobs of its median comm (us) for auto,
# push-zero, push-pull 192 and write, and the ratio to the best of all
# eleven.
N=$1; MODE=$2; SIZES=$3; shift 3
for i in $(seq $N); do
FERRY_TUNING="$TUNE" "$BUILD"/bin/mpiexec -n 2 "$BUILD"/bin/bench_earlylate --mode $MODE -s $SIZES "$@" \
 --setting 'auto:' \
 --setting 'push-zero:FERRY_PROTO=pushzero;FERRY_RECV_WRITE=0' \
 --setting 'push-pull 64:FERRY_PROTO=pushpull;FERRY_BTP=64;FERRY_RECV_WRITE=0' \
 --setting 'push-pull 192:FERRY_PROTO=pushpull;FERRY_BTP=192;FERRY_RECV_WRITE=0' \
 --setting 'push-pull 1K:FERRY_PROTO=pushpull;FERRY_BTP=1024;FERRY_RECV_WRITE=0' \
 --setting 'push-pull 4K:FERRY_PROTO=pushpull;FERRY_BTP=4096;FERRY_RECV_WRITE=0' \
 --setting 'push-pull 16K:FERRY_PROTO=pushpull;FERRY_BTP=16384;FERRY_RECV_WRITE=0' \
 --setting 'push-pull 64K:FERRY_PROTO=pushpull;FERRY_BTP=65536;FERRY_RECV_WRITE=0' \
 --setting 'push-pull 256K:FERRY_PROTO=pushpull;FERRY_BTP=262144;FERRY_RECV_WRITE=0' \
 --setting 'push-all:FERRY_PROTO=pushall;FERRY_RECV_WRITE=0' \
 --setting 'write:FERRY_PROTO=pushzero;FERRY_RECV_WRITE=1;FERRY_RECV_WRITE_MIN=8192' | grep -v '^#' | grep -v setting
done | python3 -c '
import sys,collections,statistics as st
d=collections.defaultdict(list)
for l in sys.stdin:
    f=l.strip().split(",")
    if len(f)<6: continue
    d[(f[0],int(f[2]))].append(float(f[5]))
sizes=sorted({k[1] for k in d})
labs=["auto","push-zero","push-pull 192","write"]
print("size " + " ".join("%14s"%l for l in labs))
for s in sizes:
    best=min(st.median(d[(l,s)]) for l in d if l[1]==s) if False else min(st.median(v) for k,v in d.items() if k[1]==s)
    print("%7d "%s + " ".join("%8.1f(%.2f)"%(st.median(d[(l,s)]),st.median(d[(l,s)])/best) for l in labs))
'
