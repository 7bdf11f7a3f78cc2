#!/bin/bash
# SPDX-License-Identifier: MIT
# FERRY_STATS=1: the per-rank protocol counters printed at MPI_Finalize
# count what tests/mpi/stats.c sends, by the way it travelled, and rank 0's
# job summary ("ferry-stats job ...") sums them over the ranks.
# Usage: stats.sh PROGRAM
. "$(dirname "$0")/lib.sh"
prog=$1
args=
[[ -x $prog ]] || mt_fail "usage: stats.sh PROGRAM"
# Runs the program with FERRY_STATS=1, cma, and the settings given.
run() {
    out=$(env FERRY_STATS=1 FERRY_XFER=cma FERRY_XFER_REQUIRE=1 "$@" $MT_MPIEXEC -n 2 "$prog" $args 2>&1)
    rc=$?
}
# 1. The plain rendezvous, no write protocol.
run FERRY_PROTO=pushzero FERRY_RECV_WRITE=0
[[ $rc == 77 ]] && { echo "$out" | tail -2; echo "SKIP: cma does not work here"; exit 77; }
[[ $rc == 0 ]] || { echo "$out"; mt_fail "the job failed"; }
echo "$out" | grep "rank=1"
# field VALUE of the rank-1 line that contains PATTERN
val() { echo "$out" | grep "ferry-stats rank=1 .*$1" | grep -o "$2=[0-9]*" | cut -d= -f2; }
[[ $(val proto=eager_mailbox bytes) == 80 ]] || mt_fail "mailbox bytes: want 80 (ten 8-byte messages)"
[[ $(val proto=eager_cells msgs) == 5 && $(val proto=eager_cells bytes) == 5120 ]] ||
    mt_fail "eager cells: want 5 messages, 5120 bytes"
[[ $(val proto=rndv_get msgs) == 3 && $(val proto=rndv_get bytes) == 3145728 ]] ||
    mt_fail "rendezvous get: want 3 messages, 3145728 bytes"
[[ $(val xfer=cma bytes) == 3145728 ]] || mt_fail "cma moved the 3 MiB"
(( $(val matching=unexpected msgs) >= 15 )) || mt_fail "the 15 eager messages arrived before their receives"
(( $(val write=available msgs) >= 3 )) || mt_fail "3 receives were waiting for their messages"
(( $(val write=available bytes) >= 3145728 )) || mt_fail "early bytes include the 3 MiB"

# The job summary: printed once (by rank 0), each protocol line the sum of
# the ranks' lines, the other counters by name.
echo "$out" | grep "ferry-stats job"
[[ $(echo "$out" | grep -c "^ferry-stats job ranks=2$") == 1 ]] ||
    mt_fail "one job summary line 'ferry-stats job ranks=2'"
jval() { echo "$out" | grep "ferry-stats job $1 " | grep -o " $2=[0-9]*" | cut -d= -f2; }
jnum() { echo "$out" | grep -o "^ferry-stats job $1=[0-9]*$" | cut -d= -f2; }
# the ten 8-byte messages rank 1 receives and the empty one rank 0 does
[[ $(jval proto=eager_mailbox msgs) == 11 && $(jval proto=eager_mailbox bytes) == 80 ]] ||
    mt_fail "job mailbox: want 11 messages, 80 bytes"
[[ $(jval proto=rndv_get msgs) == 3 && $(jval proto=rndv_get bytes) == 3145728 ]] ||
    mt_fail "job rendezvous get: want 3 messages, 3145728 bytes"
[[ $(jval xfer=cma bytes) == 3145728 ]] || mt_fail "job: cma moved the 3 MiB"
(( $(jnum unexpected) >= 15 )) || mt_fail "job: 15 unexpected messages"
names=$(echo "$out" | grep -o "^ferry-stats job proto=[a-z_0-9]*" | cut -d= -f2)
[[ -n $names ]] || mt_fail "no 'ferry-stats job proto=' lines"
for name in $names; do
    for f in msgs bytes; do
        sum=0
        for r in 0 1; do
            v=$(echo "$out" | grep "ferry-stats rank=$r proto=$name " | grep -o " $f=[0-9]*" | cut -d= -f2)
            sum=$((sum + ${v:-0}))
        done
        [[ $(jval "proto=$name" $f) == "$sum" ]] ||
            mt_fail "job proto=$name $f: $(jval "proto=$name" $f), the ranks' lines sum to $sum"
    done
done

# 2. The defaults: the three 1 MiB receives were posted before their
# messages, so their buffers were offered and the sender wrote into them.
run
[[ $rc == 0 ]] || { echo "$out"; mt_fail "the job failed (defaults)"; }
echo "$out" | grep -E "rank=[01] (proto=write|write=)"
[[ $(val proto=write msgs) == 3 && $(val proto=write bytes) == 3145728 ]] ||
    mt_fail "write protocol: want 3 messages, 3145728 bytes written into rank 1"
[[ $(val proto=rndv_get msgs) == 0 ]] || mt_fail "no rendezvous when the write protocol carried them"
(( $(val write=offers msgs) >= 3 )) || mt_fail "rank 1 offered its 3 receive buffers"
[[ $(val write=offers used) == 3 ]] || mt_fail "rank 0 used 3 offers"
r0() { echo "$out" | grep "ferry-stats rank=0 .*$1" | grep -o "$2=[0-9]*" | cut -d= -f2; }
[[ $(r0 write=offers sends) == 3 ]] || mt_fail "rank 0 made 3 writes"

# 3. Push-Pull with BTP = 64 KiB: each 1 MiB message pushed 64 KiB and
# pulled the rest.
run FERRY_PROTO=pushpull FERRY_BTP=64K FERRY_RECV_WRITE=0
[[ $rc == 0 ]] || { echo "$out"; mt_fail "the job failed (pushpull)"; }
echo "$out" | grep -E "rank=1 proto=(pushed|pulled)"
[[ $(val proto=pushed msgs) == 3 && $(val proto=pushed bytes) == $((3 * 65536)) ]] ||
    mt_fail "pushed: want 3 messages, 3 x 64 KiB"
[[ $(val proto=pulled msgs) == 3 && $(val proto=pulled bytes) == $((3 * (1048576 - 65536))) ]] ||
    mt_fail "pulled: want 3 messages, 3 x (1 MiB - 64 KiB)"
# 4. FERRY_PUSH_MAX: under auto, blocking sends up to it are pushed whole
# (where no offer waits: the write protocol is off here).
run FERRY_PUSH_MAX=1M FERRY_RECV_WRITE=0
[[ $rc == 0 ]] || { echo "$out"; mt_fail "the job failed (FERRY_PUSH_MAX=1M)"; }
echo "$out" | grep -E "rank=1 proto=(pushed|pulled|write)"
[[ $(val proto=pushed msgs) == 3 && $(val proto=pushed bytes) == 3145728 ]] ||
    mt_fail "FERRY_PUSH_MAX=1M: want the 3 MiB pushed whole"
[[ $(val proto=pulled msgs) == 0 && $(val proto=write msgs) == 0 && $(val proto=rndv_get msgs) == 0 ]] ||
    mt_fail "FERRY_PUSH_MAX=1M: nothing pulled or written"
# A value that is not a size ends MPI_Init with a clear error.
run FERRY_PUSH_MAX=lots
[[ $rc != 0 ]] || mt_fail "FERRY_PUSH_MAX=lots: the job should fail"
grep -q "FERRY_PUSH_MAX='lots': expected auto or a size" <<<"$out" ||
    { echo "$out"; mt_fail "FERRY_PUSH_MAX=lots: no clear error"; }
# 5. auto pushes a nonblocking send whole (up to FERRY_PUSH_MAX) while it
# is one of the first two sends to its peer since that peer's last
# message: of rank 0's stream of four 32 KiB Isends two are pushed and two
# take the rendezvous, and so does its first ping, which follows the stream
# with nothing from rank 1 in between; the ping-pong's five other sends are
# pushed.
args=burst
run FERRY_PUSH_MAX=128K
[[ $rc == 0 ]] || { echo "$out"; mt_fail "the job failed (burst)"; }
echo "$out" | grep -E "rank=[01] proto=(pushed|rndv_get|write)"
[[ $(val proto=pushed msgs) == 4 && $(val proto=pushed bytes) == $((4 * 32768)) ]] ||
    mt_fail "burst: rank 1 should receive 4 pushed messages (2 streamed, 2 pings)"
[[ $(val proto=rndv_get msgs) == 3 ]] ||
    mt_fail "burst: the stream's last 2 and the first ping take the rendezvous"
[[ $(r0 proto=pushed msgs) == 3 ]] || mt_fail "burst: rank 0 should receive 3 pushed replies"
[[ $(val proto=write msgs) == 0 ]] || mt_fail "burst: 32 KiB receives are below FERRY_RECV_WRITE_MIN"
# FERRY_PUSH_MAX=0: nonblocking sends are never pushed
run FERRY_PUSH_MAX=0
[[ $rc == 0 ]] || { echo "$out"; mt_fail "the job failed (burst, FERRY_PUSH_MAX=0)"; }
[[ $(val proto=pushed msgs) == 0 && $(val proto=rndv_get msgs) == 7 ]] ||
    mt_fail "burst, FERRY_PUSH_MAX=0: all 7 of rank 1's take the rendezvous"

# 6. Across two virtual nodes the TCP channel counts each message once:
# rank 1 gets the 10 + 5 eager ones, the three 1 MiB ones and the
# program's own small ones (chan=tcp, nothing over shared memory).
args=
out=$(env FERRY_STATS=1 FERRY_NODES=2 $MT_MPIEXEC -n 2 "$prog" 2>&1)
[[ $? == 0 ]] || { echo "$out"; mt_fail "the job failed (FERRY_NODES=2)"; }
echo "$out" | grep "chan="
(( $(val chan=tcp msgs) >= 18 )) || mt_fail "FERRY_NODES=2: 18 messages or more over tcp"
(( $(val chan=tcp bytes) >= 3150928 )) || mt_fail "FERRY_NODES=2: the 3 MiB and 5200 B over tcp"
[[ $(val chan=shm msgs) == 0 ]] || mt_fail "FERRY_NODES=2: nothing over shared memory"

echo "stats: OK"
