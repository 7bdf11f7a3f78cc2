# SPDX-License-Identifier: MIT
"""The coll and rma scenarios of bench/compare: the OSU micro-benchmarks'
collective latency tests, and their one-sided tests, under Ferry, MPICH
and Open MPI.

rma: osu_put/get/acc/fop/cas_latency (8 B) and osu_put/get_bw (1 and
4 MiB), 2 ranks bound one per core, with each window and synchronisation
variant of RMA_VARIANTS (OSU's -w and -s); latencies in us (lower is
better), bandwidths in MB/s (higher is better).

The user gives the path of an OSU micro-benchmarks source tree (nothing is
fetched). Its collective sources are compiled unmodified with each
implementation's mpicc into the work directory. Each benchmark runs at
8 B, 64 KiB and 1 MiB (barrier: no size) with 2 ranks (one per core,
bound) and 4 ranks (two per core, unbound), once per implementation per
round, interleaved, every run under flock(1). Reported: OSU's average
latency in microseconds (the i-forms: their "Overall", which includes the
dummy computation OSU sizes to each implementation's own pure
communication time), the median of the rounds, and Ferry / best peer.
"""

import glob
import os
import re
import statistics
import subprocess
import time

BENCHES = ("barrier", "bcast", "reduce", "allreduce", "allgather",
           "alltoall", "ibarrier", "ibcast", "ireduce", "iallreduce",
           "iallgather", "ialltoall")
RMA_BENCHES = ("put_latency", "get_latency", "acc_latency", "fop_latency",
               "cas_latency", "put_bw", "get_bw")
RMA_VARIANTS = ("-w allocate -s flush", "-w create -s flush",
                "-w allocate -s lock")
RMA_ITERS = ["-i", "1000", "-x", "100"]
SIZES = (8, 65536, 1048576)
RANKS = (2, 4)
CFLAGS = ["-O2"]
# The collectives' iterations (--osu-iters): "osu" passes none, so each
# benchmark runs its own defaults (OSU 5.x: 1000 timed after 200 warm-up
# up to 8 KiB, 100 after 10 above); "quick" runs fewer (MPICH busy-polls
# when ranks outnumber cores and needs milliseconds per call, so a full
# table takes about twice as long with "osu"); or "I:X" for -i I -x X.
# At "quick" an 8-byte cell between two ranks times only ~30 us in all,
# and a single interruption moves its mean 2-3x.
ITERS_QUICK = ["-i", "200", "-x", "20"]


def iters_args(spec):
    """The OSU options of an --osu-iters value, or raise ValueError."""
    if spec == "osu":
        return []
    if spec == "quick":
        return ITERS_QUICK[:]
    i, sep, x = spec.partition(":")
    if not sep or not i.isdigit() or not x.isdigit() or int(i) < 1:
        raise ValueError("--osu-iters: osu, quick or I:X (e.g. 1000:200)")
    return ["-i", i, "-x", x]


LINE_RE = re.compile(r"^\s*(\d+)\s+([0-9.]+)")


def find_sources(path, anchor="osu_bcast.c", support="osu_coll.c"):
    """(directory of the anchor source, [support sources], [include dirs])
    of an OSU tree at 'path', or None. Knows 5.0-5.3 (mpi/collective/
    osu_coll.c, mpi/one-sided/osu_1sc.c), 5.4-6.x (mpi/... + util/
    osu_util*.c, whose collectives include osu_ireduce and
    osu_iallreduce) and 7.x (c/mpi/... + c/util/osu_util*.c)."""
    hits = sorted(glob.glob(os.path.join(path, "**", anchor),
                            recursive=True))
    for bcast in hits:
        d = os.path.dirname(bcast)
        if os.path.isfile(os.path.join(d, support)):  # 5.0-5.3
            return d, [os.path.join(d, support)], [d]
        for up in (3, 2):  # 7.x: c/mpi/<family>/<kind>; 5.4-6.x: mpi/<family>
            util = os.path.normpath(os.path.join(d, *([".."] * up), "util"))
            if os.path.isfile(os.path.join(util, "osu_util.c")):
                srcs = [os.path.join(util, f) for f in
                        ("osu_util.c", "osu_util_mpi.c", "osu_util_graph.c",
                         "osu_util_papi.c") if os.path.isfile(
                             os.path.join(util, f))]
                return d, srcs, [util]
    return None


def bench_source(srcdir, name):
    for d in (srcdir, os.path.join(srcdir, "..", "non_blocking")):
        f = os.path.join(d, "osu_%s.c" % name)
        if os.path.isfile(f):
            return f
    return None


def build(impl, found, workdir, benches, log):
    """{bench: executable} for impl, and {bench: why not}."""
    srcdir, support, incs = found
    out = os.path.join(workdir, "osu-" + impl.key)
    os.makedirs(out, exist_ok=True)
    exes, errors = {}, {}
    for b in benches:
        src = bench_source(srcdir, b)
        if not src:
            errors[b] = "no osu_%s.c in the tree" % b
            continue
        exe = os.path.join(out, "osu_" + b)
        cmd = ([impl.mpicc] + CFLAGS + ["-I" + i for i in incs] + [src] +
               support + ["-o", exe, "-lm"])
        p = subprocess.run(cmd, capture_output=True, text=True)
        log.append("%s osu_%s: %s" % (impl.label, b, "ok" if p.returncode == 0
                                      else "FAILED"))
        if p.returncode != 0:
            errors[b] = "build failed: " + " | ".join(
                p.stderr.strip().splitlines()[-2:])[:300]
            continue
        exes[b] = exe
    return exes, errors


def run_once(impl, exe, bench, nranks, size, timeout, locked, stop_job,
             args=None, iters=()):
    """Latency in us (bandwidth in MB/s) or (None, error). args: the
    benchmark's options (default: iters, the collectives' iteration
    options, and -m size)."""
    bind = impl.bind_opts if nranks <= (os.cpu_count() or 1) else \
        impl.nobind_opts
    if args is None:
        args = list(iters)
        if "barrier" not in bench:
            args += ["-m", "%d:%d" % (size, size)]
    argv = locked([impl.mpiexec, "-n", str(nranks)] + impl.launch_opts +
                  bind + [exe] + args)
    try:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True,
                             env=impl.run_env(), start_new_session=True)
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_job(p)
        return None, "timeout after %d s" % timeout
    except OSError as e:
        return None, "cannot start: %s" % e
    if p.returncode != 0:
        tail = " | ".join(out.strip().splitlines()[-3:])
        return None, "exit %d: %s" % (p.returncode, tail[:300])
    for line in out.splitlines():
        if "barrier" in bench:
            # 5.x: a line of numbers after the header (barrier: the
            # latency; ibarrier: overall, compute, pure comm., overlap).
            m = re.match(r"^\s*([0-9.]+)(\s+[0-9.]+)*\s*$", line)
            if m:
                return float(m.group(1)), None
        else:
            m = LINE_RE.match(line)
            if m and int(m.group(1)) == size:
                return float(m.group(2)), None
    return None, "no result line in the output"


class Family:
    """One scenario: which OSU sources, which cells, how each runs."""

    def __init__(self, name, anchor, support, what):
        self.name, self.anchor, self.support, self.what = (
            name, anchor, support, what)


COLL = Family("coll", "osu_bcast.c", "osu_coll.c", "collective")
RMA = Family("rma", "osu_put_latency.c", "osu_1sc.c", "one-sided")


def coll_cells(args):
    """(bench, ranks, size, options or None) of the coll scenario."""
    benches = [b for b in args.osu_benches if b in BENCHES]
    return benches, [(b, n, s, None) for b in benches
                     for n in args.osu_ranks
                     for s in ((0,) if "barrier" in b else SIZES)]


def rma_cells(args):
    """(bench, 2, size, options) of the rma scenario: every variant."""
    cells = []
    # --osu-benches naming one-sided tests restricts the scenario to them.
    chosen = [b for b in RMA_BENCHES if b in args.osu_benches]
    benches = chosen or list(RMA_BENCHES)
    for b in benches:
        for v in RMA_VARIANTS:
            for s in ((1048576, 4194304) if b.endswith("_bw") else (8,)):
                cells.append((b, 2, s, v.split() + RMA_ITERS))
    return benches, cells


def run(args, impls, workdir, cmdline, started, locked, stop_job, machine,
        md_table, fam=COLL):
    """The whole coll (or rma) scenario; returns compare's exit status."""
    name = fam.name
    if not args.osu:
        print("%s: skipped: no OSU micro-benchmarks tree given (--osu "
              "PATH; compare fetches nothing)" % name)
        return 0
    found = find_sources(os.path.abspath(args.osu), fam.anchor, fam.support)
    if not found:
        print("%s: skipped: %s has no OSU %s sources (%s with %s, or with "
              "../../../util/osu_util_mpi.c)" % (
                  name, args.osu, fam.what, fam.anchor, fam.support))
        return 0
    t_start = time.monotonic()
    coll_iters = iters_args(args.osu_iters)
    iters_text = " ".join(RMA_ITERS if fam is RMA else coll_iters) or \
        "none: OSU's own iteration counts"
    log, exes, active = [], {}, []
    benches, cells = (rma_cells if fam is RMA else coll_cells)(args)
    for impl in impls:
        if impl.missing:
            print("%s: %s skipped: %s" % (name, impl.label, impl.missing))
            continue
        e, err = build(impl, found, workdir, benches, log)
        exes[impl.key] = e
        active.append(impl)
        for b, why in sorted(err.items()):
            print("%s: %s osu_%s %s" % (name, impl.label, b, why))
    lat, fails = {}, {}
    for rnd in range(args.runs):
        for b, n, s, opts in cells:
            for impl in active:
                exe = exes[impl.key].get(b)
                key = (impl.key, b, n, s, " ".join(opts[:4]) if opts else "")
                if not exe or len(fails.get(key, [])) >= 2:
                    continue
                v, err = run_once(impl, exe, b, n, s, args.timeout, locked,
                                  stop_job, opts, coll_iters)
                tag = "run %d/%d osu_%s np%d %s %s%s" % (
                    rnd + 1, args.runs, b, n, s, impl.label,
                    " " + key[4] if key[4] else "")
                if err:
                    fails.setdefault(key, []).append(err)
                    print("%s FAILED: %s" % (tag, err), flush=True)
                    continue
                lat.setdefault(key, []).append(v)
                print("%s %.2f %s" % (tag, v, "MB/s" if b.endswith("_bw")
                                      else "us"), flush=True)

    header = ["benchmark", "ranks", "size"] + (
        ["options"] if fam is RMA else []) + [
        "%s (%s)" % (i.label, "us / MB/s" if fam is RMA else "us")
        for i in active] + ["Ferry/best peer"]
    rows = []
    for b, n, s, opts in cells:
        kopt = " ".join(opts[:4]) if opts else ""
        row = ["osu_" + b, str(n), "-" if s == 0 else
               ("%d KiB" % (s // 1024) if s >= 1024 else "%d B" % s)] + (
                   [kopt] if fam is RMA else [])
        med = {}
        for impl in active:
            vs = lat.get((impl.key, b, n, s, kopt))
            if vs:
                med[impl.key] = statistics.median(vs)
                cell = "%.2f" % med[impl.key]
                if max(vs) > 1.5 * min(vs):
                    cell += "*"
                row.append(cell)
            else:
                row.append("FAILED" if (impl.key, b, n, s, kopt) in fails
                           else "n/a")
        peers = [med[k] for k in ("mpich", "ompi") if k in med]
        bw = b.endswith("_bw")
        best = (max(peers) if bw else min(peers)) if peers else 0
        row.append("%.2f" % (med["ferry"] / best)
                   if "ferry" in med and best > 0 else "n/a")
        rows.append(row)

    elapsed = time.monotonic() - t_start
    table = md_table(header, rows)
    print()
    print(table)
    print()
    print("Medians of %d runs (OSU's average latency; bandwidth for *_bw); "
          "ratio = Ferry / best peer; *: runs spread more than 1.5x."
          % args.runs)
    print("Machine: %s" % machine)
    for key, errs in sorted(fails.items()):
        print("  failures %s osu_%s np%d %s %s: %s" % (key + (errs[0],)))
    if args.out:
        out = ["# OSU %s: Ferry vs MPICH vs Open MPI (%s)" % (
            fam.what, started), "", table, "",
               "Medians of %d runs, interleaved; OSU's average latency in "
               "microseconds, bandwidth (`*_bw`) in MB/s (options `%s`); "
               "ratio = Ferry / best peer (latency: fastest, bandwidth: "
               "highest); `*`: runs spread more than 1.5x. 2 ranks bound "
               "one per core, 4 ranks unbound on the 2 cores. Every run "
               "under `flock /tmp/ferry-bench.lock`." % (
                   args.runs, iters_text),
               "", "- Machine: %s" % machine]
        for impl in active:
            out.append("- %s: %s" % (impl.label, impl.version))
        out.append("- Command: `%s` (%.0f s)" % (cmdline, elapsed))
        out += ["", "## Every run", "", "| run | us |", "|---|---|"]
        for key in sorted(lat):
            out.append("| %s osu_%s np%d %d %s | %s |" % (
                key + (" ".join("%.2f" % v for v in lat[key]),)))
        if fails:
            out += ["", "## Failed runs", ""]
            for key, errs in sorted(fails.items()):
                for e in errs:
                    out.append("- %s osu_%s np%d %d %s: %s" % (key + (e,)))
        with open(args.out, "w") as f:
            f.write("\n".join(out) + "\n")
        print("Markdown written to %s" % args.out)
    return 1 if fails else 0

