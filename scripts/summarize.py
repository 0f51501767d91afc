#!/usr/bin/env python3
"""Prints a Google Benchmark JSON file of wham's as a markdown table."""
import json
import sys

PREFERRED = ["median_us", "GB/s", "floor_frac", "Mpairs/s", "GFLOP/s", "speedup_vs_baseline",
             "speedup_direct", "speedup_materialised"]


def main(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        print(f"### {path.split('/')[-1]}: unreadable ({e})")
        return
    rows = [b for b in data.get("benchmarks", []) if b.get("run_type", "iteration") == "iteration"]
    ctx = data.get("context", {})
    print(f"### {path.split('/')[-1]} ({ctx.get('date', '')})")
    print()
    if not rows:
        print("(no benchmarks)")
        return
    skip = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
            "repetitions", "repetition_index", "threads", "iterations", "real_time", "cpu_time",
            "time_unit", "error_occurred", "error_message"}
    keys = []
    for b in rows:
        for k in b:
            if k not in skip and k not in keys and isinstance(b[k], (int, float)):
                keys.append(k)
    keys = [k for k in PREFERRED if k in keys] + [k for k in keys if k not in PREFERRED]
    print("| benchmark | " + " | ".join(keys) + " |")
    print("|---|" + "---|" * len(keys))
    for b in rows:
        name = b["name"].replace("/manual_time", "")
        if b.get("error_occurred"):
            print(f"| {name} | skipped: {b.get('error_message', '')} |" + " |" * (len(keys) - 1))
            continue
        cells = []
        for k in keys:
            v = b.get(k)
            cells.append("" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v)))
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
