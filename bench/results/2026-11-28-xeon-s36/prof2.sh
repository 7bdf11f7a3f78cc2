#!/bin/bash
# bench_mixed --profile, 2 ranks bound, Ferry and Open MPI interleaved;
# prints the critical rank's (rank 1) classes, ms, median of N rounds.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
FB=/work/main/build; N=${1:-5}; : > prof2.raw
for i in $(seq $N); do
  $FB/bin/mpiexec -n 2 $FB/bin/bench_mixed -n 10000 -b --profile | sed 's/^/ferry /' >> prof2.raw
  mpiexec.openmpi -n 2 --bind-to none /tmp/s36/mixed-ompi -n 10000 -b --profile | sed 's/^/ompi /' >> prof2.raw
done
python3 - <<'PY'
import re, statistics as st
rows = {}
for line in open('prof2.raw'):
    impl, rest = line.split(' ', 1)
    if rest.startswith('mixed time_s='):
        rows.setdefault((impl, 'job'), []).append({'job_s': float(re.search(r'time_s=([0-9.]+)', rest).group(1))})
    m = re.match(r'# profile rank=(\d+) (.*)', rest)
    if m:
        d = {k: float(v) for k, v in re.findall(r'(\w+)=([0-9.]+)', m.group(2))}
        rows.setdefault((impl, int(m.group(1))), []).append(d)
keys = ['wall_s','sent_s','stall_full_s','fill_s','check_s','send_s','ssend_s','ssmall_s','post_s','test_s','probe_s','precv_s']
print('| impl | rank | ' + ' | '.join(k[:-2] for k in keys) + ' |')
print('|---|---:|' + '---:|' * len(keys))
for impl in ('ferry', 'ompi'):
    for r in (0, 1):
        L = rows[(impl, r)]
        print(f'| {impl} | {r} | ' + ' | '.join('%.1f' % (1000 * st.median(d[k] for d in L)) for k in keys) + ' |')
for impl in ('ferry','ompi'):
    print(impl, 'ssmall_n', st.median(d['ssmall_n'] for d in rows[(impl,1)]), 'job', st.median(d['job_s'] for d in rows[(impl,'job')]))
PY
