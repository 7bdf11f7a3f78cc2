#!/bin/bash
# SPDX-License-Identifier: MIT
# A binary built with Debian's mpicc.mpich (or mpif90.mpich) must run on
# Ferry's library by changing LD_LIBRARY_PATH only: check that the dynamic
# loader resolves its libmpich.so.12 (and libmpichfort.so.12) inside LIBDIR,
# then run it under the launcher.
# Usage: mpich_abi.sh [--expect REGEX] LIBDIR NP PROGRAM [ARGS...]
# (launcher: MT_MPIEXEC); with --expect, the output must match REGEX.
. "$(dirname "$0")/lib.sh"
expect=
if [[ $1 == --expect ]]; then
    expect=$2
    shift 2
fi
libdir=$1 np=$2
shift 2
prog=$1
[[ -d $libdir && -x $prog ]] || mt_fail "usage: mpich_abi.sh LIBDIR NP PROGRAM"
libdir=$(cd "$libdir" && pwd -P)
export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

resolved=$(ldd "$prog" | awk '$1 ~ /^libmpi(ch)?(fort)?\.so/ { print $3 }')
echo "mpich_abi: $prog -> $resolved"
[[ -n $resolved ]] || mt_fail "$prog does not link libmpich.so.12"
for lib in $resolved; do
    real=$(readlink -f "$lib")
    [[ $real == "$libdir"/* ]] ||
        mt_fail "libmpich resolved to $real, not inside $libdir"
done
tag="ferrytest-mpichabi-$$-$RANDOM"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
FERRY_TEST_TAG=$tag "${MT_LAUNCHER[@]}" -n "$np" "$@" >"$out"
rc=$?
cat "$out"
if ! left=$(mt_wait_gone mt_pids_tag 3 "$tag"); then
    echo "FAIL: processes outlived the job:" >&2
    mt_kill_strays "$left"
    exit 1
fi
if [[ $rc -eq 0 && -n $expect ]] && ! grep -Eq -- "$expect" "$out"; then
    echo "FAIL: exit 0 but no line matching '$expect' in the output" >&2
    exit 1
fi
exit $rc
