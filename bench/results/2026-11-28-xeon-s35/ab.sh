#!/bin/bash
# ab.sh BENCH SIZE REPS : before / after / ompi, 2 ranks, medians
B=$1; S=$2; R=${3:-5}
for r in $(seq $R); do
  for v in before after ompi; do
    case $v in before) o=$(FB=/tmp/s35/before/build IT=${IT:-5000} ./osu.sh $B $S 2 1 ferry);; after) o=$(IT=${IT:-5000} ./osu.sh $B $S 2 1 ferry);; ompi) o=$(IT=${IT:-5000} ./osu.sh $B $S 2 1 ompi);; esac
    echo "$v $(echo $o | awk '{print $NF}')"
  done
done | python3 -c '
import sys,statistics
d={}
for l in sys.stdin:
    k,v=l.split(); d.setdefault(k,[]).append(float(v))
for k in ("before","after","ompi"):
    print(k, "median %.3f" % statistics.median(d[k]), d[k])
'
