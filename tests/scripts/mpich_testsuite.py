#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Builds and runs MPICH's test suite (its test/mpi tree, strict MPI: no
MPIX_ tests) against an MPI, one program at a time, and judges it with
the suite's own rules: a program passes when it prints "No Errors" and
exits with 0 (or, for the tests whose list asks for it, exits non-zero).

  mpich_testsuite.py --tree MPICH/test/mpi --prefix FERRY_BUILD_OR_PREFIX
                     --out DIR [--dirs coll,pt2pt] [--only REGEX]
                     [--known FILE] [--timeout S] [--mpiexec "CMD -n"]

The tree is not part of Ferry and CI cannot fetch it: without --tree (or
FERRY_MPICH_TESTS in the environment) naming a directory that holds
testlist.in, the script says so and exits 77 (a CTest skip). --known
lists the programs expected to fail, each with its reason
(tests/mpich_testsuite_known.txt); the run fails if any other program
fails, and names the listed ones that passed. Results: DIR/results.tsv
(dir, program, ranks, arguments, outcome, seconds) and each program's
output in DIR/logs/. Programs with more than --max-np ranks, or whose
list entry asks for more than 16 GB (mem=), are skipped and counted."""
import argparse
import os
import re
import shlex
import subprocess
import sys
import time

# What the suite's configure would find on Debian 12 with gcc; strict MPI.
CONF_H = """#define HAVE_STDARG_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_STRDUP 1
#define HAVE_USLEEP 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_LONG_INT 1
#define HAVE_ATOMIC 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_IO 1
#define HAVE_PTHREAD_H 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
#define USE_STRICT_MPI 1
#define ENABLE_STRICTMPI 1
#define POINTERINT_t long
#define USE_LONG_DOUBLE_COMPLEX 1
#define HAVE_H_ADDR_LIST 1
#define MPIO_USES_MPI_REQUEST 1
"""
DTP_CONF_H = """#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_LIMITS_H 1
#define HAVE_STDINT_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_STRDUP 1
#define HAVE_MEMSET 1
"""
DEFAULT_DIRS = ('attr,coll,comm,datatype,errhan,group,info,init,mpi_t,pt2pt,'
                'rma,topo,part,session,io,errors,threads/pt2pt,threads/comm,'
                'threads/init,threads/mpi_t,threads/coll,threads/rma')
# The suite's default time limit per program (its runtests script).
DEFAULT_TIMEOUT = 180


def makefile_targets(path):
    """program -> {SOURCES, CPPFLAGS, ...} from an automake Makefile.am."""
    out = {}
    if not os.path.exists(path):
        return out
    text = open(path, errors='replace').read().replace('\\\n', ' ')
    for line in text.splitlines():
        m = re.match(r'^\s*(\w+)_(SOURCES|CPPFLAGS)\s*\+?=\s*(.*)$', line)
        if m:
            out.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
    return out


def test_entries(tree, d):
    """(dir, tokens) of each program line of d's test list, sublists
    followed; lines the suite's configure would drop (MPIX tests, other
    languages, optional directories) are dropped."""
    res = []
    for f in ('testlist', 'testlist.in'):
        p = os.path.join(tree, d, f)
        if not os.path.exists(p):
            continue
        for line in open(p, errors='replace'):
            line = line.strip()
            if not line or line.startswith('#') or line.startswith('@mpix@'):
                continue
            if '@' in line:
                line = re.sub(r'@\w*@', '', line).strip()
                if not line:
                    continue
            toks = line.split()
            sub = os.path.join(d, toks[0])
            if len(toks) == 1 and os.path.isdir(os.path.join(tree, sub)):
                res += test_entries(tree, sub)
            else:
                res.append((d, toks))
        break
    return res


class Builder:
    def __init__(self, tree, mpicc, bindir):
        self.tree, self.mpicc, self.bindir = tree, mpicc, bindir
        self.inc = os.path.join(bindir, 'inc')
        self.makefiles = {}
        os.makedirs(self.inc, exist_ok=True)
        with open(os.path.join(self.inc, 'mpitestconf.h'), 'w') as f:
            f.write(CONF_H)
        open(os.path.join(self.inc, 'mtest_mpix.h'), 'w').close()
        # dtpools_internal.h includes "../dtpoolsconf.h", which configure
        # writes into the tree: found here as inc/dir/../dtpoolsconf.h.
        with open(os.path.join(self.inc, 'dtpoolsconf.h'), 'w') as f:
            f.write(DTP_CONF_H)
        os.makedirs(os.path.join(self.inc, 'dir'), exist_ok=True)
        self.cflags = ['-O1', '-g', '-w', '-I', self.inc,
                       '-I', os.path.join(tree, 'include'),
                       '-I', os.path.join(tree, 'dtpools', 'include')]
        self.libs = {}

    def cc(self, args):
        r = subprocess.run([self.mpicc] + args, capture_output=True, text=True)
        return r.returncode, ' '.join([self.mpicc] + args) + '\n' + r.stdout + r.stderr

    def support_lib(self, threads):
        """The suite's utilities (and dtpools, which every program links),
        with the single-threaded or the threaded package."""
        name = 'libmtest_thread.a' if threads else 'libmtest.a'
        if name in self.libs:
            return self.libs[name]
        lib = os.path.join(self.bindir, name)
        objs = []
        util = ['mtest.c', 'mtest_common.c', 'dtypes.c',
                'mtest_thread.c' if threads else 'mtest_single.c']
        srcs = [os.path.join(self.tree, 'util', s) for s in util]
        dtp = os.path.join(self.tree, 'dtpools', 'src')
        srcs += [os.path.join(dtp, s) for s in sorted(os.listdir(dtp)) if s.endswith('.c')]
        for s in srcs:
            o = os.path.join(self.bindir, ('t_' if threads else 's_') +
                             os.path.basename(s) + '.o')
            rc, log = self.cc(self.cflags + ['-iquote', os.path.join(self.inc, 'dir'),
                                             '-DDTP_MPI_DATATYPE=MPI_INT',
                                             '-c', s, '-o', o])
            if rc:
                sys.exit('cannot build the suite\'s utilities:\n' + log)
            objs.append(o)
        run = os.path.join(self.bindir, 'run_mpitests.o')
        rc, log = self.cc(self.cflags + ['-c', os.path.join(self.tree, 'util', 'run_mpitests.c'),
                                         '-o', run])
        if rc:
            sys.exit('cannot build run_mpitests.c:\n' + log)
        subprocess.run(['ar', 'rcs', lib] + objs, check=True)
        self.libs[name] = lib
        return lib

    def program(self, d, name, log):
        """The executable, or (None, why)."""
        mf = self.makefiles.setdefault(
            d, makefile_targets(os.path.join(self.tree, d, 'Makefile.am')))
        info = mf.get(re.sub(r'\W', '_', name), {})
        srcs = info.get('SOURCES', name + '.c').split()
        if any(not s.endswith(('.c', '.h')) for s in srcs):
            return None, 'not-c'
        srcs = [os.path.join(self.tree, d, s) for s in srcs if s.endswith('.c')]
        if not srcs or not all(os.path.exists(s) for s in srcs):
            return None, 'no-source'
        exe = os.path.join(self.bindir, d.replace('/', '_') + '__' + name)
        if os.path.exists(exe):
            return exe, None
        cpp = shlex.split(info.get('CPPFLAGS', '').replace('$(AM_CPPFLAGS)', ''))
        # Newer programs define run() and take main() from run_mpitests.c.
        has_main = any(re.search(r'\bmain\s*\(', open(s, errors='replace').read())
                       for s in srcs)
        extra = [] if has_main else [os.path.join(self.bindir, 'run_mpitests.o')]
        lib = self.support_lib(d.startswith('threads'))
        rc, out = self.cc(self.cflags + ['-I', os.path.join(self.tree, d)] + cpp + srcs +
                          extra + [lib, '-o', exe, '-lm', '-lpthread'])
        if rc:
            log.write(out)
            return None, 'build-failed'
        return exe, None


def judge(rule, out, rc):
    noerr = re.search(r'^\s*No [Ee]rrors\s*$', out, re.M) is not None
    if rule in ('TestStatus', 'TestErrFatal'):
        return rc != 0
    if rule == 'TestStatusNoErrors':
        return noerr and rc != 0
    return noerr and rc == 0


def load_known(path):
    known = {}
    if not path:
        return known
    for line in open(path):
        line = line.split('#', 1)[0].rstrip() if not line.lstrip().startswith('#') else ''
        if not line.strip():
            continue
        key, _, why = line.partition('|')
        known[key.strip()] = why.strip()
    return known


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--tree', default=os.environ.get('FERRY_MPICH_TESTS', ''))
    ap.add_argument('--prefix', required=True, help='holds bin/mpicc and bin/mpiexec')
    ap.add_argument('--mpiexec', default='', help='launcher and its rank-count flag')
    ap.add_argument('--out', required=True)
    ap.add_argument('--dirs', default=DEFAULT_DIRS)
    ap.add_argument('--only', default='')
    ap.add_argument('--known', default='')
    ap.add_argument('--timeout', type=float, default=DEFAULT_TIMEOUT)
    ap.add_argument('--max-np', type=int, default=16)
    ap.add_argument('--known-timeout', type=float, default=30,
                    help='time limit of the programs listed as known to fail')
    a = ap.parse_args()
    if not a.tree or not os.path.exists(os.path.join(a.tree, 'testlist.in')):
        print('skipped: no MPICH test tree (give --tree or FERRY_MPICH_TESTS the test/mpi '
              'directory of an MPICH source tree)')
        return 77
    tree = os.path.abspath(a.tree)
    prefix = os.path.abspath(a.prefix)
    mpicc = os.path.join(prefix, 'bin', 'mpicc')
    mpiexec = shlex.split(a.mpiexec) if a.mpiexec else [
        os.path.join(prefix, 'bin', 'mpiexec'), '-n']
    a.out = os.path.abspath(a.out)
    os.makedirs(os.path.join(a.out, 'logs'), exist_ok=True)
    b = Builder(tree, mpicc, os.path.join(a.out, 'bin'))
    known = load_known(a.known)
    only = re.compile(a.only) if a.only else None
    seen, tally, unexpected, fixed = set(), {}, [], []
    res = open(os.path.join(a.out, 'results.tsv'), 'w')
    for dd in a.dirs.split(','):
        for d, toks in test_entries(tree, dd):
            name = toks[0]
            np = int(toks[1]) if len(toks) > 1 and toks[1].isdigit() else 1
            kv, args, env = {}, [], {}
            for t in toks[2:]:
                k, _, v = t.partition('=')
                if k == 'arg':
                    args.append(v)
                elif k == 'env':
                    ek, _, ev = v.partition('=')
                    env[ek] = ev
                else:
                    kv[k] = v
            tid = f'{d}/{name} {np}' + (' ' + ' '.join(args) if args else '')
            if tid in seen or (only and not only.search(tid)):
                continue
            seen.add(tid)
            # MPICH-only behaviour, or a launcher option of MPICH's own.
            if kv.get('strict') == 'false' or 'mpiexecarg' in kv:
                continue
            t0, out, rc = time.time(), '', None
            if np > a.max_np or float(kv.get('mem', '0') or 0) > 16:
                outcome = 'skip'
            else:
                with open(os.path.join(a.out, 'logs', tid.replace('/', '_').replace(' ', '_')[:120] +
                                       '.build'), 'w') as log:
                    exe, why = b.program(d, name, log)
                if not exe:
                    outcome = why
                else:
                    cmd = mpiexec + [str(np), exe] + args
                    limit = float(kv.get('timeLimit', a.timeout))
                    if tid in known:  # some wait out their limit: less
                        limit = min(limit, a.known_timeout)
                    # As the suite's runtests does: the launcher ends a job
                    # that overruns (init/timeout tests that it does); the
                    # script kills what is left a little later.
                    env.setdefault('MPIEXEC_TIMEOUT', str(int(limit)))
                    try:
                        r = subprocess.run(cmd, capture_output=True, text=True, errors='replace',
                                           timeout=limit + 15,
                                           env=dict(os.environ, **env), cwd=os.path.join(tree, d))
                        out, rc = r.stdout + r.stderr, r.returncode
                        outcome = 'pass' if judge(kv.get('resultTest', ''), out, rc) else 'fail'
                    except subprocess.TimeoutExpired as e:
                        out = e.stdout.decode(errors='replace') if isinstance(e.stdout, bytes) \
                            else (e.stdout or '')
                        outcome = 'timeout'
                        subprocess.run(['pkill', '-KILL', '-f', exe])
                    with open(os.path.join(a.out, 'logs', re.sub(r'[^\w.=-]', '_', tid)[:150] +
                                           '.out'), 'w') as f:
                        f.write(' '.join(cmd) + f'\nexit status: {rc}\n' + out)
            dt = time.time() - t0
            tally[outcome] = tally.get(outcome, 0) + 1
            res.write(f'{d}\t{name}\t{np}\t{" ".join(args)}\t{outcome}\t{dt:.1f}\n')
            res.flush()
            bad = outcome in ('fail', 'timeout', 'build-failed')
            if bad and tid not in known:
                unexpected.append(f'{outcome}: {tid}')
            elif not bad and outcome == 'pass' and tid in known:
                fixed.append(tid)
            print(f'{outcome:12} {dt:6.1f}s {tid}' + ('  (known: ' + known[tid] + ')'
                                                      if bad and tid in known else ''), flush=True)
    print('\n' + ', '.join(f'{k} {v}' for k, v in sorted(tally.items())))
    for t in fixed:
        print(f'passed, though listed as known to fail: {t}')
    for t in unexpected:
        print(f'UNEXPECTED {t}')
    return 1 if unexpected else 0


if __name__ == '__main__':
    sys.exit(main())
