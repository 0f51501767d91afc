"""Autograd and wham's PyTorch calls on a GPU: out= refused where autograd would miss the
write, version counters moved by every write through a data pointer (so that a backward
that saved the tensor raises), iqp_encode's gradient against finite differences and
against autograd through a dense PyTorch implementation, empty batches."""

import itertools

import pytest

import wham
from wham import reference

from gpu_support import rel_err

pytestmark = pytest.mark.gpu

REFUSED = "does not support automatic differentiation"
MODIFIED = "modified by an inplace operation"


@pytest.fixture(autouse=True)
def registered(torch, wt):
    """torch.ops.wham.* registered (importing wham.torch_ops)."""


def _pairs_problem(torch, p=3, dtype="complex128"):
    """A small interaction list: multipoles [6, C], 4 pairs, locals [4, C]."""
    real = torch.float64 if dtype == "complex128" else torch.float32
    C = (p + 1) ** 2
    g = torch.Generator(device="cuda").manual_seed(7)
    M = torch.randn(6, C, dtype=getattr(torch, dtype), device="cuda", generator=g)
    d = torch.randn(4, 3, dtype=real, device="cuda", generator=g) + 3.0
    src = torch.tensor([0, 1, 2, 5], dtype=torch.int32, device="cuda")
    # src != tgt in every pair: the centers form needs a non-zero displacement
    tgt = torch.tensor([1, 0, 3, 0], dtype=torch.int32, device="cuda")
    centers = torch.randn(6, 3, dtype=real, device="cuda", generator=g) * 4.0
    cls = torch.tensor([0, 1, 1, 0], dtype=torch.int32, device="cuda")
    L = torch.zeros(4, C, dtype=getattr(torch, dtype), device="cuda")
    return M, d, src, tgt, centers, cls, L


def _writes(torch):
    """name -> (a fresh input, call(input, out)) for the operators with out= that autograd
    could differentiate."""
    return {
        "fwht": (lambda: torch.randn(4, 16, device="cuda"),
                 lambda x, out: wham.fwht(x, out=out)),
        "hadamard": (lambda: torch.randn(4, 96, device="cuda"),
                     lambda x, out: wham.hadamard(x, scale="orthonormal", out=out)),
        "iqp_encode": (lambda: torch.randn(3, wham.iqp_num_params(4), device="cuda"),
                       lambda p, out: wham.iqp_encode(p, out=out)),
    }


@pytest.mark.parametrize("name", ["fwht", "hadamard", "iqp_encode"])
def test_out_with_an_input_requiring_grad_is_refused(torch, name):
    make, call = _writes(torch)[name]
    x = make().requires_grad_()
    want = call(x.detach(), None)
    out = torch.empty_like(want)
    with pytest.raises(RuntimeError, match=REFUSED):
        call(x, out)
    with pytest.raises(RuntimeError, match=REFUSED):  # out itself requiring grad
        call(x.detach(), torch.empty_like(want).requires_grad_())
    with torch.no_grad():  # allowed, as PyTorch's own out= functions allow it
        call(x, out)
    torch.testing.assert_close(out, want)
    call(x.detach(), out)
    torch.testing.assert_close(out, want)


def test_in_place_transform_of_a_tensor_requiring_grad_is_refused(torch):
    x = torch.randn(4, 16, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match=REFUSED):
        wham.fwht(x, out=x)


def test_accumulate_with_an_input_requiring_grad_is_refused(torch):
    M, d, src, tgt, _, _, L = _pairs_problem(torch)
    with pytest.raises(RuntimeError, match=REFUSED):
        wham.m2l_accumulate(M.requires_grad_(), d, src, tgt, L)
    with pytest.raises(RuntimeError, match=REFUSED):
        torch.ops.wham.m2l_accumulate(M, d, src, tgt, L)


@pytest.mark.parametrize("name", ["fwht", "hadamard", "iqp_encode"])
def test_out_moves_the_version_counter(torch, name):
    make, call = _writes(torch)[name]
    x = make()
    out = torch.empty_like(call(x, None))
    before = out._version
    assert call(x, out) is out
    assert out._version > before


def test_in_place_transform_moves_the_version_counter(torch):
    x = torch.randn(4, 16, device="cuda")
    before = x._version
    wham.fwht(x, out=x)
    assert x._version > before


def test_backward_that_saved_an_out_tensor_raises(torch):
    a = torch.randn(4, 16, device="cuda", requires_grad=True)
    y = a.exp()  # exp saves its result for the backward
    with torch.no_grad():
        wham.fwht(torch.randn(4, 16, device="cuda"), out=y)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()


ACCUMULATE = {
    "m2l_accumulate": lambda f, M, d, src, tgt, centers, cls, L: f.m2l_accumulate(
        M, d, src, tgt, L, p=3),
    "m2l_accumulate_centers": lambda f, M, d, src, tgt, centers, cls, L: f.m2l_accumulate_centers(
        M, centers, src, tgt, L, p=3),
    "m2l_accumulate_classes": lambda f, M, d, src, tgt, centers, cls, L: f.m2l_accumulate_classes(
        M, d[:2], cls, src, tgt, L, p=3),
}


@pytest.mark.parametrize("face", ["wham", "torch.ops.wham"])
@pytest.mark.parametrize("name", sorted(ACCUMULATE))
def test_accumulate_moves_the_version_counter_and_returns_as_documented(torch, name, face):
    M, d, src, tgt, centers, cls, L = _pairs_problem(torch)
    f = wham if face == "wham" else torch.ops.wham
    w = torch.randn_like(L, requires_grad=True)
    loss = (w * L).real.sum()  # mul saves L for w's gradient
    before = L._version
    result = ACCUMULATE[name](f, M, d, src, tgt, centers, cls, L)
    # wham.* returns locals; the registered operator, which mutates it, returns nothing.
    assert result is (L if face == "wham" else None)
    assert L._version > before
    assert L.abs().sum() > 0
    with pytest.raises(RuntimeError, match=MODIFIED):
        loss.backward()


@pytest.mark.parametrize("name", sorted(ACCUMULATE))
def test_both_faces_accumulate_the_same(torch, name):
    M, d, src, tgt, centers, cls, L = _pairs_problem(torch)
    L2 = L.clone()
    ACCUMULATE[name](wham, M, d, src, tgt, centers, cls, L)
    ACCUMULATE[name](torch.ops.wham, M, d, src, tgt, centers, cls, L2)
    torch.testing.assert_close(L, L2, rtol=1e-12, atol=1e-12)


# ---- iqp_encode's gradient ----------------------------------------------------------------

@pytest.mark.parametrize("variant", ["iqp", "iqp_z"])
@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("batch", [1, 3])
def test_iqp_encode_gradcheck(torch, n, variant, batch):
    g = torch.Generator(device="cuda").manual_seed(100 * n + batch)
    params = torch.empty(batch, wham.iqp_num_params(n, variant), dtype=torch.float64,
                         device="cuda").uniform_(-2, 2, generator=g).requires_grad_()
    assert torch.autograd.gradcheck(lambda p: wham.iqp_encode(p, variant=variant), (params,))


def _dense_iqp(torch, params, n, pairs):
    """psi = 2^-n H diag(exp(i theta)) H |0> with dense matrices, differentiable by autograd."""
    x = torch.arange(1 << n, device=params.device)
    bits = ((x[:, None] >> torch.arange(n, device=params.device)) & 1).to(torch.float64)
    columns = [bits[:, i] for i in range(n)]
    if pairs:
        columns += [bits[:, i] * bits[:, j] for i, j in itertools.combinations(range(n), 2)]
    theta = params @ torch.stack(columns, dim=1).T                      # [..., 2^n]
    phase = torch.polar(torch.ones_like(theta), theta)
    parity = torch.tensor([[(-1) ** bin(j & k).count("1") for j in range(1 << n)]
                           for k in range(1 << n)], dtype=torch.complex128, device=params.device)
    return phase @ parity.T * 2.0 ** -n


@pytest.mark.parametrize("variant", ["iqp", "iqp_z"])
def test_iqp_encode_gradient_matches_a_dense_implementation(torch, variant):
    n, pairs = 4, variant == "iqp"
    g = torch.Generator(device="cuda").manual_seed(44)
    P = wham.iqp_num_params(n, variant)
    base = torch.empty(3, P, dtype=torch.float64, device="cuda").uniform_(-2, 2, generator=g)
    weights = torch.randn(3, 1 << n, dtype=torch.float64, device="cuda", generator=g)
    target = torch.randn(3, 1 << n, dtype=torch.complex128, device="cuda", generator=g)

    def loss(states):  # depends on moduli and on phases
        return (weights * states.abs() ** 2).sum() + (target.conj() * states).real.sum()

    a = base.clone().requires_grad_()
    b = base.clone().requires_grad_()
    states = wham.iqp_encode(a, variant=variant)
    dense = _dense_iqp(torch, b, n, pairs)
    torch.testing.assert_close(states, dense, rtol=1e-12, atol=1e-12)
    loss(states).backward()
    loss(dense).backward()
    torch.testing.assert_close(a.grad, b.grad, rtol=1e-10, atol=1e-10)


def test_iqp_encode_gradient_in_single_precision(torch):
    # float32 parameters, complex64 states: the same gradient to single-precision accuracy.
    g = torch.Generator(device="cuda").manual_seed(5)
    base = torch.empty(2, wham.iqp_num_params(6), dtype=torch.float64,
                       device="cuda").uniform_(-1, 1, generator=g)
    c = torch.randn(2, 64, dtype=torch.complex128, device="cuda", generator=g)
    grads = []
    for dtype in (torch.float32, torch.float64):
        p = base.to(dtype).requires_grad_()
        (c.to(torch.complex64 if dtype == torch.float32 else torch.complex128).conj()
         * wham.iqp_encode(p)).real.sum().backward()
        grads.append(p.grad.double())
    assert rel_err(grads[0].cpu().numpy(), grads[1].cpu().numpy()) < 1e-4


# ---- empty batches --------------------------------------------------------------------------

def test_empty_batches_return_empty_results(torch):
    x = torch.empty(0, 16, device="cuda")
    assert wham.fwht(x).shape == (0, 16)
    assert wham.hadamard(torch.empty(2, 0, 96, device="cuda")).shape == (2, 0, 96)
    s = wham.iqp_encode(torch.empty(0, 6, device="cuda"))
    assert s.shape == (0, 8) and s.dtype == torch.complex64
    p = torch.empty(0, 6, dtype=torch.float64, device="cuda", requires_grad=True)
    wham.iqp_encode(p).abs().sum().backward()
    assert p.grad.shape == (0, 6)


def test_reference_check_of_the_routed_fwht(torch):
    # The route through torch.ops.wham (an input requiring grad) computes what the direct one does.
    x = torch.randn(3, 64, dtype=torch.float64, device="cuda", requires_grad=True)
    y = wham.fwht(x, scale=0.5)
    assert y.requires_grad
    assert rel_err(y.detach().cpu().numpy(), reference.fwht(x.detach().cpu().numpy(), 0.5)) < 1e-13


def test_opcheck_iqp_encode_with_its_gradient(torch):
    # Schema, fake implementation, and the autograd formula traced by AOTAutograd.
    params = torch.randn(3, wham.iqp_num_params(4), dtype=torch.float64, device="cuda",
                         requires_grad=True)
    torch.library.opcheck(torch.ops.wham.iqp_encode.default, (params,), dict(num_qubits=4))
    z = torch.randn(2, 5, dtype=torch.float64, device="cuda", requires_grad=True)
    torch.library.opcheck(torch.ops.wham.iqp_encode.default, (z,), dict(variant="iqp_z"))
