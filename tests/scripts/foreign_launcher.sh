#!/bin/bash
# SPDX-License-Identifier: MIT
# A Ferry program whose environment says a launcher started it, but which
# cannot reach that launcher (fake PMI/PMIx/Slurm variables pointing to
# nothing), must fail at once with a clear message naming the problem,
# never run as N singletons that each believe they are rank 0 of 1. So
# must one whose PMI server answers badly (hangs up, garbage, the wrong
# reply, a malformed process mapping).
# Usage: foreign_launcher.sh PROGRAM
. "$(dirname "$0")/lib.sh"
prog=$1
[[ -x $prog ]] || mt_fail "usage: foreign_launcher.sh PROGRAM"
# Drop anything real we may have been started under.
unset FERRY_RANK FERRY_SIZE FERRY_JOBID FERRY_NCPUS FERRY_SHM_FD FERRY_KVS_FD \
    FERRY_BOOT PMI_FD PMI_RANK PMI_SIZE PMI_PORT PMI_ID PMI_JOBID \
    PMIX_NAMESPACE PMIX_RANK SLURM_NTASKS SLURM_STEP_ID OMPI_COMM_WORLD_SIZE
# A port nobody listens on: bind and close one.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cases=(
    "PMI_FD=200 PMI_RANK=0 PMI_SIZE=2|PMI_FD=200 is not an open descriptor"
    "PMI_FD=0 PMI_RANK=0 PMI_SIZE=2|PMI_FD=0 is not a socket"
    "PMI_PORT=127.0.0.1:$port PMI_ID=0|cannot connect to the PMI launcher"
    "PMI_SIZE=3|gave neither PMI_FD nor PMI_PORT"
    "SLURM_NTASKS=2|use srun --mpi=pmi2"
    "PMIX_NAMESPACE=nowhere PMIX_RANK=0|PMIx"
    "FERRY_BOOT=pmi2 PMI_RANK=0|neither PMI_FD nor"
    "FERRY_BOOT=carrier-pigeon|FERRY_BOOT='carrier-pigeon' is not one of"
)
for c in "${cases[@]}"; do
    vars=${c%%|*} want=${c#*|}
    t0=$(mt_now_ms)
    out=$(env $vars timeout 30 "$prog" </dev/null 2>&1)
    rc=$?
    ms=$(($(mt_now_ms) - t0))
    echo "[$vars] exit $rc after $ms ms: $(echo "$out" | head -1)"
    [[ $rc -ne 0 && $rc -ne 124 ]] || mt_fail "[$vars] exit $rc (want a prompt failure)"
    echo "$out" | grep -qF -- "$want" || mt_fail "[$vars] no clear message ('$want')"
    echo "$out" | grep -q "OK (" && mt_fail "[$vars] the program ran (as a singleton?)"
done
# A launcher that answers badly (tests/scripts/fake_pmi.py, PMI-1 on a
# socketpair): a clear error each time, never a hang or a crash.
fake=(
    "close|the PMI launcher closed its connection"
    "garbage|is not key=value"
    "wrongcmd|where Ferry expected cmd=response_to_init"
    "mapping|launcher's process mapping"
)
for c in "${fake[@]}"; do
    mode=${c%%|*} want=${c#*|}
    out=$(timeout 60 python3 "$(dirname "$0")/fake_pmi.py" "$mode" "$prog" 2>&1)
    echo "[fake PMI: $mode] $(echo "$out" | head -1)"
    echo "$out" | grep -q "^fake_pmi: $mode: exit 1$" || mt_fail "[fake PMI: $mode] $(echo "$out" | tail -1)"
    echo "$out" | grep -qF -- "$want" || mt_fail "[fake PMI: $mode] no clear message ('$want')"
done
echo "foreign_launcher: OK"
