#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Plots of a ferry-bench results.json (the seed's Figs. 2-5 and the
# crossovers): bandwidth.png, latency.png, cache.png, sweeps.png,
# memcpy.png, crossover.png; and seed 001's protocols: protocols.png (early
# and late receivers, its Fig. 6) and btp.png (the BTP sweep, its Fig. 3). Needs matplotlib (Debian: python3-matplotlib);
# exits with status 3 when it is missing so ferry-bench can say so.
#
#   plot.py RESULTS.json OUTDIR
import json
import math
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter
except ImportError:
    sys.stderr.write(
        "plot.py: matplotlib is not installed (Debian: apt-get install "
        "python3-matplotlib)\n"
    )
    sys.exit(3)

MIB = 1048576.0
MARKERS = "os^vD<>ph*x+"


def size_label(n, _pos=None):
    n = int(round(n))
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return "%dM" % (n >> 20)
    if n >= 1024 and n % 1024 == 0:
        return "%dK" % (n >> 10)
    return "%d" % n


def size_axis(ax):
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(size_label))
    ax.grid(True, which="major", alpha=0.3)


def mibps(size, us):
    return size / MIB / (us / 1e6) if us and us > 0 else None


def style(i):
    return dict(marker=MARKERS[i % len(MARKERS)], markersize=4, linewidth=1.4)


def title(fig, res, what):
    m = res["machine"]
    fig.suptitle(
        "%s - %s, %d CPUs, %s (load %.2f)"
        % (what, m["cpu"], m["ncpus"], m["date"], m["load_start"][0]),
        fontsize=10,
    )


def save(fig, outdir, name, made):
    path = os.path.join(outdir, name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    made.append(path)


def plot_bandwidth(res, outdir, made):
    bw = res["bandwidth"]
    sizes = bw["sizes"]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    for k, (label, figs) in enumerate(bw["us"].items()):
        xs, ys = [], []
        for s, f in zip(sizes, figs):
            if f and f.get("us"):
                xs.append(s)
                ys.append(mibps(s, f["us"]))
        for ax in axes:
            ax.plot(xs, ys, label=label, **style(k))
    axes[0].set_yscale("log")
    axes[0].set_title("all sizes (log scale)")
    axes[1].set_xlim(left=4096)
    axes[1].set_title("4 KiB and up (linear scale)")
    for ax in axes:
        size_axis(ax)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("MiB/s")
    axes[1].legend(fontsize=8)
    title(fig, res, "Bandwidth per mechanism (seed Fig. 4)")
    fig.tight_layout()
    save(fig, outdir, "bandwidth.png", made)


def plot_latency(res, outdir, made):
    lat = res["latency_1B"]
    labels = [k for k, v in lat.items() if v]
    vals = [lat[k]["us"] for k in labels]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    ax = axes[0]
    bars = ax.bar(range(len(labels)), vals, color="tab:blue")
    for b, v in zip(bars, vals):
        ax.annotate("%.2f" % v, (b.get_x() + b.get_width() / 2, v),
                    ha="center", va="bottom", fontsize=8)
    line = res["clock"].get("line_oneway_us")
    if line:
        ax.axhline(line, color="tab:red", linestyle="--",
                   label="one cache line, one way (%.2f us)" % line)
        ax.legend(fontsize=8)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("us")
    ax.set_yscale("log")
    ax.set_title("1-byte latency (seed Table II)")
    ax = axes[1]
    sizes = res["bandwidth"]["sizes"]
    for k, (label, figs) in enumerate(res["bandwidth"]["us"].items()):
        xs = [s for s, f in zip(sizes, figs) if f and s <= 65536]
        ys = [f["us"] for s, f in zip(sizes, figs) if f and s <= 65536]
        ax.plot(xs, ys, label=label, **style(k))
    size_axis(ax)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("us per transfer")
    ax.set_title("time per transfer up to 64 KiB")
    ax.legend(fontsize=8)
    title(fig, res, "Latency")
    fig.tight_layout()
    save(fig, outdir, "latency.png", made)


def plot_cache(res, outdir, made):
    c = res["cache"]
    if not c["results"]:
        return
    sizes = c["sizes"]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    for side, ax in enumerate(axes):
        key = "src_lines" if side == 0 else "dst_lines"
        cal = c["calibration"]["src" if side == 0 else "dst"]
        for k, (label, rows) in enumerate(c["results"].items()):
            xs = [s for s, r in zip(sizes, rows) if r]
            # Beyond the whole buffer the model counts L3 misses as extra
            # "lines"; the report gives the DRAM share instead.
            ys = [min(r[key], cal["lines"]) for r in rows if r]
            ax.plot(xs, ys, label=label, **style(k))
        ax.axhline(cal["lines"], color="black", linestyle=":",
                   label="whole user buffer (%d lines)" % cal["lines"])
        size_axis(ax)
        ax.set_xlabel("bytes transferred")
        ax.set_title(("source process" if side == 0 else "destination process")
                     + " (capped at the buffer)")
    axes[0].set_ylabel("estimated L2 lines evicted from the user buffer")
    axes[1].legend(fontsize=8)
    title(fig, res, "Cache disturbance (seed Fig. 5; timing model, no counters)")
    fig.tight_layout()
    save(fig, outdir, "cache.png", made)


def plot_sweeps(res, outdir, made):
    sw = res["sweeps"]
    n = sw["bytes"]
    settings = res["settings"]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    for ax, key, sizes_key, lib, name in (
        (axes[0], "shmbuf", "half_sizes", settings["shmbuf_half"],
         "shmbuf: size of each double-buffer half"),
        (axes[1], "queue", "cell_sizes", settings["cell_size"],
         "queue: cell size (header included)"),
    ):
        d = sw[key]
        xs = [s for s, u in zip(d[sizes_key], d["us"]) if u]
        ys = [mibps(n, u) for u in d["us"] if u]
        ax.plot(xs, ys, **style(0))
        if lib:
            ax.axvline(lib, color="tab:red", linestyle="--",
                       label="library default (%s)" % size_label(lib))
            ax.legend(fontsize=8)
        size_axis(ax)
        ax.set_xlabel(name)
        ax.set_ylabel("MiB/s at %s" % size_label(n))
    title(fig, res, "Buffer and cell size (seed Fig. 3)")
    fig.tight_layout()
    save(fig, outdir, "sweeps.png", made)


def plot_memcpy(res, outdir, made):
    mc = res["memcpy"]
    sizes = mc["sizes"]
    fig, ax = plt.subplots(figsize=(8, 5))
    for k, (name, ns) in enumerate(mc["ns"].items()):
        if not ns:
            continue
        ax.plot(sizes, [mibps(s, v / 1e3) for s, v in zip(sizes, ns)],
                label=name, **style(k))
    size_axis(ax)
    ax.set_xlabel("bytes copied")
    ax.set_ylabel("MiB/s")
    ax.legend(fontsize=8)
    title(fig, res, "Copy routines (seed Fig. 2)")
    fig.tight_layout()
    save(fig, outdir, "memcpy.png", made)


def plot_crossover(res, outdir, made):
    t = res.get("tune")
    if not t:
        return
    fig, ax = plt.subplots(figsize=(9, 5.5))
    e = t["eager"]
    if e["sizes"]:
        ax.plot(e["sizes"], e["us"], label="eager (one cell)", color="black",
                **style(0))
    r = t["rendezvous"]
    for k, (name, us) in enumerate(r["us"].items()):
        pts = [(s, u) for s, u in zip(r["sizes"], us) if u]
        ax.plot([p[0] for p in pts], [p[1] for p in pts],
                label="%s rendezvous" % name, **style(k + 1))
    ax.axvline(max(t["eager_max"], 1), color="tab:red", linestyle="--",
               label="eager_max = %d" % t["eager_max"])
    for rule in t["rules"][1:]:
        ax.axvline(rule["min_bytes"], color="tab:green", linestyle=":",
                   label="from %s: %s" % (size_label(rule["min_bytes"]),
                                          rule["mechanism"]))
    size_axis(ax)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("us, handshake included")
    ax.legend(fontsize=8)
    title(fig, res, "Crossovers (--tune)")
    fig.tight_layout()
    save(fig, outdir, "crossover.png", made)


def proto_panel(ax, p, mode, labels):
    sizes = p["sizes"]
    for k, label in enumerate(labels):
        us = p[mode]["comm_us"].get(label) or []
        pts = [(s, u) for s, u in zip(sizes, us) if u is not None and u > 0]
        ax.plot([q[0] for q in pts], [q[1] for q in pts], label=label,
                **style(k))
    ax.axvline(max(p["eager_max"], 1), color="grey", linestyle=":",
               label="eager limit")
    size_axis(ax)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("comm us (t minus the compute on the critical path)")


def proto_title(fig, res, what):
    m = res["machine"]
    fig.suptitle("%s - %s, %d CPUs, %s" % (what, m["cpu"], m["ncpus"],
                                             m["date"]), fontsize=10)


def plot_protocols(res, outdir, made):
    p = res.get("protocols")
    if not p:
        return
    labels = [st["label"] for st in p["settings"] if st["main"]]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5))
    for ax, mode in zip(axes, ("early", "late")):
        proto_panel(ax, p, mode, labels)
        ax.set_title("%s receiver" % mode)
    axes[1].legend(fontsize=8)
    proto_title(fig, res, "Early and late receivers (seed 001 Fig. 6)")
    fig.tight_layout()
    save(fig, outdir, "protocols.png", made)


def plot_btp(res, outdir, made):
    p = res.get("protocols")
    if not p:
        return
    labels = [st["label"] for st in p["settings"]
              if st["kind"] in ("pushzero", "pushpull", "pushall")]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5))
    for ax, mode in zip(axes, ("late", "early")):
        proto_panel(ax, p, mode, labels)
        ax.set_title("%s receiver, by BTP (push-zero: 0, push-all: all)"
                     % mode)
    btp = p["choice"].get("btp")
    if btp:
        for ax in axes:
            ax.axvline(btp, color="tab:red", linestyle="--",
                       label="chosen BTP %s" % size_label(btp))
    axes[0].legend(fontsize=8)
    proto_title(fig, res, "BTP sweep (seed 001 Fig. 3)")
    fig.tight_layout()
    save(fig, outdir, "btp.png", made)


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: plot.py RESULTS.json OUTDIR\n")
        return 2
    with open(sys.argv[1]) as f:
        res = json.load(f)
    outdir = sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    made = []
    # --protocols writes only the machine and the protocols.
    fns = (plot_protocols, plot_btp)
    if "bandwidth" in res:
        fns = (plot_bandwidth, plot_latency, plot_cache, plot_sweeps,
               plot_memcpy, plot_crossover) + fns
    for fn in fns:
        try:
            fn(res, outdir, made)
        except (KeyError, TypeError, ValueError) as exc:
            sys.stderr.write("plot.py: %s skipped: %r\n" % (fn.__name__, exc))
    for p in made:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
