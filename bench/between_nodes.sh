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
# NO_OFI=1 leaves the libfabric channel out (and Open MPI over the same
# libfabric provider, ompiofi: --mca pml cm --mca mtl ofi, FI_PROVIDER=tcp,
# the like-for-like peer of Ferry's ofi channel); OSU=/path/to/osu-micro-benchmarks
# (a source tree; nothing is fetched) adds OSU's osu_latency (0, 1, 8 B) and
# osu_bw (1, 2, 4 MiB) from mpi/pt2pt, built with each implementation's
# mpicc, as kinds osulat and osubw.
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
osu=${OSU:-}
if [[ -n $osu ]]; then
    pt=$osu/mpi/pt2pt
    [[ -f $pt/osu_latency.c && -f $pt/osu_pt2pt.c ]] ||
        { echo "OSU=$osu: no mpi/pt2pt/osu_latency.c there" >&2; exit 1; }
    for m in ferry mpich openmpi; do
        cc=mpicc.$m
        [[ $m == ferry ]] && cc=build/bin/mpicc
        for b in latency bw; do
            $cc -O2 -I"$pt" -o "$out/osu_${b}_$m" "$pt/osu_$b.c" \
                "$pt/osu_pt2pt.c" || exit 1
        done
    done
fi
# OSU prints every size: keep the ones the table reports.
osu_keep() { awk -v keep="$1" 'BEGIN { n = split(keep, k, ","); for (i = 1; i <= n; i++) want[k[i]] = 1 } $1 in want { print $1, $2 }'; }
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
        FI_PROVIDER=tcp mpirun.openmpi --oversubscribe --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp -n 2 "$out/lat_openmpi" "${LAT[@]}" >"$out/ompiofi.lat.$rep"
        FI_PROVIDER=tcp mpirun.openmpi --oversubscribe --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp -n 2 "$out/bw_openmpi" "${BW[@]}" >"$out/ompiofi.bw.$rep"
    fi
    mpirun.openmpi --oversubscribe --mca btl tcp,self -n 2 "$out/bw_openmpi" "${BW[@]}" >"$out/ompi.bw.$rep"
    MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self mpiexec.mpich -n 2 "$out/bw_mpich" "${BW[@]}" >"$out/mpich.bw.$rep"
    if [[ -n $osu ]]; then
        FERRY_NODES=2 build/bin/mpiexec -n 2 "$out/osu_latency_ferry" | osu_keep 0,1,8 >"$out/ferry.osulat.$rep"
        mpirun.openmpi --oversubscribe --mca btl tcp,self -n 2 "$out/osu_latency_openmpi" | osu_keep 0,1,8 >"$out/ompi.osulat.$rep"
        MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self mpiexec.mpich -n 2 "$out/osu_latency_mpich" | osu_keep 0,1,8 >"$out/mpich.osulat.$rep"
        FERRY_NODES=2 build/bin/mpiexec -n 2 "$out/osu_bw_ferry" | osu_keep 1048576,2097152,4194304 >"$out/ferry.osubw.$rep"
        mpirun.openmpi --oversubscribe --mca btl tcp,self -n 2 "$out/osu_bw_openmpi" | osu_keep 1048576,2097152,4194304 >"$out/ompi.osubw.$rep"
        MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self mpiexec.mpich -n 2 "$out/osu_bw_mpich" | osu_keep 1048576,2097152,4194304 >"$out/mpich.osubw.$rep"
        if [[ -z ${NO_OFI:-} ]]; then
            FERRY_NODES=2 FERRY_NET=ofi FERRY_OFI_PROVIDER=tcp build/bin/mpiexec -n 2 "$out/osu_latency_ferry" | osu_keep 0,1,8 >"$out/ferryofi.osulat.$rep"
            FERRY_NODES=2 FERRY_NET=ofi FERRY_OFI_PROVIDER=tcp build/bin/mpiexec -n 2 "$out/osu_bw_ferry" | osu_keep 1048576,2097152,4194304 >"$out/ferryofi.osubw.$rep"
            FI_PROVIDER=tcp mpirun.openmpi --oversubscribe --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp -n 2 "$out/osu_latency_openmpi" | osu_keep 0,1,8 >"$out/ompiofi.osulat.$rep"
            FI_PROVIDER=tcp mpirun.openmpi --oversubscribe --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp -n 2 "$out/osu_bw_openmpi" | osu_keep 1048576,2097152,4194304 >"$out/ompiofi.osubw.$rep"
        fi
    fi
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
