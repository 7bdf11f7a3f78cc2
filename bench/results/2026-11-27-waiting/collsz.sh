#!/bin/bash
# R rounds x benches at size S (bytes)
for r in $(seq ${R:-5}); do
 for b in ${BENCHES}; do
  B=$b ARGS="-m $S:$S ${XARGS}" R=1 ./ab.sh "$@" | sed "s/^/$b /"
 done
done
