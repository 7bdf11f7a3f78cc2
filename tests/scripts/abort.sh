#!/bin/bash
# SPDX-License-Identifier: MIT
# MPI_Abort(MPI_COMM_WORLD, CODE) from rank RANK while the others block:
# the launcher must exit with CODE, promptly (MT_KILL_LIMIT s, default 10),
# leaving no rank behind.
# Usage: abort.sh NP ABORT_PROGRAM CODE [RANK]   (launcher from MT_MPIEXEC)
. "$(dirname "$0")/lib.sh"
np=$1 prog=$2 code=$3 who=${4:--1}
[[ -x $prog && -n $code ]] || mt_fail "usage: abort.sh NP PROGRAM CODE [RANK]"
limit=${MT_KILL_LIMIT:-10}
marker="ferrytest-abort-$$-$RANDOM"

t0=$(mt_now_ms)
FERRY_TEST_TAG=$marker "${MT_LAUNCHER[@]}" -n "$np" "$prog" "$code" "$who" "$marker"
rc=$?
elapsed=$(($(mt_now_ms) - t0))
echo "abort: np=$np code=$code rank=$who: exit $rc after ${elapsed} ms"
status=0
if ! left=$(mt_wait_gone mt_pids_argv 3 "$marker"); then
    echo "FAIL: ranks survived MPI_Abort:" >&2
    mt_kill_strays "$left"
    status=1
fi
[[ $rc -eq $code ]] || { echo "FAIL: exit status $rc, expected $code" >&2; status=1; }
((elapsed <= limit * 1000)) || { echo "FAIL: took ${elapsed} ms" >&2; status=1; }
[[ $status -eq 0 ]] && echo "abort: OK"
exit $status
