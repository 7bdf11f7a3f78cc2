#!/bin/bash
# SPDX-License-Identifier: MIT
# One-sided communication between two (virtual) nodes over loopback TCP,
# side by side in one run: the OSU micro-benchmarks' one-sided tests
# (5.x mpi/one-sided, unmodified, built with each implementation's mpicc),
# 2 ranks, one per node.
#   Ferry:    FERRY_NODES=2 (TCP channel; active messages to the other node)
#   Open MPI: --mca btl tcp,self --mca osc pt2pt (its osc sm component would
#             use shared memory whatever the btl)
#   MPICH:    MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self (ch4:ucx; on one host it
#             takes shared memory otherwise)
# osu_put/get/acc/fop_latency at 8 B for -w allocate|create and -s
# flush|lock (-i 2000 -x 200), osu_put/get_bw at 64 KiB and 1 MiB with -s
# flush (-i 30 -x 5). Prints the median of REPS interleaved runs per cell
# and Ferry's ratio to the best peer (latency: lower is better;
# bandwidth: higher).
# Usage: OSU=/path/to/osu-micro-benchmarks bench/rma_nodes.sh [REPS] (5)
# (a source tree; nothing is fetched).
set -u
cd "$(dirname "$0")/.."
reps=${1:-5}
osu=${OSU:?OSU=/path/to/osu-micro-benchmarks (5.x source tree)}
os=$osu/mpi/one-sided
[[ -f $os/osu_put_latency.c && -f $os/osu_1sc.c ]] ||
    { echo "OSU=$osu: no mpi/one-sided/osu_put_latency.c there" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
lats="put_latency get_latency acc_latency fop_latency"
bws="put_bw get_bw"
for m in ferry mpich openmpi; do
    cc=mpicc.$m
    [[ $m == ferry ]] && cc=build/bin/mpicc
    for b in $lats $bws; do
        $cc -O2 -I"$os" -o "$out/osu_${b}_$m" "$os/osu_$b.c" "$os/osu_1sc.c" ||
            exit 1
    done
done
launch() {
    case $1 in
    ferry) echo "env FERRY_NODES=2 build/bin/mpiexec -n 2" ;;
    openmpi) echo "mpirun.openmpi --oversubscribe --mca btl tcp,self --mca osc pt2pt -n 2" ;;
    mpich) echo "env MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self mpiexec.mpich -n 2" ;;
    esac
}
for rep in $(seq "$reps"); do
    for m in ferry mpich openmpi; do
        L=$(launch $m)
        for b in $lats; do
            for w in allocate create; do
                for s in flush lock; do
                    v=$(timeout 120 $L "$out/osu_${b}_$m" -w $w -s $s -i 2000 -x 200 2>&1 |
                        awk '$1 == 8 { print $2 }')
                    echo "osu_$b 8 -w_${w}_-s_$s $m ${v:-FAILED}" >>"$out/all"
                done
            done
        done
        for b in $bws; do
            for w in allocate create; do
                timeout 120 $L "$out/osu_${b}_$m" -w $w -s flush -i 30 -x 5 2>&1 |
                    awk -v b="osu_$b" -v w="-w_${w}_-s_flush" -v m=$m \
                        '$1 == 65536 || $1 == 1048576 { print b, $1, w, m, $2 }' >>"$out/all"
            done
        done
    done
done
python3 - "$out/all" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    b, size, opts, who, v = line.split()
    if v != 'FAILED':
        d[(b, int(size), opts)].append((who, float(v)))
print('| benchmark | size | options | Ferry | MPICH | Open MPI | Ferry / best peer |')
print('|---|---:|---|---:|---:|---:|---:|')
for k in sorted(d, key=lambda k: (k[0], k[1], k[2])):
    med = {}
    for who in ('ferry', 'mpich', 'openmpi'):
        v = [x for w, x in d[k] if w == who]
        med[who] = statistics.median(v) if v else None
    bw = k[0].endswith('_bw')
    peers = [med[w] for w in ('mpich', 'openmpi') if med[w] is not None]
    best = (max(peers) if bw else min(peers)) if peers else None
    ratio = ''
    if best and med['ferry'] is not None:
        ratio = '%.2f' % (med['ferry'] / best)
    cell = lambda x: 'FAILED' if x is None else '%.2f' % x
    size = '%d KiB' % (k[1] // 1024) if k[1] >= 1024 else '%d B' % k[1]
    print('| %s | %s | %s | %s | %s | %s | %s |' % (
        k[0], size, k[2].replace('_', ' '), cell(med['ferry']),
        cell(med['mpich']), cell(med['openmpi']), ratio))
PY
