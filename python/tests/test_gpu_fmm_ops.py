"""wham.m2m, l2l, m2m_accumulate, l2l_accumulate, p2m, l2p and p2p from PyTorch and CuPy
arrays against the NumPy float64 references (fmm_reference.py), float32 and float64, with
tolerances from the accuracy documented in wham/translations.cuh and wham/particles.cuh;
PyTorch's version counters and autograd refusals of the forms that write in place. On a GPU
with libwham.so; skipped, with the reason, elsewhere."""

import numpy as np
import pytest

import wham

import fmm_problems as P
import fmm_reference as F
from gpu_support import Framework, rel_err, require_library

pytestmark = pytest.mark.gpu
RNG = np.random.default_rng(9090)

# particles.md: the GPU tests allow 1e-5 in float and 1e-13 in double (L2P's gradient in
# double: 1e-11 here, against an analytic reference whose own rounding is about 1e-14).
PARTICLE_TOL = {"float32": 1e-5, "float64": 1e-13}
GRADIENT_TOL = {"float32": 1e-5, "float64": 1e-11}


@pytest.fixture(params=["torch", "cupy"])
def fw(request):
    require_library()
    return Framework(request.param)


def _translation_tol(real, p, path):
    if path == "direct":  # the O(p^4) sum: 1e-16 / 1e-7 documented
        return 1e-14 if real == "float64" else 1e-6
    return 4 * F.translation_tolerance(real, p)


# (dtype, p, path): every order range of every path, p = 0 and the highest order
TRANSLATIONS = [("complex128", p, path) for p, path in
                [(0, "automatic"), (1, "automatic"), (4, "automatic"), (4, "direct"),
                 (4, "thread"), (4, "warp"), (8, "automatic"), (8, "split"), (12, "automatic"),
                 (12, "thread"), (16, "automatic"), (20, "automatic"), (20, "warp")]] + \
               [("complex64", p, path) for p, path in
                [(0, "automatic"), (3, "automatic"), (3, "direct"), (8, "automatic"),
                 (12, "split"), (16, "automatic"), (16, "warp")]]


@pytest.mark.parametrize("name", ["m2m", "l2l"])
@pytest.mark.parametrize("dtype,p,path", TRANSLATIONS)
def test_translation(fw, name, dtype, p, path):
    real = P.REAL[dtype]
    x = P.coefficients(RNG, 9, p, dtype)
    d = P.deltas(RNG, 9, real)
    out = fw.to(np.full_like(x, np.nan))  # poisoned: every coefficient must be written
    result = getattr(wham, name)(fw.to(x), fw.to(d), path=path, out=out)
    assert result is out
    want = getattr(F, name)(x, d, p)
    got = fw.back(out)
    assert rel_err(got, want) < _translation_tol(real, p, path)
    np.testing.assert_allclose(got[0], x[0], rtol=0, atol=0 if p == 0 else
                               10 * _translation_tol(real, p, path) * np.abs(x[0]).max())
    # a new output of the inputs' framework, the leading shape kept
    y = getattr(wham, name)(fw.to(x.reshape(3, 3, -1)), fw.to(d.reshape(3, 3, 3)), p=p,
                            path=path)
    assert fw.is_native(y) and tuple(y.shape) == (3, 3, (p + 1) ** 2)
    assert rel_err(fw.back(y).reshape(9, -1), want) < _translation_tol(real, p, path)


@pytest.mark.parametrize("name", ["m2m_accumulate", "l2l_accumulate"])
@pytest.mark.parametrize("dtype,p,path", [("complex128", 0, "automatic"),
                                          ("complex128", 5, "automatic"),
                                          ("complex128", 9, "split"),
                                          ("complex128", 20, "automatic"),
                                          ("complex64", 2, "direct"),
                                          ("complex64", 7, "automatic"),
                                          ("complex64", 16, "automatic")])
def test_translation_accumulate(fw, name, dtype, p, path):
    real = P.REAL[dtype]
    rows_in, rows_out, pairs = 7, 4, 30
    x = P.coefficients(RNG, rows_in, p, dtype)
    y0 = P.coefficients(RNG, rows_out, p, dtype)
    d = P.deltas(RNG, pairs, real)
    src, tgt = P.pair_list(RNG, pairs, rows_in, rows_out)
    y = fw.to(y0)
    assert getattr(wham, name)(fw.to(x), fw.to(d), fw.to(src), fw.to(tgt), y, path=path) is y
    op = F.m2m if name == "m2m_accumulate" else F.l2l
    want = F.accumulate(op, x.astype(np.complex128), d, src, tgt, y0, p)
    # a target row sums several translations and its first value: a few roundings more
    floor = 1e-5 if real == "float32" else 1e-13
    assert rel_err(fw.back(y), want) < max(_translation_tol(real, p, path), floor)


@pytest.mark.parametrize("real,p", [("float64", 0), ("float64", 3), ("float64", 8),
                                    ("float64", 20), ("float32", 0), ("float32", 5),
                                    ("float32", 16)])
def test_p2m(fw, real, p):
    g = P.Grid(RNG, 3, 12, real)
    args = [fw.to(a) for a in (g.points, g.charges, g.offsets, g.centers)]
    out = fw.to(np.full((g.num_cells, (p + 1) ** 2), np.nan, P.COMPLEX[real]))
    assert wham.p2m(*args, out=out) is out  # p from out's rows
    want = F.p2m(g.points, g.charges, g.offsets, g.centers, p)
    w = P.degree_weights(p, g.radius)
    got = fw.back(out)
    assert rel_err(got * w, want * w) < PARTICLE_TOL[real]
    assert not np.any(got[1])  # the empty cell: zeros
    m = wham.p2m(*args, p=p)
    assert fw.is_native(m) and str(m.dtype).endswith(P.COMPLEX[real])
    assert rel_err(fw.back(m) * w, want * w) < PARTICLE_TOL[real]


@pytest.mark.parametrize("real,p", [("float64", 0), ("float64", 4), ("float64", 12),
                                    ("float64", 20), ("float32", 0), ("float32", 6),
                                    ("float32", 16)])
@pytest.mark.parametrize("with_gradient", [True, False])
def test_l2p(fw, real, p, with_gradient):
    g = P.Grid(RNG, 3, 12, real)
    # every degree's terms of order 1 at the points (particles.md's accuracy is for these)
    L = (P.coefficients(RNG, g.num_cells, p, "complex128") * P.degree_weights(p, g.radius))
    L = L.astype(P.COMPLEX[real])
    n = len(g.points)
    phi0 = RNG.uniform(-1, 1, n).astype(real)
    grad0 = RNG.uniform(-1, 1, (n, 3)).astype(real)
    phi, grad = fw.to(phi0), fw.to(grad0) if with_gradient else None
    result = wham.l2p(fw.to(L), fw.to(g.centers), fw.to(g.offsets), fw.to(g.points), phi, grad)
    assert result[0] is phi and result[1] is grad
    want_phi, want_grad = F.l2p(L, g.centers, g.offsets, g.points, p)
    scale = np.linalg.norm(want_phi)
    assert np.linalg.norm(fw.back(phi) - phi0 - want_phi) / scale < PARTICLE_TOL[real]
    if with_gradient and p > 0:
        err = np.linalg.norm(fw.back(grad) - grad0 - want_grad) / np.linalg.norm(want_grad)
        assert err < GRADIENT_TOL[real]
    if with_gradient and p == 0:  # a constant: no gradient, nothing added
        np.testing.assert_array_equal(fw.back(grad), grad0)


@pytest.mark.parametrize("real", ["float32", "float64"])
@pytest.mark.parametrize("with_gradient", [True, False])
def test_p2p(fw, real, with_gradient):
    g = P.Grid(RNG, 3, 20, real)
    near_offsets, near_cells = g.near_offsets.copy(), g.near_cells.copy()
    near_cells[0] = g.num_cells + 5  # an id out of range adds nothing
    n = len(g.points)
    phi0 = np.zeros(n, real)
    grad0 = np.zeros((n, 3), real)
    phi, grad = fw.to(phi0), fw.to(grad0) if with_gradient else None
    args = [fw.to(a) for a in (g.points, g.charges, g.offsets, near_offsets, near_cells)]
    result = wham.p2p(*args, phi, grad)
    assert result[0] is phi and result[1] is grad
    want_phi, want_grad = F.p2p(g.points, g.charges, g.offsets, near_offsets, near_cells)
    assert rel_err(fw.back(phi), want_phi, axis=None) < PARTICLE_TOL[real]
    if with_gradient:
        assert rel_err(fw.back(grad), want_grad, axis=None) < PARTICLE_TOL[real]
    # added to, not overwritten: a second call doubles the sums
    wham.p2p(*args, phi, grad)
    assert rel_err(fw.back(phi), 2 * want_phi, axis=None) < PARTICLE_TOL[real]


def test_library_checks_reach_python(fw):
    x = fw.to(P.coefficients(RNG, 3, 4, "complex128"))
    d = fw.to(P.deltas(RNG, 3, "float64"))
    with pytest.raises(wham.InvalidArgument, match="7..12 for translation_path::split"):
        wham.m2m(x, d, path="split")  # split serves orders 7..12


# ---- PyTorch: writes through the data pointer ------------------------------------------------

REFUSED = "does not support automatic differentiation"
MODIFIED = "modified by an inplace operation"


def _torch_calls(torch):
    """name -> (make the arguments, call(face, arguments), the tensors written)."""
    cuda = dict(device="cuda")
    g = P.Grid(RNG, 2, 6, "float64", empty=())
    t = {k: torch.as_tensor(getattr(g, k), **cuda) for k in
         ("points", "charges", "offsets", "centers", "near_offsets", "near_cells")}
    M = torch.as_tensor(P.coefficients(RNG, 8, 3, "complex128"), **cuda)
    d = torch.as_tensor(P.deltas(RNG, 8, "float64"), **cuda)
    src = torch.arange(8, dtype=torch.int32, device="cuda")
    tgt = src // 2

    def pairs(f, name):
        out = torch.zeros(4, 16, dtype=torch.complex128, device="cuda")
        return out, lambda: getattr(f, name)(M, d, src, tgt, out, p=3)

    def l2p(f):
        phi = torch.zeros(len(g.points), dtype=torch.float64, device="cuda")
        grad = torch.zeros(len(g.points), 3, dtype=torch.float64, device="cuda")
        return phi, lambda: f.l2p(M, t["centers"], t["offsets"], t["points"], phi, grad)

    def p2p(f):
        phi = torch.zeros(len(g.points), dtype=torch.float64, device="cuda")
        grad = torch.zeros(len(g.points), 3, dtype=torch.float64, device="cuda")
        return phi, lambda: f.p2p(t["points"], t["charges"], t["offsets"], t["near_offsets"],
                                  t["near_cells"], phi, grad)

    return {"m2m_accumulate": lambda f: pairs(f, "m2m_accumulate"),
            "l2l_accumulate": lambda f: pairs(f, "l2l_accumulate"),
            "l2p": l2p, "p2p": p2p}, M, t


@pytest.mark.parametrize("face", ["wham", "torch.ops.wham"])
@pytest.mark.parametrize("name", ["m2m_accumulate", "l2l_accumulate", "l2p", "p2p"])
def test_writes_move_the_version_counter(torch, wt, name, face):
    calls, _, _ = _torch_calls(torch)
    f = wham if face == "wham" else torch.ops.wham
    written, call = calls[name](f)
    w = torch.randn_like(written, requires_grad=True)
    loss = (w * written).real.sum()  # mul saves the written tensor for w's gradient
    before = written._version
    result = call()
    assert written._version > before and written.abs().sum() > 0
    if face == "torch.ops.wham":
        assert result is None
    with pytest.raises(RuntimeError, match=MODIFIED):
        loss.backward()


@pytest.mark.parametrize("name", ["m2m_accumulate", "l2l_accumulate", "l2p", "p2p"])
def test_writes_with_an_input_requiring_grad_are_refused(torch, wt, name):
    calls, M, t = _torch_calls(torch)
    M.requires_grad_()
    t["points"].requires_grad_()
    for f in (wham, torch.ops.wham):
        _, call = calls[name](f)
        with pytest.raises(RuntimeError, match=REFUSED):
            call()
    with torch.no_grad():
        calls[name](wham)[1]()


def test_out_moves_the_version_counter_and_is_refused_under_autograd(torch):
    x = torch.as_tensor(P.coefficients(RNG, 4, 2, "complex128"), device="cuda")
    d = torch.as_tensor(P.deltas(RNG, 4, "float64"), device="cuda")
    out = torch.empty_like(x)
    before = out._version
    assert wham.m2m(x, d, out=out) is out and out._version > before
    with pytest.raises(RuntimeError, match=REFUSED):
        wham.l2l(x.requires_grad_(), d, out=out)
