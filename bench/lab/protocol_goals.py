#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 8's goals from reports of `ferry-bench --protocols` (report.md):
per report, each goal's ratio of the medians at every size above the
eager limit, and the range over its sizes.

  early  write / push-zero            64 KiB-4 MiB   goal <= 1
  early  write / Push-Pull            64 KiB-4 MiB   goal <= 1
  late   Push-Pull / best of push-zero and push-all   1 KiB-4 MiB  <= 1.10
  early, late  auto / best setting (write included)   1 KiB-4 MiB  <= 1.10

Push-Pull is the report's first push-pull column (BTP 192 in the main
set)."""
import sys

KIB, MIB = 1024, 1024 * 1024


def table(text, heading):
    """The rows of the markdown table under heading, as dicts."""
    lines = text[text.index(heading):].split("\n")[1:]
    while not lines[0].startswith("|"):
        lines.pop(0)
    rows = []
    while lines and lines[0].startswith("|"):
        rows.append([c.strip() for c in lines.pop(0).split("|")[1:-1]])
    head = rows[0]
    return head, [dict(zip(head, r)) for r in rows[2:]]


def size_of(label):
    n, unit = label.split()
    return int(n) * {"B": 1, "KiB": KIB, "MiB": MIB}[unit]


GOALS = (  # name, mode, lowest size, limit, ratio
    ("early write / push-zero", "early", 64 * KIB, 1.0,
     lambda v, pp, best: v["write"] / v["push-zero"]),
    ("early write / push-pull", "early", 64 * KIB, 1.0,
     lambda v, pp, best: v["write"] / v[pp]),
    ("late push-pull / best of push-zero, push-all", "late", KIB, 1.10,
     lambda v, pp, best: v[pp] / min(v["push-zero"], v["push-all"])),
    ("early auto / best", "early", KIB, 1.10,
     lambda v, pp, best: v["auto"] / best),
    ("late auto / best", "late", KIB, 1.10,
     lambda v, pp, best: v["auto"] / best),
)


def short(size):
    return "%dM" % (size // MIB) if size >= MIB else "%dK" % (size // KIB)


def main(paths):
    if not paths:
        print("usage: protocol_goals.py REPORT.md [...]", file=sys.stderr)
        return 2
    missed = 0
    for path in paths:
        text = open(path).read()
        modes = {}
        for mode, heading in (("early", "### Early receiver"),
                              ("late", "### Late receiver")):
            head, rows = table(text, heading)
            pp = next(h for h in head if h.startswith("push-pull"))
            settings = [h for h in head if h not in ("size", "order held")]
            modes[mode] = (pp, [(size_of(r["size"]),
                                 {k: float(r[k]) for k in settings})
                                for r in rows])
        print(path)
        for name, mode, lo, limit, ratio in GOALS:
            pp, rows = modes[mode]
            cells = [(s, ratio(v, pp, min(v.values())))
                     for s, v in rows if lo <= s <= 4 * MIB]
            worst = max(r for _, r in cells)
            missed += worst > limit + 1e-9
            print("  %-46s %.2f-%.2f (<= %.2f%s) %s" % (
                name, min(r for _, r in cells), worst, limit,
                "" if worst <= limit + 1e-9 else ", MISSED",
                " ".join("%s:%.2f" % (short(s), r) for s, r in cells)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
