#!/bin/bash
cd /work/wt/ofi
out=/tmp/ofit/b2
export FERRY_NODES=2 FERRY_OFI_PROVIDER=tcp
uptime > $out/uptime.start
for rep in 1 2 3 4 5; do
  FERRY_NET=tcp build/bin/mpiexec -n 2 build/bin/bench_latency -s 0,8 -i 20000 > $out/tcp.lat.$rep
  FERRY_NET=ofi build/bin/mpiexec -n 2 build/bin/bench_latency -s 0,8 -i 20000 > $out/ofi.lat.$rep
  FERRY_NET=tcp build/bin/mpiexec -n 2 build/bin/bench_bw -s 1M,4M -i 30 > $out/tcp.bw.$rep
  FERRY_NET=ofi build/bin/mpiexec -n 2 build/bin/bench_bw -s 1M,4M -i 30 > $out/ofi.bw.$rep
  FERRY_NET=ofi FERRY_OFI_RMA=0 build/bin/mpiexec -n 2 build/bin/bench_bw -s 1M,4M -i 30 > $out/ofis.bw.$rep
  uptime >> $out/uptime.during
done
echo done > $out/DONE
