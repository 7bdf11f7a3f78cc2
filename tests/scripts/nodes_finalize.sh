#!/bin/bash
# SPDX-License-Identifier: MIT
# Jobs of 8 ranks on 2 and 4 virtual nodes that only pass a barrier before
# MPI_Finalize, so most pairs of nodes first meet in the goodbyes: every
# launch must end cleanly. (A higher rank's request that the lower one
# open their connection, read only after the pair had said goodbye over a
# connection the lower one opened itself, made it connect to a rank that
# had left - "Connection refused" in about one job in ten.)
# Usage: nodes_finalize.sh PROGRAM (tests/mpi/nodes)
. "$(dirname "$0")/lib.sh"
prog=$1
[[ -x $prog ]] || mt_fail "usage: nodes_finalize.sh PROGRAM"
for nodes in 2 4; do
    for i in $(seq 12); do
        out=$(FERRY_NODES=$nodes "${MT_LAUNCHER[@]}" -n 8 "$prog" --finalize 2>&1)
        rc=$?
        [[ $rc == 0 && $out == *"nodes: OK (8 ranks)"* ]] ||
            { echo "$out"; mt_fail "launch $i on $nodes nodes: status $rc"; }
    done
    echo "ok: 12 jobs of 8 ranks on $nodes nodes"
done
exit 0
