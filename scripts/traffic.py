#!/usr/bin/env python3
"""The table of scripts/traffic.sh: for each point, wham_traffic's `point ...` line
(NN_*.txt) and ncu's CSV (NN_*.csv), DRAM bytes per amplitude of the call and of the
floor kernel over the same output.

  traffic.py RAW_DIR
"""
import csv
import glob
import os
import sys


def ncu_rows(path):
    """(kernel name, metric, bytes) for each metric row of an ncu --csv log."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return []
    rows = []
    for r in csv.DictReader(lines[start:]):
        value = (r.get("Metric Value") or "").replace(",", "")
        try:
            rows.append((r["Kernel Name"], r["Metric Name"], float(value)))
        except (KeyError, ValueError):
            continue
    return rows


def point_line(path):
    with open(path) as f:
        for line in f:
            if line.startswith("point "):
                return dict(kv.split("=", 1) for kv in line.split()[1:])
    return None


def main():
    raw = sys.argv[1]
    print("| op | type | n | rows | path | kernels | MiB out | read B/amp | write B/amp "
          "| total B/amp | floor B/amp | total / floor |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    bad = 0
    for txt in sorted(glob.glob(os.path.join(raw, "[0-9]*_*.txt"))):
        tag = os.path.basename(txt)[:-4]
        p = point_line(txt)
        rows = ncu_rows(txt[:-4] + ".csv")
        if p is None or not rows:
            print(f"| {tag} | | | | failed: no point line or no ncu rows | | | | | | | |")
            bad += 1
            continue
        amps = float(p["amplitudes"])
        call = {"read": 0.0, "write": 0.0}
        floor = {"read": 0.0, "write": 0.0}
        for name, metric, value in rows:
            side = floor if "floor_kernel" in name else call
            side["read" if "read" in metric else "write"] += value
        mine = [n for n, m, _ in rows if "read" in m and "floor_kernel" not in n]
        launches, ids = len(mine), len(set(mine))
        total = (call["read"] + call["write"]) / amps
        ftotal = (floor["read"] + floor["write"]) / amps
        print(f"| {p['op']} | {p['type']} | {p['n']} | {p['batch']} | {p['path']} | "
              f"{launches} ({ids} distinct) | {float(p['out_bytes']) / 2**20:.0f} | "
              f"{call['read'] / amps:.2f} | {call['write'] / amps:.2f} | {total:.2f} | "
              f"{ftotal:.2f} | {total / ftotal if ftotal else 0:.2f} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
