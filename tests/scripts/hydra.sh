#!/bin/bash
# SPDX-License-Identifier: MIT
# Ferry programs under MPICH's Hydra through PMI: for each program, one
# job of 3 ranks (mpiexec.hydra -n 3), one of 4 with the fork launcher
# (-launcher fork -n 4), and one of 3 through PMI-2 (FERRY_BOOT=pmi2);
# each must pass, print its OK line once with the job's rank count (one
# job, not N singletons) and leave no process behind; the same again for
# a job Hydra spreads over two host names (fork launcher, two nodes,
# TCP between them). Then MPI_Abort / exit(7) on rank 1 must end the job promptly with 7
# (PMI-1; 7 or 9 under PMI-2, see below). Skipped (77) without
# mpiexec.hydra.
# Usage: hydra.sh ABORT_PROG PROG...
. "$(dirname "$0")/lib.sh"
abort_prog=$1
shift
[[ -x $abort_prog && $# -gt 0 ]] || mt_fail "usage: hydra.sh ABORT_PROG PROG..."
hydra=$(command -v mpiexec.hydra) || { echo "SKIP: mpiexec.hydra not installed (Debian mpich)"; exit 77; }
tag="ferrytest-hydra-$$-$RANDOM"
shm_before=$(mt_shm_snapshot)

check() { # check LABEL NP OUTPUT RC NAME
    local label=$1 np=$2 out=$3 rc=$4 name=$5 n left
    echo "$out" | tail -2
    [[ $rc -eq 0 ]] || mt_fail "$label: exit $rc"
    n=$(echo "$out" | grep -c "^$name: OK ($np ranks)")
    [[ $n -eq 1 ]] || mt_fail "$label: OK line for $np ranks printed $n times (want 1)"
    echo "$out" | grep -q "OK (1 ranks)" && mt_fail "$label: ran as singletons"
    if ! left=$(mt_wait_gone mt_pids_tag 5 "$tag"); then
        mt_kill_strays "$left"
        mt_fail "$label: processes outlived the job"
    fi
    echo "hydra: $label OK"
}
for prog in "$@"; do
    name=$(basename "$prog")
    out=$(FERRY_TEST_TAG=$tag timeout 120 "$hydra" -n 3 "$prog" 2>&1)
    check "$name -n 3" 3 "$out" $? "$name"
    out=$(FERRY_TEST_TAG=$tag timeout 120 "$hydra" -launcher fork -n 4 "$prog" 2>&1)
    check "$name -launcher fork -n 4" 4 "$out" $? "$name"
    out=$(FERRY_BOOT=pmi2 FERRY_TEST_TAG=$tag timeout 120 "$hydra" -n 3 "$prog" 2>&1)
    check "$name FERRY_BOOT=pmi2 -n 3" 3 "$out" $? "$name"
done

# Two "nodes" (host names the fork launcher runs locally): a real PMI
# process mapping with two nodes; shared memory within each, the TCP
# channel between them.
for prog in "$@"; do
    name=$(basename "$prog")
    [[ $name == rma_* ]] && continue # windows stay within a node
    out=$(FERRY_TEST_TAG=$tag timeout 120 "$hydra" -launcher fork -hosts nodeA,nodeB -ppn 2 -n 4 "$prog" 2>&1)
    check "$name -hosts nodeA,nodeB -ppn 2 -n 4" 4 "$out" $? "$name"
done

for mode in abort exit; do
    for boot in pmi1 pmi2; do
        t0=$(mt_now_ms)
        MT_ABORT_MODE=$mode FERRY_BOOT=$boot FERRY_TEST_TAG=$tag timeout 60 "$hydra" -n 3 "$abort_prog" 7 1 >/dev/null 2>&1
        rc=$?
        ms=$(($(mt_now_ms) - t0))
        echo "hydra: $mode ($boot): exit $rc after $ms ms"
        ((ms < 20000)) || mt_fail "$mode under $boot: took $ms ms"
        # PMI-1's abort carries the code; Hydra 4.0's PMI-2 server has no
        # abort, so there the rank's exit(7) races the others' kill and
        # Hydra reports 7 or 9.
        if [[ $boot == pmi1 ]]; then
            [[ $rc -eq 7 ]] || mt_fail "$mode under $boot: exit $rc, expected 7"
        else
            [[ $rc -eq 7 || $rc -eq 9 ]] || mt_fail "$mode under $boot: exit $rc, expected 7 or 9"
        fi
    done
done
if ! left=$(mt_wait_gone mt_pids_tag 5 "$tag"); then
    mt_kill_strays "$left"
    mt_fail "processes outlived the jobs"
fi
new=$(mt_shm_new "$shm_before")
[[ -z $new ]] || mt_fail "new files in /dev/shm: $new"
echo "hydra: OK"
