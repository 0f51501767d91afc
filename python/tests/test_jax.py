"""wham.jax: every XLA handler of libwham_jax.so under jax.jit against NumPy references,
and vmap, grad, shard_map, donation, CUDA-graph capture, errors and the 64-bit rule. Needs
JAX, a GPU, libwham.so and libwham_jax.so; skipped, with the reason, elsewhere."""

import os
import statistics
import subprocess
import sys
import time

import numpy as np
import pytest

import wham
from wham import reference

from gpu_support import _missing, rel_err, require_library

jax = pytest.importorskip("jax", reason="JAX is not installed")
jnp = pytest.importorskip("jax.numpy", reason="JAX is not installed")

pytestmark = pytest.mark.gpu
RNG = np.random.default_rng(7117)


@pytest.fixture(scope="module")
def wj():
    require_library()
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not gpus:
        _missing("JAX sees no GPU")
    import wham.jax as module
    try:
        module.library_path()
    except wham.LibraryNotFoundError as e:
        if not any(os.path.exists(p) for p in module._candidates() if os.sep in p):
            # an optional part, built only where JAX's headers were found at configure time
            pytest.skip("libwham_jax.so was not built (CMake target wham_jax, where JAX is "
                        "installed) or WHAM_JAX_LIBRARY is not set")
        _missing(f"libwham_jax.so did not load: {e}")
    return module


@pytest.fixture
def x64():
    with jax.enable_x64(True):
        yield


def _random(shape, dtype):
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def _numpy_fwht(a, scale=1.0):
    """The butterflies of the Walsh-Hadamard transform along the last axis, in NumPy."""
    y = np.array(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64)
    n, h = y.shape[-1], 1
    while h < n:
        v = y.reshape(y.shape[:-1] + (n // (2 * h), 2, h))
        v[..., 0, :], v[..., 1, :] = v[..., 0, :] + v[..., 1, :], v[..., 0, :] - v[..., 1, :]
        h *= 2
    return scale * y


# ---- the row transforms ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("complex64", 1e-5),
                                       ("float64", 1e-12), ("complex128", 1e-12)])
@pytest.mark.parametrize("log_n", [0, 3, 10, 14])
def test_fwht_under_jit_matches_numpy(wj, x64, dtype, tol, log_n):
    a = _random((3, 2, 1 << log_n), dtype)
    y = jax.jit(lambda x: wj.fwht(x, scale="orthonormal"))(jnp.asarray(a))
    assert y.dtype == a.dtype and y.shape == a.shape
    assert rel_err(np.asarray(y), _numpy_fwht(a, 2.0 ** (-log_n / 2))) < 4 * tol


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_fwht_half_precision_rows(wj, dtype):
    a = _random((4, 256), "float32")
    x = jnp.asarray(a).astype(dtype)
    y = jax.jit(lambda x: wj.fwht(x, scale="orthonormal"))(x)
    assert y.dtype == x.dtype
    want = _numpy_fwht(np.asarray(x.astype(jnp.float32)), 1 / 16)
    assert rel_err(np.asarray(y.astype(jnp.float32)), want) < (2e-2 if dtype == "bfloat16" else 2e-3)


@pytest.mark.parametrize("path", ["fused", "kronecker", "baseline"])
def test_fwht_explicit_paths(wj, path):
    a = _random((5, 1 << 12), "float32")
    y = jax.jit(lambda x: wj.fwht(x, scale=0.5, path=path))(jnp.asarray(a))
    assert rel_err(np.asarray(y), _numpy_fwht(a, 0.5)) < 4e-5


@pytest.mark.parametrize("m,log_k", [(1, 6), (12, 4), (20, 3), (28, 5), (40, 2)])
@pytest.mark.parametrize("transpose", [False, True])
def test_hadamard_under_jit_matches_numpy(wj, x64, m, log_k, transpose):
    a = _random((3, m << log_k), "float64")
    y = jax.jit(lambda x: wj.hadamard(x, scale="orthonormal", m=m, transpose=transpose))(
        jnp.asarray(a))
    h = None if m == 1 else wham.hadamard_matrix(m).astype(np.float64)
    want = reference.hadamard(a, h, 1 / np.sqrt(m << log_k), transpose)
    assert rel_err(np.asarray(y), want) < 1e-12


@pytest.mark.parametrize("params_dtype,dtype", [("float32", "complex64"), ("float64", "complex128"),
                                                ("float32", "complex128")])
@pytest.mark.parametrize("n", [1, 4, 11])
def test_iqp_encode_under_jit_matches_numpy(wj, x64, params_dtype, dtype, n):
    params = RNG.uniform(-3, 3, (2, 3, wham.iqp_num_params(n))).astype(params_dtype)
    s = jax.jit(lambda q: wj.iqp_encode(q, dtype=dtype))(jnp.asarray(params))
    assert s.shape == (2, 3, 1 << n) and s.dtype == np.dtype(dtype)
    want = reference.iqp_state(params.reshape(6, -1).astype(np.float64), n).reshape(2, 3, -1)
    assert rel_err(np.asarray(s), want) < (4e-5 if dtype == "complex64" else 4e-12)


def test_iqp_z_product_path(wj, x64):
    params = RNG.uniform(-3, 3, (4, 9))
    s = jax.jit(lambda q: wj.iqp_encode(q, variant="iqp_z", path="product"))(jnp.asarray(params))
    assert rel_err(np.asarray(s), reference.iqp_state(params, 9, False)) < 4e-12


# ---- M2L and its accumulate forms --------------------------------------------------------------

def _pairs(pairs, p, dtype):
    M = _random((pairs, (p + 1) ** 2), dtype)
    d = RNG.uniform(-1, 1, (pairs, 3))
    d = d / np.linalg.norm(d, axis=1, keepdims=True) * RNG.uniform(2, 4, (pairs, 1))
    return M, d.astype("float32" if dtype == "complex64" else "float64")


def _tol(dtype):
    return 1e-4 if dtype == "complex64" else 1e-11


@pytest.mark.parametrize("dtype,p", [("complex128", 0), ("complex128", 5), ("complex128", 12),
                                     ("complex64", 4), ("complex64", 9)])
def test_m2l_under_jit_matches_numpy(wj, x64, dtype, p):
    M, d = _pairs(10, p, dtype)
    L = jax.jit(wj.m2l)(jnp.asarray(M), jnp.asarray(d))
    assert L.shape == M.shape and L.dtype == M.dtype
    want = reference.m2l(M.astype(np.complex128), d.astype(np.float64), p)
    assert rel_err(np.asarray(L), want) < _tol(dtype)


def _fmm_list(pairs, nm, nl):
    src = RNG.integers(-1, nm + 1, pairs).astype(np.int32)  # a few out of range on purpose
    tgt = RNG.integers(-1, nl + 1, pairs).astype(np.int32)
    src = np.where(src == tgt, (src + 1) % nm, src).astype(np.int32)
    order = np.argsort(tgt, kind="stable")  # grouped by target, for "deterministic"
    return src[order], tgt[order]


@pytest.mark.parametrize("method", ["atomic", "deterministic"])
@pytest.mark.parametrize("dtype,p", [("complex128", 4), ("complex64", 6)])
def test_m2l_accumulate_forms_under_jit(wj, x64, method, dtype, p):
    nm, nl, pairs, C = 6, 5, 40, (p + 1) ** 2
    M, L0 = _random((nm, C), dtype), _random((nl, C), dtype)
    src, tgt = _fmm_list(pairs, nm, nl)
    d = _pairs(pairs, p, dtype)[1]
    real = d.dtype
    M64 = M.astype(np.complex128)
    tol = _tol(dtype)
    locals0 = jnp.asarray(L0)
    L = jax.jit(lambda *a: wj.m2l_accumulate(*a, method=method))(
        jnp.asarray(M), jnp.asarray(d), jnp.asarray(src), jnp.asarray(tgt), locals0)
    want = reference.m2l_accumulate(M64, d.astype(np.float64), src, tgt, L0, p)
    assert rel_err(np.asarray(L), want) < tol
    np.testing.assert_array_equal(np.asarray(locals0), L0)  # not donated: left as it was
    centers = RNG.uniform(-8, 8, (max(nm, nl), 3)).astype(real)
    L = jax.jit(lambda *a: wj.m2l_accumulate_centers(*a, method=method))(
        jnp.asarray(M), jnp.asarray(centers), jnp.asarray(src), jnp.asarray(tgt), locals0)
    valid = (src >= 0) & (src < nm) & (tgt >= 0) & (tgt < nl)
    dc = np.where(valid[:, None], centers[np.clip(tgt, 0, len(centers) - 1)]
                  - centers[np.clip(src, 0, len(centers) - 1)], 1.0)
    want = reference.m2l_accumulate(M64, dc.astype(np.float64), src, tgt, L0, p)
    assert rel_err(np.asarray(L), want) < tol
    K = 7
    kd = _pairs(K, p, dtype)[1]
    cls = RNG.integers(0, K, pairs).astype(np.int32)
    for grouped in ([False, True] if method == "atomic" else [False]):
        s_, t_, c_ = src, tgt, cls
        if grouped:
            o = np.argsort(cls, kind="stable")
            s_, t_, c_ = src[o], tgt[o], cls[o]
        L = jax.jit(lambda *a: wj.m2l_accumulate_classes(*a, method=method, grouped=grouped))(
            jnp.asarray(M), jnp.asarray(kd), jnp.asarray(c_), jnp.asarray(s_), jnp.asarray(t_),
            locals0)
        want = reference.m2l_accumulate(M64, kd[c_].astype(np.float64), s_, t_, L0, p)
        assert rel_err(np.asarray(L), want) < tol


def test_accumulate_into_a_donated_target(wj):
    p, C = 3, 16
    M, L0 = _random((4, C), "complex64"), _random((3, C), "complex64")
    src, tgt = np.array([0, 1, 2, 3], np.int32), np.array([0, 0, 2, 1], np.int32)
    d = _pairs(4, p, "complex64")[1]
    step = jax.jit(wj.m2l_accumulate, donate_argnums=4)
    L = step(jnp.asarray(M), jnp.asarray(d), jnp.asarray(src), jnp.asarray(tgt), jnp.asarray(L0))
    want = reference.m2l_accumulate(M.astype(np.complex128), d.astype(np.float64), src, tgt, L0, p)
    assert rel_err(np.asarray(L), want) < 1e-4


def test_int64_lists_with_padding_as_jaccpot_passes_them(wj, x64):
    """jaccpot's layout: int64 src / tgt, padding marked by a negative index, donated locals,
    delta = centre of the target minus centre of the source: the padding and any index past
    int32 add nothing, the rest as the int32 list without them."""
    p, nm, nl, pairs = 5, 9, 7, 64
    M, L0 = _random((nm, (p + 1) ** 2), "complex128"), _random((nl, (p + 1) ** 2), "complex128")
    centers = RNG.uniform(-8, 8, (max(nm, nl), 3))
    src = RNG.integers(0, nm, pairs).astype(np.int64)
    tgt = RNG.integers(0, nl, pairs).astype(np.int64)
    tgt = np.where(src == tgt, (tgt + 1) % nl, tgt)
    src[::5], tgt[3::7] = -1, -1  # padding
    src[1] = 2**32 + 1  # would wrap to row 1 as int32
    keep = (src >= 0) & (src < nm) & (tgt >= 0)
    step = jax.jit(wj.m2l_accumulate_centers, donate_argnums=4)
    L = step(jnp.asarray(M), jnp.asarray(centers), jnp.asarray(src), jnp.asarray(tgt),
             jnp.asarray(L0))
    s, t = src[keep].astype(np.int32), tgt[keep].astype(np.int32)
    want = reference.m2l_accumulate(M, centers[t] - centers[s], s, t, L0, p)
    assert rel_err(np.asarray(L), want) < 1e-11


# ---- M2M, L2L, P2M, L2P, P2P: NumPy references from the formulas of wham/translations.cuh
# and wham/particles.cuh ---------------------------------------------------------------------------

def _k(n, m):
    return n * n + n + m


def _regular(p, v):
    """R_n^m(v), n <= p, |m| <= n, in double: the recurrences of wham/particles.cuh."""
    x, y, z = (float(c) for c in v)
    r2 = x * x + y * y + z * z
    R = np.zeros((p + 1) ** 2, np.complex128)
    diag = 1.0 + 0j
    for m in range(p + 1):
        if m:
            diag = diag * (x + 1j * y) / (2 * m)
        R[_k(m, m)] = diag
        if m + 1 <= p:
            R[_k(m + 1, m)] = z * diag
        for n in range(m + 2, p + 1):
            R[_k(n, m)] = ((2 * n - 1) * z * R[_k(n - 1, m)] - r2 * R[_k(n - 2, m)]) / ((n + m) * (n - m))
        for n in range(m, p + 1):
            if m:
                R[_k(n, -m)] = (-1) ** m * np.conj(R[_k(n, m)])
    return R


def _m2m_ref(M, d, p):
    R = _regular(p, -np.asarray(d, np.float64))
    out = np.zeros_like(M, dtype=np.complex128)
    for n in range(p + 1):
        for m in range(-n, n + 1):
            s = 0
            for k in range(n + 1):
                for l in range(-k, k + 1):
                    if abs(m - l) <= n - k:
                        s += M[_k(k, l)] * R[_k(n - k, m - l)]
            out[_k(n, m)] = s
    return out


def _l2l_ref(L, d, p):
    R = _regular(p, -np.asarray(d, np.float64))
    out = np.zeros_like(L, dtype=np.complex128)
    for k in range(p + 1):
        for l in range(-k, k + 1):
            s = 0
            for n in range(k, p + 1):
                for m in range(-n, n + 1):
                    if abs(m - l) <= n - k:
                        s += L[_k(n, m)] * np.conj(R[_k(n - k, m - l)])
            out[_k(k, l)] = s
    return out


def _cells(num_cells, per_cell, real):
    """Points sorted into cells of random sizes round random centres: (points, charges,
    offsets int64, centers)."""
    sizes = RNG.integers(0, per_cell + 1, num_cells)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    centers = RNG.uniform(-4, 4, (num_cells, 3))
    points = np.concatenate([centers[c] + RNG.uniform(-0.5, 0.5, (s, 3))
                             for c, s in enumerate(sizes)] + [np.zeros((0, 3))])
    charges = RNG.uniform(-1, 1, len(points))
    return points.astype(real), charges.astype(real), offsets, centers.astype(real)


@pytest.mark.parametrize("dtype,p", [("complex128", 3), ("complex128", 8), ("complex64", 5)])
@pytest.mark.parametrize("which", ["m2m", "l2l"])
def test_translations_under_jit_match_numpy(wj, x64, dtype, p, which):
    E, d = _pairs(6, p, dtype)
    d = (d / 3).astype(d.dtype)  # child-parent distances
    out = jax.jit(getattr(wj, which))(jnp.asarray(E), jnp.asarray(d))
    ref = _m2m_ref if which == "m2m" else _l2l_ref
    want = np.stack([ref(E[i].astype(np.complex128), d[i], p) for i in range(len(E))])
    assert rel_err(np.asarray(out), want) < _tol(dtype)
    # the accumulate form: out-of-range pairs add nothing
    T0 = _random((3, (p + 1) ** 2), dtype)
    src = np.array([0, 1, 2, 5, 3, 9], np.int32)
    tgt = np.array([0, 0, 1, 1, 2, -1], np.int32)
    acc = getattr(wj, which + "_accumulate")
    T = jax.jit(acc)(jnp.asarray(E), jnp.asarray(d), jnp.asarray(src), jnp.asarray(tgt),
                     jnp.asarray(T0))
    want = T0.astype(np.complex128)
    for i, (s, t) in enumerate(zip(src, tgt)):
        if 0 <= s < len(E) and 0 <= t < len(T0):
            want[t] += ref(E[s].astype(np.complex128), d[i], p)
    assert rel_err(np.asarray(T), want) < _tol(dtype)


def test_m2m_moves_a_p2m_expansion_to_the_parent(wj, x64):
    """Conventions end to end: P2M about a child's centre, translated by M2M with delta =
    parent - child, equals P2M about the parent's centre (exact for the orders kept)."""
    p = 6
    pts, q, off, child = _cells(1, 12, "float64")
    parent = child + np.array([[0.3, -0.2, 0.4]])
    Mc = wj.p2m(jnp.asarray(pts), jnp.asarray(q), jnp.asarray(off), jnp.asarray(child), p=p)
    Mp = wj.p2m(jnp.asarray(pts), jnp.asarray(q), jnp.asarray(off), jnp.asarray(parent), p=p)
    moved = wj.m2m(Mc, jnp.asarray(parent - child))
    assert rel_err(np.asarray(moved), np.asarray(Mp)) < 1e-12


@pytest.mark.parametrize("real,p", [("float64", 0), ("float64", 7), ("float32", 5)])
@pytest.mark.parametrize("offsets_dtype", ["int64", "int32"])
def test_p2m_and_l2p_under_jit_match_numpy(wj, x64, real, p, offsets_dtype):
    pts, q, off, ctr = _cells(5, 9, real)
    off = off.astype(offsets_dtype)
    cplx = "complex64" if real == "float32" else "complex128"
    tol = 2e-5 if real == "float32" else 1e-12
    M = jax.jit(lambda *a: wj.p2m(*a, p=p))(jnp.asarray(pts), jnp.asarray(q), jnp.asarray(off),
                                            jnp.asarray(ctr))
    assert M.shape == (5, (p + 1) ** 2) and M.dtype == np.dtype(cplx)
    want = np.zeros((5, (p + 1) ** 2), np.complex128)
    for c in range(5):
        for i in range(off[c], off[c + 1]):
            want[c] += float(q[i]) * _regular(p, pts[i].astype(np.float64) - ctr[c])
    assert rel_err(np.asarray(M), want) < tol
    L = _random((5, (p + 1) ** 2), cplx)
    phi0, grad0 = _random(len(pts), real), _random((len(pts), 3), real)
    phi, grad = jax.jit(wj.l2p)(jnp.asarray(L), jnp.asarray(ctr), jnp.asarray(off),
                                jnp.asarray(pts), jnp.asarray(phi0), jnp.asarray(grad0))
    only = jax.jit(wj.l2p)(jnp.asarray(L), jnp.asarray(ctr), jnp.asarray(off), jnp.asarray(pts),
                           jnp.asarray(phi0))

    def potential(c, x):
        return float(np.real(np.sum(np.conj(L[c].astype(np.complex128))
                                    * _regular(p, ctr[c].astype(np.float64) - x))))

    want_phi, want_grad = phi0.astype(np.float64), grad0.astype(np.float64)
    h = 1e-5
    for c in range(5):
        for j in range(off[c], off[c + 1]):
            x = pts[j].astype(np.float64)
            want_phi[j] += potential(c, x)
            for a in range(3):
                e = np.eye(3)[a] * h
                want_grad[j, a] += (potential(c, x + e) - potential(c, x - e)) / (2 * h)
    scale = np.max(np.abs(want_phi)) + 1
    assert np.max(np.abs(np.asarray(phi) - want_phi)) < tol * 10 * scale
    assert np.max(np.abs(np.asarray(only) - want_phi)) < tol * 10 * scale  # no gradient asked
    gscale = np.max(np.abs(want_grad)) + 1
    assert np.max(np.abs(np.asarray(grad) - want_grad)) < max(tol * 10, 1e-7) * gscale


@pytest.mark.parametrize("real", ["float64", "float32"])
def test_p2p_under_jit_matches_numpy(wj, x64, real):
    pts, q, off, _ = _cells(6, 8, real)
    near = [sorted(set(RNG.integers(0, 6, 3).tolist()) | {t}) for t in range(6)]
    near_offsets = np.concatenate([[0], np.cumsum([len(n) for n in near])]).astype(np.int64)
    near_cells = np.concatenate(near).astype(np.int32)
    phi0, grad0 = _random(len(pts), real), _random((len(pts), 3), real)
    phi, grad = jax.jit(wj.p2p)(jnp.asarray(pts), jnp.asarray(q), jnp.asarray(off),
                                jnp.asarray(near_offsets), jnp.asarray(near_cells),
                                jnp.asarray(phi0), jnp.asarray(grad0))
    want_phi, want_grad = phi0.astype(np.float64), grad0.astype(np.float64)
    P, Q = pts.astype(np.float64), q.astype(np.float64)
    for t in range(6):
        for s in near[t]:
            for j in range(off[t], off[t + 1]):
                for i in range(off[s], off[s + 1]):
                    r = P[j] - P[i]
                    dist = np.linalg.norm(r)
                    if dist > 0:
                        want_phi[j] += Q[i] / dist
                        want_grad[j] += -Q[i] * r / dist ** 3
    tol = 1e-5 if real == "float32" else 1e-13
    assert rel_err(np.asarray(phi), want_phi, axis=None) < tol
    assert rel_err(np.asarray(grad), want_grad, axis=None) < tol
    only = jax.jit(wj.p2p)(jnp.asarray(pts), jnp.asarray(q), jnp.asarray(off),
                           jnp.asarray(near_offsets), jnp.asarray(near_cells), jnp.asarray(phi0))
    assert rel_err(np.asarray(only), want_phi, axis=None) < tol


def test_int64_offsets_from_numpy_without_x64(wj):
    with jax.enable_x64(False):
        pts, q, off, ctr = _cells(4, 6, "float32")
        M = wj.p2m(pts, q, off, ctr, p=3)  # int64 NumPy offsets: passed as the same bytes
        M32 = wj.p2m(pts, q, off.astype(np.int32), ctr, p=3)
        np.testing.assert_array_equal(np.asarray(M), np.asarray(M32))


# ---- transformations ---------------------------------------------------------------------------

def test_vmap_folds_into_rows_and_sequences_the_lists(wj, x64):
    a = _random((4, 3, 64), "float64")
    y = jax.jit(jax.vmap(lambda x: wj.fwht(x, scale=0.25)))(jnp.asarray(a))
    assert rel_err(np.asarray(y), _numpy_fwht(a, 0.25)) < 1e-12
    y = jax.vmap(lambda x: wj.hadamard(x, m=12), in_axes=1, out_axes=1)(jnp.asarray(a[..., :48]))
    h = wham.hadamard_matrix(12).astype(np.float64)
    assert rel_err(np.asarray(y), reference.hadamard(a[..., :48], h)) < 1e-12
    # m2l with deltas shared by the mapped axis: broadcast along it
    p = 4
    M, d = _pairs(5, p, "complex128")
    Ms = np.stack([M, 2 * M])
    L = jax.vmap(wj.m2l, in_axes=(0, None))(jnp.asarray(Ms), jnp.asarray(d))
    want = reference.m2l(M, d, p)
    assert rel_err(np.asarray(L), np.stack([want, 2 * want])) < 1e-12
    # an accumulate form over a batch of targets: one call each
    src, tgt = np.array([0, 1, 4], np.int32), np.array([1, 0, 1], np.int32)
    T0 = _random((3, 2, (p + 1) ** 2), "complex128")
    dd = d[:3]
    T = jax.vmap(wj.m2l_accumulate, in_axes=(None, None, None, None, 0))(
        jnp.asarray(M), jnp.asarray(dd), jnp.asarray(src), jnp.asarray(tgt), jnp.asarray(T0))
    for b in range(3):
        want = reference.m2l_accumulate(M, dd, src, tgt, T0[b], p)
        assert rel_err(np.asarray(T[b]), want) < 1e-12


def test_grad_of_fwht_is_the_transform_and_matches_finite_differences(wj, x64):
    a = _random((2, 32), "float64")
    w = _random((2, 32), "float64")
    loss = lambda x: jnp.sum(w * wj.fwht(x, scale=0.5) ** 2)  # noqa: E731
    g = jax.jit(jax.grad(loss))(jnp.asarray(a))
    y = _numpy_fwht(a, 0.5)
    assert rel_err(np.asarray(g), _numpy_fwht(2 * w * y, 0.5)) < 1e-12
    e = np.zeros_like(a)
    e[1, 5] = 1e-6
    fd = (loss(jnp.asarray(a + e)) - loss(jnp.asarray(a - e))) / 2e-6
    assert abs(float(g[1, 5]) - float(fd)) < 1e-6 * (1 + abs(float(fd)))


@pytest.mark.parametrize("transpose", [False, True])
def test_grad_of_hadamard_is_the_transposed_transform(wj, x64, transpose):
    a = _random((3, 20 * 8), "float64")
    w = _random((3, 20 * 8), "float64")
    g = jax.grad(lambda x: jnp.sum(w * wj.hadamard(x, scale=0.1, m=20, transpose=transpose)))(
        jnp.asarray(a))
    h = wham.hadamard_matrix(20).astype(np.float64)
    assert rel_err(np.asarray(g), reference.hadamard(w, h, 0.1, not transpose)) < 1e-12
    # complex rows: the VJP of a real linear map is that map's transpose, unconjugated
    c = _random((2, 20 * 8), "complex128")
    vjp = jax.vjp(lambda x: wj.hadamard(x, m=20, transpose=transpose), jnp.asarray(c))[1]
    (gc,) = vjp(jnp.asarray(c))
    assert rel_err(np.asarray(gc), reference.hadamard(c, h, 1.0, not transpose)) < 1e-12


def test_shard_map_runs_each_device_on_its_shard(wj):
    from jax.sharding import PartitionSpec as P
    devices = jax.devices("gpu")
    mesh = jax.make_mesh((len(devices),), ("rows",), devices=devices)
    a = _random((2 * len(devices), 128), "float32")
    f = jax.jit(jax.shard_map(lambda x: wj.fwht(x, scale="orthonormal"), mesh=mesh,
                              in_specs=P("rows"), out_specs=P("rows")))
    y = f(jnp.asarray(a))
    assert rel_err(np.asarray(y), _numpy_fwht(a, 1 / np.sqrt(128))) < 4e-5


def test_handlers_recorded_in_a_cuda_graph(wj):
    """XLA's command buffers (CUDA graphs) with every custom call recorded, even alone:
    the results of graph replays match the plain run."""
    code = (
        "import numpy as np, jax, jax.numpy as jnp, wham.jax as wj\n"
        "x = jnp.asarray(np.random.default_rng(1).standard_normal((8, 1024)), jnp.float32)\n"
        "M = jnp.asarray(np.ones((6, 25)), jnp.complex64)\n"
        "d = jnp.asarray(np.tile([[2.0, 1.0, 0.5]], (6, 1)), jnp.float32)\n"
        "f = jax.jit(lambda x, M, d: (wj.fwht(wj.hadamard(x, scale=0.03125), scale=0.5),"
        " wj.m2l(M, d)))\n"
        "outs = [f(x, M, d) for _ in range(4)]\n"
        "for y, L in outs[1:]:\n"
        "    assert np.array_equal(np.asarray(y), np.asarray(outs[0][0]))\n"
        "    assert np.array_equal(np.asarray(L), np.asarray(outs[0][1]))\n"
        "print('ok')\n")
    env = dict(os.environ, XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") +
                                      " --xla_gpu_enable_command_buffer=FUSION,CUSTOM_CALL"
                                      " --xla_gpu_graph_min_graph_size=1").strip())
    env["PYTHONPATH"] = os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(wham.__file__)),
                                                    env.get("PYTHONPATH")] if p)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-4000:]


# ---- errors and the 64-bit rule ----------------------------------------------------------------

def test_a_bad_attribute_comes_back_as_xla_error_with_wham_message(wj):
    x = jnp.ones((1, 8), jnp.float32)
    call = jax.jit(lambda x: wj._call("fwht", jax.ShapeDtypeStruct(x.shape, x.dtype), x,
                                      vmap_method="broadcast_all", log_n=31, scale=1.0, path=0))
    with pytest.raises(Exception, match=r"wham::fwht: log_n = 31 is invalid \(valid: 0..30\)"):
        jax.block_until_ready(call(x))


def test_an_unservable_path_comes_back_as_xla_error(wj, x64):
    x = jnp.ones((1, 1 << 20), jnp.complex128)  # no block holds 2^20 complex128
    with pytest.raises(Exception, match="fwht"):
        jax.block_until_ready(jax.jit(lambda x: wj.fwht(x, path="fused"))(x))


def test_64_bit_inputs_need_x64(wj):
    with jax.enable_x64(False):
        with pytest.raises(TypeError, match="jax_enable_x64"):
            wj.fwht(np.ones((2, 8)))  # float64 NumPy: refused, not narrowed
        with pytest.raises(TypeError, match="jax_enable_x64"):
            wj.iqp_encode(np.ones((2, 3), np.float32), dtype="complex128")
        y = wj.fwht(np.ones((2, 8), np.float32))  # 32 bits need nothing
        np.testing.assert_array_equal(np.asarray(y)[:, 0], [8, 8])


def test_eager_function_on_a_tracer_names_the_jax_operator(wj):
    with pytest.raises(TypeError, match=r"wham\.jax\.fwht"):
        jax.jit(lambda x: wham.fwht(x))(jnp.ones((1, 8), jnp.float32))


def test_small_fwht_under_jit_matches_eager_and_reports_time(wj, record_property):
    """A 1 x 8 transform: jitted custom call vs the eager path (wham.fwht on a JAX array),
    each waited for. The times are reported (record_property, and printed with -s)."""
    a = _random((1, 8), "float32")
    x = jnp.asarray(a)
    jitted = jax.jit(lambda x: wj.fwht(x))
    np.testing.assert_array_equal(np.asarray(jitted(x)), np.asarray(wham.fwht(x)))

    def median_us(fn, calls=2000):
        for _ in range(200):
            jax.block_until_ready(fn(x))
        times = []
        for _ in range(calls):
            t0 = time.perf_counter_ns()
            jax.block_until_ready(fn(x))
            times.append(time.perf_counter_ns() - t0)
        return statistics.median(times) / 1e3

    jit_us, eager_us = median_us(jitted), median_us(wham.fwht)
    record_property("fwht_1x8_jit_us", jit_us)
    record_property("fwht_1x8_eager_us", eager_us)
    print(f"\nwham.jax.fwht under jax.jit, 1 x 8 float32: {jit_us:.1f} us a call; "
          f"eager wham.fwht: {eager_us:.1f} us ({jax.devices('gpu')[0].device_kind})")
