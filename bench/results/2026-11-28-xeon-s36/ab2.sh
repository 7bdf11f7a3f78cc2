#!/bin/bash
# ab2.sh RUNS [NP N] : alternate before/after bench_mixed, print medians
R=${1:-7}; NP=${2:-2}; N=${3:-10000}; B=""; [ $NP = 2 ] && B="-b"
A=(); Z=()
for i in $(seq $R); do
  a=$(/tmp/s36/before/build/bin/mpiexec -n $NP /tmp/s36/before/build/bin/bench_mixed -n $N $B | sed -n 's/.*time_s=\([0-9.]*\).*/\1/p')
  z=$(/work/main/build/bin/mpiexec -n $NP /work/main/build/bin/bench_mixed -n $N $B | sed -n 's/.*time_s=\([0-9.]*\).*/\1/p')
  A+=($a); Z+=($z)
done
echo "before: ${A[*]}"; echo "after:  ${Z[*]}"
python3 -c "import statistics as s,sys; a=[float(x) for x in '${A[*]}'.split()]; z=[float(x) for x in '${Z[*]}'.split()]; print('median before %.4f after %.4f ratio %.3f'%(s.median(a),s.median(z),s.median(z)/s.median(a)))"
