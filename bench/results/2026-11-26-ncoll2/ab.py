#!/usr/bin/env python3
# A/B: alternate before/new OSU runs, print medians. usage: ab.py bench np size rounds [env=val ...]
import subprocess, sys, statistics, re, os
bench, np_, size, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
extra = dict(a.split("=",1) for a in sys.argv[5:])
cfg = {
 "before": ("/tmp/ncoll2/before/build/bin/mpiexec", "/tmp/ncoll2/meas/w1/osu-ferry/osu_"+bench),
 "new": ("/work/wt/ncoll2/build/bin/mpiexec", "/tmp/ncoll2/osu-new/osu_"+bench),
 "ompi": ("mpiexec.openmpi", "/tmp/ncoll2/meas/w1/osu-ompi/osu_"+bench),
}
which = os.environ.get("AB", "before,new,ompi").split(",")
res = {k: [] for k in which}
for i in range(rounds):
    for k in which:
        mpx, exe = cfg[k]
        argv = ["flock", "/tmp/ferry-bench.lock", mpx]
        if k == "ompi": argv += ["--allow-run-as-root", "--oversubscribe"]
        argv += ["-n", str(np_), "--bind-to", "core" if np_ <= 2 else "none", exe, "-i", "200", "-x", "20"]
        if "barrier" not in bench: argv += ["-m", "%d:%d" % (size, size)]
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        if k != "ompi": env.update(extra)
        out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120).stdout
        v = None
        for line in out.splitlines():
            m = re.match(r"^\s*([0-9.]+)(\s+[0-9.]+)*\s*$", line)
            if m:
                f = line.split()
                v = float(f[1]) if "barrier" not in bench else float(f[0])
        res[k].append(v)
for k in which:
    xs = [x for x in res[k] if x is not None]
    print("%-7s %s np%d %d: median %.2f  [%s]" % (k, bench, np_, size, statistics.median(xs) if xs else -1, " ".join("%.1f" % x for x in xs)))
