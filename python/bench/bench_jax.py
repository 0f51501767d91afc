#!/usr/bin/env python3
"""wham.jax under jax.jit: what one call costs the host, and each operator's device time at
the sizes of the C++ benchmarks (bench/*.cu), as markdown tables on stdout.

    WHAM_LIBRARY=build/libwham.so WHAM_JAX_LIBRARY=build/libwham_jax.so \\
        python3 python/bench/bench_jax.py [--calls 2000] [--reps 50]

1. Host cost: the median over --calls eager invocations of a jitted function on a tiny
   input (the GPU work is nil), the wall time of the invocation alone (dispatch is
   asynchronous; the queue is drained every 100 calls, outside the timing), beside a
   jitted jnp function of the same input (x + 1: one XLA kernel on the same bytes)
   measured the same way. The accumulate forms are jitted with the target donated and the
   result fed back, as a caller would.
2. Device time: the wall time of --reps calls enqueued back to back, then
   block_until_ready, over --reps (amortised: the host's dispatch overlaps the device's
   work where a call lasts longer than its dispatch), after one warm-up call that also
   compiles. Each row names the C++ benchmark of the same operator and size
   (name/arguments as Google Benchmark prints them), its element count (elements, pairs,
   points or interactions: the count the rate is of), and the minimal bytes as that
   benchmark counts them (GB/s = bytes / time).

Each row runs in its own try/except: an error is printed in its row. Without JAX, a GPU
JAX sees, libwham.so or libwham_jax.so it says so and exits 0.
"""

import argparse
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))  # the checkout's python/wham
sys.path.insert(0, os.path.join(ROOT, "examples"))  # fmm_whole.py: the uniform lists


def _replace(args, carry, out):
    """args with the result(s) `out` put at the positions `carry` (a donated target)."""
    if not carry:
        return args
    outs = out if isinstance(out, tuple) else (out,)
    args = list(args)
    for i, o in zip(carry, outs):
        args[i] = o
    return tuple(args)


def host_us(jax, f, args, carry=(), calls=2000, warmup=100):
    """Median wall time (us) of invoking f(*args), the call alone."""
    out = None
    for _ in range(warmup):
        out = f(*args)
        args = _replace(args, carry, out)
    jax.block_until_ready(out)
    clock, times = time.perf_counter_ns, []
    for i in range(calls):
        t0 = clock()
        out = f(*args)
        times.append(clock() - t0)
        args = _replace(args, carry, out)
        if i % 100 == 99:
            jax.block_until_ready(out)
    jax.block_until_ready(out)
    return statistics.median(times) / 1e3


def device_us(jax, f, args, carry=(), reps=50):
    """Amortised time (us) of a call: reps calls back to back, then block_until_ready."""
    out = f(*args)  # compiles
    args = _replace(args, carry, out)
    jax.block_until_ready(out)
    t0 = time.perf_counter()
    for _ in range(reps):
        out = f(*args)
        args = _replace(args, carry, out)
    jax.block_until_ready(out)
    return (time.perf_counter() - t0) / reps * 1e6


class Bench:
    """The inputs of every row, made with NumPy and put on the GPU."""

    def __init__(self, jax, wj):
        import numpy as np
        self.jax, self.jnp, self.wj, self.np = jax, jax.numpy, wj, np
        self.gen = np.random.default_rng(2026)

    def put(self, a):
        return self.jax.device_put(self.np.ascontiguousarray(a))

    def uniform(self, shape, dtype):
        """Uniform in [-1, 1) (real and imaginary parts), made in 32 bits where that is
        the precision (1 GiB rows: half the host memory and time)."""
        np = self.np
        dtype = np.dtype(dtype)
        work = np.float64 if dtype in (np.float64, np.complex128) else np.float32
        a = self.gen.random(shape, dtype=work) * 2 - 1
        if dtype.kind == "c":
            a = a + 1j * (self.gen.random(shape, dtype=work) * 2 - 1)
        return self.put(a.astype(dtype))

    def deltas(self, n, real):
        """n displacements of length 2..4 (well separated, as M2L sees them)."""
        d = self.gen.normal(size=(n, 3))
        d *= self.gen.uniform(2, 4, (n, 1)) / self.np.linalg.norm(d, axis=1, keepdims=True)
        return self.put(d.astype(real))

    def grid(self, per_cell, real, cube=False):
        """1e6 points (bench_particles.cu): cells of per_cell points on a G^3 grid of the unit
        cube (the first 1e6 / per_cell cells, or all G^3 with cube), uniform in their cell.
        Returns (points, charges, offsets, centers, G, cells)."""
        np = self.np
        cells = 1000000 // per_cell
        g = round(cells ** (1 / 3)) if cube else math.ceil(cells ** (1 / 3) - 1e-9)
        while not cube and g ** 3 < cells:
            g += 1
        cells = g ** 3 if cube else cells
        c = np.arange(cells)
        h = 1.0 / g
        centers = np.stack([(c % g + 0.5) * h, (c // g % g + 0.5) * h, (c // (g * g) + 0.5) * h], 1)
        jitter = h * self.gen.uniform(-0.5, 0.5, (cells * per_cell, 3))
        points = np.repeat(centers, per_cell, 0) + jitter
        charges = self.gen.uniform(-1, 1, cells * per_cell)
        offsets = np.arange(cells + 1, dtype=np.int64) * per_cell
        return (self.put(points.astype(real)), self.put(charges.astype(real)), self.put(offsets),
                self.put(centers.astype(real)), g, cells)

    def near_lists(self, g):
        """Each cell's 27 neighbours, periodic (bench_particles.cu's P2P lists)."""
        np = self.np
        c = np.arange(g ** 3)
        i, j, k = c % g, c // g % g, c // (g * g)
        ids = [(((k + dk) % g) * g + (j + dj) % g) * g + (i + di) % g
               for dk in (-1, 0, 1) for dj in (-1, 0, 1) for di in (-1, 0, 1)]
        near = np.stack(ids, 1).reshape(-1).astype(np.int32)
        return self.put(np.arange(g ** 3 + 1, dtype=np.int64) * 27), self.put(near)

    def level(self, level, p, real):
        """A uniform level's interaction lists (fmm_whole.py's), target-sorted with classes
        ascending within a target (wham/fmm_lists.hpp's list order) and grouped by class."""
        import fmm_whole
        from fmm_whole_jax import HostArrays
        L = fmm_whole.Level(HostArrays(), level, p, real, tiles=False)
        by_target = self.np.argsort(L.m2l_tgt.astype(self.np.int64) * 316 + L.m2l_cls,
                                    kind="stable")
        listed = [self.put(a[by_target]) for a in (L.m2l_src, L.m2l_tgt)]
        grouped = [self.put(a) for a in (L.m2l_cls, L.m2l_src, L.m2l_tgt)]
        return (self.put(L.centers), self.put(L.class_deltas), listed, grouped, L.cells,
                L.m2l_pairs)


def host_rows(b, calls):
    """(operator, input, wham.jax function, its arguments, donated/fed-back positions)."""
    jax, wj = b.jax, b.wj
    rows = []
    rows.append(("fwht", "1 x 8 float32",
                 lambda: (jax.jit(wj.fwht), (b.uniform((1, 8), "float32"),), ())))
    rows.append(("hadamard", "1 x 4096 float16",
                 lambda: (jax.jit(wj.hadamard), (b.uniform((1, 4096), "float16"),), ())))
    rows.append(("hadamard", "1 x 12 * 256 float16",
                 lambda: (jax.jit(wj.hadamard), (b.uniform((1, 3072), "float16"),), ())))

    def iqp():
        from wham.ops import iqp_num_params
        return (jax.jit(wj.iqp_encode), (b.uniform((1, iqp_num_params(4, "iqp")), "float32"),), ())
    rows.append(("iqp_encode", "1 sample, 4 qubits, complex64", iqp))
    rows.append(("m2l", "4 pairs, p = 4, complex128",
                 lambda: (jax.jit(wj.m2l), (b.uniform((4, 25), "complex128"),
                                            b.deltas(4, "float64")), ())))

    def centers():
        f = jax.jit(wj.m2l_accumulate_centers, donate_argnums=4)
        cells = b.put(b.np.array([[0.0, 0, 0], [3, 0, 0], [0, 3, 0], [0, 0, 3]]))
        src = b.put(b.np.array([1, 2, 3, 0], b.np.int32))
        tgt = b.put(b.np.array([0, 0, 1, 2], b.np.int32))
        return f, (b.uniform((4, 25), "complex128"), cells, src, tgt,
                   b.uniform((4, 25), "complex128")), (4,)
    rows.append(("m2l_accumulate_centers", "4 pairs, p = 4, locals donated", centers))
    plus_one = jax.jit(lambda x: x + 1)
    print("\n## Host cost of one jitted call (us, median of %d invocations)\n" % calls)
    print("| operator | input | wham.jax us | jnp x + 1 us (same input) | difference us |")
    print("|---|---|---|---|---|")
    for name, shape, make in rows:
        try:
            f, args, carry = make()
            ours = host_us(jax, f, args, carry, calls)
            base = host_us(jax, plus_one, args[:1], (), calls)
            print(f"| {name} | {shape} | {ours:.1f} | {base:.1f} | {ours - base:+.1f} |",
                  flush=True)
        except Exception as e:  # the row reports it; the others still run
            print(f"| {name} | {shape} | error: {type(e).__name__}: {str(e)[:200]} | | |",
                  flush=True)


def device_rows(b):
    """(operator, size, C++ benchmark, make) with make() -> (f, args, carried, count, bytes)."""
    jax, wj, np = b.jax, b.wj, b.np
    rows = []

    def transform(f, rows_, n, dtype):
        def make():
            x = b.uniform((rows_, n), dtype)
            return jax.jit(f), (x,), (), rows_ * n, 2 * x.nbytes
        return make
    rows.append(("fwht", "2^14 rows x 2^14 float32 (1 GiB)", "BM_fwht<float>/14/0/<path>",
                 transform(wj.fwht, 1 << 14, 1 << 14, "float32")))
    rows.append(("fwht", "64 rows x 2^14 float32", "BM_fwht<float>/14/64/<path>",
                 transform(wj.fwht, 64, 1 << 14, "float32")))
    rows.append(("hadamard", "2^15 rows x 2^14 float16 (1 GiB)", "BM_pow2<__half>/14",
                 transform(wj.hadamard, 1 << 15, 1 << 14, "float16")))
    rows.append(("hadamard", "(2^30 / 24576) rows x 12 * 2^10 float16", "BM_mk<__half>/12/10",
                 transform(wj.hadamard, (1 << 30) // (12 * 1024 * 2), 12 * 1024, "float16")))

    def iqp():
        from wham.ops import iqp_num_params
        params = b.uniform((64, iqp_num_params(16, "iqp")), "float64")
        f = jax.jit(lambda x: wj.iqp_encode(x, dtype="complex128"))
        return f, (params,), (), 64 << 16, (64 << 16) * 16
    rows.append(("iqp_encode", "n = 16, batch 64, complex128",
                 "BM_iqp<cuda::std::complex<double>>/16/64/0", iqp))

    def m2l(real, cplx, p, n):
        def make():
            C = (p + 1) ** 2
            M, d = b.uniform((n, C), cplx), b.deltas(n, real)
            return jax.jit(wj.m2l), (M, d), (), n, n * (2 * M.nbytes // n + 3 * d.dtype.itemsize)
        return make
    rows.append(("m2l", "p = 8, 1e5 pairs, complex128", "BM_m2l<double>/8/5/0",
                 m2l("float64", "complex128", 8, 100000)))
    rows.append(("m2l", "p = 8, 1e5 pairs, complex64", "BM_m2l<float>/8/5/0",
                 m2l("float32", "complex64", 8, 100000)))

    def uniform_level(form, method, p=8, level=4):
        def make():
            centers, class_deltas, listed, grouped, cells, pairs = b.level(level, p, "float64")
            C = (p + 1) ** 2
            M, L = b.uniform((cells, C), "complex128"), b.uniform((cells, C), "complex128")
            if form == "centers":
                def f(M, c, s, t, L):
                    return wj.m2l_accumulate_centers(M, c, s, t, L, p=p, method=method)
                f = jax.jit(f, donate_argnums=4)
                args, carry = (M, centers, listed[0], listed[1], L), (4,)
            else:
                def f(M, d, k, s, t, L):
                    return wj.m2l_accumulate_classes(M, d, k, s, t, L, p=p, grouped=True)
                f = jax.jit(f, donate_argnums=5)
                args, carry = (M, class_deltas, *grouped, L), (5,)
            # a pair's source row, its indices; each target row read and written once
            return f, args, carry, pairs, pairs * (C * 16 + 8) + 2 * cells * C * 16
        return make
    rows.append(("m2l_accumulate_centers", "p = 8, level 4 (16^3 targets), atomic",
                 "accumulate_atomic<double>/8/4", uniform_level("centers", "atomic")))
    rows.append(("m2l_accumulate_centers", "p = 8, level 4, deterministic",
                 "accumulate_deterministic<double>/8/4", uniform_level("centers", "deterministic")))
    rows.append(("m2l_accumulate_classes", "p = 8, level 4, grouped by class",
                 "class_groups<double>/8/4", uniform_level("classes", None)))

    def translate(op, form, p=8, n=100000):
        def make():
            C = (p + 1) ** 2
            src, tgt = np.arange(n, dtype=np.int32), np.arange(n, dtype=np.int32) // 8
            f = jax.jit(lambda e, d, s, t, out: op(e, d, s, t, out, p=p), donate_argnums=4)
            args = (b.uniform((n, C), "complex128"), b.uniform((n, 3), "float64"), b.put(src),
                    b.put(tgt), b.uniform((n // 8, C), "complex128"))
            return f, args, (4,), n, n * (C * 16 + 3 * 8 + 8) + 2 * (n // 8) * C * 16
        return make
    rows.append(("m2m_accumulate", "p = 8, 1e5 pairs, 8 a target, double",
                 "BM_translation<double>/p:8/path:0/form:2", translate(wj.m2m_accumulate, 2)))
    rows.append(("l2l_accumulate", "p = 8, 1e5 pairs, 8 a target, double",
                 "BM_translation<double>/p:8/path:0/form:3", translate(wj.l2l_accumulate, 3)))

    def p2m(real, p=8, per_cell=32):
        def make():
            x, q, off, ctr, _, cells = b.grid(per_cell, real)
            size = np.dtype(real).itemsize
            f = jax.jit(lambda x, q, o, c: wj.p2m(x, q, o, c, p=p))
            nbytes = (x.shape[0] * 4 * size + cells * (8 + 3 * size)
                      + cells * (p + 1) ** 2 * 2 * size)
            return f, (x, q, off, ctr), (), x.shape[0], nbytes
        return make
    rows.append(("p2m", "p = 8, 1e6 points, 32 a cell, double", "BM_p2m<double>/8/32",
                 p2m("float64")))

    def l2p(real, p=8, per_cell=32):
        def make():
            x, _, off, ctr, _, cells = b.grid(per_cell, real)
            size, n = np.dtype(real).itemsize, x.shape[0]
            cplx = "complex128" if real == "float64" else "complex64"
            f = jax.jit(lambda L, c, o, x, phi, g: wj.l2p(L, c, o, x, phi, g, p=p),
                        donate_argnums=(4, 5))
            args = (b.uniform((cells, (p + 1) ** 2), cplx), ctr, off, x, b.uniform((n,), real),
                    b.uniform((n, 3), real))
            return f, args, (4, 5), n, (cells * ((p + 1) ** 2 * 2 * size + 8 + 3 * size)
                                        + n * (3 + 2 + 6) * size)
        return make
    rows.append(("l2p", "p = 8, 1e6 points, 32 a cell, gradient, double", "BM_l2p<double>/8/32/1",
                 l2p("float64")))

    def p2p(real, per_cell=64):
        def make():
            x, q, off, _, g, cells = b.grid(per_cell, real, cube=True)
            near_offsets, near = b.near_lists(g)
            n, size = x.shape[0], np.dtype(real).itemsize
            f = jax.jit(wj.p2p, donate_argnums=(5, 6))
            args = (x, q, off, near_offsets, near, b.uniform((n,), real), b.uniform((n, 3), real))
            # interactions: cells x 27 x per_cell^2 (self pairs included); bytes: points read
            # and the fields read and written once
            return f, args, (5, 6), cells * 27 * per_cell ** 2, n * (4 + 2 * 4) * size
        return make
    rows.append(("p2p", "25^3 cells of 64 points, 27 neighbours, gradient, double",
                 "BM_p2p<double>/64", p2p("float64")))
    rows.append(("p2p", "25^3 cells of 64 points, 27 neighbours, gradient, float",
                 "BM_p2p<float>/64", p2p("float32")))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="host-cost invocations (median)")
    parser.add_argument("--reps", type=int, default=50, help="device-time calls back to back")
    args = parser.parse_args(argv)
    try:
        import jax
    except ImportError:
        print("bench_jax.py: skipped: JAX is not installed")
        return 0
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not gpus:
        print("bench_jax.py: skipped: JAX sees no GPU")
        return 0
    jax.config.update("jax_enable_x64", True)  # float64 / complex128 rows
    import wham
    try:
        import wham.jax as wj
        path = wj.library_path()
    except wham.LibraryNotFoundError as e:
        print(f"bench_jax.py: skipped: {e}")
        return 0
    print(f"# wham.jax under jax.jit: JAX {jax.__version__}, wham {wham.__version__} ({path}), "
          f"{gpus[0].device_kind}")
    b = Bench(jax, wj)
    host_rows(b, args.calls)
    print(f"\n## Device time of each jitted operator (amortised over {args.reps} calls back to "
          "back)\n")
    print("| operator | size | C++ benchmark | elements | bytes | us a call | GB/s |"
          " M elements/s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, size, cxx, make in device_rows(b):
        try:
            f, fargs, carry, count, nbytes = make()
            us = device_us(jax, f, fargs, carry, args.reps)
            print(f"| {name} | {size} | {cxx} | {count} | {nbytes} | {us:.1f} | "
                  f"{nbytes / us * 1e-3:.1f} | {count / us:.1f} |", flush=True)
        except Exception as e:  # the row reports it; the others still run
            print(f"| {name} | {size} | {cxx} | error: {type(e).__name__}: {str(e)[:200]} "
                  "| | | | |", flush=True)
        finally:
            fargs = None  # free the row's buffers before the next
    return 0


if __name__ == "__main__":
    sys.exit(main())
