#!/bin/bash
# A/B across two virtual nodes: base (session start) vs new, interleaved.
export FERRY_NODES=2 FERRY_OFI_PROVIDER=tcp
out=${OUT:-/tmp/s24/ab}
for r in 1 2 3 4 5 6 7; do
  for b in base new; do
    bd=/work/main/build; [[ $b == base ]] && bd=/tmp/s24/base-src/build
    for net in tcp ofi; do
      FERRY_NET=$net $bd/bin/mpiexec -n 2 $bd/bin/bench_earlylate --mode both --blocking -s 64K,256K,1M,4M -i 30 2>&1 | grep -v '^#' > $out/el_${b}_${net}_$r.csv
      FERRY_NET=$net $bd/bin/mpiexec -n 2 $bd/bin/bench_latency -s 0,8,64K,256K,1M,4M -i 2000 2>&1 | grep -v '^#' > $out/lat_${b}_${net}_$r.txt
      FERRY_NET=$net $bd/bin/mpiexec -n 2 $bd/bin/bench_bw -s 64K,1M,4M 2>&1 | grep -v '^#' > $out/bw_${b}_${net}_$r.txt
    done
  done
done
echo done
