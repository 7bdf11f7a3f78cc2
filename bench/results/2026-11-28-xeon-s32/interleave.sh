#!/bin/bash
# The laboratory's interleaving (bench/README.md): push-zero against the
# write protocol for an early receiver, 64 KiB - 1 MiB, interleaved in one
# job with the laboratory's other main settings (six read-like ones) by
# blocks of 1 and 16 iterations, the two alone in one job by blocks of 1,
# 4 and 16 (--block), and each alone in its own job.
# Usage: interleave.sh BUILD_DIR [RUNS]
b=${1:?build dir}; runs=${2:-2}
pz="pz:FERRY_PROTO=pushzero;FERRY_RECV_WRITE=0"
wr="wr:FERRY_PROTO=pushzero;FERRY_RECV_WRITE=1;FERRY_RECV_WRITE_MIN=8192"
sizes=65536,131072,262144,524288,1048576
empty=$(mktemp); trap 'rm -f "$empty"' EXIT
export FERRY_TUNING=$empty # the defaults, not a tuning file's
lab=(--setting "auto:" --setting "$pz"
     --setting "pp192:FERRY_PROTO=pushpull;FERRY_BTP=192;FERRY_RECV_WRITE=0"
     --setting "pp4k:FERRY_PROTO=pushpull;FERRY_BTP=4096;FERRY_RECV_WRITE=0"
     --setting "pp16k:FERRY_PROTO=pushpull;FERRY_BTP=16384;FERRY_RECV_WRITE=0"
     --setting "pp64k:FERRY_PROTO=pushpull;FERRY_BTP=65536;FERRY_RECV_WRITE=0"
     --setting "pa:FERRY_PROTO=pushall;FERRY_RECV_WRITE=0" --setting "$wr")
for r in $(seq "$runs"); do
  for blk in 1 16; do
    echo "# run $r, the laboratory's 8 settings in one job, --block $blk"
    "$b/bin/mpiexec" -n 2 --bind-to core "$b/bin/bench_earlylate" --mode early \
      -s $sizes --block $blk "${lab[@]}" | grep -E '^(pz|wr),'
  done
  for blk in 1 4 16; do
    echo "# run $r, one job, --block $blk"
    "$b/bin/mpiexec" -n 2 --bind-to core "$b/bin/bench_earlylate" --mode early \
      -s $sizes --block $blk --setting "$pz" --setting "$wr" | grep -E '^(pz|wr),'
  done
  for s in "FERRY_RECV_WRITE=0" "FERRY_RECV_WRITE=1 FERRY_RECV_WRITE_MIN=8192"; do
    echo "# run $r, alone: FERRY_PROTO=pushzero $s"
    env FERRY_PROTO=pushzero $s "$b/bin/mpiexec" -n 2 --bind-to core \
      "$b/bin/bench_earlylate" --mode early -s $sizes | grep -E '^early,'
  done
done
