"""The FMM operators under torch.compile(fullgraph=True), through the plain wham functions and
the registered torch.ops.wham operators, against eager results, the forms that add into
their arguments under Inductor included; torch.library.opcheck of the registered operators
(schema, fake implementation). On a GPU with libwham.so and PyTorch 2.4+."""

import numpy as np
import pytest

import wham

import fmm_problems as P

pytestmark = pytest.mark.gpu
RNG = np.random.default_rng(4242)


@pytest.fixture(autouse=True)
def fresh_dynamo(torch, wt):
    torch._dynamo.reset()
    yield


def _close(torch, got, want, dtype):
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = dict(rtol=1e-4, atol=1e-4) if dtype in ("float32", "complex64") else \
        dict(rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got, want, **tol)


def _problem(torch, real):
    """Tensors for every operator: a 2^3 grid of cells of points, p = 3 expansions a cell,
    8 child-to-parent pairs."""
    cx = P.COMPLEX[real]
    g = P.Grid(RNG, 2, 5, real, empty=())
    cuda = dict(device="cuda")
    t = {k: torch.as_tensor(getattr(g, k), **cuda) for k in
         ("points", "charges", "offsets", "centers", "near_offsets", "near_cells")}
    t["M"] = torch.as_tensor(P.coefficients(RNG, 8, 3, cx), **cuda)
    t["d"] = torch.as_tensor(P.deltas(RNG, 8, real), **cuda)
    t["src"] = torch.arange(8, dtype=torch.int32, **cuda)
    t["tgt"] = t["src"] // 2
    t["parents"] = torch.as_tensor(P.coefficients(RNG, 4, 3, cx), **cuda)
    n = len(g.points)
    t["phi"] = torch.as_tensor(RNG.uniform(-1, 1, n).astype(real), **cuda)
    t["grad"] = torch.as_tensor(RNG.uniform(-1, 1, (n, 3)).astype(real), **cuda)
    return t


@pytest.mark.parametrize("real", ["float32", "float64"])
def test_compile_plain_out_of_place_operators(torch, real):
    t = _problem(torch, real)

    def f(t):
        return (wham.m2m(t["M"], t["d"]) * 2, wham.l2l(t["M"], t["d"], path="thread") + 1,
                wham.p2m(t["points"], t["charges"], t["offsets"], t["centers"], p=3).abs())

    got = torch.compile(f, fullgraph=True)(t)
    for g, w in zip(got, f(t)):
        _close(torch, g, w, real)


def test_compile_p2m_with_out(torch):
    t = _problem(torch, "float64")

    def f(t, out):
        wham.p2m(t["points"], t["charges"], t["offsets"], t["centers"], out=out)  # p from out
        return out * 2

    out_c = torch.empty(8, 16, dtype=torch.complex128, device="cuda")
    out_e = torch.empty_like(out_c)
    _close(torch, torch.compile(f, fullgraph=True)(t, out_c), f(t, out_e), "float64")
    _close(torch, out_c, out_e, "float64")


MUTATING = {
    "m2m_accumulate": (lambda f, t: f.m2m_accumulate(t["M"], t["d"], t["src"], t["tgt"],
                                                     t["parents"], p=3), ("parents",)),
    "l2l_accumulate": (lambda f, t: f.l2l_accumulate(t["M"], t["d"], t["src"], t["tgt"],
                                                     t["parents"], path="warp"), ("parents",)),
    "l2p": (lambda f, t: f.l2p(t["M"], t["centers"], t["offsets"], t["points"], t["phi"],
                               t["grad"], p=3), ("phi", "grad")),
    "l2p without gradient": (lambda f, t: f.l2p(t["M"], t["centers"], t["offsets"],
                                                t["points"], t["phi"]), ("phi",)),
    "p2p": (lambda f, t: f.p2p(t["points"], t["charges"], t["offsets"], t["near_offsets"],
                               t["near_cells"], t["phi"], t["grad"]), ("phi", "grad")),
    "p2p without gradient": (lambda f, t: f.p2p(t["points"], t["charges"], t["offsets"],
                                                 t["near_offsets"], t["near_cells"], t["phi"]),
                             ("phi",)),
}


@pytest.mark.parametrize("face", ["torch.ops.wham", "wham"])
@pytest.mark.parametrize("name", sorted(MUTATING))
@pytest.mark.parametrize("real", ["float32", "float64"])
def test_compile_mutating_operators_under_inductor(torch, name, face, real):
    f = torch.ops.wham if face == "torch.ops.wham" else wham
    call, written = MUTATING[name]
    t0 = _problem(torch, real)

    def step(t):
        call(f, t)
        return [t[k] * 2 for k in written]

    eager = {k: v.clone() for k, v in t0.items()}
    compiled = {k: v.clone() for k, v in t0.items()}
    want = step(eager)
    got = torch.compile(step, fullgraph=True)(compiled)
    for g, w in zip(got, want):
        _close(torch, g, w, real)
    for k in written:  # the mutation of the inputs is kept
        _close(torch, compiled[k], eager[k], real)
        assert not torch.equal(compiled[k], t0[k])


@pytest.mark.parametrize("real", ["float32", "float64"])
def test_opcheck(torch, real):
    t = _problem(torch, real)
    check = dict(test_utils=("test_schema", "test_faketensor"))
    opcheck = torch.library.opcheck
    ops = torch.ops.wham
    opcheck(ops.m2m.default, (t["M"], t["d"]), dict(p=3, path="automatic"), **check)
    opcheck(ops.l2l.default, (t["M"], t["d"]), dict(path="thread"), **check)
    opcheck(ops.p2m.default, (t["points"], t["charges"], t["offsets"], t["centers"]), dict(p=4),
            **check)
    opcheck(ops.m2m_accumulate.default, (t["M"], t["d"], t["src"], t["tgt"], t["parents"]),
            dict(p=3), **check)
    opcheck(ops.l2l_accumulate.default, (t["M"], t["d"], t["src"], t["tgt"], t["parents"]),
            dict(path="warp"), **check)
    opcheck(ops.l2p.default, (t["M"], t["centers"], t["offsets"], t["points"], t["phi"],
                              t["grad"]), dict(p=3), **check)
    opcheck(ops.l2p.default, (t["M"], t["centers"], t["offsets"], t["points"], t["phi"]), {},
            **check)
    opcheck(ops.p2p.default, (t["points"], t["charges"], t["offsets"], t["near_offsets"],
                              t["near_cells"], t["phi"], t["grad"]), {}, **check)


def test_registered_p2m_needs_the_order(torch):
    t = _problem(torch, "float64")
    with pytest.raises(ValueError, match="p is needed"):
        torch.ops.wham.p2m(t["points"], t["charges"], t["offsets"], t["centers"])
