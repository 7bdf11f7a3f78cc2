#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every MPI entry point takes the library lock under MPI_THREAD_MULTIPLE.

Reads src/**/*.c: each function defined with FY_API (PMPI_x, also inside
the macros that generate entry points) must open with FY_MT_ENTER(), except
PMPI_Abort, which must never wait for the lock. Prints the offenders and
exits 1, else prints a count and exits 0."""
import glob
import os
import re
import sys

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "src")
EXEMPT = {"PMPI_Abort"}
bad, seen = [], 0
for path in sorted(glob.glob(os.path.join(src, "**", "*.c"), recursive=True)):
    lines = open(path, encoding="utf-8").read().split("\n")
    pending = None
    for i, line in enumerate(lines):
        code = line.rstrip("\\").strip()
        if code.startswith("FY_API") and not code.endswith(";") \
                and "=" not in code:
            m = re.search(r"(PMPI_\w+)\s*\(", code)
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            pending = (m.group(1) if m else nxt.split("(")[0], i + 1)
        elif pending and code == "{":
            name, at = pending
            pending = None
            seen += 1
            body = lines[i + 1].rstrip("\\").strip() if i + 1 < len(lines) else ""
            if name not in EXEMPT and body != "FY_MT_ENTER();":
                bad.append(f"{os.path.relpath(path, src)}:{at}: {name}")
if bad:
    print("entry points without FY_MT_ENTER() as their first statement:")
    print("\n".join(bad))
    sys.exit(1)
print(f"mt_guard: {seen} entry points take the lock")
