#!/bin/bash
# SPDX-License-Identifier: MIT
# Launcher tests: drive build/bin/mpiexec with tiny shell programs as ranks
# (no MPI library needed) and check exit codes, teardown speed, signals,
# output tagging, the environment contract, the inherited memfd and binding.
# Usage: tests/launcher/run.sh <build dir>. Prints TAP; exits 1 on failure.
set -u

build=${1:?usage: run.sh <build dir>}
MPIEXEC=$(cd "$build" && pwd)/bin/mpiexec
[ -x "$MPIEXEC" ] || { echo "Bail out! no $MPIEXEC"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/ferry-launcher.XXXXXX") || exit 1
bgpids=()
cleanup() {
    for p in "${bgpids[@]}"; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT
unset MPIEXEC_TIMEOUT

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
    n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
    shift
    for l in "$@"; do echo "#   $l"; done
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# check NAME CONDITION-EXIT-STATUS [diagnostics...]
check() { local name=$1 cond=$2; shift 2; if [ "$cond" = 0 ]; then ok "$name"; else not_ok "$name" "$@"; fi; }

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
# A process is alive if it exists and is not a zombie (a zombie left to a
# non-reaping init is dead for our purposes).
alive() {
    local st
    st=$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\).*/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$st" ] && [ "$st" != Z ]
}
# Wait up to $2 ms until file(s) $1... exist.
wait_files() {
    local ms=$1; shift
    local end=$(( $(now_ms) + ms ))
    while :; do
        local all=1
        for f in "$@"; do [ -s "$f" ] || all=0; done
        [ $all = 1 ] && return 0
        [ "$(now_ms)" -ge $end ] && return 1
        sleep 0.01
    done
}
# Wait up to $1 ms until none of the pids in $2... is alive.
wait_gone() {
    local ms=$1; shift
    local end=$(( $(now_ms) + ms ))
    while :; do
        local any=0
        for p in "$@"; do alive "$p" && any=1; done
        [ $any = 0 ] && return 0
        [ "$(now_ms)" -ge $end ] && return 1
        sleep 0.01
    done
}

echo "TAP version 13"

# ---- environment contract --------------------------------------------------
"$MPIEXEC" -n 3 sh -c 'echo "$FERRY_RANK $FERRY_SIZE $FERRY_JOBID $FERRY_NCPUS" > "$0/env.$FERRY_RANK"' "$T"
rc=$?
ranks=$(cat "$T"/env.* 2>/dev/null | awk '{print $1}' | sort -n | tr '\n' ' ')
sizes=$(cat "$T"/env.* 2>/dev/null | awk '{print $2}' | sort -u | tr '\n' ' ')
jobs=$(cat "$T"/env.* 2>/dev/null | awk '{print $3}' | sort -u)
ncpus=$(cat "$T"/env.* 2>/dev/null | awk '{print $4}' | sort -u)
[ $rc = 0 ] && [ "$ranks" = "0 1 2 " ] && [ "$sizes" = "3 " ] &&
    [[ $jobs =~ ^[0-9a-f]{32}$ ]] && [[ $ncpus =~ ^[1-9][0-9]*$ ]]
check "FERRY_RANK/SIZE/JOBID/NCPUS set, ranks distinct" $? \
    "rc=$rc ranks='$ranks' sizes='$sizes' jobs='$jobs' ncpus='$ncpus'"

"$MPIEXEC" -n 2 sh -c 'echo "$FERRY_JOBID"' > "$T/jid1"
"$MPIEXEC" -n 1 sh -c 'echo "$FERRY_JOBID"' > "$T/jid2"
[ "$(sort -u "$T/jid1" | wc -l)" = 1 ] && ! grep -qxFf "$T/jid1" "$T/jid2"
check "FERRY_JOBID shared within a job, fresh per job" $?

FERRY_RANK=42 FERRY_SIZE=9 "$MPIEXEC" -n 1 -genv FERRY_SIZE 7 sh -c 'echo "$FERRY_RANK $FERRY_SIZE"' > "$T/nest"
check "inherited or -genv contract variables are overridden" \
    "$([ "$(cat "$T/nest")" = "0 1" ]; echo $?)" "got '$(cat "$T/nest")'"

"$MPIEXEC" -n 2 -genv FOO bar -x BAZ=qux -x HOME sh -c 'echo "$FOO $BAZ $HOME"' > "$T/genv"
[ "$(sort -u "$T/genv")" = "bar qux $HOME" ]
check "-genv NAME VAL and -x NAME[=VAL]" $? "got '$(cat "$T/genv")'"

# ---- shared-memory fd --------------------------------------------------------
"$MPIEXEC" -n 2 sh -c 'ls -l "/proc/self/fd/$FERRY_SHM_FD"; stat -L -c %s "/proc/self/fd/$FERRY_SHM_FD"' > "$T/memfd" 2>&1
[ "$(grep -c 'memfd:ferry-' "$T/memfd")" = 2 ] && [ "$(grep -cx 0 "$T/memfd")" = 2 ]
check "FERRY_SHM_FD is an inherited, empty memfd" $? "$(cat "$T/memfd")"

"$MPIEXEC" -n 2 sh -c 'ls -l "/proc/self/fd/$FERRY_KVS_FD"; stat -L -c %s "/proc/self/fd/$FERRY_KVS_FD"' > "$T/kvsfd" 2>&1
[ "$(grep -c 'memfd:ferry-kvs-' "$T/kvsfd")" = 2 ] && [ "$(grep -cx 0 "$T/kvsfd")" = 2 ]
check "FERRY_KVS_FD is an inherited, empty memfd (the key-value table)" $? "$(cat "$T/kvsfd")"

"$MPIEXEC" -n 2 sh -c 'ls -l /proc/self/fd/ | grep -c memfd' > "$T/memfdn"
[ "$(sort -u "$T/memfdn")" = 2 ]
check "exactly two memfds per rank (segment, key-value table), no other launcher fds" $? "$(cat "$T/memfdn")"

# ---- exit status -------------------------------------------------------------
"$MPIEXEC" -n 3 sh -c 'exit 0'
check "all ranks exit 0 -> 0" $?

"$MPIEXEC" -n 2 sh -c '[ "$FERRY_RANK" = 1 ] && exit 3; exit 0' 2> "$T/err3"
rc=$?
[ $rc = 3 ] && grep -q 'rank 1 (pid [0-9]*) exited with status 3' "$T/err3"
check "a rank's exit 3 -> 3 with a message" $? "rc=$rc" "$(cat "$T/err3")"

"$MPIEXEC" -n 2 sh -c '[ "$FERRY_RANK" = 0 ] && kill -9 $$; exit 0' 2> "$T/err9"
rc=$?
[ $rc = 137 ] && grep -q 'rank 0 (pid [0-9]*) killed by signal 9' "$T/err9"
check "death by SIGKILL -> 137 with a message" $? "rc=$rc" "$(cat "$T/err9")"

# First failure wins: rank 1 fails at once, rank 0 later with another code.
"$MPIEXEC" -n 2 sh -c '[ "$FERRY_RANK" = 1 ] && exit 5; trap "exit 9" TERM; sleep 5 & wait' 2>/dev/null
check "the first failing rank's status is the job's" \
    "$([ $? = 5 ]; echo $?)"

# ---- teardown speed ----------------------------------------------------------
# Rank 1 dies of SIGTERM, rank 2 ignores it (needs the SIGKILL escalation).
script='
case $FERRY_RANK in
0) while [ ! -s "$0/pid.1" ] || [ ! -s "$0/pid.2" ]; do sleep 0.01; done
   date +%s%N > "$0/t0"; exit 4 ;;
1) echo $$ > "$0/pid.1"; exec sleep 30 ;;
2) trap "" TERM; echo $$ > "$0/pid.2"; exec sleep 30 ;;
esac'
"$MPIEXEC" -n 3 sh -c "$script" "$T" 2>/dev/null
rc=$?
t1=$(date +%s%N)
dt=$(( (t1 - $(cat "$T/t0" 2>/dev/null || echo 0)) / 1000000 ))
p1=$(cat "$T/pid.1" 2>/dev/null); p2=$(cat "$T/pid.2" 2>/dev/null)
gone=0
for p in $p1 $p2; do alive "$p" && gone=1; done
[ $rc = 4 ] && [ $dt -lt 500 ] && [ $gone = 0 ] && [ -n "$p1" ] && [ -n "$p2" ]
check "on failure others are gone within 0.5 s (TERM, then KILL; took ${dt} ms)" $? \
    "rc=$rc teardown=${dt}ms pids=$p1,$p2 alive=$gone"

# Processes a rank started itself are in the job's process group too.
script='
if [ "$FERRY_RANK" = 0 ]; then
  while [ ! -s "$0/gpid" ]; do sleep 0.01; done; exit 1
fi
sleep 30 & echo $! > "$0/gpid"; wait'
"$MPIEXEC" -n 2 sh -c "$script" "$T" 2>/dev/null
gp=$(cat "$T/gpid" 2>/dev/null)
[ -n "$gp" ] && wait_gone 300 "$gp"
check "a rank's own child processes are killed with the job" $? "pid=$gp"

# ---- timeout -----------------------------------------------------------------
t0=$(now_ms)
"$MPIEXEC" --timeout 0.5 -n 2 sleep 30 2> "$T/errto"
rc=$?
dt=$(( $(now_ms) - t0 ))
[ $rc = 124 ] && [ $dt -lt 2000 ] && grep -q 'job timed out after 0.5 s' "$T/errto"
check "--timeout -> 124 with a message" $? "rc=$rc after ${dt}ms" "$(cat "$T/errto")"

MPIEXEC_TIMEOUT=1 "$MPIEXEC" -n 1 sleep 30 2>/dev/null
check "MPIEXEC_TIMEOUT -> 124" "$([ $? = 124 ]; echo $?)"

# ---- signals to mpiexec ------------------------------------------------------
rm -f "$T"/pid.*
"$MPIEXEC" -n 2 sh -c 'echo $$ > "$0/pid.$FERRY_RANK"; exec sleep 30' "$T" 2>/dev/null &
mp=$!; bgpids+=("$mp")
if wait_files 3000 "$T/pid.0" "$T/pid.1"; then
    kill -TERM "$mp"
    t0=$(now_ms)
    wait "$mp"; rc=$?
    dt=$(( $(now_ms) - t0 ))
    p0=$(cat "$T/pid.0"); p1=$(cat "$T/pid.1")
    ! alive "$p0" && ! alive "$p1" && [ $rc = 143 ] && [ $dt -lt 1000 ]
    check "SIGTERM to mpiexec is forwarded -> 143, ranks gone" $? "rc=$rc ${dt}ms"
else
    not_ok "SIGTERM to mpiexec is forwarded" "ranks did not start"
fi

rm -f "$T"/pid.*
"$MPIEXEC" -n 2 sh -c 'trap "exit 0" HUP; echo $$ > "$0/pid.$FERRY_RANK"; sleep 30 & wait' "$T" &
mp=$!; bgpids+=("$mp")
if wait_files 3000 "$T/pid.0" "$T/pid.1"; then
    kill -HUP "$mp"
    wait "$mp"
    check "SIGHUP forwarded; ranks that handle it and exit 0 -> 0" "$([ $? = 0 ]; echo $?)"
else
    not_ok "SIGHUP forwarded" "ranks did not start"
fi

rm -f "$T"/pid.*
"$MPIEXEC" -n 2 sh -c 'c=0; trap "c=\$((c + 1))" USR1; echo $$ > "$0/pid.$FERRY_RANK"
    sleep 5 & while kill -0 $! 2>/dev/null; do wait; done; echo "$c"' "$T" > "$T/usr1" &
mp=$!; bgpids+=("$mp")
if wait_files 3000 "$T/pid.0" "$T/pid.1"; then
    kill -USR1 "$mp"
    wait "$mp"; rc=$?
    [ $rc = 0 ] && [ "$(tr '\n' ' ' < "$T/usr1")" = "1 1 " ]
    check "SIGUSR1 forwarded exactly once to each rank" $? "rc=$rc got '$(cat "$T/usr1")'"
else
    not_ok "SIGUSR1 forwarded" "ranks did not start"
fi

rm -f "$T"/pid.*
"$MPIEXEC" -n 2 sh -c 'echo $$ > "$0/pid.$FERRY_RANK"; exec sleep 30' "$T" &
mp=$!; bgpids+=("$mp")
if wait_files 3000 "$T/pid.0" "$T/pid.1"; then
    p0=$(cat "$T/pid.0"); p1=$(cat "$T/pid.1")
    kill -KILL "$mp"
    wait "$mp" 2>/dev/null
    wait_gone 500 "$p0" "$p1"
    check "kill -9 of mpiexec takes every rank down within 0.5 s" $?
else
    not_ok "kill -9 of mpiexec" "ranks did not start"
fi

# ---- errors ------------------------------------------------------------------
"$MPIEXEC" -n 2 "$T/no-such-program" 2> "$T/err127"
rc=$?
[ $rc = 127 ] && grep -q "cannot execute '$T/no-such-program': No such file or directory" "$T/err127" &&
    [ "$(wc -l < "$T/err127")" = 1 ]
check "missing program -> 127, one message" $? "rc=$rc" "$(cat "$T/err127")"

"$MPIEXEC" -n 1 no-such-program-in-path-ferry 2>/dev/null
check "program not in PATH -> 127" "$([ $? = 127 ]; echo $?)"

printf 'echo hi\n' > "$T/noexec"; chmod 644 "$T/noexec"
"$MPIEXEC" -n 1 "$T/noexec" 2>/dev/null
check "non-executable program -> 126" "$([ $? = 126 ]; echo $?)"

printf 'echo "script $FERRY_RANK"\n' > "$T/noshebang"; chmod 755 "$T/noshebang"
out=$("$MPIEXEC" -n 1 "$T/noshebang")
check "script without #! runs under sh" "$([ "$out" = "script 0" ]; echo $?)" "got '$out'"

bad=0
for args in "-n 0 true" "-n -1 true" "-n abc true" "-n 5000 true" "-n" \
            "--bogus true" "--bind-to socket true" "--timeout x true" ""; do
    # shellcheck disable=SC2086
    "$MPIEXEC" $args > /dev/null 2> "$T/errusage"
    rc=$?
    if [ $rc != 2 ] || ! grep -q '^mpiexec: ' "$T/errusage"; then
        bad=1; echo "#   '$args' -> rc=$rc: $(cat "$T/errusage")"
    fi
done
check "usage errors -> 2 with a message" $bad

"$MPIEXEC" --help | grep -q 'Usage:' && "$MPIEXEC" --version | grep -q 'Ferry'
check "--help and --version" $?

"$(dirname "$MPIEXEC")/mpirun" -np 2 --oversubscribe -- sh -c 'exit 0'
check "mpirun -np N --oversubscribe -- prog" $?

# ---- stdin -----------------------------------------------------------------
echo hello | "$MPIEXEC" -n 3 sh -c 'read -r x; echo "$FERRY_RANK:$x"' | sort > "$T/stdin"
[ "$(tr '\n' ' ' < "$T/stdin")" = "0:hello 1: 2: " ]
check "stdin goes to rank 0 only" $? "$(cat "$T/stdin")"

# ---- output tagging ----------------------------------------------------------
# awk writes in stdio blocks, so lines reach the launcher cut in pieces.
"$MPIEXEC" -n 3 --tag-output awk -v r="$(printf x%.0s {1..150})" '
    BEGIN { rk = ENVIRON["FERRY_RANK"]
            for (i = 0; i < 4000; i++) printf "rank %d line %d %s\n", rk, i, r
            for (i = 0; i < 500; i++) printf "rank %d err %d %s\n", rk, i, r > "/dev/stderr"
            printf "rank %d tail", rk }' > "$T/tag.out" 2> "$T/tag.err"
rc=$?
awk -v pad="$(printf x%.0s {1..150})" '
    /^\[[0-2]\] rank [0-2] line [0-9]+ x+$/ {
        r = substr($1, 2, 1)
        if (r != $3 || $5 != nxt[r]++ || $6 != pad) bad++
        next }
    /^\[[0-2]\] rank [0-2] tail$/ { if (substr($1, 2, 1) != $3) bad++; tails++; next }
    { bad++ }
    END { for (r = 0; r < 3; r++) if (nxt[r] != 4000) bad++
          exit !(bad == 0 && tails == 3) }' "$T/tag.out"
r1=$?
grep -cE '^\[[0-2]\] rank [0-2] err [0-9]+ x+$' "$T/tag.err" > "$T/tag.errn"
[ $rc = 0 ] && [ $r1 = 0 ] && [ "$(cat "$T/tag.errn")" = 1500 ] &&
    [ "$(wc -l < "$T/tag.err")" = 1500 ]
check "--tag-output: whole lines, [rank] prefix, order kept, stderr too" $? \
    "rc=$rc stdout-check=$r1 stderr-lines=$(cat "$T/tag.errn")/$(wc -l < "$T/tag.err")" \
    "$(grep -vE '^\[[0-2]\] rank [0-2] (line [0-9]+ x+|tail)$' "$T/tag.out" | head -3)"

script='
if [ "$FERRY_RANK" = 0 ]; then echo before; : > "$0/r0done"; exit 0; fi
while [ ! -e "$0/r0done" ]; do sleep 0.01; done
echo before; printf partial; exit 7'
"$MPIEXEC" -n 2 --tag-output sh -c "$script" "$T" > "$T/tag7" 2>/dev/null
rc=$?
[ $rc = 7 ] && [ "$(sort "$T/tag7" | tr '\n' ' ')" = "[0] before [1] before [1] partial " ]
check "--tag-output flushes a failing rank's output" $? "rc=$rc $(cat "$T/tag7")"

# ---- binding -----------------------------------------------------------------
ncpu=$(nproc 2>/dev/null || echo 1)
if ! command -v taskset > /dev/null; then
    skip "binding" "no taskset"
else
    nb=2; [ "$ncpu" -lt 2 ] && nb=1
    "$MPIEXEC" -n $nb sh -c 'taskset -cp $$' > "$T/bind"
    lists=$(sed -n 's/.*affinity list: //p' "$T/bind" | sort -u | tr '\n' ' ')
    [ "$(grep -c 'affinity list: [0-9]*$' "$T/bind")" = $nb ] &&
        [ "$(echo "$lists" | wc -w)" = $nb ]
    check "default binding: one distinct cpu per rank when N <= cpus" $? "$(cat "$T/bind")"

    "$MPIEXEC" -n 1 --bind-to none sh -c 'taskset -cp $$' > "$T/nobind"
    base=$(taskset -cp $$ | sed 's/.*list: //')
    [ "$(sed 's/.*list: //' "$T/nobind")" = "$base" ]
    check "--bind-to none keeps the launcher's cpus" $? "$(cat "$T/nobind") vs $base"

    "$MPIEXEC" -n $((ncpu + 1)) --bind-to core sh -c 'taskset -cp $$' > "$T/wrap" 2> "$T/wrap.err"
    [ "$(grep -c 'affinity list: [0-9]*$' "$T/wrap")" = $((ncpu + 1)) ] &&
        grep -q 'warning' "$T/wrap.err"
    check "--bind-to core with N > cpus wraps with a warning" $? "$(cat "$T/wrap" "$T/wrap.err")"
fi

# ---- idle launcher -----------------------------------------------------------
"$MPIEXEC" -n 2 sleep 1 &
mp=$!; bgpids+=("$mp")
sleep 0.8
ticks=$(awk '{print $14 + $15}' "/proc/$mp/stat" 2>/dev/null)
wait "$mp"
[ -n "$ticks" ] && [ "$ticks" -le 5 ]
check "launcher uses ~0 CPU while the job runs" $? "cpu ticks=$ticks"

# ---- mpicc -------------------------------------------------------------------
MPICC=$(dirname "$MPIEXEC")/mpicc
B=$(cd "$build" && pwd)
show=$("$MPICC" -show)
# The library is named by path (libmpi.so), so no foreign -L can shadow it.
[[ $show == *"-I$B/include"* && $show == *"-Wl,-rpath,"* && $show == *" $B/lib/libmpi.so" ]]
check "mpicc -show: our include dir, rpath, our libmpi.so" $? "$show"

cshow=$("$MPICC" -show -c x.c) && lshow=$("$MPICC" -showme:link) && cinfo=$("$MPICC" -showme:compile)
[[ $cshow != *libmpi* && $cshow == *"-c x.c"* && $lshow == *libmpi.so && $cinfo == "-I$B/include" ]]
check "mpicc: no link flags when compiling only; -showme:compile/-showme:link" $? \
    "$cshow | $lshow | $cinfo"

cat > "$T/hello.c" <<'EOF_C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("rank %d of %d\n", rank, size);
    MPI_Finalize();
    return 0;
}
EOF_C
"$MPICC" -Wall -c "$T/hello.c" -o "$T/hello.o" 2> "$T/cc.err"
check "mpicc -c compiles an MPI program against build/include/mpi.h" $? "$(head -5 "$T/cc.err")"

if [ -e "$B/lib/libmpi.so" ] || [ -e "$B/lib/libmpi.so.12" ]; then
    if "$MPICC" "$T/hello.o" -o "$T/hello" 2> "$T/ld.err"; then
        "$MPIEXEC" --timeout 20 -n 2 "$T/hello" > "$T/hello.out" 2>&1
        rc=$?
        [ $rc = 0 ] && [ "$(sort "$T/hello.out" | tr '\n' ' ')" = "rank 0 of 2 rank 1 of 2 " ]
        check "mpicc links; mpiexec -n 2 runs the program" $? "rc=$rc $(head -5 "$T/hello.out")"
    else
        not_ok "mpicc links an MPI program" "$(head -5 "$T/ld.err")"
    fi
    if command -v cmake > /dev/null; then
        mkdir -p "$T/fm"
        cat > "$T/fm/CMakeLists.txt" <<'EOF_CM'
cmake_minimum_required(VERSION 3.16)
project(fm C)
find_package(MPI REQUIRED COMPONENTS C)
message(STATUS "FM inc=${MPI_C_INCLUDE_DIRS} lib=${MPI_C_LIBRARIES}")
EOF_CM
        cmake -S "$T/fm" -B "$T/fm/b" -DMPI_C_COMPILER="$MPICC" > "$T/fm.log" 2>&1
        rc=$?
        [ $rc = 0 ] && grep -q "FM inc=$B/include lib=$B/lib/libmpi" "$T/fm.log"
        check "CMake FindMPI with MPI_C_COMPILER=mpicc finds Ferry" $? \
            "rc=$rc $(grep -E 'FM |Error|Could' "$T/fm.log" | head -3)"
    else
        skip "CMake FindMPI" "no cmake"
    fi
else
    skip "mpicc link and run" "library not built in $B/lib"
    skip "CMake FindMPI" "library not built in $B/lib"
fi

# ---- mpif90, mpifort, mpif77 (when the Fortran bindings are built) ---------
MPIF90=$(dirname "$MPIEXEC")/mpif90
if [ -x "$MPIF90" ]; then
    # Ferry's -I and -L come before the user's and the libraries are named by
    # path, so another MPI named on the command line cannot shadow Ferry's
    # mpif.h, modules or libraries.
    fshow=$("$MPIF90" -show -I/other/include -L/other/lib x.f90 -o x)
    [[ $fshow == *"-I$B/include "*"-L$B/lib "*"-I/other/include -L/other/lib x.f90 -o x $B/lib/libmpifort.so $B/lib/libmpi.so" ]]
    check "mpif90 -show: Ferry's -I/-L before the user's, libmpifort and libmpi by path last" $? "$fshow"
    for w in mpifort mpif77; do
        wshow=$("$(dirname "$MPIEXEC")/$w" -show -c x.f)
        [[ $wshow == *"-I$B/include"* && $wshow == *"-c x.f" && $wshow != *-lmpi* ]]
        check "$w -show -c: include dir, no link flags" $? "$wshow"
    done
    if command -v cmake > /dev/null; then
        mkdir -p "$T/fmf"
        cat > "$T/fmf/CMakeLists.txt" <<'EOF_CM'
cmake_minimum_required(VERSION 3.16)
project(fmf C Fortran)
find_package(MPI REQUIRED COMPONENTS Fortran)
message(STATUS "FMF lib=${MPI_Fortran_LIBRARIES} f77=${MPI_Fortran_HAVE_F77_HEADER} f90=${MPI_Fortran_HAVE_F90_MODULE} f08=${MPI_Fortran_HAVE_F08_MODULE}")
EOF_CM
        cmake -S "$T/fmf" -B "$T/fmf/b" -DMPI_C_COMPILER="$MPICC" \
            -DMPI_Fortran_COMPILER="$MPIF90" > "$T/fmf.log" 2>&1
        rc=$?
        [ $rc = 0 ] && grep -q "FMF lib=$B/lib/libmpifort.so;$B/lib/libmpi.so f77=TRUE f90=TRUE f08=TRUE" "$T/fmf.log"
        check "CMake FindMPI finds Ferry's Fortran: mpif.h, mpi and mpi_f08" $? \
            "rc=$rc $(grep -E 'FMF |Error|Could' "$T/fmf.log" | head -3)"
    else
        skip "CMake FindMPI Fortran" "no cmake"
    fi
else
    skip "mpif90" "Fortran bindings not built (no gfortran)"
fi

echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ $failed = 0 ]
