"""Every operator from PyTorch, CuPy and JAX arrays against the NumPy references
(wham.reference), on a GPU with libwham.so. Skipped, with the reason, elsewhere."""

import numpy as np
import pytest

import wham
from wham import reference

from gpu_support import FRAMEWORKS, Framework, rel_err, require_library

pytestmark = pytest.mark.gpu
RNG = np.random.default_rng(5252)
TOL = {"float32": 1e-5, "complex64": 1e-5, "float64": 1e-12, "complex128": 1e-12}


@pytest.fixture(params=FRAMEWORKS)
def fw(request):
    require_library()
    return Framework(request.param)


def _random(shape, dtype):
    a = RNG.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("log_n", [0, 1, 5, 10, 13, 16])
def test_fwht(fw, dtype, log_n):
    a = _random((2, 3, 1 << log_n), dtype)
    x = fw.to(a)
    y = wham.fwht(x, scale="orthonormal")
    assert fw.is_native(y) and tuple(y.shape) == a.shape
    want = reference.fwht(a, 2.0 ** (-log_n / 2))
    assert rel_err(fw.back(y), want) < 4 * TOL[dtype]
    np.testing.assert_array_equal(fw.back(x), a)  # the input is untouched


@pytest.mark.parametrize("path", ["automatic", "fused", "kronecker", "baseline"])
def test_fwht_paths_out_and_in_place(fw, path):
    if fw.name == "jax":
        pytest.skip("JAX arrays are immutable: no out= / in place")
    a = _random((4, 1 << 12), "float32")
    x, out = fw.to(a), fw.to(np.zeros_like(a))
    assert wham.fwht(x, scale=0.5, out=out, path=path) is out
    assert rel_err(fw.back(out), reference.fwht(a, 0.5)) < 4e-5
    wham.fwht(x, scale=0.5, out=x, path=path)
    np.testing.assert_array_equal(fw.back(x), fw.back(out))


def test_library_errors_reach_python(fw):
    x = fw.to(_random((1, 1 << 20), "complex128"))
    # Valid arguments that this device cannot serve: no block holds 2^20 complex128.
    with pytest.raises(wham.NotSupported, match="fwht"):
        wham.fwht(x, path="fused")


@pytest.mark.parametrize("params_dtype,dtype", [("float32", "complex64"), ("float64", "complex128"),
                                                ("float32", "complex128"), ("float64", "complex64")])
@pytest.mark.parametrize("n", [1, 3, 6, 11, 14])
def test_iqp_encode(fw, params_dtype, dtype, n):
    P = wham.iqp_num_params(n)
    params = RNG.uniform(-3, 3, (5, P)).astype(params_dtype)
    s = wham.iqp_encode(fw.to(params), dtype=dtype)
    assert fw.is_native(s) and tuple(s.shape) == (5, 1 << n) and str(s.dtype).endswith(dtype)
    want = reference.iqp_state(params.astype(np.float64), n)
    assert rel_err(fw.back(s), want) < 4 * TOL[dtype]


@pytest.mark.parametrize("path", ["automatic", "product", "baseline"])
def test_iqp_z(fw, path):
    n = 9
    params = RNG.uniform(-3, 3, (3, n))
    s = wham.iqp_encode(fw.to(params), variant="iqp_z", path=path)
    assert rel_err(fw.back(s), reference.iqp_state(params, n, False)) < 4e-12


def test_iqp_single_sample_and_explicit_qubits(fw):
    params = RNG.uniform(-3, 3, 10)
    s = wham.iqp_encode(fw.to(params), num_qubits=4)
    assert tuple(s.shape) == (16,)
    assert rel_err(fw.back(s), reference.iqp_state(params, 4)) < 4e-12


def _m2l_inputs(pairs, p, dtype):
    C = (p + 1) ** 2
    M = _random((pairs, C), dtype)
    d = RNG.uniform(-1, 1, (pairs, 3))
    d = d / np.linalg.norm(d, axis=1, keepdims=True) * RNG.uniform(2, 4, (pairs, 1))
    return M, d.astype("float32" if dtype == "complex64" else "float64")


@pytest.mark.parametrize("dtype,p", [("complex128", 0), ("complex128", 1), ("complex128", 4),
                                     ("complex128", 8), ("complex128", 12), ("complex64", 4),
                                     ("complex64", 8)])
def test_m2l(fw, dtype, p):
    M, d = _m2l_inputs(12, p, dtype)
    L = wham.m2l(fw.to(M), fw.to(d))
    direct = wham.m2l(fw.to(M), fw.to(d), path="direct")
    assert fw.is_native(L) and tuple(L.shape) == M.shape
    tol = 1e-12 if dtype == "complex128" else 1e-4
    want = reference.m2l(M.astype(np.complex128), d.astype(np.float64), p)
    assert rel_err(fw.back(L), want) < tol
    assert rel_err(fw.back(direct), want) < tol


def _fmm_list(rng, pairs, nm, nl):
    src = rng.integers(-1, nm + 1, pairs).astype(np.int32)  # a few out of range on purpose
    tgt = rng.integers(-1, nl + 1, pairs).astype(np.int32)
    src = np.where(src == tgt, (src + 1) % nm, src).astype(np.int32)  # no cell onto itself (delta 0)
    order = np.argsort(tgt, kind="stable")  # grouped by target, for deterministic
    return src[order], tgt[order]


@pytest.mark.parametrize("method", ["atomic", "deterministic"])
@pytest.mark.parametrize("dtype,p", [("complex128", 3), ("complex128", 9), ("complex64", 5)])
def test_m2l_accumulate_forms(fw, method, dtype, p):
    if fw.name == "jax":
        pytest.skip("the accumulate forms write locals in place: not for immutable JAX arrays")
    nm, nl, pairs, C = 6, 5, 40, (p + 1) ** 2
    M = _random((nm, C), dtype)
    L0 = _random((nl, C), dtype)
    src, tgt = _fmm_list(RNG, pairs, nm, nl)
    real = "float32" if dtype == "complex64" else "float64"
    tol = 1e-12 if dtype == "complex128" else 1e-4
    M64 = M.astype(np.complex128)
    valid = (src >= 0) & (src < nm) & (tgt >= 0) & (tgt < nl)
    # one displacement a pair
    _, d = _m2l_inputs(pairs, p, dtype)
    L = fw.to(L0)
    assert wham.m2l_accumulate(fw.to(M), fw.to(d), fw.to(src), fw.to(tgt), L, method=method) is L
    want = reference.m2l_accumulate(M64, d.astype(np.float64), src, tgt, L0, p)
    assert rel_err(fw.back(L), want) < tol
    # centres
    centers = RNG.uniform(-8, 8, (max(nm, nl), 3)).astype(real)
    L = fw.to(L0)
    wham.m2l_accumulate_centers(fw.to(M), fw.to(centers), fw.to(src), fw.to(tgt), L, method=method)
    cs, ct = np.clip(src, 0, None), np.clip(tgt, 0, None)
    dc = np.where(valid[:, None], centers[np.minimum(ct, len(centers) - 1)]
                  - centers[np.minimum(cs, len(centers) - 1)], 1.0).astype(np.float64)
    want = reference.m2l_accumulate(M64, dc, src, tgt, L0, p)
    assert rel_err(fw.back(L), want) < tol
    # classes (and class groups for atomic)
    K = 7
    kd = _m2l_inputs(K, p, dtype)[1]
    cls = RNG.integers(0, K, pairs).astype(np.int32)
    for grouped in ([False, True] if method == "atomic" else [False]):
        s_, t_, c_ = src, tgt, cls
        if grouped:
            o = np.argsort(cls, kind="stable")
            s_, t_, c_ = src[o], tgt[o], cls[o]
        L = fw.to(L0)
        wham.m2l_accumulate_classes(fw.to(M), fw.to(kd), fw.to(c_), fw.to(s_), fw.to(t_), L,
                                    method=method, grouped=grouped)
        want = reference.m2l_accumulate(M64, kd[c_].astype(np.float64), s_, t_, L0, p)
        assert rel_err(fw.back(L), want) < tol


def test_check_interaction_list(fw):
    src, tgt = _fmm_list(RNG, 1000, 50, 40)
    cls = RNG.integers(-2, 12, 1000).astype(np.int32)
    bad = (src < 0) | (src >= 50) | (tgt < 0) | (tgt >= 40)
    assert wham.check_interaction_list(fw.to(src), fw.to(tgt), 50, 40) == int(bad.sum())
    bad_c = bad | (cls < 0) | (cls >= 10)
    got = wham.check_interaction_list(fw.to(src), fw.to(tgt), 50, 40, cls=fw.to(cls), num_classes=10)
    assert got == int(bad_c.sum())


def test_jax_inputs_stay_immutable_and_x64_is_needed():
    require_library()
    fw = Framework("jax")
    a = _random((3, 64), "float32")
    x = fw.to(a)
    y = wham.fwht(x)
    y2 = y * 2  # JAX can use the result at once (the call synchronised)
    np.testing.assert_array_equal(np.asarray(x), a)
    assert rel_err(np.asarray(y2), 2 * reference.fwht(a)) < 4e-5
