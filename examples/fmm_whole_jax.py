#!/usr/bin/env python3
"""A whole FMM as one jax.jit: the uniform-octree FMM of examples/fmm_whole.py (and of
examples/fmm_whole.cu) made of wham.jax operators, one jitted function of (positions,
charges) -> (potential, gradient).

N random charges in the unit cube and the 8^depth leaves of a uniform octree:

    inside the jitted function (jnp for the glue, wham.jax for every operator)
      sort  each point's leaf id, a stable argsort by it, the leaves' offsets (bincount)
      P2M   wham.jax.p2m at the leaves
      M2M   wham.jax.m2m_accumulate, level by level up to 2
      M2L   wham.jax.m2l_accumulate_classes(grouped=True) at every level 2..depth, on the
            lists grouped by displacement class (by tiles of four z-planes and class in
            double at levels >= 5 with p >= 8), as fmm_whole.py
      L2L   wham.jax.l2l_accumulate, level by level down to the leaves
      L2P   wham.jax.l2p at the leaves (potential and gradient)
      P2P   wham.jax.p2p between each leaf and its (up to) 27 neighbours
      then  the potential and gradient scattered back to the caller's order
    once, outside it (NumPy, on the host)
      the cells' centres, the M2M / L2L links and the M2L and near lists: they depend on
      the depth only, not on the points, and are fmm_whole.py's own (its UniformFMM on
      NumPy arrays and no points), passed to the jitted function as arguments.

Prints one table row: the relative 2-norm error of the potential and of its gradient at
4096 sampled points against the direct sum in double (a jitted jnp sum), the compile time
of the jitted FMM (lowering and XLA compilation, once), the time of the sort alone (the
same glue jitted by itself: fmm_whole.py's phases leave the sort out), the jitted FMM's
time (wall clock of a call and block_until_ready, the median of --runs after one warm-up
call), the direct sum's time in the FMM's precision (4096 targets, scaled to N) and the
number of M2L translations.

    python3 examples/fmm_whole_jax.py [--n 1000000] [--order 4] [--level L]
                                      [--precision double] [--runs 5]

JAX's 64-bit types are switched on (the reference sums in double); float runs use float32
and complex64 arrays throughout. Without JAX, a GPU JAX sees, libwham.so or libwham_jax.so
it says so and exits 0.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fmm_whole as base  # noqa: E402  (the octree, its lists and the helpers)

SAMPLES = 4096


class HostArrays:
    """fmm_whole.py's array operations over NumPy: the lists are made once, on the host."""

    def __init__(self):
        import numpy
        self.np = numpy

    def zeros(self, shape, dtype):
        return self.np.zeros(shape, dtype)

    def arange(self, n, dtype):
        return self.np.arange(n, dtype=dtype)

    def array(self, values, dtype):
        return self.np.asarray(values, dtype=dtype)

    def cast(self, x, dtype):
        return self.np.ascontiguousarray(x.astype(dtype))

    def stack(self, xs, axis):
        return self.np.stack(xs, axis)

    def concatenate(self, xs):
        return self.np.concatenate(xs)

    def argsort(self, x):
        return self.np.argsort(x, kind="stable")

    def bincount(self, x, minlength):
        return self.np.bincount(x, minlength=minlength)

    def cumsum(self, x):
        return self.np.cumsum(x)

    def minimum(self, x, value):
        return self.np.minimum(x, value)


def host_lists(depth, p, real):
    """The octree's geometry and lists as NumPy arrays (a pytree for the jitted function),
    and the number of M2L pairs. Index arrays are int32 (every count fits)."""
    A = HostArrays()
    np = A.np
    tree = base.UniformFMM(A, None, np.zeros((0, 3)), np.zeros(0), depth, p, real)
    levels = []
    for level in range(2, depth + 1):
        c = tree.levels[level]
        entry = dict(centers=c.centers, class_deltas=c.class_deltas, cls=c.m2l_cls,
                     src=c.m2l_src, tgt=c.m2l_tgt)
        if level > 2:  # the links to the parent level (fmm_whole.Level.link_children)
            entry.update(child=c.child, parent=c.parent, up=c.up_delta, down=c.down_delta)
        levels.append(entry)
    lists = dict(levels=levels, near_offsets=tree.near_offsets.astype(np.int32),
                 near_cells=tree.near_cells)
    return lists, tree.m2l_pairs


def make_fmm(jnp, wj, depth, p, real):
    """fmm(positions [N, 3], charges [N], lists) -> (potential [N], gradient [N, 3]) in the
    positions' order; to be jitted."""
    side = 1 << depth
    complex_ = jnp.complex64 if real == "float32" else jnp.complex128
    width = (p + 1) ** 2

    def sort(positions, charges):
        cell = jnp.minimum((positions * side).astype(jnp.int32), side - 1)
        leaf = (cell[:, 2] * side + cell[:, 1]) * side + cell[:, 0]
        order = jnp.argsort(leaf, stable=True)
        counts = jnp.bincount(leaf, length=side ** 3)
        offsets = jnp.concatenate([jnp.zeros((1,), counts.dtype), jnp.cumsum(counts)])
        return order, positions[order], charges[order], offsets

    def unsort(order, potential, gradient):
        return (jnp.zeros_like(potential).at[order].set(potential),
                jnp.zeros_like(gradient).at[order].set(gradient))

    def fmm(positions, charges, lists):
        order, points, q, offsets = sort(positions, charges)
        lv = {level: lists["levels"][level - 2] for level in range(2, depth + 1)}
        M = {depth: wj.p2m(points, q, offsets, lv[depth]["centers"], p=p)}
        for level in range(depth, 2, -1):
            c = lv[level]
            parents = jnp.zeros((lv[level - 1]["centers"].shape[0], width), complex_)
            M[level - 1] = wj.m2m_accumulate(M[level], c["up"], c["child"], c["parent"],
                                             parents, p=p)
        L = {}
        for level in range(2, depth + 1):
            c = lv[level]
            L[level] = wj.m2l_accumulate_classes(M[level], c["class_deltas"], c["cls"],
                                                 c["src"], c["tgt"], jnp.zeros_like(M[level]),
                                                 p=p, grouped=True)
        for level in range(3, depth + 1):  # each level's locals hold its own M2L already
            c = lv[level]
            L[level] = wj.l2l_accumulate(L[level - 1], c["down"], c["parent"], c["child"],
                                         L[level], p=p)
        n = points.shape[0]
        potential, gradient = wj.l2p(L[depth], lv[depth]["centers"], offsets, points,
                                     jnp.zeros((n,), real), jnp.zeros((n, 3), real), p=p)
        potential, gradient = wj.p2p(points, q, offsets, lists["near_offsets"],
                                     lists["near_cells"], potential, gradient)
        return unsort(order, potential, gradient)

    def sort_only(positions, charges):
        order, points, q, _ = sort(positions, charges)
        return unsort(order, q, points)

    return fmm, sort_only


def make_direct(jnp, lax, chunk=2048):
    """direct(targets [S, 3], points [N, 3], charges [N]) -> (potential [S], gradient
    [S, 3]) over every point, a point at a target's own position adding nothing; in the
    arrays' precision, a chunk of sources a scan step; to be jitted."""
    def direct(targets, points, charges):
        pad = -points.shape[0] % chunk  # padding: charge 0 at the origin
        x = jnp.pad(points, ((0, pad), (0, 0))).reshape(-1, chunk, 3)
        w = jnp.pad(charges, (0, pad)).reshape(-1, chunk)

        def step(acc, source):
            xs, qs = source
            d = targets[:, None, :] - xs[None, :, :]
            r2 = jnp.sum(d * d, axis=-1)
            inv = jnp.where(r2 > 0, lax.rsqrt(jnp.where(r2 > 0, r2, 1)), 0)
            qi = qs[None, :] * inv
            return (acc[0] + qi.sum(1), acc[1] - (d * (qi * inv * inv)[:, :, None]).sum(1)), None

        zero = (jnp.zeros(targets.shape[:1], points.dtype), jnp.zeros(targets.shape, points.dtype))
        return lax.scan(step, zero, (x, w))[0]

    return direct


def relative_error(np, got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.sqrt(((got - want) ** 2).sum() / (want ** 2).sum()))


def seconds(jax, f, *args):
    """Wall time of one call of f and block_until_ready on its result."""
    t0 = time.perf_counter()
    jax.block_until_ready(f(*args))
    return time.perf_counter() - t0


def measure(jax, wj, n, p, depth, real, runs, seed=2026):
    """One table row's numbers (a dict)."""
    import numpy as np
    jnp, lax = jax.numpy, jax.lax
    gen = np.random.default_rng(seed)
    positions = jnp.asarray(gen.random((n, 3)).astype(real))
    charges = jnp.asarray(gen.random(n).astype(real))
    lists, m2l_pairs = host_lists(depth, p, real)
    lists = jax.device_put(lists)
    fmm, sort_only = make_fmm(jnp, wj, depth, p, real)

    t0 = time.perf_counter()
    compiled = jax.jit(fmm).lower(positions, charges, lists).compile()
    compile_s = time.perf_counter() - t0
    jax.block_until_ready(compiled(positions, charges, lists))  # warm-up: first-call costs
    fmm_s = [seconds(jax, compiled, positions, charges, lists) for _ in range(max(1, runs))]
    potential, gradient = compiled(positions, charges, lists)
    sort = jax.jit(sort_only)
    jax.block_until_ready(sort(positions, charges))
    sort_s = [seconds(jax, sort, positions, charges) for _ in range(max(1, runs))]

    direct = jax.jit(make_direct(jnp, lax))
    picks = np.random.default_rng(7).integers(0, n, min(SAMPLES, n))
    x64, q64 = positions.astype(jnp.float64), charges.astype(jnp.float64)
    want_phi, want_grad = direct(x64[picks], x64, q64)
    count = min(n, SAMPLES)
    jax.block_until_ready(direct(positions[:count], positions, charges))  # compile
    direct_s = seconds(jax, direct, positions[:count], positions, charges) * n / count
    got_phi, got_grad = np.asarray(potential)[picks], np.asarray(gradient)[picks]
    return dict(potential_error=relative_error(np, got_phi, want_phi),
                gradient_error=relative_error(np, got_grad, want_grad),
                compile_s=compile_s, sort_ms=statistics.median(sort_s) * 1e3,
                fmm_ms=statistics.median(fmm_s) * 1e3, direct_ms=direct_s * 1e3,
                m2l_pairs=m2l_pairs)


def table_header():
    return ("| type | N | depth | p | potential error | gradient error | compile s | sort ms |"
            " FMM ms | direct ms | direct / FMM | M2L pairs |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|")


def table_row(real, n, depth, p, r):
    return (f"| {'double' if real == 'float64' else 'float'} | {n} | {depth} | {p} | "
            f"{r['potential_error']:.2e} | {r['gradient_error']:.2e} | {r['compile_s']:.2f} | "
            f"{r['sort_ms']:.3f} | {r['fmm_ms']:.3f} | {r['direct_ms']:.1f} | "
            f"{r['direct_ms'] / r['fmm_ms']:.1f} | {r['m2l_pairs']} |")


def jax_on_gpu():
    """(jax, None) with a GPU JAX sees, or (None, why not)."""
    try:
        import jax
    except ImportError:
        return None, "JAX is not installed"
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not gpus:
        return None, "JAX sees no GPU"
    return jax, None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=float, default=1e6, help="number of points (1e6)")
    parser.add_argument("--order", type=int, default=4, help="expansion order p (4)")
    parser.add_argument("--level", type=int, default=None,
                        help="leaf level 2..7 (default: about 4 (p + 1) points a leaf)")
    parser.add_argument("--precision", choices=("double", "float"), default="double")
    parser.add_argument("--runs", type=int, default=5, help="timed runs (median), after a warm-up")
    args = parser.parse_args(argv)
    n = int(args.n)
    if n < 2:
        parser.error("--n must be at least 2")
    depth = args.level if args.level is not None else base.depth_for(n, args.order)
    if not 2 <= depth <= 7:
        parser.error("--level must be in 2..7")
    jax, why = jax_on_gpu()
    if jax is None:
        print(f"fmm_whole_jax.py: skipped: {why} (it needs JAX on a CUDA GPU)")
        return 0
    jax.config.update("jax_enable_x64", True)  # float64 / complex128, the double reference
    wham = base._import_wham()
    try:
        import wham.jax as wj
        wj.library_path()  # loads libwham.so and libwham_jax.so, registers the handlers
    except wham.LibraryNotFoundError as e:
        print(f"fmm_whole_jax.py: skipped: {e}")
        return 0
    real = "float64" if args.precision == "double" else "float32"
    device = jax.devices("gpu")[0].device_kind
    print(f"fmm_whole_jax.py: JAX {jax.__version__}, wham {wham.__version__}, {device}; "
          f"median of {max(1, args.runs)} runs; lists made once on the host (NumPy), the sort "
          "by leaf inside the jitted call")
    print(table_header())
    r = measure(jax, wj, n, args.order, depth, real, args.runs)
    print(table_row(real, n, depth, args.order, r), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
