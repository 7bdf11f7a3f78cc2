#!/bin/bash
# SPDX-License-Identifier: MIT
# Run one test command with FERRY_TEST_TAG=<tag> in its environment (so
# every rank carries it), pass its exit status through, and fail if any
# process carrying the tag outlives the command (such strays are killed).
# Usage: run_mpi.sh TAG COMMAND [ARGS...]
. "$(dirname "$0")/lib.sh"
tag=$1
shift
[[ -n $tag && $# -gt 0 ]] || mt_fail "usage: run_mpi.sh TAG COMMAND [ARGS...]"

FERRY_TEST_TAG=$tag "$@"
rc=$?
if ! left=$(mt_wait_gone mt_pids_tag 3 "$tag"); then
    echo "FAIL: processes of $tag outlived the job (exit $rc):" >&2
    mt_kill_strays "$left"
    exit 1
fi
exit $rc
