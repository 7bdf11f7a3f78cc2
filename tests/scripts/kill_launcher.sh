#!/bin/bash
# SPDX-License-Identifier: MIT
# kill -9 of the launcher itself: once every rank is up (rank 0 prints
# "ready"), the launcher is SIGKILLed; every rank must then be gone within
# MT_KILL_LIMIT seconds (default 10) and /dev/shm must hold no new file.
# Usage: kill_launcher.sh NP CRASH_PROGRAM   (launcher from MT_MPIEXEC)
. "$(dirname "$0")/lib.sh"
np=$1 prog=$2
[[ -x $prog ]] || mt_fail "usage: kill_launcher.sh NP CRASH_PROGRAM"
limit=${MT_KILL_LIMIT:-10}
marker="ferrytest-killlauncher-$$-$RANDOM"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

shm_before=$(mt_shm_snapshot)
FERRY_TEST_TAG=$marker "${MT_LAUNCHER[@]}" -n "$np" "$prog" hang "$marker" \
    >"$out" 2>&1 &
launcher=$!
# Out of the job table: bash would otherwise report "Killed" on stderr.
disown "$launcher"

# Wait (bounded) for the event "all ranks are up", not for a fixed time.
deadline=$(($(mt_now_ms) + 60000))
until grep -q '^ready' "$out"; do
    if ! kill -0 "$launcher" 2>/dev/null; then
        cat "$out" >&2
        mt_fail "the job ended before it was ready"
    fi
    if (($(mt_now_ms) > deadline)); then
        kill -9 "$launcher"
        mt_kill_strays "$(mt_pids_argv "$marker")"
        mt_fail "the job was not ready within 60 s"
    fi
    sleep 0.05
done
ranks=$(mt_pids_argv "$marker")
echo "kill_launcher: np=$np, launcher pid $launcher, job pids: $ranks"
kill -9 "$launcher"
t0=$(mt_now_ms)

status=0
if left=$(mt_wait_gone mt_pids_argv "$limit" "$marker"); then
    echo "kill_launcher: ranks gone $(($(mt_now_ms) - t0)) ms after the kill"
else
    echo "FAIL: ranks still running $limit s after the launcher was killed:" >&2
    mt_kill_strays "$left"
    status=1
fi
leaked=$(mt_shm_new "$shm_before")
if [[ -n $leaked ]]; then
    echo "FAIL: new files left in /dev/shm:" $leaked >&2
    status=1
fi
[[ $status -eq 0 ]] && echo "kill_launcher: OK"
exit $status
