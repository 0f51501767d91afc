#!/usr/bin/env python3
"""Plots a wham benchmark JSON: throughput (GB/s, or Mpairs/s where there is no
GB/s) against the swept size (the first benchmark argument: qubits, log_n or the
order p), one line per series, with the floor measured in the same run drawn
dashed (the floor's GB/s = GB/s / floor_frac).

    python3 bench/plot.py bench_iqp.json [--out DIR]
"""
import argparse
import collections
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def parse(name):
    parts = name.replace("/manual_time", "").split("/")
    family = parts[0]
    args = parts[1:]
    x = None
    rest = []
    for a in args:
        key, _, val = a.partition(":")
        val = val or key
        if x is None:
            try:
                x = float(val)
                continue
            except ValueError:
                pass
        rest.append(a)
    return family, x, "/".join(rest)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--out", default=".")
    ns = ap.parse_args()
    with open(ns.json) as f:
        data = json.load(f)
    ctx = data.get("context", {})
    series = collections.defaultdict(list)
    for b in data.get("benchmarks", []):
        if b.get("error_occurred") or b.get("run_type", "iteration") != "iteration":
            continue
        family, x, rest = parse(b["name"])
        if x is None:
            continue
        metric = "GB/s" if "GB/s" in b else ("Mpairs/s" if "Mpairs/s" in b else None)
        if metric is None:
            continue
        floor = b[metric] / b["floor_frac"] if b.get("floor_frac") else None
        series[(family, metric, rest)].append((x, b[metric], floor))
    families = sorted({(k[0], k[1]) for k in series})
    if not families:
        print("nothing to plot in", ns.json)
        return
    cols = min(2, len(families))
    rows = (len(families) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(7 * cols, 4.5 * rows), squeeze=False)
    for ax, (family, metric) in zip(axes.flat, families):
        for (fam, met, rest), pts in sorted(series.items()):
            if fam != family or met != metric:
                continue
            pts.sort()
            xs = [p[0] for p in pts]
            line, = ax.plot(xs, [p[1] for p in pts], marker="o", ms=3, label=rest or family)
            fl = [p[2] for p in pts]
            if metric == "GB/s" and all(v is not None for v in fl):
                ax.plot(xs, fl, ls="--", lw=0.8, color=line.get_color())
        ax.set_title(f"{family} (dashed: floor measured in the same run)", fontsize=9)
        ax.set_xlabel("first argument (qubits / log2 row length / order p)")
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(families):]:
        ax.axis("off")
    fig.suptitle(f"{os.path.basename(ns.json)}: {ctx.get('date', '')}", fontsize=10)
    fig.tight_layout()
    out = os.path.join(ns.out, os.path.splitext(os.path.basename(ns.json))[0] + ".png")
    fig.savefig(out, dpi=110)
    print("wrote", out)


if __name__ == "__main__":
    main()
