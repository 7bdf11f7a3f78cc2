# SPDX-License-Identifier: MIT
"""The npb scenario of bench/compare: the NAS Parallel Benchmarks 3.4 (MPI)
under Ferry, MPICH and Open MPI.

The user gives the path of an NPB 3.4 source tree (nothing is fetched). For
each implementation the tree is copied into the work directory and built
unmodified with that implementation's mpif90 and mpicc (config/make.def and
config/suite.def are the only files written). Runs are interleaved
(program by program, implementation by implementation, round by round),
each under flock(1), and every run's "Verification" line is checked.
Reported: time in seconds (NPB's own "Time in seconds") per program, class
and rank count, the median of the rounds, and Ferry / best peer.
"""

import os
import re
import shutil
import statistics
import subprocess
import time

PROGRAMS = ("cg", "ep", "ft", "is", "lu", "mg", "sp", "bt", "dt")
# BT and SP need a square number of ranks.
SQUARE_ONLY = ("bt", "sp")
# DT runs on as many ranks as its communication graph has nodes. The White
# Hole graph: NPB 3.4's reference value for class A Black Hole (17809491)
# is not what MPICH, Open MPI or Ferry compute (17791410), WH verifies.
DT_GRAPH = "WH"
DT_NODES = {"S": 5, "W": 11, "A": 21, "B": 43}

TIME_RE = re.compile(r"Time in seconds\s*=\s*([0-9.Ee+-]+)")
VERIFY_RE = re.compile(r"Verification\s*=\s*(\w+)")

FFLAGS = "-O3"
NPB_GNU_FFLAGS = " -fallow-argument-mismatch -fallow-invalid-boz"
CFLAGS = "-O3"


def find_tree(path):
    """The NPB3.4-MPI directory of the tree at 'path', or None."""
    for d in (path, os.path.join(path, "NPB3.4-MPI")):
        if (os.path.isfile(os.path.join(d, "config", "make.def.template"))
                and os.path.isdir(os.path.join(d, "sys"))):
            return d
    return None


def ranks_for(prog, cls, ranks):
    if prog == "dt":
        return [DT_NODES[cls]] if cls in DT_NODES else []
    if prog in SQUARE_ONLY:
        return [n for n in ranks if int(n ** 0.5) ** 2 == n]
    return list(ranks)


def make_def(impl):
    # gfortran >= 10 rejects MPI calls with different buffer types in one
    # file when mpif.h has no interfaces, and NPB's randi8.f writes BOZ
    # constants as X'..'; MPICH's and Ferry's wrappers add these two flags
    # themselves, Open MPI's does not.
    fflags = FFLAGS + NPB_GNU_FFLAGS
    return "\n".join([
        "MPIFC = %s" % impl.mpifc, "FLINK = $(MPIFC)", "FMPI_LIB =",
        "FMPI_INC =", "FFLAGS = %s" % fflags, "FLINKFLAGS = $(FFLAGS)",
        "MPICC = %s" % impl.mpicc, "CLINK = $(MPICC)", "CMPI_LIB =",
        "CMPI_INC =", "CFLAGS = %s" % CFLAGS, "CLINKFLAGS = $(CFLAGS)",
        "CC = gcc", "BINDIR = ../bin",
        "CONVERTFLAG = -DFORTRAN_REC_SIZE=1", "RAND = randi8", ""])


def build(impl, tree, workdir, programs, classes, log):
    """Builds the suite for impl; returns ({(prog, cls): exe}, {(prog,
    cls): error})."""
    dst = os.path.join(workdir, "npb-" + impl.key)
    mdef = os.path.join(dst, "config", "make.def")
    want = [os.path.join(dst, "bin", "%s.%s.x" % (p, c))
            for p in programs for c in classes]
    try:
        with open(mdef) as f:
            same = f.read() == make_def(impl)
    except OSError:
        same = False
    if same and all(os.access(x, os.X_OK) for x in want):
        # Built by an earlier run with this very make.def (--workdir).
        log.append("build %s: reused %s (same config/make.def)" % (
            impl.label, dst))
        return {(p, c): os.path.join(dst, "bin", "%s.%s.x" % (p, c))
                for p in programs for c in classes}, {}
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(tree, dst)
    os.makedirs(os.path.join(dst, "bin"), exist_ok=True)
    with open(os.path.join(dst, "config", "make.def"), "w") as f:
        f.write(make_def(impl))
    with open(os.path.join(dst, "config", "suite.def"), "w") as f:
        for p in programs:
            for c in classes:
                f.write("%s %s\n" % (p, c))
    cmd = ["make", "suite"]
    log.append("build %s: (cd %s && %s) with config/make.def: MPIFC=%s "
               "MPICC=%s FFLAGS='%s%s' CFLAGS='%s'"
               % (impl.label, dst, " ".join(cmd), impl.mpifc, impl.mpicc,
                  FFLAGS, NPB_GNU_FFLAGS, CFLAGS))
    try:
        p = subprocess.run(cmd, cwd=dst, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=3600,
                           env=impl.run_env())
        out = p.stdout
    except (OSError, subprocess.SubprocessError) as e:
        out = "make failed: %s" % e
    with open(os.path.join(dst, "build.log"), "w") as f:
        f.write(out)
    exes, errors = {}, {}
    for prog in programs:
        for cls in classes:
            exe = os.path.join(dst, "bin", "%s.%s.x" % (prog, cls))
            if os.access(exe, os.X_OK):
                exes[(prog, cls)] = exe
            else:
                errors[(prog, cls)] = ("not built (see %s/build.log)" % dst)
    return exes, errors


def run_once(impl, exe, prog, nranks, timeout, locked, stop_job):
    """Returns (seconds, verification word, None) or (None, None, error)."""
    prog_args = [DT_GRAPH] if prog == "dt" else []
    argv = locked([impl.mpiexec, "-n", str(nranks)] + impl.launch_opts +
                  impl.nobind_opts + [exe] + prog_args)
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True,
                             env=impl.run_env(), start_new_session=True)
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_job(p)
        return None, None, "timeout after %d s" % timeout
    except OSError as e:
        return None, None, "cannot start: %s" % e
    t = TIME_RE.search(out)
    v = VERIFY_RE.search(out)
    if p.returncode != 0 or not t or not v:
        tail = " | ".join(out.strip().splitlines()[-3:])
        return None, None, "exit %d after %.1f s: %s" % (
            p.returncode, time.monotonic() - t0, tail[:300])
    return float(t.group(1)), v.group(1), None


def run(args, impls, workdir, cmdline, started, locked, stop_job, machine,
        md_table):
    """The whole npb scenario; returns the exit status for compare."""
    if not args.npb:
        print("npb: skipped: no NPB source tree given (--npb PATH to an "
              "NPB 3.4 tree; compare fetches nothing)")
        return 0
    tree = find_tree(os.path.abspath(args.npb))
    if not tree:
        print("npb: skipped: %s is not an NPB 3.4 tree (no "
              "NPB3.4-MPI/config/make.def.template)" % args.npb)
        return 0
    t_start = time.monotonic()
    log = []
    exes, errors = {}, {}
    active = []
    for impl in impls:
        if impl.missing:
            print("npb: %s skipped: %s" % (impl.label, impl.missing))
            continue
        if not impl.mpifc or not os.access(impl.mpifc, os.X_OK):
            print("npb: %s skipped: no Fortran wrapper (%s)" % (
                impl.label, impl.mpifc))
            continue
        print("npb: building with %s ..." % impl.label, flush=True)
        e, err = build(impl, tree, workdir, args.npb_programs,
                       args.npb_classes, log)
        exes[impl.key], errors[impl.key] = e, err
        active.append(impl)
        for (p, c), why in sorted(err.items()):
            print("npb: %s %s.%s %s" % (impl.label, p, c, why))

    cells = []  # (prog, cls, nranks)
    for prog in args.npb_programs:
        for cls in args.npb_classes:
            for n in ranks_for(prog, cls, args.npb_ranks):
                cells.append((prog, cls, n))
    times, verif, fails = {}, {}, {}
    for rnd in range(args.runs):
        for prog, cls, n in cells:
            for impl in active:
                exe = exes[impl.key].get((prog, cls))
                key = (impl.key, prog, cls, n)
                if not exe or len(fails.get(key, [])) >= 2:
                    continue
                t, v, err = run_once(impl, exe, prog, n, args.timeout,
                                     locked, stop_job)
                tag = "run %d/%d %s.%s np%d %s" % (rnd + 1, args.runs, prog,
                                                   cls, n, impl.label)
                if err:
                    fails.setdefault(key, []).append(err)
                    print("%s FAILED: %s" % (tag, err), flush=True)
                    continue
                times.setdefault(key, []).append(t)
                verif.setdefault(key, set()).add(v)
                print("%s %.2f s %s" % (tag, t, v), flush=True)

    header = ["program", "class", "ranks"] + [
        "%s (s)" % i.label for i in active] + ["Ferry/best peer",
                                               "verification"]
    rows = []
    for prog, cls, n in cells:
        row = [prog.upper(), cls, str(n)]
        med = {}
        ver = []
        for impl in active:
            key = (impl.key, prog, cls, n)
            ts = times.get(key)
            if ts:
                med[impl.key] = statistics.median(ts)
                cell = "%.2f" % med[impl.key]
                if len(ts) < args.runs:
                    cell += " (%d/%d ok)" % (len(ts), args.runs)
                row.append(cell)
                vs = verif[key]
                ver.append("%s: %s" % (impl.label, "/".join(sorted(vs))))
            elif (prog, cls) in errors.get(impl.key, {}):
                row.append("not built")
                ver.append("%s: not built" % impl.label)
            else:
                row.append("FAILED")
                ver.append("%s: failed" % impl.label)
        peers = [med[i.key] for i in active if i.key in ("mpich", "ompi")
                 and i.key in med]
        row.append("%.2f" % (med["ferry"] / min(peers))
                   if "ferry" in med and peers and min(peers) > 0 else "n/a")
        row.append("; ".join(ver))
        rows.append(row)

    elapsed = time.monotonic() - t_start
    table = md_table(header, rows)
    print()
    print(table)
    print()
    print("Medians of %d runs (NPB's 'Time in seconds'); ratio = Ferry / "
          "fastest peer; every run under flock %s." % (args.runs,
                                                     "/tmp/ferry-bench.lock"))
    print("Machine: %s" % machine)
    for line in log:
        print("  " + line)
    for key, errs in sorted(fails.items()):
        print("  failures %s %s.%s np%d: %s" % (key + (errs[0],)))
    if args.out:
        out = ["# NPB 3.4 (MPI): Ferry vs MPICH vs Open MPI (%s)" % started,
               "", table, "",
               "Medians of %d runs, interleaved; time = NPB's own \"Time in "
               "seconds\"; ratio = Ferry / fastest peer. Every run under "
               "`flock /tmp/ferry-bench.lock`; launchers told not to bind; "
               "ranks > cores are oversubscribed." % args.runs, "",
               "- Machine: %s" % machine]
        for impl in active:
            out.append("- %s: %s" % (impl.label, impl.version))
        out.append("- Command: `%s` (%.0f s)" % (cmdline, elapsed))
        out += ["", "## Builds", "", "```"] + log + ["```", "",
                                                     "## Every run", "",
                                                     "| run | s |", "|---|---|"]
        for key in sorted(times):
            out.append("| %s %s.%s np%d | %s |" % (
                key + (" ".join("%.2f" % t for t in times[key]),)))
        if fails:
            out += ["", "## Failed runs", ""]
            for key, errs in sorted(fails.items()):
                for e in errs:
                    out.append("- %s %s.%s np%d: %s" % (key + (e,)))
        with open(args.out, "w") as f:
            f.write("\n".join(out) + "\n")
        print("Markdown written to %s" % args.out)
    bad = [k for k, vs in verif.items() if vs != {"SUCCESSFUL"}]
    return 1 if bad else 0
