#!/usr/bin/env python3
"""A whole FMM from Python: the uniform-octree FMM of examples/fmm_whole.cu made of wham's
Python calls on PyTorch tensors (CuPy arrays where PyTorch is absent, or with --framework
cupy), the cells and lists made with the framework's own array operations.

N random charges in the unit cube, sorted into the 8^depth leaves of a uniform octree
(cell id (iz * 2^l + iy) * 2^l + ix, as wham/fmm_lists.hpp):

    P2M   wham.p2m at the leaves (each leaf's points contiguous)
    M2M   wham.m2m_accumulate, level by level up to 2 (8 children a parent, listed by parent)
    M2L   wham.m2l_accumulate_classes(grouped=True) at every level 2..depth: each cell's
          interaction list (children of its parent's neighbours that are not its own
          neighbours, 316 displacement classes) grouped by class, or in double at levels
          >= 5 with p >= 8 by tiles of four z-planes and class, as the C++ example
    L2L   wham.l2l_accumulate, level by level down to the leaves
    L2P   wham.l2p at the leaves (potential and gradient)
    P2P   wham.p2p between each leaf and its (up to) 27 neighbours, itself included

Prints the C++ example's table row: the relative 2-norm error of the potential and of its
gradient at 4096 sampled points against the direct sum in double, each phase's time (CUDA
events; the median of --runs runs after one warm-up), the FMM's total (the median of the
runs' totals), the direct sum's time in the FMM's precision (the framework's element-wise
arithmetic over 4096 targets, scaled to N: no fused kernel, so slower than the C++
example's), and the number of M2L translations.

    python3 examples/fmm_whole.py [--n 1000000] [--order 4] [--level L] [--precision double]
                                  [--runs 5] [--framework torch|cupy]

Without a GPU, or without PyTorch and CuPy, it says so and exits 0.
"""

import argparse
import math
import os
import sys

PHASES = ("P2M", "M2M", "M2L", "L2L", "L2P", "P2P")
NUM_CLASSES = 316


# ---- the array operations the FMM needs, in PyTorch and CuPy --------------------------------

class TorchArrays:
    name = "PyTorch"

    def __init__(self):
        import torch
        self.torch = torch
        self.version = torch.__version__

    def device_name(self):
        return self.torch.cuda.get_device_name()

    def _dtype(self, dtype):
        return getattr(self.torch, dtype)

    def zeros(self, shape, dtype):
        return self.torch.zeros(shape, dtype=self._dtype(dtype), device="cuda")

    def arange(self, n, dtype):
        return self.torch.arange(n, dtype=self._dtype(dtype), device="cuda")

    def array(self, values, dtype):
        return self.torch.tensor(values, dtype=self._dtype(dtype), device="cuda")

    def cast(self, x, dtype):
        return x.to(self._dtype(dtype)).contiguous()

    def stack(self, xs, axis):
        return self.torch.stack(xs, dim=axis)

    def concatenate(self, xs):
        return self.torch.cat(xs)

    def argsort(self, x):
        return self.torch.argsort(x, stable=True)

    def bincount(self, x, minlength):
        return self.torch.bincount(x, minlength=minlength)

    def cumsum(self, x):
        return self.torch.cumsum(x, 0)

    def minimum(self, x, value):
        return self.torch.clamp(x, max=value)

    def sqrt(self, x):
        return self.torch.sqrt(x)

    def where(self, condition, a, b):
        return self.torch.where(condition, a, b)

    def zero(self, x):
        x.zero_()

    def generator(self, seed):
        return self.torch.Generator(device="cuda").manual_seed(seed)

    def uniform(self, gen, shape):
        return self.torch.rand(shape, generator=gen, dtype=self.torch.float64, device="cuda")

    def integers(self, gen, high, n):
        return self.torch.randint(0, high, (n,), generator=gen, device="cuda")

    def event(self):
        e = self.torch.cuda.Event(enable_timing=True)
        e.record()
        return e

    def elapsed_ms(self, a, b):
        return a.elapsed_time(b)

    def synchronize(self):
        self.torch.cuda.synchronize()


class CupyArrays:
    name = "CuPy"

    def __init__(self):
        import cupy
        self.cupy = cupy
        self.version = cupy.__version__

    def device_name(self):
        props = self.cupy.cuda.runtime.getDeviceProperties(self.cupy.cuda.Device().id)
        return props["name"].decode()

    def zeros(self, shape, dtype):
        return self.cupy.zeros(shape, dtype=dtype)

    def arange(self, n, dtype):
        return self.cupy.arange(n, dtype=dtype)

    def array(self, values, dtype):
        return self.cupy.asarray(values, dtype=dtype)

    def cast(self, x, dtype):
        return self.cupy.ascontiguousarray(x.astype(dtype))

    def stack(self, xs, axis):
        return self.cupy.stack(xs, axis=axis)

    def concatenate(self, xs):
        return self.cupy.concatenate(xs)

    def argsort(self, x):
        return self.cupy.argsort(x)  # a radix sort: stable

    def bincount(self, x, minlength):
        return self.cupy.bincount(x, minlength=minlength)

    def cumsum(self, x):
        return self.cupy.cumsum(x)

    def minimum(self, x, value):
        return self.cupy.minimum(x, value)

    def sqrt(self, x):
        return self.cupy.sqrt(x)

    def where(self, condition, a, b):
        return self.cupy.where(condition, a, b)

    def zero(self, x):
        x.fill(0)

    def generator(self, seed):
        return self.cupy.random.default_rng(seed)

    def uniform(self, gen, shape):
        return gen.random(shape, dtype=self.cupy.float64)

    def integers(self, gen, high, n):
        return gen.integers(0, high, n)

    def event(self):
        e = self.cupy.cuda.Event()
        e.record()
        return e

    def elapsed_ms(self, a, b):
        return self.cupy.cuda.get_elapsed_time(a, b)

    def synchronize(self):
        self.cupy.cuda.get_current_stream().synchronize()


def arrays_for(choice):
    """The framework's arrays on a GPU, or (None, why not)."""
    names = [choice] if choice else ["torch", "cupy"]
    reasons = []
    for name in names:
        try:
            if name == "torch":
                import torch
                if not torch.cuda.is_available():
                    reasons.append("PyTorch sees no CUDA GPU")
                    continue
                return TorchArrays(), None
            import cupy
            try:
                count = cupy.cuda.runtime.getDeviceCount()
            except Exception:
                count = 0
            if count < 1:
                reasons.append("CuPy sees no CUDA GPU")
                continue
            return CupyArrays(), None
        except ImportError:
            reasons.append(("PyTorch" if name == "torch" else "CuPy") + " is not installed")
    return None, "; ".join(reasons)


# ---- the octree -------------------------------------------------------------------------

def depth_for(n, p):
    """The leaf level whose leaves hold closest (in ratio) to 4 (p + 1) particles."""
    want = math.log(n / (4.0 * (p + 1))) / math.log(8.0)
    return int(min(7, max(2, round(want))))


def class_displacements():
    """The 316 M2L displacements d = target - source (in cells) in class id order:
    lexicographic (dz, dy, dx) over [-3, 3]^3 without the 27 near ones."""
    return [(dx, dy, dz) for dz in range(-3, 4) for dy in range(-3, 4) for dx in range(-3, 4)
            if max(abs(dx), abs(dy), abs(dz)) > 1]


class Level:
    """One level's cells: centres, expansions and lists."""

    def __init__(self, A, level, p, real, tiles):
        n = self.side = 1 << level
        self.cells = n ** 3
        complex_ = "complex64" if real == "float32" else "complex128"
        ids = A.arange(self.cells, "int64")
        self.ijk = (ids % n, ids // n % n, ids // (n * n))
        h = 1.0 / n
        self.centers = A.cast(A.stack([(c + 0.5) * h for c in self.ijk], 1), real)
        C = (p + 1) ** 2
        self.multipoles = A.zeros((self.cells, C), complex_)
        self.locals = A.zeros((self.cells, C), complex_)
        # M2L: sources s = t - d of each target t and class d that lie in the level and are
        # children of a neighbour of t's parent; pairs grouped by class, targets ascending.
        src, tgt, cls = [], [], []
        ix, iy, iz = self.ijk
        for k, (dx, dy, dz) in enumerate(class_displacements()):
            sx, sy, sz = ix - dx, iy - dy, iz - dz
            ok = (sx >= 0) & (sx < n) & (sy >= 0) & (sy < n) & (sz >= 0) & (sz < n)
            ok = ok & (abs(sx // 2 - ix // 2) <= 1) & (abs(sy // 2 - iy // 2) <= 1) & \
                (abs(sz // 2 - iz // 2) <= 1)
            t = ids[ok]
            src.append(((sz * n + sy) * n + sx)[ok])
            tgt.append(t)
            cls.append(t * 0 + k)
        src, tgt, cls = A.concatenate(src), A.concatenate(tgt), A.concatenate(cls)
        if tiles:  # by tiles of four z-planes of targets, then class (wham/fmm_lists.hpp)
            order = A.argsort(tgt // (4 * n * n) * NUM_CLASSES + cls)
            src, tgt, cls = src[order], tgt[order], cls[order]
        self.m2l_src, self.m2l_tgt, self.m2l_cls = (A.cast(a, "int32") for a in (src, tgt, cls))
        self.m2l_pairs = int(self.m2l_src.shape[0])
        # delta = target centre - source centre = d h
        self.class_deltas = A.array([[v * h for v in d] for d in class_displacements()], real)

    def link_children(self, A, child, real):
        """The pairs between this level's cells and their 8 children (level + 1), listed by
        parent: M2M sums each parent's children on chip. Deltas parent - child (M2M) and
        child - parent (L2L)."""
        n = self.side
        qx, qy, qz = self.ijk
        kids = []
        for o in range(8):
            cx, cy, cz = 2 * qx + (o & 1), 2 * qy + ((o >> 1) & 1), 2 * qz + (o >> 2)
            kids.append((cz * (2 * n) + cy) * (2 * n) + cx)
        c = A.stack(kids, 1).reshape(-1)
        q = A.stack([A.arange(self.cells, "int64")] * 8, 1).reshape(-1)
        up = A.cast(self.centers[q] - child.centers[c], real)
        child.up_delta, child.down_delta = up, A.cast(-up, real)
        child.child, child.parent = A.cast(c, "int32"), A.cast(q, "int32")


class UniformFMM:
    """Everything one FMM run needs, on the GPU, for points in the unit cube."""

    def __init__(self, A, ops, positions, charges, depth, p, real):
        self.A, self.ops, self.depth, self.p, self.real = A, ops, depth, p, real
        side = 1 << depth
        leaves = side ** 3
        cell = A.minimum(A.cast(positions * side, "int64"), side - 1)
        leaf = (cell[:, 2] * side + cell[:, 1]) * side + cell[:, 0]
        order = A.argsort(leaf)
        self.points = A.cast(positions[order], real)
        self.charges = A.cast(charges[order], real)
        counts = A.bincount(leaf, leaves)
        self.offsets = A.concatenate([A.zeros((1,), "int64"), A.cumsum(counts)])
        n = int(self.points.shape[0])
        self.potential = A.zeros((n,), real)
        self.gradient = A.zeros((n, 3), real)
        self.levels = {}
        for level in range(2, depth + 1):
            tiles = real == "float64" and level >= 5 and p >= 8
            self.levels[level] = Level(A, level, p, real, tiles)
            if level > 2:
                self.levels[level - 1].link_children(A, self.levels[level], real)
        # near field: each leaf and its (up to) 27 neighbours, in (dz, dy, dx) order
        ix, iy, iz = self.levels[depth].ijk
        ids, valid = [], []
        for dz in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    x, y, z = ix + dx, iy + dy, iz + dz
                    valid.append((x >= 0) & (x < side) & (y >= 0) & (y < side) & (z >= 0) &
                                 (z < side))
                    ids.append((z * side + y) * side + x)
        ids, valid = A.stack(ids, 1), A.stack(valid, 1)
        self.near_cells = A.cast(ids[valid], "int32")
        per_leaf = A.cast(valid, "int64").sum(1)
        self.near_offsets = A.concatenate([A.zeros((1,), "int64"), A.cumsum(per_leaf)])

    @property
    def m2l_pairs(self):
        return sum(level.m2l_pairs for level in self.levels.values())

    def run(self):
        """Enqueues the whole FMM; returns the events between the phases."""
        A, ops, D, p = self.A, self.ops, self.depth, self.p
        L = self.levels
        events = [A.event()]
        leaf = L[D]
        ops.p2m(self.points, self.charges, self.offsets, leaf.centers, p=p, out=leaf.multipoles)
        events.append(A.event())
        for level in range(D, 2, -1):
            child, parent = L[level], L[level - 1]
            A.zero(parent.multipoles)
            ops.m2m_accumulate(child.multipoles, child.up_delta, child.child, child.parent,
                               parent.multipoles, p=p)
        events.append(A.event())
        for level in range(2, D + 1):
            c = L[level]
            A.zero(c.locals)
            ops.m2l_accumulate_classes(c.multipoles, c.class_deltas, c.m2l_cls, c.m2l_src,
                                       c.m2l_tgt, c.locals, p=p, grouped=True)
        events.append(A.event())
        for level in range(3, D + 1):  # each level's locals hold its own M2L already
            child, parent = L[level], L[level - 1]
            ops.l2l_accumulate(parent.locals, child.down_delta, child.parent, child.child,
                               child.locals, p=p)
        events.append(A.event())
        A.zero(self.potential)
        A.zero(self.gradient)
        ops.l2p(leaf.locals, leaf.centers, self.offsets, self.points, self.potential,
                self.gradient, p=p)
        events.append(A.event())
        ops.p2p(self.points, self.charges, self.offsets, self.near_offsets, self.near_cells,
                self.potential, self.gradient)
        events.append(A.event())
        return events


def direct_sum(A, points, charges, targets, dtype, chunk=4096):
    """Potential and gradient at points[targets] over every other point, in `dtype`, in
    chunks of sources (element-wise arithmetic of the framework)."""
    x, q = A.cast(points, dtype), A.cast(charges, dtype)
    y = x[targets]
    phi = A.zeros((int(y.shape[0]),), dtype)
    grad = A.zeros((int(y.shape[0]), 3), dtype)
    for start in range(0, int(x.shape[0]), chunk):
        d = y[:, None, :] - x[None, start:start + chunk, :]
        r2 = (d * d).sum(-1)
        # a point's own position (r = 0) adds nothing
        inv = A.where(r2 > 0, 1.0 / A.sqrt(A.where(r2 > 0, r2, r2 * 0 + 1)), r2 * 0)
        qi = q[None, start:start + chunk] * inv
        phi += qi.sum(1)
        grad -= (d * (qi * inv * inv)[:, :, None]).sum(1)
    return phi, grad


def relative_error(got, want):
    return math.sqrt(float(((got - want) ** 2).sum()) / float((want ** 2).sum()))


def median(values):
    v = sorted(values)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def measure(A, ops, n, p, depth, real, runs, samples=4096, seed=2026):
    """One table row's numbers (a dict)."""
    gen = A.generator(seed)
    positions = A.uniform(gen, (n, 3))
    charges = A.uniform(gen, (n,))
    fmm = UniformFMM(A, ops, positions, charges, depth, p, real)
    fmm.run()  # warm-up: first-call costs, caches
    A.synchronize()
    phase_ms, totals = [[] for _ in PHASES], []
    for _ in range(max(1, runs)):
        events = fmm.run()
        A.synchronize()
        ms = [A.elapsed_ms(a, b) for a, b in zip(events[:-1], events[1:])]
        for i, m in enumerate(ms):
            phase_ms[i].append(m)
        totals.append(sum(ms))
    picks = A.integers(A.generator(7), n, min(samples, n))
    want_phi, want_grad = direct_sum(A, fmm.points, fmm.charges, picks, "float64")
    got_phi = A.cast(fmm.potential[picks], "float64")
    got_grad = A.cast(fmm.gradient[picks], "float64")
    count = min(n, samples)
    first = A.event()
    direct_sum(A, fmm.points, fmm.charges, A.arange(count, "int64"), real)
    last = A.event()
    A.synchronize()
    return dict(potential_error=relative_error(got_phi, want_phi),
                gradient_error=relative_error(got_grad, want_grad),
                phase_ms=[median(m) for m in phase_ms], fmm_ms=median(totals),
                direct_ms=A.elapsed_ms(first, last) * n / count, m2l_pairs=fmm.m2l_pairs)


def table_header():
    return ("| type | N | depth | p | potential error | gradient error |"
            + "".join(f" {name} ms |" for name in PHASES)
            + " FMM ms | direct ms | direct / FMM | M2L pairs |\n|---|---|---|---|---|---|"
            + "---|" * (len(PHASES) + 4))


def table_row(real, n, depth, p, r):
    return (f"| {'double' if real == 'float64' else 'float'} | {n} | {depth} | {p} | "
            f"{r['potential_error']:.2e} | {r['gradient_error']:.2e} |"
            + "".join(f" {m:.3f} |" for m in r["phase_ms"])
            + f" {r['fmm_ms']:.3f} | {r['direct_ms']:.1f} | {r['direct_ms'] / r['fmm_ms']:.1f} |"
            f" {r['m2l_pairs']} |")


def _import_wham():
    """The package of the checkout this example is in (python/wham), else an installed one."""
    checkout = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python")
    if os.path.isfile(os.path.join(checkout, "wham", "__init__.py")):
        sys.path.insert(0, checkout)
    import wham
    return wham


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=float, default=1e6, help="number of points (1e6)")
    parser.add_argument("--order", type=int, default=4, help="expansion order p (4)")
    parser.add_argument("--level", type=int, default=None,
                        help="leaf level 2..7 (default: about 4 (p + 1) points a leaf)")
    parser.add_argument("--precision", choices=("double", "float"), default="double")
    parser.add_argument("--runs", type=int, default=5, help="timed runs (median), after a warm-up")
    parser.add_argument("--framework", choices=("torch", "cupy"), default=None,
                        help="default: PyTorch, else CuPy")
    args = parser.parse_args(argv)
    n = int(args.n)
    if n < 2:
        parser.error("--n must be at least 2")
    A, why = arrays_for(args.framework)
    if A is None:
        print(f"fmm_whole.py: skipped: {why} (it needs PyTorch or CuPy on a CUDA GPU)")
        return 0
    wham = _import_wham()
    if not wham.available():
        try:
            wham.version()
        except RuntimeError as e:
            print(f"fmm_whole.py: {e}", file=sys.stderr)
        return 1
    depth = args.level if args.level is not None else depth_for(n, args.order)
    if not 2 <= depth <= 7:
        parser.error("--level must be in 2..7")
    real = "float64" if args.precision == "double" else "float32"
    print(f"fmm_whole.py: {A.name} {A.version}, wham {wham.__version__}, {A.device_name()}; "
          f"median of {max(1, args.runs)} runs")
    print(table_header())
    r = measure(A, wham, n, args.order, depth, real, args.runs)
    print(table_row(real, n, depth, args.order, r), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
