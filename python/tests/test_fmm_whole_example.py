"""examples/fmm_whole.py: its cells and lists against wham/fmm_lists.hpp's definitions, its
whole FMM run on the CPU (NumPy arrays, the NumPy references in place of wham's operators)
against the direct sum, its skip without a GPU or framework; and on a GPU (marked gpu) the
example itself, its printed errors checked."""

import importlib.util
import os
import re
import subprocess
import sys
import types

import numpy as np
import pytest

import fmm_reference as F
from gpu_support import module_available, require_library

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(ROOT, "examples", "fmm_whole.py")


def _example():
    spec = importlib.util.spec_from_file_location("fmm_whole_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class NumpyArrays:
    """The example's array operations over NumPy (no events: times are zero)."""
    name, version = "NumPy", np.__version__

    def zeros(self, shape, dtype):
        return np.zeros(shape, dtype)

    def arange(self, n, dtype):
        return np.arange(n, dtype=dtype)

    def array(self, values, dtype):
        return np.asarray(values, dtype=dtype)

    def cast(self, x, dtype):
        return np.ascontiguousarray(x.astype(dtype))

    def stack(self, xs, axis):
        return np.stack(xs, axis)

    def concatenate(self, xs):
        return np.concatenate(xs)

    def argsort(self, x):
        return np.argsort(x, kind="stable")

    def bincount(self, x, minlength):
        return np.bincount(x, minlength=minlength)

    def cumsum(self, x):
        return np.cumsum(x)

    def minimum(self, x, value):
        return np.minimum(x, value)

    def sqrt(self, x):
        with np.errstate(divide="ignore"):
            return np.sqrt(x)

    def where(self, condition, a, b):
        return np.where(condition, a, b)

    def zero(self, x):
        x.fill(0)

    def generator(self, seed):
        return np.random.default_rng(seed)

    def uniform(self, gen, shape):
        return gen.random(shape)

    def integers(self, gen, high, n):
        return gen.integers(0, high, n)

    def event(self):
        return None

    def elapsed_ms(self, a, b):
        return 0.0

    def synchronize(self):
        pass


def _reference_ops():
    """wham's FMM calls, as the example makes them, computed by the NumPy references."""
    def p2m(points, charges, offsets, centers, *, p, out):
        out[...] = F.p2m(points, charges, offsets, centers, p)

    def m2m_accumulate(M, d, src, tgt, parents, *, p):
        parents[...] = F.accumulate(F.m2m, M, d, src, tgt, parents, p)

    def m2l_accumulate_classes(M, class_deltas, cls, src, tgt, locals, *, p, grouped):
        assert grouped
        locals[...] = F.accumulate(F.m2l, M, class_deltas[cls], src, tgt, locals, p)

    def l2l_accumulate(L, d, src, tgt, children, *, p):
        children[...] = F.accumulate(F.l2l, L, d, src, tgt, children, p)

    def l2p(L, centers, offsets, points, potential, gradient, *, p):
        phi, grad = F.l2p(L, centers, offsets, points, p)
        potential += phi
        gradient += grad

    def p2p(points, charges, offsets, near_offsets, near_cells, potential, gradient):
        phi, grad = F.p2p(points, charges, offsets, near_offsets, near_cells)
        potential += phi
        gradient += grad

    return types.SimpleNamespace(**{f.__name__: f for f in (
        p2m, m2m_accumulate, m2l_accumulate_classes, l2l_accumulate, l2p, p2p)})


def _spec_lists(level):
    """The interaction lists of a uniform level by wham/fmm_lists.hpp's definition, grouped
    by class (wham::group_by_class): (src, tgt, cls)."""
    n = 1 << level
    classes = [(x, y, z) for z in range(-3, 4) for y in range(-3, 4) for x in range(-3, 4)
               if max(abs(x), abs(y), abs(z)) > 1]
    pairs = []
    for t in range(n ** 3):
        c = (t % n, t // n % n, t // (n * n))
        for k, d in enumerate(classes):
            s = [c[i] - d[i] for i in range(3)]
            if min(s) < 0 or max(s) >= n or any(abs(s[i] // 2 - c[i] // 2) > 1 for i in range(3)):
                continue
            pairs.append((k, t, (s[2] * n + s[1]) * n + s[0]))
    pairs.sort(key=lambda e: e[0])  # stable: targets ascending within a class
    return ([e[2] for e in pairs], [e[1] for e in pairs], [e[0] for e in pairs])


@pytest.mark.parametrize("level", [2, 3])
def test_the_example_lists_are_the_uniform_interaction_lists(level):
    ex = _example()
    L = ex.Level(NumpyArrays(), level, 2, "float64", tiles=False)
    src, tgt, cls = _spec_lists(level)
    np.testing.assert_array_equal(L.m2l_src, src)
    np.testing.assert_array_equal(L.m2l_tgt, tgt)
    np.testing.assert_array_equal(L.m2l_cls, cls)
    assert L.m2l_src.dtype == np.int32 and len(ex.class_displacements()) == 316
    interior = (1 << level) ** 3 // 2 + (1 << level) ** 2 // 2 + (1 << level) // 2
    if level >= 3:
        assert (L.m2l_tgt == interior).sum() == 189  # an interior cell's list
    np.testing.assert_array_equal(  # delta = target centre - source centre
        L.class_deltas[L.m2l_cls], L.centers[L.m2l_tgt] - L.centers[L.m2l_src])


def test_tiles_keep_the_pairs_and_group_them_by_tile_and_class():
    ex = _example()
    A = NumpyArrays()
    plain = ex.Level(A, 3, 2, "float64", tiles=False)
    tiled = ex.Level(A, 3, 2, "float64", tiles=True)
    key = tiled.m2l_tgt // (4 * 64) * 316 + tiled.m2l_cls
    assert np.all(np.diff(key) >= 0)
    assert sorted(zip(plain.m2l_src, plain.m2l_tgt, plain.m2l_cls)) == \
        sorted(zip(tiled.m2l_src, tiled.m2l_tgt, tiled.m2l_cls))


def test_the_example_fmm_on_the_cpu_matches_the_direct_sum():
    # The example's own wiring (sorting, lists, the order of the phases) with the NumPy
    # references in place of wham: its errors fall with the order, as the FMM's must.
    ex = _example()
    A = NumpyArrays()
    errors = []
    for p in (2, 5):
        r = ex.measure(A, _reference_ops(), 3000, p, 3, "float64", runs=1, samples=300)
        errors.append((r["potential_error"], r["gradient_error"]))
        assert r["m2l_pairs"] == sum(len(_spec_lists(level)[0]) for level in (2, 3))
    assert errors[0][0] < 1e-2 and errors[0][1] < 1e-1
    assert errors[1][0] < errors[0][0] / 10 and errors[1][1] < errors[0][1] / 5


def test_the_near_lists_are_each_leaf_and_its_neighbours():
    ex = _example()
    A = NumpyArrays()
    gen = A.generator(1)
    fmm = ex.UniformFMM(A, None, A.uniform(gen, (200, 3)), A.uniform(gen, (200,)), 2, 1,
                        "float32")
    counts = np.diff(fmm.near_offsets)
    assert counts.min() == 8 and counts.max() == 27 and counts.sum() == len(fmm.near_cells)
    assert fmm.near_cells[fmm.near_offsets[21]:fmm.near_offsets[22]].tolist() == \
        [(z * 4 + y) * 4 + x for z in (0, 1, 2) for y in (0, 1, 2) for x in (0, 1, 2)]
    # points sorted by leaf, each inside its leaf
    leaf = np.repeat(np.arange(64), np.diff(fmm.offsets))
    cell = np.minimum((fmm.points.astype(np.float64) * 4).astype(np.int64), 3)
    np.testing.assert_array_equal((cell[:, 2] * 4 + cell[:, 1]) * 4 + cell[:, 0], leaf)
    assert fmm.points.dtype == np.float32 and fmm.offsets.dtype == np.int64


def test_without_a_gpu_framework_the_example_skips():
    if module_available("torch") or module_available("cupy"):
        pytest.skip("a framework is installed here: the skip is for machines without one")
    run = subprocess.run([sys.executable, EXAMPLE, "--n", "1000"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0 and "skipped" in run.stdout and "PyTorch" in run.stdout


def _row(stdout):
    """The numbers of the table row the example prints."""
    rows = [line for line in stdout.splitlines() if re.match(r"\| (double|float) \|", line)]
    assert len(rows) == 1, stdout
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    return dict(potential_error=float(cells[4]), gradient_error=float(cells[5]),
                fmm_ms=float(cells[12]), m2l_pairs=int(cells[15]))


@pytest.mark.gpu
@pytest.mark.parametrize("framework", ["torch", "cupy"])
def test_the_example_on_a_gpu(framework):
    require_library()
    if not module_available(framework):
        pytest.skip(f"{framework} is not installed")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, "python")] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    results = {}
    for precision, p in (("double", 4), ("double", 8), ("float", 4)):
        run = subprocess.run([sys.executable, EXAMPLE, "--n", "20000", "--order", str(p),
                              "--precision", precision, "--runs", "2", "--framework", framework],
                             env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout + run.stderr[-4000:]
        assert "skipped" not in run.stdout, run.stdout
        results[precision, p] = _row(run.stdout)
    # examples/fmm_whole.cu at p = 4 / 8, N = 1e5: 3.5e-5 / 1.7e-6 (potential),
    # 1.3e-3 / 1.2e-4 (gradient); bounds with room for other N and samples
    r4, r8, f4 = results["double", 4], results["double", 8], results["float", 4]
    assert r4["potential_error"] < 3e-4 and r4["gradient_error"] < 1e-2
    assert r8["potential_error"] < r4["potential_error"] / 5
    assert r8["gradient_error"] < r4["gradient_error"] / 3
    assert f4["potential_error"] < 3e-4 and f4["gradient_error"] < 1e-2
    assert r4["m2l_pairs"] > 0 and r4["fmm_ms"] > 0
