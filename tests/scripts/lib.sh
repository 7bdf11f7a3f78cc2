# SPDX-License-Identifier: MIT
# Shared by the test scripts (sourced, not run): the launcher command, stray
# process detection by an argv marker or a FERRY_TEST_TAG environment value,
# and /dev/shm leak detection. Processes are only ever killed by the PIDs
# these helpers found carrying this test's own marker or tag.

# The launcher, word-split: e.g. "/path/build/bin/mpiexec --timeout 60" (the
# default when run from CTest) or "mpiexec.mpich -bind-to none" to validate
# the tests against MPICH.
read -r -a MT_LAUNCHER <<<"${MT_MPIEXEC:-mpiexec}"

mt_fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# PIDs whose command line contains the fixed string $1 (not ourselves).
mt_pids_argv() {
    local pid out=()
    for pid in $(pgrep -f -- "$1" 2>/dev/null); do
        [[ $pid == "$$" || $pid == "$BASHPID" ]] || out+=("$pid")
    done
    echo "${out[@]}"
}

# PIDs started with FERRY_TEST_TAG=$1 in their environment. One grep reads
# every environ file, so the scan costs one process, not one per PID.
mt_pids_tag() {
    local f
    grep -lzx -- "FERRY_TEST_TAG=$1" /proc/[0-9]*/environ 2>/dev/null |
        while read -r f; do
            f=${f#/proc/}
            echo "${f%/environ}"
        done | tr '\n' ' '
}

# Wait up to $2 seconds (default 3) for the processes listed by "$1" (a
# function name) with argument $3 to disappear: a launcher may return while
# the kernel is still reaping. Prints the survivors, returns 1 if any.
mt_wait_gone() {
    local lister=$1 limit=${2:-3} key=$3 left deadline
    deadline=$(($(date +%s%N) + limit * 1000000000))
    while :; do
        left=$($lister "$key")
        [[ -z ${left// /} ]] && return 0
        (($(date +%s%N) > deadline)) && break
        sleep 0.05
    done
    echo "$left"
    return 1
}

# Kill (by PID) and describe processes that outlived their job.
mt_kill_strays() {
    local pid
    for pid in $1; do
        echo "  stray: pid $pid: $(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null)" >&2
        kill -9 "$pid" 2>/dev/null
    done
}

mt_shm_snapshot() {
    ls -A /dev/shm 2>/dev/null | sort
}

# Files in /dev/shm now that were not in snapshot $1 and are still there
# after a short grace period (another job's segment that is being set up
# right now is unlinked within milliseconds; a leak stays).
mt_shm_new() {
    local before=$1 now i
    for i in 1 2 3 4 5 6 7 8 9 10; do
        now=$(comm -13 <(echo "$before") <(mt_shm_snapshot))
        [[ -z $now ]] && return 0
        sleep 0.2
    done
    echo "$now"
}

mt_now_ms() {
    echo $(($(date +%s%N) / 1000000))
}
