#!/usr/bin/env python3
"""Per-call overhead of wham's Python binding, and wham.fwht against PyTorch alternatives.

    WHAM_LIBRARY=build/libwham.so python3 python/bench/bench_overhead.py [--json out.json]

1. Host time of one call on a tiny input (1 x 8 float32: the GPU work is nil), median of
   many calls, for: the raw ctypes call, wham.fwht(x, out=y), wham.fwht(x) (allocating),
   torch.ops.wham.fwht, CuPy and JAX inputs where installed; beside PyTorch's own floor
   (torch.empty_like, and an in-place add) for scale. Host time only: the calls are
   asynchronous (JAX's synchronise, so theirs includes the GPU round trip).
2. GPU time (CUDA events, median) of the transform of 64 MiB of float32 at several row
   lengths: wham.fwht, a pure-PyTorch butterfly, a dense Hadamard matmul (log_n <= 12),
   and fast-hadamard-transform (Dao-AILab) if importable.
"""

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

import wham  # noqa: E402
from wham import _lib  # noqa: E402


def host_median_us(fn, calls, warmup=200):
    for _ in range(warmup):
        fn()
    times = []
    clock = time.perf_counter_ns
    for _ in range(calls):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times) / 1e3


def gpu_median_us(fn, reps=30, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)
    return statistics.median(times)


def torch_butterfly(x):
    """Pure PyTorch Walsh-Hadamard transform of the last dimension: log_n butterfly passes."""
    n = x.shape[-1]
    lead = x.shape[:-1]
    h = 1
    while h < n:
        y = x.reshape(*lead, n // (2 * h), 2, h)
        x = torch.stack((y[..., 0, :] + y[..., 1, :], y[..., 0, :] - y[..., 1, :]), dim=-2)
        h *= 2
    return x.reshape(*lead, n)


def hadamard_matrix(log_n, device):
    k = torch.arange(1 << log_n, device=device)
    bits = k[:, None] & k[None, :]
    parity = torch.zeros_like(bits)
    for b in range(log_n):
        parity ^= (bits >> b) & 1
    return (1 - 2 * parity).to(torch.float32)


def overhead(calls):
    rows = []
    x = torch.randn(1, 8, device="cuda")
    y = torch.empty_like(x)
    stream = torch.cuda.current_stream().cuda_stream
    lib = _lib.library()
    raw = lib.wham_fwht_f32
    ptr_x, ptr_y = x.data_ptr(), y.data_ptr()
    rows.append(("ctypes call alone (wham_fwht_f32)", host_median_us(
        lambda: raw(ptr_x, ptr_y, 3, 1, 1.0, 0, stream), calls)))
    rows.append(("wham.fwht(x, out=y), torch", host_median_us(lambda: wham.fwht(x, out=y), calls)))
    rows.append(("wham.fwht(x), torch (allocates)", host_median_us(lambda: wham.fwht(x), calls)))
    if hasattr(torch.library, "custom_op"):
        import wham.torch_ops  # noqa: F401 (registers torch.ops.wham.*)
        rows.append(("torch.ops.wham.fwht (custom op)",
                     host_median_us(lambda: torch.ops.wham.fwht(x), calls)))
    rows.append(("torch.empty_like(x) (PyTorch floor)", host_median_us(lambda: torch.empty_like(x), calls)))
    rows.append(("x.add_(0) (a PyTorch kernel launch)", host_median_us(lambda: x.add_(0), calls)))
    try:
        import cupy
        c = cupy.asarray(x.cpu().numpy())
        co = cupy.empty_like(c)
        rows.append(("wham.fwht(x, out=y), cupy", host_median_us(lambda: wham.fwht(c, out=co), calls)))
        rows.append(("wham.fwht(x), cupy (allocates)", host_median_us(lambda: wham.fwht(c), calls)))
    except ImportError:
        pass
    try:
        import jax
        j = jax.device_put(x.cpu().numpy(), jax.devices("gpu")[0])
        rows.append(("wham.fwht(x), jax (allocates, synchronous)",
                     host_median_us(lambda: wham.fwht(j), max(calls // 10, 100))))
    except (ImportError, RuntimeError):
        pass
    return rows


def throughput(log_ns, total_bytes):
    try:
        from fast_hadamard_transform import hadamard_transform
    except ImportError:
        hadamard_transform = None
    rows = []
    for log_n in log_ns:
        n = 1 << log_n
        batch = max(total_bytes // (4 * n), 1)
        x = torch.randn(batch, n, device="cuda")
        y = torch.empty_like(x)
        ref = torch_butterfly(x)
        torch.testing.assert_close(wham.fwht(x), ref, rtol=1e-4, atol=1e-3 * n ** 0.5)
        row = {"log_n": log_n, "batch": batch,
               "wham_us": gpu_median_us(lambda: wham.fwht(x, out=y)),
               "torch_butterfly_us": gpu_median_us(lambda: torch_butterfly(x))}
        if log_n <= 12:
            H = hadamard_matrix(log_n, x.device)
            row["torch_matmul_us"] = gpu_median_us(lambda: x @ H)
        if hadamard_transform is not None and log_n <= 15:
            row["fast_hadamard_transform_us"] = gpu_median_us(lambda: hadamard_transform(x, 1.0))
        rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=20000, help="calls timed for the overhead medians")
    ap.add_argument("--bytes", type=int, default=64 << 20, help="bytes a transform in part 2")
    ap.add_argument("--log-n", default="3,6,8,10,12,14,16,20", help="row lengths of part 2")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("bench_overhead.py: PyTorch sees no CUDA GPU")
    print(f"wham {wham.version()} ({_lib.library().path}), torch {torch.__version__}, "
          f"{torch.cuda.get_device_name()}, Python {sys.version.split()[0]}")
    print(f"\nPer-call host time, 1 x 8 float32, median of {args.calls} calls")
    over = overhead(args.calls)
    for name, us in over:
        print(f"  {name:46s} {us:8.2f} us")
    print(f"\nGPU time, {args.bytes >> 20} MiB of float32 a transform, median (CUDA events)")
    tp = throughput([int(v) for v in args.log_n.split(",")], args.bytes)
    keys = ["wham_us", "torch_butterfly_us", "torch_matmul_us", "fast_hadamard_transform_us"]
    print("  log_n  batch     " + "".join(f"{k[:-3]:>26s}" for k in keys))
    for r in tp:
        cells = "".join(f"{r[k]:23.1f} us" if k in r else f"{'-':>26s}" for k in keys)
        print(f"  {r['log_n']:5d} {r['batch']:8d} {cells}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "wham": wham.version(), "overhead_us": dict(over), "throughput": tp}, f, indent=1)


if __name__ == "__main__":
    main()
