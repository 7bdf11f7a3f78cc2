#!/bin/bash
# SPDX-License-Identifier: MIT
# Ferry programs under Open MPI's mpirun, which starts them through PMIx
# (Ferry dlopen()s libpmix.so.2): one job of 3 ranks per program, its OK
# line once with "(3 ranks)", nothing left behind; then MPI_Abort on rank
# 1 must end the job promptly with a nonzero status. Skipped (77) without
# Open MPI's mpirun or libpmix.so.2.
# Usage: pmix.sh ABORT_PROG PROG...
. "$(dirname "$0")/lib.sh"
abort_prog=$1
shift
[[ -x $abort_prog && $# -gt 0 ]] || mt_fail "usage: pmix.sh ABORT_PROG PROG..."
mpirun=$(command -v mpirun.openmpi) || { echo "SKIP: Open MPI's mpirun not installed (Debian openmpi-bin)"; exit 77; }
ldconfig -p | grep -q "libpmix.so.2 " || { echo "SKIP: libpmix.so.2 not installed (Debian libpmix2)"; exit 77; }
tag="ferrytest-pmix-$$-$RANDOM"
launch=("$mpirun" --oversubscribe -x FERRY_TEST_TAG)
[[ $(id -u) == 0 ]] && launch+=(--allow-run-as-root)
for prog in "$@"; do
    name=$(basename "$prog")
    out=$(FERRY_TEST_TAG=$tag timeout 120 "${launch[@]}" -n 3 "$prog" 2>&1)
    rc=$?
    echo "$out" | tail -2
    [[ $rc -eq 0 ]] || mt_fail "$name: exit $rc"
    n=$(echo "$out" | grep -c "^$name: OK (3 ranks)")
    [[ $n -eq 1 ]] || mt_fail "$name: OK line for 3 ranks printed $n times (want 1)"
    echo "pmix: $name OK as one job of 3"
done
t0=$(mt_now_ms)
MT_ABORT_MODE=abort FERRY_TEST_TAG=$tag timeout 60 "${launch[@]}" -n 3 "$abort_prog" 7 1 >/dev/null 2>&1
rc=$?
ms=$(($(mt_now_ms) - t0))
echo "pmix: abort: exit $rc after $ms ms"
[[ $rc -ne 0 && $rc -ne 124 ]] || mt_fail "abort: exit $rc"
if ! left=$(mt_wait_gone mt_pids_tag 5 "$tag"); then
    mt_kill_strays "$left"
    mt_fail "processes outlived the jobs"
fi
echo "pmix: OK"
