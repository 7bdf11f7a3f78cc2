#!/bin/bash
# SPDX-License-Identifier: MIT
# An invalid call under MPI_ERRORS_ARE_FATAL must end the job with a
# nonzero status and an error message on stderr naming the call.
# Usage: expect_fatal.sh NP PROGRAM CALL_NAME   (launcher from MT_MPIEXEC)
. "$(dirname "$0")/lib.sh"
np=$1 prog=$2 call=${3:-MPI_Send}
[[ -x $prog ]] || mt_fail "usage: expect_fatal.sh NP PROGRAM CALL_NAME"
marker="ferrytest-fatal-$$-$RANDOM"
err=$(mktemp)
trap 'rm -f "$err"' EXIT

FERRY_TEST_TAG=$marker "${MT_LAUNCHER[@]}" -n "$np" "$prog" "$marker" 2>"$err"
rc=$?
cat "$err" >&2
status=0
if ! left=$(mt_wait_gone mt_pids_argv 3 "$marker"); then
    echo "FAIL: ranks survived the fatal error:" >&2
    mt_kill_strays "$left"
    status=1
fi
[[ $rc -ne 0 ]] || { echo "FAIL: the job exited 0 after an invalid call" >&2; status=1; }
grep -q -- "$call" "$err" ||
    { echo "FAIL: stderr does not name $call" >&2; status=1; }
[[ $status -eq 0 ]] && echo "expect_fatal: OK (exit $rc, message names $call)"
exit $status
