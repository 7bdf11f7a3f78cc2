#!/bin/bash
# SPDX-License-Identifier: MIT
# A Ferry program started by a launcher Ferry cannot talk to yet (MPICH's
# Hydra: PMI) must fail with a clear message, never run as N singletons
# that each believe they are rank 0 of 1. Skipped (77) without Hydra.
# Usage: foreign_launcher.sh PROGRAM
. "$(dirname "$0")/lib.sh"
prog=$1
[[ -x $prog ]] || mt_fail "usage: foreign_launcher.sh PROGRAM"
hydra=$(command -v mpiexec.hydra) || { echo "SKIP: mpiexec.hydra not installed"; exit 77; }
out=$(timeout 60 "$hydra" -n 2 "$prog" 2>&1)
rc=$?
echo "$out" | tail -5
echo "foreign_launcher: exit $rc"
[[ $rc -ne 0 ]] || mt_fail "the job succeeded under Hydra (ran as singletons?)"
echo "$out" | grep -q "cannot talk to yet" || mt_fail "no clear message"
echo "$out" | grep -q ": OK (1 ranks)" && mt_fail "a rank ran as a singleton"
echo "foreign_launcher: OK"
