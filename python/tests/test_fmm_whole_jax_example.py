"""examples/fmm_whole_jax.py: its jitted function's wiring (the sort by leaf, the order and
arguments of the wham.jax calls, the scatter back to the caller's order) run on the CPU with
NumPy in place of jax.numpy and the NumPy references in place of wham.jax, against the
direct sum; its host lists; its skip without JAX; and on a GPU (marked gpu) the example
itself, its printed errors checked."""

import importlib.util
import os
import re
import subprocess
import sys
import types

import numpy as np
import pytest

import fmm_reference as F
from gpu_support import _missing, module_available, require_library

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(ROOT, "examples", "fmm_whole_jax.py")


def _example():
    spec = importlib.util.spec_from_file_location("fmm_whole_jax_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _WithAt(np.ndarray):
    """A NumPy array with JAX's functional update x.at[i].set(v) (a new array)."""

    @property
    def at(self):
        base = np.asarray(self)

        class Index:
            def __getitem__(self, i):
                def set_(v):
                    out = base.copy()
                    out[i] = v
                    return out
                return types.SimpleNamespace(set=set_)
        return Index()


def _numpy_as_jnp():
    """The jax.numpy calls the example's jitted function makes, over NumPy."""
    return types.SimpleNamespace(
        int32=np.int32, complex64=np.complex64, complex128=np.complex128,
        minimum=np.minimum, concatenate=np.concatenate, zeros=np.zeros, cumsum=np.cumsum,
        argsort=lambda x, stable: np.argsort(x, kind="stable" if stable else "quicksort"),
        bincount=lambda x, length: np.bincount(x, minlength=length),
        zeros_like=lambda x: np.zeros_like(x).view(_WithAt))


def _reference_wham_jax():
    """wham.jax's functions the example calls, with their signatures and functional
    results, computed by the NumPy references."""
    def p2m(points, charges, offsets, centers, *, p):
        return F.p2m(points, charges, offsets, centers, p)

    def m2m_accumulate(M, d, src, tgt, parents, *, p):
        return F.accumulate(F.m2m, M, d, src, tgt, parents, p)

    def m2l_accumulate_classes(M, class_deltas, cls, src, tgt, locals, *, p, grouped):
        assert grouped
        return F.accumulate(F.m2l, M, np.asarray(class_deltas)[cls], src, tgt, locals, p)

    def l2l_accumulate(L, d, src, tgt, children, *, p):
        return F.accumulate(F.l2l, L, d, src, tgt, children, p)

    def l2p(L, centers, offsets, points, potential, gradient, *, p):
        phi, grad = F.l2p(L, centers, offsets, points, p)
        return potential + phi, gradient + grad

    def p2p(points, charges, offsets, near_offsets, near_cells, potential, gradient):
        phi, grad = F.p2p(points, charges, offsets, near_offsets, near_cells)
        return potential + phi, gradient + grad

    return types.SimpleNamespace(**{f.__name__: f for f in (
        p2m, m2m_accumulate, m2l_accumulate_classes, l2l_accumulate, l2p, p2p)})


def test_the_jitted_function_on_the_cpu_matches_the_direct_sum_in_the_callers_order():
    # Points in random order: a result left in leaf order, or a call with its arguments
    # swapped, fails the comparison; the errors fall with the order, as the FMM's must.
    ex = _example()
    gen = np.random.default_rng(3)
    positions, charges = gen.random((3000, 3)), gen.random(3000)
    picks = gen.integers(0, 3000, 300)
    want_phi, want_grad = F.direct(positions, charges, picks)
    errors = []
    for p in (2, 5):
        fmm, _ = ex.make_fmm(_numpy_as_jnp(), _reference_wham_jax(), 3, p, "float64")
        lists, _ = ex.host_lists(3, p, "float64")
        phi, grad = fmm(positions, charges, lists)
        assert phi.shape == (3000,) and grad.shape == (3000, 3)
        errors.append((ex.relative_error(np, phi[picks], want_phi),
                       ex.relative_error(np, grad[picks], want_grad)))
    assert errors[0][0] < 1e-2 and errors[0][1] < 1e-1
    assert errors[1][0] < errors[0][0] / 10 and errors[1][1] < errors[0][1] / 5


@pytest.mark.parametrize("real", ["float32", "float64"])
def test_the_host_lists_are_fmm_whole_lists_as_int32_and_the_precision(real):
    # jit arguments: an int64 list would be narrowed by JAX without 64-bit types, so every
    # index array is int32 already; the geometry is in the FMM's precision.
    ex = _example()
    lists, pairs = ex.host_lists(4, 3, real)
    tree = ex.base.UniformFMM(ex.HostArrays(), None, np.zeros((0, 3)), np.zeros(0), 4, 3, real)
    assert pairs == tree.m2l_pairs == sum(len(level["src"]) for level in lists["levels"])
    np.testing.assert_array_equal(lists["near_offsets"], tree.near_offsets)
    for level, entry in zip(range(2, 5), lists["levels"]):
        assert entry["centers"].shape == ((1 << level) ** 3, 3)
        for name, a in entry.items():
            kind = np.int32 if name in ("cls", "src", "tgt", "child", "parent") else real
            assert a.dtype == kind, (level, name, a.dtype)
    assert lists["near_offsets"].dtype == np.int32 and lists["near_cells"].dtype == np.int32
    assert "child" not in lists["levels"][0] and len(lists["levels"][1]["child"]) == 512


def test_without_jax_the_example_skips():
    if module_available("jax"):
        pytest.skip("JAX is installed here: the skip is for machines without it")
    run = subprocess.run([sys.executable, EXAMPLE, "--n", "1000"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0 and "skipped" in run.stdout and "JAX" in run.stdout


def _row(stdout):
    """The numbers of the table row the example prints."""
    rows = [line for line in stdout.splitlines() if re.match(r"\| (double|float) \|", line)]
    assert len(rows) == 1, stdout
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    return dict(depth=int(cells[2]), potential_error=float(cells[4]),
                gradient_error=float(cells[5]), compile_s=float(cells[6]),
                fmm_ms=float(cells[8]), m2l_pairs=int(cells[11]))


@pytest.mark.gpu
def test_the_example_on_a_gpu():
    if not module_available("jax"):
        pytest.skip("JAX is not installed")
    require_library()
    import wham.jax as wj  # JAX's GPU stays untouched here: the example runs in its own process
    if not any(os.path.exists(p) for p in wj._candidates() if os.sep in p):
        pytest.skip("libwham_jax.so was not built (CMake target wham_jax, where JAX is "
                    "installed) or WHAM_JAX_LIBRARY is not set")
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false", PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, "python")] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    results = {}
    for precision, p in (("double", 4), ("double", 8), ("float", 4)):
        run = subprocess.run([sys.executable, EXAMPLE, "--n", "20000", "--order", str(p),
                              "--precision", precision, "--runs", "2"],
                             env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout + run.stderr[-4000:]
        if "skipped" in run.stdout:
            _missing(run.stdout.strip())
        results[precision, p] = _row(run.stdout)
    # the bounds of fmm_whole.py's test (examples/fmm_whole.cu at p = 4 / 8, N = 1e5:
    # 3.5e-5 / 1.7e-6 potential, 1.3e-3 / 1.2e-4 gradient), with room for N and samples
    r4, r8, f4 = results["double", 4], results["double", 8], results["float", 4]
    assert r4["potential_error"] < 3e-4 and r4["gradient_error"] < 1e-2
    assert r8["potential_error"] < r4["potential_error"] / 5
    assert r8["gradient_error"] < r4["gradient_error"] / 3
    assert f4["potential_error"] < 3e-4 and f4["gradient_error"] < 1e-2
    ex = _example()
    for (precision, p), r in results.items():
        assert r["m2l_pairs"] == ex.host_lists(r["depth"], p, "float64")[1]
        assert r["fmm_ms"] > 0 and r["compile_s"] > 0
