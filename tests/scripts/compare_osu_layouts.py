#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/compare_osu.py's find_sources on the three OSU source layouts
(empty stand-in files in a temporary directory): 5.0-5.3 (osu_coll.c
beside the collectives), 5.4-6.x (mpi/collective + util/osu_util.c) and
7.x (c/mpi/collective/blocking + c/util/osu_util*.c), for the collective
and the one-sided families; a tree without support sources is refused."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "bench"))
import compare_osu as osu  # noqa: E402

failed = 0


def touch(root, *paths):
    for p in paths:
        f = os.path.join(root, p)
        os.makedirs(os.path.dirname(f), exist_ok=True)
        open(f, "w").close()


def check(what, got, want_dir, want_srcs, want_incs):
    global failed
    if got is None:
        print("not ok - %s: not found" % what)
        failed += 1
        return
    d, srcs, incs = got
    if (os.path.normpath(d), sorted(map(os.path.normpath, srcs)),
            list(map(os.path.normpath, incs))) != (want_dir, sorted(want_srcs),
                                                   want_incs):
        print("not ok - %s: %r" % (what, got))
        failed += 1
    else:
        print("ok - %s" % what)


with tempfile.TemporaryDirectory() as t:
    a = os.path.join(t, "osu53")
    touch(a, "mpi/collective/osu_bcast.c", "mpi/collective/osu_coll.c",
          "mpi/one-sided/osu_put_latency.c", "mpi/one-sided/osu_1sc.c")
    c = os.path.join(a, "mpi", "collective")
    check("5.3 collectives", osu.find_sources(a), c,
          [os.path.join(c, "osu_coll.c")], [c])
    o = os.path.join(a, "mpi", "one-sided")
    check("5.3 one-sided",
          osu.find_sources(a, "osu_put_latency.c", "osu_1sc.c"), o,
          [os.path.join(o, "osu_1sc.c")], [o])

    b = os.path.join(t, "osu55")
    touch(b, "mpi/collective/osu_bcast.c", "mpi/collective/osu_ireduce.c",
          "util/osu_util.c", "mpi/one-sided/osu_put_latency.c")
    u = os.path.join(b, "util")
    check("5.5 collectives", osu.find_sources(b),
          os.path.join(b, "mpi", "collective"),
          [os.path.join(u, "osu_util.c")], [u])
    check("5.5 one-sided",
          osu.find_sources(b, "osu_put_latency.c", "osu_1sc.c"),
          os.path.join(b, "mpi", "one-sided"),
          [os.path.join(u, "osu_util.c")], [u])

    s = os.path.join(t, "osu74")
    touch(s, "c/mpi/collective/blocking/osu_bcast.c",
          "c/mpi/one-sided/osu_put_latency.c", "c/util/osu_util.c",
          "c/util/osu_util_mpi.c", "c/util/osu_util_graph.c")
    u = os.path.join(s, "c", "util")
    srcs = [os.path.join(u, f) for f in
            ("osu_util.c", "osu_util_mpi.c", "osu_util_graph.c")]
    check("7.x collectives", osu.find_sources(s),
          os.path.join(s, "c", "mpi", "collective", "blocking"), srcs, [u])
    check("7.x one-sided",
          osu.find_sources(s, "osu_put_latency.c", "osu_1sc.c"),
          os.path.join(s, "c", "mpi", "one-sided"), srcs, [u])

    n = os.path.join(t, "bare")
    touch(n, "mpi/collective/osu_bcast.c")
    if osu.find_sources(n) is not None:
        print("not ok - a tree without support sources was accepted")
        failed += 1
    else:
        print("ok - a tree without support sources is refused")

# --osu-iters: the benchmarks' own counts pass no option; bad values are
# refused before any run.
for spec, want in (("osu", []), ("quick", ["-i", "200", "-x", "20"]),
                   ("1000:200", ["-i", "1000", "-x", "200"])):
    got = osu.iters_args(spec)
    if got != want:
        print("not ok - --osu-iters %s gave %r, not %r" % (spec, got, want))
        failed += 1
    else:
        print("ok - --osu-iters %s" % spec)
for spec in ("", "5", "0:5", "a:b", "10:", "-1:2"):
    try:
        osu.iters_args(spec)
        print("not ok - --osu-iters %r was accepted" % spec)
        failed += 1
    except ValueError:
        print("ok - --osu-iters %r refused" % spec)

print("compare_osu_layouts: %s" % ("FAILED" if failed else "OK"))
sys.exit(1 if failed else 0)
