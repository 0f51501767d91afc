"""wham.hadamard (rows of m * 2^k) and the 16-bit fwht on a GPU, through PyTorch: against
the NumPy reference with H_m from the library (wham.hadamard_matrix, which the C++ tests
check entry by entry against the published matrices), the model shapes, autograd (the
gradient is the transposed call), torch.compile(fullgraph=True) and opcheck."""

import numpy as np
import pytest

import wham
from wham import reference

from gpu_support import rel_err

pytestmark = pytest.mark.gpu
RNG = np.random.default_rng(2053)
# Relative error bound a row: float32 and float64 arithmetic; the 16-bit types rounded once
# (fused) or a few times (split) to u = 2^-11 (float16) or 2^-8 (bfloat16).
TOL = {"float32": 1e-5, "float64": 1e-12, "float16": 4 * 2.0 ** -11, "bfloat16": 4 * 2.0 ** -8}


def _h(m, matrices):
    return None if m == 1 else wham.hadamard_matrix(m, matrices)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [12, 96, 128, 192, 5120, 12288, 14336, 28672, 40 * 2 ** 14])
@pytest.mark.parametrize("matrices", ["fast_hadamard_transform", "quarot"])
def test_hadamard_matches_reference(torch, dtype, n, matrices):
    tokens = 3
    a = RNG.standard_normal((tokens, n))
    x = torch.tensor(a, device="cuda").to(getattr(torch, dtype))
    exact_in = x.double().cpu().numpy()  # the 16-bit input as rounded
    m, _ = wham.hadamard_factor(n, matrices=matrices)
    y = wham.hadamard(x, scale="orthonormal", matrices=matrices)
    assert y.dtype == x.dtype and y.shape == x.shape
    want = reference.hadamard(exact_in, _h(m, matrices), n ** -0.5)
    assert rel_err(y.double().cpu().numpy(), want) < TOL[dtype]
    yt = wham.hadamard(x, scale="orthonormal", matrices=matrices, transpose=True)
    want_t = reference.hadamard(exact_in, _h(m, matrices), n ** -0.5, transpose=True)
    assert rel_err(yt.double().cpu().numpy(), want_t) < TOL[dtype]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("log_n", [0, 5, 10, 15, 16, 20])
def test_fwht_16_bit(torch, dtype, log_n):
    x = torch.randn(4, 1 << log_n, device="cuda").to(getattr(torch, dtype))
    y = wham.fwht(x, scale="orthonormal")
    assert y.dtype == x.dtype
    want = reference.fwht(x.double().cpu().numpy(), 2.0 ** (-log_n / 2))
    assert rel_err(y.double().cpu().numpy(), want) < TOL[dtype]


@pytest.mark.parametrize("m", [12, 20, 28, 40])
def test_hadamard_gradcheck(torch, wt, m):
    # H_20, H_28 and H_40 of fast-hadamard-transform are not symmetric: a gradient that
    # reused the forward call would fail here.
    x = torch.randn(2, m * 4, dtype=torch.float64, device="cuda", requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: wt.hadamard(t, scale=0.37, m=m), (x,))


def test_fwht_16_bit_gradient(torch, wt):
    x = torch.randn(2, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    (wt.fwht(x, scale="orthonormal").float() ** 2).sum().backward()
    torch.testing.assert_close(x.grad.float(), 2 * x.detach().float(), rtol=0.02, atol=0.02)


def test_compile_hadamard(torch, wt):
    x = torch.randn(8, 5120, device="cuda", dtype=torch.float16)
    f = torch.compile(lambda t: wt.hadamard(t, scale="orthonormal", matrices="quarot") * 2,
                      fullgraph=True)
    torch.testing.assert_close(f(x), wt.hadamard(x, scale="orthonormal", matrices="quarot") * 2)


def test_opcheck_hadamard(torch, wt):
    x = torch.randn(4, 96, device="cuda", requires_grad=True)
    torch.library.opcheck(torch.ops.wham.hadamard.default, (x,),
                          dict(scale=0.5, m=12, matrices="fast_hadamard_transform",
                               transpose=False))
