#!/bin/bash
# Ferry variants, 2 and 4 ranks, --profile, interleaved
cd /tmp/s25/prof
R=${ROUNDS:-5}
for i in $(seq 1 $R); do
  for np in ${NPS:-2 4}; do
    if [[ $np == 2 ]]; then a="-n 10000 -b"; else a="-n 1000"; fi
    IFS="|" read -r -a VV <<<"$VARIANTS"; for v in "${VV[@]}"; do
      echo "=== $v np=$np round=$i"; env $v /work/main/build/bin/mpiexec -n $np --bind-to none ./mixed_ferry $a --profile
    done
  done
done
