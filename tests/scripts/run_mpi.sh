#!/bin/bash
# SPDX-License-Identifier: MIT
# Run one test command with FERRY_TEST_TAG=<tag>.<pid> in its environment (so
# every rank carries it), pass its exit status through, and fail if any
# process carrying the tag outlives the command (such strays are killed).
# With --expect REGEX, standard output must also contain a line matching
# REGEX (the program's success line), so an early silent exit 0 fails.
# Usage: run_mpi.sh [--expect REGEX] TAG COMMAND [ARGS...]
. "$(dirname "$0")/lib.sh"
expect=
if [[ $1 == --expect ]]; then
    expect=$2
    shift 2
fi
tag=$1
shift
[[ -n $tag && $# -gt 0 ]] || mt_fail "usage: run_mpi.sh [--expect REGEX] TAG COMMAND [ARGS...]"
# The test name alone is not unique on a machine where several checkouts run
# the suite at once: a run finishing there would kill this one's processes
# as its own strays (seen: unit.test_xfer_conformance SIGKILLed under TSan).
tag=$tag.$$

if [[ -n $expect ]]; then
    out=$(mktemp)
    trap 'rm -f "$out"' EXIT
    FERRY_TEST_TAG=$tag "$@" >"$out"
    rc=$?
    cat "$out"
else
    FERRY_TEST_TAG=$tag "$@"
    rc=$?
fi
if ! left=$(mt_wait_gone mt_pids_tag 3 "$tag"); then
    echo "FAIL: processes of $tag outlived the job (exit $rc):" >&2
    mt_kill_strays "$left"
    exit 1
fi
if [[ $rc -eq 0 && -n $expect ]] && ! grep -Eq -- "$expect" "$out"; then
    echo "FAIL: exit 0 but no line matching '$expect' in the output" >&2
    exit 1
fi
exit $rc
