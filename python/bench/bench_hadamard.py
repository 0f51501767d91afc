#!/usr/bin/env python3
"""wham.hadamard and the 16-bit wham.fwht against what a PyTorch user has, on one GPU.

    WHAM_LIBRARY=build/libwham.so python3 python/bench/bench_hadamard.py [--json out.json]

For float16, bfloat16 and float32 rows, 1 GiB of them (--bytes) and the model shapes (rows of
96 .. 28672 x 1, 16, 512, 8192 tokens): GPU time (CUDA events, median) of wham.hadamard; a
copy of the same bytes (y.copy_(x), the floor); a pure-PyTorch transform (the butterfly
passes in the row's dtype, then H_m as a matmul); and fast-hadamard-transform
(hadamard_transform / hadamard_transform_{12,20,28,40}N) where it is importable. Prints
fractions of the copy and the speed-up over the PyTorch transform.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import wham  # noqa: E402
from bench_overhead import gpu_median_us  # noqa: E402


def torch_hadamard(x, h_m):
    """Pure PyTorch: butterflies over the 2^k part, then H_m over the m segments."""
    n = x.shape[-1]
    m = 1 if h_m is None else h_m.shape[0]
    lead = x.shape[:-1]
    k = n // m
    y = x.reshape(*lead, m, k)
    h = 1
    while h < k:
        z = y.reshape(*lead, m, k // (2 * h), 2, h)
        y = torch.stack((z[..., 0, :] + z[..., 1, :], z[..., 0, :] - z[..., 1, :]), dim=-2)
        h *= 2
    y = y.reshape(*lead, m, k)
    if h_m is not None:
        y = torch.matmul(h_m.to(x.dtype), y)
    return y.reshape(*lead, n)


def fht_function(m):
    try:
        import fast_hadamard_transform as fht
    except ImportError:
        return None
    return {1: getattr(fht, "hadamard_transform", None),
            12: getattr(fht, "hadamard_transform_12N", None),
            20: getattr(fht, "hadamard_transform_20N", None),
            28: getattr(fht, "hadamard_transform_28N", None),
            40: getattr(fht, "hadamard_transform_40N", None)}.get(m)


def measure(dtype, n, rows):
    x = torch.randn(rows, n, device="cuda").to(dtype)
    y = torch.empty_like(x)
    m, _ = wham.hadamard_factor(n)
    h_m = None if m == 1 else torch.tensor(wham.hadamard_matrix(m), device="cuda")
    scale = n ** -0.5
    ref = torch_hadamard(x.float(), None if h_m is None else h_m.float()) * scale
    got = wham.hadamard(x, scale=scale, out=y)
    err = float((got.float() - ref).norm() / ref.norm())
    r = {"dtype": str(dtype)[6:], "n": n, "m": m, "rows": rows, "rel_err": err,
         "wham_us": gpu_median_us(lambda: wham.hadamard(x, scale=scale, out=y)),
         "copy_us": gpu_median_us(lambda: y.copy_(x)),
         "torch_us": gpu_median_us(lambda: torch_hadamard(x, h_m))}
    f = fht_function(m)
    if f is not None and n <= 40 * 1024:
        r["fht_us"] = gpu_median_us(lambda: f(x, scale))
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bytes", type=int, default=1 << 30, help="bytes of rows in the sweep")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("bench_hadamard.py: PyTorch sees no CUDA GPU")
    have_fht = fht_function(1) is not None
    print(f"wham {wham.version()}, torch {torch.__version__}, {torch.cuda.get_device_name()}, "
          f"fast-hadamard-transform {'importable' if have_fht else 'not installed'}")
    results = []
    sweep = [1 << j for j in (8, 10, 12, 14, 15, 16, 20)] + [96, 12 * 256, 20 * 256, 28 * 512, 40 * 1024]
    models = [96, 128, 192, 4096, 5120, 12288, 14336, 28672]
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        size = torch.tensor([], dtype=dtype).element_size()
        for n in sweep:
            results.append(measure(dtype, n, max(1, args.bytes // (size * n))))
        for n in models:
            for tokens in (1, 16, 512, 8192):
                results.append(measure(dtype, n, tokens))
    print(f"{'dtype':>9s} {'n':>7s} {'m':>3s} {'rows':>8s} {'wham us':>9s} {'copy frac':>9s} "
          f"{'x torch':>8s} {'fht us':>8s} {'rel err':>8s}")
    for r in results:
        fht = f"{r['fht_us']:8.1f}" if "fht_us" in r else f"{'-':>8s}"
        print(f"{r['dtype']:>9s} {r['n']:7d} {r['m']:3d} {r['rows']:8d} {r['wham_us']:9.1f} "
              f"{r['copy_us'] / r['wham_us']:9.2f} {r['torch_us'] / r['wham_us']:8.1f} {fht} "
              f"{r['rel_err']:8.1e}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "fast_hadamard_transform": have_fht, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
