#!/usr/bin/env python3
"""wham.hadamard beside the two CUDA Hadamard transforms a PyTorch user has, on the same
tensors of one GPU, with a copy of the same bytes (y.copy_(x)) as the floor.

    WHAM_LIBRARY=build/libwham.so python3 python/bench/bench_hadamard.py [--quick] [--json out.json]

The peers, each timed where it is importable:
  fast-hadamard-transform ("fht" in the tables; module fast_hadamard_transform:
      `pip install fast-hadamard-transform`, or `pip install .` in its repository,
      github.com/Dao-AILab/fast-hadamard-transform): hadamard_transform(x, scale) for rows of
      2^k (3 <= k <= 15), hadamard_transform_{12,20,28,40}N (in
      fast_hadamard_transform.fast_hadamard_transform_interface) for rows of m * 2^k
      (2 <= k <= 10; a shorter row is padded: another transform, so '-' here); float16,
      bfloat16 and float32; returns a new tensor.
  HadaCore (module faster_hadamard_transform: `pip install .` in
      kernels/cuda/inference/hadamard_transform of github.com/pytorch-labs/applied-ai):
      hadamard_transform(x, inplace=False) for rows of 2^k (k <= 15), float16 and bfloat16
      only, always scaled by 1/sqrt(n) (so every transform here uses scale = 1/sqrt(n)).

Sections (markdown tables on stdout; --json writes every number, each failure's message and
each result's relative error):
1. Host cost of one eager call on 1 x 4096 float16 (the GPU work is nil): the median over
   --calls calls of the call alone, the queue drained every 100 calls outside the timing.
2. Rows of 2^k (k = 3..15) and of m * 2^k (m = 12, 20, 28, 40; k = 0..10; wham given the m of
   the peer's function), --bytes of them (1 GiB), float16, bfloat16, float32: device time
   (CUDA events, median of --reps) of wham.hadamard(x, out=y), HadaCore, fht and the copy;
   each as a fraction of the copy (copy time / its time: 1 = as fast as the copy) and wham's
   speed over the faster peer (the peer's time / wham's).
3. Model widths (128 .. 28672) at 1, 16 and 256 tokens: the same, eagerly (median of
   --model-reps calls, each timed alone: launch-bound at few tokens), and inside a CUDA graph
   (torch.cuda.graph capture of 20 calls, replayed; the events around a replay / 20).
Every result is checked against a float64 reference on its first rows (H_m from
wham.hadamard_matrix: fast-hadamard-transform's matrices); a peer that raises, or whose result
differs (a relative error over 5e-2 in 16 bits, 1e-3 in float32), is '-' in its row.
--torch adds a pure-PyTorch transform (the butterfly passes in the row's dtype, then H_m as a
matmul, unscaled) and wham's speed over it. --quick: fewer shapes and calls (under 90 s).
"""

import argparse
import importlib
import json
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import wham  # noqa: E402
from bench_overhead import gpu_median_us  # noqa: E402

ORDERS = (12, 20, 28, 40)
MODEL_WIDTHS = (128, 3072, 4096, 5120, 8192, 12288, 14336, 28672)
IMPLS = ("copy", "wham", "hadacore", "fht")  # the table's; "torch" joins with --torch
PEERS = ("hadacore", "fht")
LABEL = {"copy": "copy", "wham": "wham", "hadacore": "HadaCore", "fht": "fht",
         "torch": "torch"}


def load_peers():
    """{peer: its functions} for the peers that import, and {peer: what was found}."""
    found, info = {}, {}
    try:
        import fast_hadamard_transform as pkg
        from fast_hadamard_transform import fast_hadamard_transform_interface as fi
        found["fht"] = {1: fi.hadamard_transform, 12: fi.hadamard_transform_12N,
                        20: fi.hadamard_transform_20N, 28: fi.hadamard_transform_28N,
                        40: fi.hadamard_transform_40N}
        info["fht"] = {"module": "fast_hadamard_transform", "file": pkg.__file__,
                       "version": getattr(pkg, "__version__", None)}
    except Exception as e:  # an extension built for another torch raises more than ImportError
        info["fht"] = {"module": "fast_hadamard_transform", "missing": _reason(e)}
    try:
        import faster_hadamard_transform as hc
        found["hadacore"] = hc.hadamard_transform
        info["hadacore"] = {"module": "faster_hadamard_transform", "file": hc.__file__}
    except Exception as e:
        info["hadacore"] = {"module": "faster_hadamard_transform", "missing": _reason(e)}
    return found, info


def _reason(e):
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0] if lines else ''}"[:300]


def reference(x, h_m):
    """x @ (H_m (x) H_(2^k)) in x's precision: butterflies over the 2^k part, then H_m."""
    n = x.shape[-1]
    m = 1 if h_m is None else h_m.shape[0]
    lead, k = x.shape[:-1], n // m
    y = x.reshape(*lead, m, k)
    h = 1
    while h < k:
        z = y.reshape(*lead, m, k // (2 * h), 2, h)
        y = torch.stack((z[..., 0, :] + z[..., 1, :], z[..., 0, :] - z[..., 1, :]), dim=-2)
        h *= 2
    y = y.reshape(*lead, m, k)
    if h_m is not None:
        y = torch.matmul(h_m, y)
    return y.reshape(*lead, n)


def calls(x, y, m, scale, peers, h_m, with_torch):
    """impl -> a call of it on x (wham and the copy write y; the others return a new tensor;
    the pure-PyTorch transform leaves out the scale, a further pass)."""
    out = {"copy": lambda: y.copy_(x),
           "wham": lambda: wham.hadamard(x, scale=scale, m=m, out=y)}
    if with_torch:
        h_x = None if h_m is None else h_m.to(x.dtype)
        out["torch"] = lambda: reference(x, h_x)
    if "hadacore" in peers:
        hc = peers["hadacore"]
        out["hadacore"] = lambda: hc(x)
    if "fht" in peers:
        f = peers["fht"][m]
        n = x.shape[-1]
        if n % (8 if m == 1 else 4 * m):
            # It pads such a row with zeros to the next multiple: another transform.
            out["fht"] = (f"fht pads a row of {n} to a multiple of {8 if m == 1 else 4 * m}: "
                          "another transform")
        else:
            out["fht"] = lambda: f(x, scale)
    return out


def graph_us(fn, calls_per_graph, replays):
    """Device time of one call inside a CUDA graph of calls_per_graph calls."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls_per_graph):
            fn()
    return gpu_median_us(g.replay, replays, 2) / calls_per_graph


def measure(dtype, n, m, rows, peers, reps, warmup, graph=None, with_torch=False):
    """One shape: every implementation's device time (and graph time), checked first."""
    torch.manual_seed(n + rows)
    x = torch.randn(rows, n, device="cuda", dtype=dtype)
    y = torch.empty_like(x)
    scale = n ** -0.5
    check = min(rows, max(1, (1 << 20) // n))
    h_m = None if m == 1 else torch.tensor(wham.hadamard_matrix(m), device="cuda",
                                           dtype=torch.float64)
    ref = reference(x[:check].double(), h_m) * scale
    tol = 1e-3 if dtype == torch.float32 else 5e-2
    row = {"dtype": str(dtype)[6:], "n": n, "m": m, "rows": rows}
    for name, call in calls(x, y, m, scale, peers, h_m, with_torch).items():
        if isinstance(call, str):
            row[name + "_fail"] = call
            continue
        try:
            if name != "copy":
                got = call().reshape(-1, n)[:check].double()
                if name == "torch":
                    got = got * scale
                err = float((got - ref).norm() / ref.norm())
                row[name + "_err"] = err
                del got
                if not err <= tol:
                    raise ValueError(f"result differs from the reference: relative error "
                                     f"{err:.2e} > {tol:g}")
            row[name + "_us"] = gpu_median_us(call, reps, warmup)
        except Exception as e:
            row[name + "_fail"] = _reason(e)
            continue
        if graph:
            try:
                row[name + "_graph_us"] = graph_us(call, *graph)
            except Exception as e:
                row[name + "_graph_fail"] = _reason(e)
                torch.cuda.synchronize()
    return row


def host_us(fn, calls_timed, warmup=100):
    """Median host time (us) of fn() alone; the queue is drained every 100 calls, untimed."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    clock, times = time.perf_counter_ns, []
    for i in range(calls_timed):
        t0 = clock()
        fn()
        times.append(clock() - t0)
        if i % 100 == 99:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return statistics.median(times) / 1e3


def host_costs(peers, calls_timed):
    n = 4096
    x = torch.randn(1, n, device="cuda", dtype=torch.float16)
    xi, y, s = x.clone(), torch.empty_like(x), n ** -0.5
    rows = [("wham.hadamard(x, scale=s)", lambda: wham.hadamard(x, scale=s)),
            ("wham.hadamard(x, scale=s, out=y)", lambda: wham.hadamard(x, scale=s, out=y))]
    try:
        importlib.import_module("wham.torch_ops")  # registers torch.ops.wham.*
        op = torch.ops.wham.hadamard
        rows.append(("torch.ops.wham.hadamard(x, scale=s)", lambda: op(x, scale=s)))
    except Exception as e:
        rows.append(("torch.ops.wham.hadamard(x, scale=s)", _reason(e)))
    if "fht" in peers:
        f = peers["fht"][1]
        rows.append(("fast_hadamard_transform.hadamard_transform(x, s)", lambda: f(x, s)))
        try:
            import fast_hadamard_transform_cuda as raw
            rows.append(("fast_hadamard_transform_cuda.fast_hadamard_transform(x, s)",
                         lambda: raw.fast_hadamard_transform(x, s)))
        except Exception as e:
            rows.append(("fast_hadamard_transform_cuda.fast_hadamard_transform(x, s)",
                         _reason(e)))
    if "hadacore" in peers:
        hc = peers["hadacore"]
        rows.append(("faster_hadamard_transform.hadamard_transform(x) (HadaCore)",
                     lambda: hc(x)))
        rows.append(("faster_hadamard_transform.hadamard_transform(x, inplace=True)",
                     lambda: hc(xi, inplace=True)))
    rows.append(("y.copy_(x)", lambda: y.copy_(x)))
    out = []
    for name, fn in rows:
        if isinstance(fn, str):
            out.append({"call": name, "fail": fn})
            continue
        try:
            out.append({"call": name, "host_us": host_us(fn, calls_timed)})
        except Exception as e:
            out.append({"call": name, "fail": _reason(e)})
    return out


def shapes(quick, total_bytes):
    """(dtype, n, m, rows) of section 1, (dtype, n, m, tokens) of section 2."""
    dtypes = (torch.float16, torch.bfloat16, torch.float32)
    if quick:
        sweep = [(1 << k, 1) for k in (3, 7, 10, 12, 15)] + [(12 << 8, 12), (20 << 8, 20),
                                                              (28 << 9, 28), (40 << 7, 40)]
        widths, tokens = (128, 4096, 5120, 14336), (1, 256)
    else:
        sweep = [(1 << k, 1) for k in range(3, 16)] + [(m << k, m) for m in ORDERS
                                                         for k in range(11)]
        widths, tokens = MODEL_WIDTHS, (1, 16, 256)
    big, models = [], []
    for dtype in dtypes:
        size = torch.tensor([], dtype=dtype).element_size()
        big += [(dtype, n, m, max(1, total_bytes // (size * n))) for n, m in sweep]
        models += [(dtype, n, wham.hadamard_factor(n)[0], t) for n in widths for t in tokens]
    return big, models


def table(title, rows, suffix, count, with_torch=False):
    """Markdown: times, fractions of the copy and wham's speed over the faster peer."""
    impls = IMPLS + (("torch",) if with_torch else ())
    print(f"\n### {title}\n")
    head = (["dtype", "n", "m", count] + [f"{LABEL[i]} us" for i in impls]
            + [f"{LABEL[i]} frac" for i in IMPLS[1:]] + ["wham x best peer"]
            + (["wham x torch"] if with_torch else []))
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * 4 + "---:|" * (len(head) - 4))
    for r in rows:
        t = {i: r.get(i + suffix) for i in impls}
        cells = [r["dtype"], str(r["n"]), str(r["m"]), str(r["rows"])]
        cells += [(f"{t[i]:.2f}" if t[i] < 10 else f"{t[i]:.1f}") if t[i] else "-" for i in impls]
        cells += [f"{t['copy'] / t[i]:.2f}" if t[i] and t["copy"] else "-" for i in IMPLS[1:]]
        peer = [t[p] for p in PEERS if t[p]]
        cells.append(f"{min(peer) / t['wham']:.2f}" if peer and t["wham"] else "-")
        if with_torch:
            cells.append(f"{t['torch'] / t['wham']:.1f}" if t["torch"] and t["wham"] else "-")
        print("| " + " | ".join(cells) + " |")
    print("\nfrac: copy time / its time (1 = as fast as y.copy_(x) of the same bytes); "
          "wham x best peer: the faster peer's time / wham's (> 1: wham is faster).")


def failures(rows):
    """Each implementation's distinct failure reasons, with how many rows gave each."""
    seen = {}
    for r in rows:
        for key, why in r.items():
            if key.endswith("_fail"):  # one line for messages that differ only in numbers
                seen.setdefault((key[:-5], re.sub(r"\d[\d.e+-]*", "#", why)), []).append(
                    (f"{r['dtype']} n={r['n']}", why))
    for (what, _), where in sorted(seen.items()):
        print(f"- {what}: {len(where)} rows, e.g. {where[0][0]}: {where[0][1]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a representative subset (< 90 s)")
    ap.add_argument("--bytes", type=int, default=1 << 30, help="bytes of rows in section 1")
    ap.add_argument("--reps", type=int, default=10, help="timed calls a shape in section 1")
    ap.add_argument("--model-reps", type=int, default=100, help="timed calls a shape in 2")
    ap.add_argument("--graph-calls", type=int, default=20, help="calls captured in a graph")
    ap.add_argument("--replays", type=int, default=20, help="timed replays of a graph")
    ap.add_argument("--calls", type=int, default=5000, help="timed calls a row in section 3")
    ap.add_argument("--torch", action="store_true",
                    help="also time a pure-PyTorch transform (slow at 1 GiB: adds about a minute)")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("bench_hadamard.py: PyTorch sees no CUDA GPU")
    if args.quick:
        args.calls = min(args.calls, 2000)
    peers, info = load_peers()
    t0 = time.time()
    print(f"wham {wham.version()}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
    for p in PEERS:
        i = info[p]
        print(f"- {LABEL[p]} ({i['module']}): " + (f"not importable: {i['missing']}"
                                                   if "missing" in i else i["file"]))
    big, models = shapes(args.quick, args.bytes)

    host = host_costs(peers, args.calls)
    print(f"\n### Host time of one eager call, 1 x 4096 float16, median of {args.calls}\n")
    print("| call | host us |\n|---|---:|")
    for r in host:
        print(f"| `{r['call']}` | " + (f"{r['host_us']:.2f} |" if "host_us" in r
                                        else f"- ({r['fail']}) |"))

    sweep = []
    for dtype, n, m, rows in big:
        sweep.append(measure(dtype, n, m, rows, peers, args.reps, 2, None, args.torch))
        torch.cuda.empty_cache()
    table(f"Rows of m * 2^k, {args.bytes / 2**30:g} GiB, device time (median of {args.reps})",
          sweep, "_us", "rows", args.torch)

    model = [measure(dtype, n, m, t, peers, args.model_reps, 10,
                     (args.graph_calls, args.replays), args.torch) for dtype, n, m, t in models]
    table(f"Model widths, eager: device time of one call (median of {args.model_reps})",
          model, "_us", "tokens", args.torch)
    table(f"Model widths, in a CUDA graph: device time of one call ({args.graph_calls} "
          f"captured, median of {args.replays} replays)", model, "_graph_us", "tokens",
          args.torch)

    print("\n### Where an implementation gave '-'\n")
    failures(sweep + model)
    print(f"\n{time.time() - t0:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "wham": wham.version(), "peers": info, "args": vars(args),
                       "host": host, "sweep": sweep, "models": model}, f, indent=1)


if __name__ == "__main__":
    main()
