#!/bin/bash
# What-if: the same plan with every blocking send (Send, Ssend) made
# nonblocking (Isend, Issend), 2 ranks bound, Ferry and Open MPI, 7 rounds
# interleaved. mnb-* are bench/mixed.c of the session with NOBLOCK=1
# turning KIND_SEND/KIND_SSEND into KIND_ISEND/KIND_ISSEND.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
FB=/work/main/build
t() { sed -n 's/.*time_s=\([0-9.]*\).*/\1/p'; }
for i in $(seq ${1:-7}); do
  a=$($FB/bin/mpiexec -n 2 /tmp/s36/mnb-ferry -n 10000 -b 2>/dev/null | t)
  b=$(NOBLOCK=1 $FB/bin/mpiexec -n 2 /tmp/s36/mnb-ferry -n 10000 -b 2>/dev/null | t)
  c=$(mpiexec.openmpi -n 2 --bind-to none /tmp/s36/mnb-ompi -n 10000 -b 2>/dev/null | t)
  d=$(mpiexec.openmpi -x NOBLOCK=1 -n 2 --bind-to none /tmp/s36/mnb-ompi -n 10000 -b 2>/dev/null | t)
  echo "$a $b $c $d"
done
