#!/bin/bash
# SPDX-License-Identifier: MIT
# Ferry programs under a local Slurm through PMI-2: this script starts its
# own munged, slurmctld and slurmd on this machine (one node, a
# configuration and state under a temporary directory, ports of its own),
# runs `srun --mpi=pmi2 -n 3` for each program given, and checks one job
# of 3 ranks: each program's OK line once, with "(3 ranks)". Then an
# MPI_Abort and an exit(7) without MPI_Finalize on rank 1 must end the
# whole job promptly with KillOnBadExit=0 (Slurm's default: srun alone
# would wait for the other ranks), srun reporting task 1's exit code 7.
# It stops only the daemons it started, by PID, on every exit path.
# Skipped (77, with the reason) without slurm-wlm/munge, or when the
# daemons cannot start here (e.g. not root).
# Usage: slurm.sh ABORT_PROG PROG...
. "$(dirname "$0")/lib.sh"
abort_prog=$1
shift
[[ -x $abort_prog && $# -gt 0 ]] || mt_fail "usage: slurm.sh ABORT_PROG PROG..."
skip() {
    echo "SKIP: $*"
    exit 77
}
for t in munged slurmctld slurmd srun sinfo scancel; do
    command -v $t >/dev/null || skip "$t not installed (Debian slurm-wlm, munge)"
done
plugdir=$(dirname "$(find /usr/lib -name mpi_pmi2.so -path '*slurm*' 2>/dev/null | head -1)")
[[ -f $plugdir/mpi_pmi2.so ]] || skip "Slurm's PMI-2 plugin (mpi_pmi2.so) not found"
[[ $(id -u) == 0 ]] || skip "slurmd must run as root to start jobs"

dir=$(mktemp -d /tmp/ferry-slurm.XXXXXX)
chmod 711 "$dir" # munged wants its socket's directory searchable
pids=()
cleanup() {
    # Jobs first (their slurmstepd go with them), then our daemons only.
    [[ -f $dir/slurm.conf ]] && SLURM_CONF=$dir/slurm.conf timeout 10 \
        scancel --quiet --user=root >/dev/null 2>&1
    local p i
    # slurmd, slurmctld, then munged (they need it to say goodbye).
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        p=${pids[i]}
        kill "$p" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$p" 2>/dev/null
    done
    if [[ ${KEEP_SLURM_DIR:-0} == 1 ]]; then
        echo "slurm: logs kept in $dir"
    else
        rm -rf "$dir"
    fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Our own munge: a fresh key, socket and files in $dir.
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
chmod 600 "$dir/munge.key"
munged --foreground --force --socket="$dir/munge.sock" \
    --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" \
    >"$dir/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -S $dir/munge.sock ]] && break; sleep 0.1; done
[[ -S $dir/munge.sock ]] || { tail -5 "$dir/munged.log"; skip "munged did not start"; }

# Ports unlikely to be taken: derived from our PID, checked free.
port_free() { ! (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null; }
base=$((20000 + ($$ % 20000)))
while ! port_free $base || ! port_free $((base + 1)); do base=$((base + 2)); done
ncpus=$(nproc)
mkdir -p "$dir/state" "$dir/spool"
cat >"$dir/slurm.conf" <<EOF
ClusterName=ferrytest
SlurmctldHost=localhost
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
PluginDir=$plugdir
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
KillOnBadExit=${FERRY_SLURM_KILL_ON_BAD_EXIT:-0}
MessageTimeout=30
SlurmdDebug=${FERRY_SLURM_DEBUG:-info}
SlurmctldDebug=${FERRY_SLURM_DEBUG:-info}
NodeName=localhost NodeHostname=localhost CPUs=$ncpus State=UNKNOWN
PartitionName=ferry Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF=$dir/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" >"$dir/slurmd.out" 2>&1 &
pids+=($!)
up=0
for _ in $(seq 150); do
    state=$(timeout 5 sinfo -h -n localhost -o %T 2>/dev/null)
    [[ $state == idle* ]] && { up=1; break; }
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || break 2; done
    sleep 0.2
done
if [[ $up != 1 ]]; then
    tail -5 "$dir"/slurmctld.log "$dir"/slurmd.log "$dir"/*.out 2>/dev/null
    skip "slurmctld/slurmd did not bring the node up (state '${state:-none}')"
fi
echo "slurm: munged, slurmctld, slurmd up (pids ${pids[*]}, ports $base-$((base + 1)))"

run() { # run NP PROG ARGS...: output in $out, status in $rc
    local np=$1
    shift
    out=$(timeout 120 srun --mpi=pmi2 --overcommit -n "$np" -t 2 "$@" 2>&1)
    rc=$?
}
for prog in "$@"; do
    name=$(basename "$prog")
    run 3 "$prog"
    echo "$out" | tail -3
    [[ $rc -eq 0 ]] || mt_fail "srun --mpi=pmi2 -n 3 $name exited $rc"
    n=$(echo "$out" | grep -c "^$name: OK (3 ranks)")
    [[ $n -eq 1 ]] || mt_fail "$name printed its 3-rank OK line $n times (want 1: one job)"
    echo "$out" | grep -q "OK (1 ranks)" && mt_fail "$name ran as singletons"
    echo "slurm: $name OK as one job of 3"
done
for mode in abort exit; do
    t0=$(mt_now_ms)
    MT_ABORT_MODE=$mode run 3 "$abort_prog" 7 1
    echo "$out" 
    ms=$(($(mt_now_ms) - t0))
    echo "slurm: $mode: exit $rc after $ms ms"
    # Ferry sends PMI-2's abort (which Slurm 22.05 logs but does not act
    # on here) and SIGKILLs the node's other ranks itself. srun's
    # status is the highest of its tasks', a signal counting as
    # 128 + signal: the others were killed (137), so the rank's own 7
    # is in srun's report.
    [[ $rc -ne 0 ]] || mt_fail "$mode of rank 1 with 7: srun exited 0"
    ((ms < 20000)) || mt_fail "$mode: the job took $ms ms to end"
    echo "$out" | grep -q "task 1: Exited with exit code 7" ||
        mt_fail "$mode: srun does not report task 1's exit code 7"
done
echo "slurm: OK"
