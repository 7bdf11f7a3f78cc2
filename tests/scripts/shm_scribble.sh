#!/bin/bash
# SPDX-License-Identifier: MIT
# A rank scribbling over the shared segment (tests/mpi/shm_scribble.c)
# must never make another rank crash or write outside its buffers. Each
# seed is one job of NP ranks, the last scribbling in MODE; the job must
# end in one of:
#   exit 0    the workload finished (wrong values are allowed);
#   exit 3    stalled ("shm_scribble: stalled"): a rank waits for a
#             publication or counter the scribble destroyed;
#   exit 1    the library ended the job with a message ("Ferry[N] fatal:"),
#             not an internal error;
#   exit 5    an MPI call returned an error;
#   exit 6    the scribbler's own buffer was written where it said it was.
# Anything else fails: a signal (a crash, an ASan report's abort), a
# guard of a victim's buffer overwritten (exit 4), another status. Mode
# "none" (no scribbles) must exit 0; modes "steer", "steer_ireduce",
# "steer_gather", "steer_gatherv", "steer_igatherv" and "offer"
# (directed scribbles of the address a reduction, blocking or not, writes
# its result at, of the address a gather's or gatherv's members write
# their blocks at, and of the address in a write-protocol offer) must be
# refused as a malformed reduction / gather / gatherv publication or a
# packet failing its check
# word. No rank may
# outlive its job and
# /dev/shm must hold nothing new.
# Usage: shm_scribble.sh NP PROGRAM MODE SEED...   (launcher from MT_MPIEXEC)
. "$(dirname "$0")/lib.sh"
np=$1 prog=$2 mode=$3
shift 3 || mt_fail "usage: shm_scribble.sh NP PROGRAM MODE SEED..."
[[ -x $prog && $# -gt 0 ]] || mt_fail "usage: shm_scribble.sh NP PROGRAM MODE SEED..."
err=$(mktemp)
trap 'rm -f "$err"' EXIT
shm_before=$(mt_shm_snapshot)
status=0
declare -A outcomes=()
for seed in "$@"; do
    marker="ferrytest-scribble-$$-$RANDOM"
    FERRY_TEST_TAG=$marker "${MT_LAUNCHER[@]}" -n "$np" "$prog" "$marker" \
        "$seed" "$mode" >/dev/null 2>"$err"
    rc=$?
    if left=$(mt_wait_gone mt_pids_argv 3 "$marker"); then :; else
        echo "FAIL: seed $seed: ranks survived the job:" >&2
        mt_kill_strays "$left"
        status=1
    fi
    what=
    if grep -q "AddressSanitizer\|runtime error:\|ThreadSanitizer" "$err"; then
        what="FAIL: a sanitizer report"
    elif grep -q "killed by signal" "$err"; then
        what="FAIL: a rank was killed by a signal"
    elif [[ $mode == none ]]; then
        [[ $rc -eq 0 ]] && what=done || what="FAIL: exit $rc without scribbles"
    elif [[ $mode == steer || $mode == steer_gather || $mode == steer_ireduce ||
            $mode == steer_gatherv || $mode == steer_igatherv ||
            $mode == offer ]]; then
        want="fatal: malformed reduction publication"
        [[ $mode == steer_gather ]] && want="fatal: malformed gather publication"
        [[ $mode == steer_gatherv || $mode == steer_igatherv ]] &&
            want="fatal: malformed gatherv publication"
        [[ $mode == offer ]] && want="check word of an address to write at"
        if [[ $rc -eq 1 ]] && grep -q "$want" "$err"; then
            what="refused: $want"
        else
            what="FAIL: exit $rc, not refused ($want)"
        fi
    else
        case $rc in
        0) what=done ;;
        3) grep -q "shm_scribble: stalled" "$err" && what=stalled ;;
        1) if grep -q "Ferry\[[0-9]*\] fatal:" "$err" &&
            ! grep -qi "internal" "$err"; then
            what="refused: $(grep -o 'fatal: .*' "$err" | head -1 | cut -c8-90)"
        fi ;;
        5) what="MPI error: $(grep -o 'returned an error: .*' "$err" | head -1 | cut -c20-90)" ;;
        6) what="scribbler's own buffer" ;;
        esac
        [[ -n $what ]] || what="FAIL: exit $rc"
    fi
    echo "seed $seed: $what"
    if [[ $what == FAIL* ]]; then
        sed 's/^/    /' "$err" | head -40 >&2
        status=1
    fi
    # The refusals, by kind, for the summary.
    key=${what%%:*}
    outcomes[$key]=$((${outcomes[$key]:-0} + 1))
done
leaked=$(mt_shm_new "$shm_before")
if [[ -n $leaked ]]; then
    echo "FAIL: new files left in /dev/shm:" $leaked >&2
    status=1
fi
summary=
for k in "${!outcomes[@]}"; do summary+=" $k=${outcomes[$k]}"; done
echo "shm_scribble: np=$np mode=$mode seeds=$#:$summary"
[[ $status -eq 0 ]] && echo "shm_scribble: OK"
exit $status
