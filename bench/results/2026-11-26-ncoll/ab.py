# SPDX-License-Identifier: MIT
# The before/after run of bench/README.md ("Nonblocking collectives over
# shared memory"): bench_coll built with each tree's mpicc, run under each
# tree's mpiexec, before and after alternating, rounds outermost.
# Usage: python3 ab.py RUNS ibcast,iallreduce
import subprocess, statistics, collections, sys, time
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
impls = {'before': ('/tmp/ncoll-before/build/bin/mpiexec', '/tmp/ncoll-bc-before'),
         'after': ('/work/wt/ncoll/build/bin/mpiexec', '/tmp/ncoll-bc-after')}
ops = sys.argv[2].split(',') if len(sys.argv) > 2 else ['ibcast', 'iallreduce']
sizes = '8,256,4096,65536,1048576'
res = collections.defaultdict(list)
t0 = time.time()
for r in range(runs):
    for op in ops:
        for np_ in (2, 4):
            for name, (mx, exe) in impls.items():
                p = subprocess.run([mx, '--timeout', '300', '-n', str(np_), exe, '--op', op, '--sizes', sizes],
                                   capture_output=True, text=True)
                for l in p.stdout.splitlines():
                    f = l.split(',')
                    if len(f) == 6 and f[0] == 'coll':
                        res[(op, np_, int(f[2]), name)].append(float(f[4]))
                        if f[5] != '1':
                            print('NOT VERIFIED', name, l, flush=True)
                if p.returncode:
                    print('FAIL', name, op, np_, p.stderr[-300:], flush=True)
    print('round', r + 1, 'done', round(time.time() - t0), 's', flush=True)
print('| op | ranks | size | before (us) | after (us) | after/before | before runs | after runs |')
print('|---|---:|---:|---:|---:|---:|---|---|')
for k in sorted(set(k[:3] for k in res)):
    b = res[k + ('before',)]; a = res[k + ('after',)]
    mb, ma = statistics.median(b), statistics.median(a)
    print('| %s | %d | %d | %.2f | %.2f | %.2f | %s | %s |' % (k[0], k[1], k[2], mb, ma, ma / mb,
          ' '.join('%.1f' % x for x in b), ' '.join('%.1f' % x for x in a)))
