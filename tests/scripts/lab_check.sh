#!/bin/bash
# SPDX-License-Identifier: MIT
# The laboratory drives the library's own movers: a short run must measure
# each of them, not list it as "not measured".
#   lab_check.sh smoke FERRY_BENCH DIR
#     queue, shmbuf, net and cma split through --quick; every one must be
#     measured (ok) in DIR/results.json. cma split may only be missing when
#     cma itself does not work here (its probe failed: ptrace policy).
#     DIR/report.md has the hand-over table (--wake's).
#   lab_check.sh tune FERRY_BENCH FILE
#     --tune --quick over eager, cma get and cma split: FILE must hold
#     eager_max, an xfer rule and split_min (cma split is a candidate; where
#     cma does not work, no split_min), and ferry-info, reading FILE as the
#     library does, must show that split_min in force.
#     With the protocol jobs (bench_earlylate, not --no-protocols), FILE
#     must also hold proto and btp, which ferry-info must accept.
#   lab_check.sh protocols FERRY_BENCH DIR
#     --protocols --quick: every setting's job ran, every byte arrived
#     right, and report.md has the early/late section with a choice.
#   lab_check.sh ops FERRY_BENCH FILE
#     --ops --quick: FILE gets the kernel table, which must have the memcpy
#     row and MPI_SUM on float, double and int with a non-zero GB/s at each
#     of the three sizes.
#   lab_check.sh distance FERRY_BENCH FILE
#     --distance --quick: FILE gets the copy-rate table with a number for
#     every distance of the memcpy and fy_copy rows at 4 KiB - 1 MiB, and
#     the cma and procmem rows (or the reason one does not work here).
#   lab_check.sh wake FERRY_BENCH FILE
#     --wake --quick: FILE gets the hand-over table with median, p90 and
#     p99 for each of the five ways of waiting (the two-core rows may say
#     "not here: one CPU").
#   lab_check.sh coll FERRY_BENCH FILE
#     --coll --quick --tune --out FILE over a FILE holding another key:
#     every job ran and checked its results, the report has both tables
#     with numbers, FILE holds coll_cma_min, coll_slice_min and
#     coll_direct_min and still the other key, and ferry-info shows the
#     three from the tuning file.
#   lab_check.sh pin FERRY_BENCH FILE
#     --pin --quick: FILE gets the pin-down cache table with a non-zero
#     MB/s at 100 % and 0 % hits for each size, 4 KiB to 4 MiB, and the
#     counters: the 100 % mode hit, the 0 % mode only missed.
. "$(dirname "$0")/lib.sh"
mode=$1 bench=$2 out=$3
[[ -x $bench && -n $out ]] ||
    mt_fail "usage: lab_check.sh smoke|tune|protocols|ops|distance|wake|coll|pin FERRY_BENCH OUT"
# A launcher's variables would make ferry-bench join a job: it forks its own.
unset FERRY_RANK FERRY_SIZE FERRY_JOBID FERRY_NCPUS FERRY_SHM_FD

mech_line() { # the results.json object of label $1
    grep -o "{\"label\": \"$1\"[^}]*}" "$out/results.json"
}

case $mode in
smoke)
    "$bench" --quick --only "queue,shmbuf,net,cma split" --no-plots \
        --out "$out" || mt_fail "ferry-bench exited $?"
    for m in queue shmbuf net "cma split"; do
        line=$(mech_line "$m") || mt_fail "$m is not in results.json"
        if [[ $line != *'"ok": true'* ]]; then
            if [[ $m == "cma split" && $line == *'probe failed'* ]]; then
                echo "note: cma does not work here: $line"
                continue
            fi
            mt_fail "$m was not measured: $line"
        fi
        echo "$m: measured"
    done
    # The hand-over of the core is in every report but --tune's.
    grep -Eq '^\| yield, one core \| [0-9]+\.[0-9]+ \|' "$out/report.md" ||
        mt_fail "report.md has no hand-over table"
    ;;
tune)
    rm -f "$out"
    "$bench" --tune --quick --only "queue,cma get,cma split" --out "$out" ||
        mt_fail "ferry-bench --tune exited $?"
    [[ -f $out ]] || mt_fail "no tuning file written"
    grep -Eq '^eager_max = [0-9]+$' "$out" || mt_fail "no eager_max in $out"
    grep -Eq '^xfer\.0 = [a-z]+$' "$out" || mt_fail "no xfer rule in $out"
    if grep -q 'cma split rendezvous' "$out"; then
        split=$(sed -n 's/^split_min = \([0-9]*\)$/\1/p' "$out")
        [[ -n $split ]] ||
            mt_fail "cma split was measured but no split_min written"
        # The library reads it: ferry-info shows what the library uses.
        info=$(FERRY_TUNING=$out "$(dirname "$bench")/ferry-info") ||
            mt_fail "ferry-info rejects the tuning file"
        if [[ $split == 0 ]]; then
            want="shared cma copy        off (tuning file"
        else
            want="shared cma copy        from $split B (tuning file"
        fi
        grep -qF -- "$want" <<<"$info" ||
            mt_fail "ferry-info does not show split_min $split from the file"
    else
        echo "note: cma split not measured here (cma does not work)"
    fi
    grep -Eq '^proto = (auto|pushpull|pushzero|pushall)$' "$out" ||
        mt_fail "no proto in $out"
    grep -Eq '^btp = [0-9]+$' "$out" || mt_fail "no btp in $out"
    FERRY_TUNING=$out "$(dirname "$bench")/ferry-info" >/dev/null ||
        mt_fail "ferry-info rejects the protocol keys"
    cat "$out"
    ;;
protocols)
    rm -rf "$out"
    "$bench" --protocols --quick --no-plots --out "$out" ||
        mt_fail "ferry-bench --protocols exited $?"
    grep -q '"failed_jobs": 0, "verified": true' "$out/results.json" ||
        mt_fail "a job failed or received wrong bytes: $(grep -o '"jobs".*"verified": [a-z]*' "$out/results.json")"
    grep -q '^## Early and late receivers' "$out/report.md" ||
        mt_fail "no early/late section in report.md"
    grep -Eq '^proto = (auto|pushpull|pushzero|pushall) ' "$out/report.md" ||
        mt_fail "no protocol choice in report.md"
    sed -n '/^### Early receiver/,/^### Late/p' "$out/report.md"
    ;;
ops)
    "$bench" --ops --quick --repeats 1 >"$out" ||
        mt_fail "ferry-bench --ops exited $?"
    cat "$out"
    num='[0-9]+\.[0-9]+'
    for row in '\(memcpy\) \| -' 'float \| SUM' 'double \| SUM' 'int \| SUM'; do
        grep -Eq "^\| $row \|( *$num \| *$num \|){3}\$" "$out" ||
            mt_fail "no complete row '$row' in the table"
    done
    if grep -Eq '\| 0\.0 \|' "$out"; then
        mt_fail "a kernel measured 0.0 GB/s"
    fi
    ;;
distance)
    "$bench" --distance --quick --repeats 1 >"$out" ||
        mt_fail "ferry-bench --distance exited $?"
    cat "$out"
    num='[0-9]+\.[0-9]+'
    for row in 'memcpy' 'fy_copy' 'cma \(direct\)' 'cma \(bounced[^|]*' \
        'procmem \(direct\)' 'procmem \(bounced[^|]*'; do
        for size in 4 64 256 1024; do
            grep -Eq "^\| $row \| $size KiB \|( $num \|){8}\$" "$out" ||
                grep -Eq "^\| $row \| - \| not here: " "$out" ||
                mt_fail "no complete row '$row' at $size KiB in the table"
        done
    done
    grep -Eq '^memcpy .* -> vector loop (on|off); cma ' "$out" ||
        mt_fail "no start-up measurement line"
    ;;
wake)
    "$bench" --wake --quick >"$out" || mt_fail "ferry-bench --wake exited $?"
    cat "$out"
    num='[0-9]+\.[0-9]+'
    for row in 'spin, other core' 'futex, other core idle' \
        'futex, other core busy' 'yield, one core' 'futex, one core'; do
        grep -Eq "^\| $row( \| $num){3} \|\$" "$out" ||
            grep -Eq "^\| $row \| - \| - \| not here: one CPU \|\$" "$out" ||
            mt_fail "no complete row '$row' in the table"
    done
    # A hand-over takes time, and a sleeper's no less than a spinner's.
    med() { sed -n "s/^| $1 | \([0-9.]*\) |.*/\1/p" "$out"; }
    awk -v y="$(med 'yield, one core')" 'BEGIN { exit !(y > 0) }' ||
        mt_fail "a zero hand-over time"
    ;;
coll)
    printf 'eager_max = 4000\n' >"$out"
    report=$("$bench" --coll --quick --tune --out "$out") ||
        mt_fail "ferry-bench --coll exited $?: $report"
    echo "$report"
    grep -Eq '^[0-9]+ jobs, 0 failed' <<<"$report" ||
        mt_fail "a job failed or gave no rows"
    num='[0-9]+\.[0-9]+'
    for op in bcast allreduce; do
        for np in 2 4; do
            grep -Eq "^\| $op \| $np \| [0-9]+ [KM]?i?B \|( $num \|){4}\$" \
                <<<"$report" || mt_fail "no complete $op row at $np ranks"
        done
    done
    # The direct reductions' table: 3 ranks (and 4).
    grep -Eq "^\| allreduce \| 3 \| [0-9]+ [KM]?i?B \|( $num \|){4}\$" \
        <<<"$report" || mt_fail "no complete allreduce row at 3 ranks"
    cma=$(sed -n 's/^coll_cma_min = \([0-9]*\)$/\1/p' "$out")
    slice=$(sed -n 's/^coll_slice_min = \([0-9]*\)$/\1/p' "$out")
    direct=$(sed -n 's/^coll_direct_min = \([0-9]*\)$/\1/p' "$out")
    [[ -n $cma && -n $slice && -n $direct ]] ||
        mt_fail "no coll_* keys in $out"
    grep -q '^eager_max = 4000$' "$out" || mt_fail "the other key was lost"
    info=$(FERRY_TUNING=$out "$(dirname "$bench")/ferry-info") ||
        mt_fail "ferry-info rejects the tuning file"
    grep -Eq "FERRY_COLL_CMA_MIN +$cma B \(tuning file\)" <<<"$info" ||
        mt_fail "ferry-info does not show coll_cma_min $cma from the file"
    grep -Eq "FERRY_COLL_SLICE_MIN +$slice B \(tuning file\)" <<<"$info" ||
        mt_fail "ferry-info does not show coll_slice_min $slice from the file"
    grep -Eq "FERRY_COLL_DIRECT_MIN +$direct B \(tuning file\)" <<<"$info" ||
        mt_fail "ferry-info does not show coll_direct_min $direct from the file"
    cat "$out"
    ;;
pin)
    "$bench" --pin --quick --repeats 1 >"$out" ||
        mt_fail "ferry-bench --pin exited $?"
    cat "$out"
    if grep -q '^Not measured: mlock failed' "$out"; then
        echo "lab_check pin: SKIP: mlock not allowed here"
        exit 77
    fi
    num='[0-9]+\.[0-9]+'
    for size in '4 KiB' '16 KiB' '64 KiB' '256 KiB' '1 MiB' '4 MiB'; do
        grep -Eq "^\| $size \|( *-?$num \|){5}\$" "$out" ||
            mt_fail "no complete row '$size' in the table"
    done
    if grep -E '^\| [0-9]+ [KM]iB \|' "$out" | grep -Eq '\| 0\.0 \|'; then
        mt_fail "a transfer loop measured 0.0 MB/s"
    fi
    grep -Eq '^\| 100% hit \| [1-9][0-9]* \| [0-9]+ \| 0 \|' "$out" ||
        mt_fail "the 100% mode did not hit without evicting"
    grep -Eq '^\| 0% hit \| 0 \| [1-9][0-9]* \| [1-9][0-9]* \|' "$out" ||
        mt_fail "the 0% mode did not miss and evict every time"
    ;;
*)
    mt_fail "unknown mode $mode"
    ;;
esac
echo "lab_check $mode: OK"
