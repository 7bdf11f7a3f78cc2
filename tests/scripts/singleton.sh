#!/bin/bash
# SPDX-License-Identifier: MIT
# A program started directly, without mpiexec, is a singleton: MPI_Init
# works, MPI_COMM_WORLD has one rank, and the program passes. Launcher
# variables that might leak in from the caller are removed first.
# Usage: singleton.sh PROGRAM [ARGS...]
. "$(dirname "$0")/lib.sh"
[[ -x $1 ]] || mt_fail "usage: singleton.sh PROGRAM [ARGS...]"
tag="ferrytest-singleton-$$-$RANDOM"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Drop launcher/PMI state (keep tuning variables such as FERRY_XFER).
unset FERRY_RANK FERRY_SIZE FERRY_JOBID FERRY_NCPUS FERRY_SHM_FD \
    PMI_FD PMI_RANK PMI_SIZE PMI_PORT PMI_ID
FERRY_TEST_TAG=$tag "$@" >"$out"
rc=$?
cat "$out"
if ! left=$(mt_wait_gone mt_pids_tag 3 "$tag"); then
    echo "FAIL: processes outlived the singleton:" >&2
    mt_kill_strays "$left"
    exit 1
fi
[[ $rc -eq 0 ]] || mt_fail "singleton exited $rc"
grep -q "OK (1 ranks)" "$out" || mt_fail "singleton did not report 1 rank"
echo "singleton: OK"
