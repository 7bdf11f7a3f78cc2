#!/bin/bash
# SPDX-License-Identifier: MIT
# A rank that SIGKILLs itself mid-job (with a large message in flight) must
# take the job down: the launcher exits with 128+9 = 137 (MT_KILL_STATUS),
# within MT_KILL_LIMIT seconds (default 10), no process of the job is left,
# and /dev/shm holds no new file.
# Usage: kill_rank.sh NP CRASH_PROGRAM   (launcher from MT_MPIEXEC)
. "$(dirname "$0")/lib.sh"
np=$1 prog=$2
[[ -x $prog ]] || mt_fail "usage: kill_rank.sh NP CRASH_PROGRAM"
want=${MT_KILL_STATUS:-137}
limit=${MT_KILL_LIMIT:-10}
marker="ferrytest-killrank-$$-$RANDOM"

shm_before=$(mt_shm_snapshot)
t0=$(mt_now_ms)
FERRY_TEST_TAG=$marker "${MT_LAUNCHER[@]}" -n "$np" "$prog" selfkill "$marker"
rc=$?
elapsed=$(($(mt_now_ms) - t0))
echo "kill_rank: np=$np exit $rc after ${elapsed} ms"

status=0
if left=$(mt_wait_gone mt_pids_argv 3 "$marker"); then :; else
    echo "FAIL: ranks survived the job:" >&2
    mt_kill_strays "$left"
    status=1
fi
if [[ $rc -ne $want ]]; then
    echo "FAIL: launcher exit status $rc, expected $want" >&2
    status=1
fi
if ((elapsed > limit * 1000)); then
    echo "FAIL: took ${elapsed} ms to end (limit ${limit} s)" >&2
    status=1
fi
leaked=$(mt_shm_new "$shm_before")
if [[ -n $leaked ]]; then
    echo "FAIL: new files left in /dev/shm:" $leaked >&2
    status=1
fi
[[ $status -eq 0 ]] && echo "kill_rank: OK"
exit $status
