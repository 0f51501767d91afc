#!/usr/bin/env python3
"""Prints the performance page's tables (markdown) from the benchmark JSON of one GPU run.

    scripts/tables.py DIR        # DIR holds bench_iqp.json, bench_iqp_large.json,
                                 # bench_fwht.json, bench_m2l.json (any of them)

summarize.py prints every row and counter; this prints the few tables docs/performance.md
quotes:
one row per size, paths side by side, the floor fractions and speed-ups the benchmarks
measured in the same run. A missing file or row leaves its table out or its cell empty.
"""
import json
import os
import sys

IQP_PATHS = {0: "automatic", 1: "fused", 2: "kronecker", 3: "baseline", 4: "product"}
FWHT_PATHS = {1: "fused", 2: "kronecker", 3: "baseline"}
TYPES = [("cuda::std::complex<double>", "complex128"), ("cuda::std::complex<float>", "complex64")]
FWHT_TYPES = [("float", "float"), ("double", "double"),
              ("cuda::std::complex<float>", "complex64"), ("cuda::std::complex<double>", "complex128")]


def load(directory, name):
    path = os.path.join(directory, name)
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None, {}
    rows = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred"):
            continue
        rows[b["name"].replace("/manual_time", "")] = b
    return data.get("context", {}), rows


def fmt(v, digits=3):
    if v is None:
        return ""
    if v >= 1000:
        return f"{v:.0f}"
    return f"{v:.{digits}g}"


def table(header, lines):
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for line in lines:
        print("| " + " | ".join(line) + " |")
    print()


def time_us(b):
    return b.get("median_us", b.get("real_time"))


def iqp(directory):
    ctx, rows = load(directory, "bench_iqp.json")
    if not rows:
        return
    print(f"**IQP (`iqp`, double parameters), bench_iqp** ({ctx.get('date', '')}): median us of one "
          "call, the path `automatic` ran, speed-up over the baseline path and fraction of the "
          "write floor, both measured in the same run. Batch 64 is QDP's configuration; "
          "\"512 MiB\" is the batch whose output is 512 MiB.")
    print()
    for batch, label in (("64", "batch 64"), ("0", "512 MiB")):
        lines = []
        for n in range(4, 21):
            line = [str(n)]
            for tname, _ in TYPES:
                b = rows.get(f"BM_iqp<{tname}>/n:{n}/batch:{batch}/path:0/min_time:0.020")
                if b is None:  # other min_time settings
                    b = next((v for k, v in rows.items()
                              if k.startswith(f"BM_iqp<{tname}>/n:{n}/batch:{batch}/path:0/")), None)
                if b is None:
                    line += ["", "", "", ""]
                    continue
                line += [fmt(time_us(b)), IQP_PATHS.get(int(b.get("resolved_path", -1)), "?"),
                         fmt(b.get("speedup_vs_baseline")), fmt(b.get("floor_frac"), 2)]
            lines.append(line)
        print(f"*{label}*")
        print()
        table(["n", "complex128 us", "path", "x baseline", "of floor",
               "complex64 us", "path", "x baseline", "of floor"], lines)


def iqp_large(directory):
    ctx, rows = load(directory, "bench_iqp_large.json")
    if not rows:
        return
    print(f"**IQP at large n, bench_iqp_large** ({ctx.get('date', '')}): `automatic`, median us, "
          "fraction of the write floor; speed-up over the baseline path where the benchmark ran "
          "it (batch 64). \"1 GiB\" is the batch whose output is 1 GiB.")
    print()
    lines = []
    for n in range(14, 29):
        line = [str(n)]
        for batch in ("64", "0"):
            for tname, _ in TYPES:
                b = rows.get(f"BM_iqp_large<{tname}>/{n}/{batch}/0")
                if b is None:
                    line += ["", ""] + ([""] if batch == "64" else [])
                    continue
                line += [fmt(time_us(b)), fmt(b.get("floor_frac"), 2)]
                if batch == "64":
                    line.append(fmt(b.get("speedup_vs_baseline")))
        lines.append(line)
    table(["n", "b64 c128 us", "of floor", "x baseline", "b64 c64 us", "of floor", "x baseline",
           "1 GiB c128 us", "of floor", "1 GiB c64 us", "of floor"], lines)


def fwht(directory):
    ctx, rows = load(directory, "bench_fwht.json")
    if not rows:
        return
    print(f"**FWHT, 1 GiB of rows, bench_fwht** ({ctx.get('date', '')}): fraction of a copy of "
          "the same bytes measured in the same run, for the faster of the fused (f) and "
          "Kronecker (k) paths; float also with its median us and speed-up over the baseline "
          "path (one global pass per stage), timed in the same run.")
    print()
    lines = []
    for n in range(1, 31):
        line = [str(n)]
        seen = False
        for tname, label in FWHT_TYPES:
            cands = [(rows.get(f"BM_fwht<{tname}>/{n}/0/{p}"), p) for p in (1, 2)]
            cands = [(b, p) for b, p in cands if b is not None]
            if not cands:
                line += [""] * (4 if label == "float" else 1)
                continue
            seen = True
            b, p = min(cands, key=lambda c: time_us(c[0]))
            cell = f"{fmt(b.get('floor_frac'), 2)} ({FWHT_PATHS[p][0]})"
            if label == "float":
                # The counter where the run has it, else the baseline's
                # own row where the sweep ran one.
                base = rows.get(f"BM_fwht<{tname}>/{n}/0/3")
                speed = (fmt(b["speedup_vs_baseline"]) if "speedup_vs_baseline" in b
                         else fmt(time_us(base) / time_us(b)) if base else "")
                line += [fmt(time_us(b)), fmt(b.get("GB/s")), cell, speed]
            else:
                line.append(cell)
        if seen:
            lines.append(line)
    table(["n", "float us", "float GB/s", "float of copy", "x baseline", "double", "complex64",
           "complex128"], lines)


def m2l(directory):
    ctx, rows = load(directory, "bench_m2l.json")
    if not rows:
        return
    print(f"**M2L, pair-streaming, 1e5 pairs, bench_m2l** ({ctx.get('date', '')}): `automatic`, "
          "median us, pairs a second, GB/s on the minimal bytes and its fraction of a copy "
          "measured in the same run, GFLOP/s on the counted flops (`flops_per_pair`), and the "
          "speed-up over the GPU direct O(p^4) kernel and the materialised-blocks path, both "
          "run in the same benchmark.")
    print()
    for t in ("double", "float"):
        lines = []
        for p in range(0, 21):
            b = rows.get(f"BM_m2l<{t}>/{p}/5/0")
            if b is None:
                continue
            lines.append([str(p), fmt(time_us(b)), fmt(b.get("Mpairs/s")), fmt(b.get("GB/s")),
                          fmt(b.get("floor_frac"), 2), fmt(b.get("GFLOP/s")),
                          fmt(b.get("speedup_direct")), fmt(b.get("speedup_materialised"))])
        if lines:
            print(f"*{t}*")
            print()
            table(["p", "us", "Mpairs/s", "GB/s", "of copy", "GFLOP/s", "x direct",
                   "x materialised"], lines)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    for part in (iqp, iqp_large, fwht, m2l):
        part(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
