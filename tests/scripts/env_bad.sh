#!/bin/bash
# SPDX-License-Identifier: MIT
# Malformed FERRY_* values are clear errors, never a crash: every variable
# ferry-info lists, set to each malformed value below, must leave
# ferry-info alive (no signal; a nonzero exit names the variable), and a
# job whose rank reads a malformed number must end with a nonzero status,
# a message naming the variable, and no rank left behind.
# Usage: env_bad.sh FERRY-INFO PROGRAM   (launcher from MT_MPIEXEC)
. "$(dirname "$0")/lib.sh"
info=$1 prog=$2
[[ -x $info && -x $prog ]] || mt_fail "usage: env_bad.sh FERRY-INFO PROGRAM"

# The variables, from ferry-info's own list (two-space indent, name).
mapfile -t names < <("$info" 2>/dev/null | sed -n 's/^  \(FERRY_[A-Z0-9_]*\) .*default.*/\1/p')
(( ${#names[@]} >= 30 )) || mt_fail "ferry-info lists ${#names[@]} FERRY_* variables"
# Values no number, size or boolean parser may take (a bad suffix, an
# overflow); each ferry-info run probes the mechanisms (~0.4 s), so two.
bad=("12Q" "99999999999999999999999")
err=$(mktemp)
trap 'rm -f "$err"' EXIT
n=0
for name in "${names[@]}"; do
    # The launcher's own variables are read by mpiexec, not ferry-info.
    [[ $name == FERRY_NODES ]] && continue
    for v in "${bad[@]}"; do
        env "$name=$v" "$info" >/dev/null 2>"$err"
        rc=$?
        (( rc < 128 )) || mt_fail "ferry-info with $name='$v' died of signal $((rc - 128))"
        if (( rc != 0 )) && ! grep -q -- "$name" "$err"; then
            cat "$err" >&2
            mt_fail "ferry-info with $name='$v' exited $rc without naming $name"
        fi
        n=$((n + 1))
    done
done
echo "ferry-info: ${#names[@]} variables x ${#bad[@]} malformed values, no crash"

marker="ferrytest-envbad-$$-$RANDOM"
for kv in FERRY_SPIN=abc FERRY_EAGER_MAX=12Q FERRY_STATS=maybe FERRY_OFI_RMA=7 FERRY_OFI_WAIT=x \
    FERRY_UNEXP_CACHE=99999999999999999999999; do
    env "$kv" FERRY_TEST_TAG="$marker" "${MT_LAUNCHER[@]}" -n 2 "$prog" "$marker" \
        >/dev/null 2>"$err"
    rc=$?
    (( rc != 0 )) || mt_fail "$kv: the job exited 0"
    (( rc < 128 )) || mt_fail "$kv: the launcher died of signal $((rc - 128))"
    grep -q -- "${kv%%=*}='" "$err" || {
        cat "$err" >&2
        mt_fail "$kv: stderr does not name ${kv%%=*}"
    }
    if ! left=$(mt_wait_gone mt_pids_argv 3 "$marker"); then
        mt_kill_strays "$left"
        mt_fail "$kv: ranks survived"
    fi
done
echo "env_bad: OK ($n ferry-info runs, 6 jobs refused)"
