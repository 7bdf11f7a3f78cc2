#!/bin/bash
# SPDX-License-Identifier: MIT
# Between two (virtual) nodes over loopback TCP, side by side in one run:
# Ferry (FERRY_NODES=2, its TCP channel; and its libfabric channel,
# FERRY_NET=ofi with the tcp provider, rendezvous by fi_read - ferryofi -
# and streamed - ferryofis, FERRY_OFI_RMA=0), Open MPI (btl tcp,self) and MPICH
# (ch4:ucx with MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self: MPICH on one host
# otherwise always takes shared memory, even with -hosts 127.0.0.1,localhost).
# Also Ferry's intra-node 0/8 B latency before (BASE, a build of the
# commit before the network channel) and after, in the same run.
# Usage: bench/between_nodes.sh [REPS] (default 5); BASE=/path/to/base/build;
# NO_OFI=1 leaves the libfabric channel out.
# Prints the median of REPS interleaved runs per implementation and size.
set -u
cd "$(dirname "$0")/.."
reps=${1:-5}
base=${BASE:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for m in mpich openmpi; do
    mpicc.$m -O2 -Ibench -o "$out/lat_$m" bench/latency.c &&
        mpicc.$m -O2 -Ibench -o "$out/bw_$m" bench/bw.c || exit 1
done
LAT=(-s 0,1,8 -i 20000)
BW=(-s 1M,2M,4M -i 30)
for rep in $(seq "$reps"); do
    FERRY_NODES=2 build/bin/mpiexec -n 2 build/bin/bench_latency "${LAT[@]}" >"$out/ferry.lat.$rep"
    mpirun.openmpi --oversubscribe --mca btl tcp,self -n 2 "$out/lat_openmpi" "${LAT[@]}" >"$out/ompi.lat.$rep"
    MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self mpiexec.mpich -n 2 "$out/lat_mpich" "${LAT[@]}" >"$out/mpich.lat.$rep"
    FERRY_NODES=2 build/bin/mpiexec -n 2 build/bin/bench_bw "${BW[@]}" >"$out/ferry.bw.$rep"
    if [[ -z ${NO_OFI:-} ]]; then
        FERRY_NODES=2 FERRY_NET=ofi FERRY_OFI_PROVIDER=tcp build/bin/mpiexec -n 2 build/bin/bench_latency "${LAT[@]}" >"$out/ferryofi.lat.$rep"
        FERRY_NODES=2 FERRY_NET=ofi FERRY_OFI_PROVIDER=tcp build/bin/mpiexec -n 2 build/bin/bench_bw "${BW[@]}" >"$out/ferryofi.bw.$rep"
        FERRY_NODES=2 FERRY_NET=ofi FERRY_OFI_PROVIDER=tcp FERRY_OFI_RMA=0 build/bin/mpiexec -n 2 build/bin/bench_bw "${BW[@]}" >"$out/ferryofis.bw.$rep"
    fi
    mpirun.openmpi --oversubscribe --mca btl tcp,self -n 2 "$out/bw_openmpi" "${BW[@]}" >"$out/ompi.bw.$rep"
    MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self mpiexec.mpich -n 2 "$out/bw_mpich" "${BW[@]}" >"$out/mpich.bw.$rep"
    if [[ -n $base ]]; then
        "$base/bin/mpiexec" -n 2 "$base/bin/bench_latency" -s 0,8 >"$out/base.intra.$rep"
        build/bin/mpiexec -n 2 build/bin/bench_latency -s 0,8 >"$out/net.intra.$rep"
    fi
done
python3 - "$out" <<'PY'
import collections, glob, os, statistics, sys
d = collections.defaultdict(list)
for f in glob.glob(os.path.join(sys.argv[1], '*.*.*')):
    who, kind, _ = os.path.basename(f).split('.')
    for line in open(f):
        p = line.split()
        if len(p) == 2 and p[0].isdigit():
            d[(kind, int(p[0]), who)].append(float(p[1]))
for k in sorted(d):
    v = d[k]
    print('%-5s %8d %-6s median %9.3f  runs %s' % (k[0], k[1], k[2],
          statistics.median(v), ' '.join('%.4g' % x for x in v)))
PY
