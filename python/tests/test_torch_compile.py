"""torch.compile(fullgraph=True) of the plain wham functions (what a newcomer writes first)
and of the registered operators, including the mutating accumulate forms under Inductor,
against eager results; and the two faces of hadamard choosing the same H_m."""

import pytest

import wham
from wham import reference

from gpu_support import rel_err

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def fresh_dynamo(torch, wt):
    torch._dynamo.reset()
    yield


def _close(torch, got, want, **tol):
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want, **tol)


def test_compile_plain_fwht(torch):
    x = torch.randn(16, 256, device="cuda")
    f = torch.compile(lambda x: wham.fwht(x, scale="orthonormal") * 2.0 + 1.0, fullgraph=True)
    _close(torch, f(x), wham.fwht(x, scale="orthonormal") * 2.0 + 1.0)


def test_compile_plain_fwht_with_out(torch):
    x = torch.randn(4, 64, device="cuda")

    def f(x, out):
        wham.fwht(x, scale=0.5, out=out)
        return out + 1.0

    out_c, out_e = torch.empty_like(x), torch.empty_like(x)
    got = torch.compile(f, fullgraph=True)(x, out_c)
    _close(torch, got, f(x, out_e))
    _close(torch, out_c, out_e)


def test_compile_plain_hadamard(torch):
    x = torch.randn(8, 5120, device="cuda", dtype=torch.float16)
    f = torch.compile(lambda t: wham.hadamard(t, scale="orthonormal", matrices="QuaRot") * 2,
                      fullgraph=True)
    _close(torch, f(x), wham.hadamard(x, scale="orthonormal", matrices="QuaRot") * 2)


def test_compile_plain_iqp_encode(torch):
    params = torch.randn(16, wham.iqp_num_params(6), device="cuda")
    f = torch.compile(lambda p: wham.iqp_encode(p).abs() ** 2, fullgraph=True)
    _close(torch, f(params), wham.iqp_encode(params).abs() ** 2)


def test_compile_iqp_encode_training_step(torch):
    # The backward formula is traced too (AOTAutograd), not only the forward.
    base = torch.randn(4, wham.iqp_num_params(5), dtype=torch.float64, device="cuda")
    target = torch.randn(4, 32, dtype=torch.complex128, device="cuda")

    def loss(p):
        return (wham.iqp_encode(p) - target).abs().pow(2).sum()

    grads = []
    for fn in (loss, torch.compile(loss, fullgraph=True)):
        p = base.clone().requires_grad_()
        fn(p).backward()
        grads.append(p.grad)
    _close(torch, grads[1], grads[0], rtol=1e-10, atol=1e-10)


def test_compile_plain_m2l(torch):
    M = torch.randn(10, 25, dtype=torch.complex128, device="cuda")
    d = torch.randn(10, 3, dtype=torch.float64, device="cuda") + 3.0
    f = torch.compile(lambda M, d: wham.m2l(M, d) * 2, fullgraph=True)
    _close(torch, f(M, d), wham.m2l(M, d) * 2)


def _problem(torch, dtype):
    real = torch.float64 if dtype == torch.complex128 else torch.float32
    g = torch.Generator(device="cuda").manual_seed(3)
    M = torch.randn(6, 16, dtype=dtype, device="cuda", generator=g)
    d = torch.randn(4, 3, dtype=real, device="cuda", generator=g) + 3.0
    src = torch.tensor([0, 1, 2, 5], dtype=torch.int32, device="cuda")
    # src != tgt in every pair: the centers form needs a non-zero displacement
    tgt = torch.tensor([1, 0, 3, 0], dtype=torch.int32, device="cuda")
    centers = torch.randn(6, 3, dtype=real, device="cuda", generator=g) * 4.0
    cls = torch.tensor([0, 1, 1, 0], dtype=torch.int32, device="cuda")
    L = torch.randn(4, 16, dtype=dtype, device="cuda", generator=g)
    return M, d, src, tgt, centers, cls, L


FORMS = {
    "m2l_accumulate": lambda f, M, d, src, tgt, centers, cls, L: f.m2l_accumulate(
        M, d, src, tgt, L, p=3, method="atomic"),
    "m2l_accumulate_centers": lambda f, M, d, src, tgt, centers, cls, L: f.m2l_accumulate_centers(
        M, centers, src, tgt, L, p=3),
    "m2l_accumulate_classes": lambda f, M, d, src, tgt, centers, cls, L: f.m2l_accumulate_classes(
        M, d[:2].contiguous(), cls, src, tgt, L, p=3),
}


@pytest.mark.parametrize("face", ["torch.ops.wham", "wham"])
@pytest.mark.parametrize("name", sorted(FORMS))
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_compile_accumulate_under_inductor(torch, name, face, dtype):
    f = torch.ops.wham if face == "torch.ops.wham" else wham
    M, d, src, tgt, centers, cls, L0 = _problem(torch, getattr(torch, dtype))

    def step(M, d, src, tgt, centers, cls, L):
        FORMS[name](f, M, d, src, tgt, centers, cls, L)
        return L * 2

    L_eager, L_compiled = L0.clone(), L0.clone()
    want = step(M, d, src, tgt, centers, cls, L_eager)
    got = torch.compile(step, fullgraph=True)(M, d, src, tgt, centers, cls, L_compiled)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "complex64" else dict(rtol=1e-12, atol=1e-12)
    _close(torch, got, want, **tol)
    _close(torch, L_compiled, L_eager, **tol)  # the mutation of the input is kept
    assert not torch.equal(L_compiled, L0)


@pytest.mark.parametrize("matrices", ["QuaRot", "quarot", "FAST_HADAMARD_TRANSFORM",
                                      "fast_hadamard_transform"])
def test_hadamard_faces_choose_the_same_matrix(torch, matrices):
    # Rows of 5120 = 40 * 2^7 = 20 * 2^8: QuaRot's set takes H_40, the other H_20, in any case.
    x = torch.randn(3, 5120, dtype=torch.float64, device="cuda")
    plain = wham.hadamard(x, scale=0.5, matrices=matrices)
    registered = torch.ops.wham.hadamard(x, scale=0.5, matrices=matrices)
    torch.testing.assert_close(registered, plain, rtol=0, atol=0)
    m = 40 if matrices.lower() == "quarot" else 20
    h = wham.hadamard_matrix(m, matrices)
    want = reference.hadamard(x.cpu().numpy(), h, 0.5)
    assert rel_err(plain.cpu().numpy(), want) < 1e-13


NEWCOMER = """
{imports}
x = torch.randn(8, 128, device="cuda")
params = torch.randn(4, wham.iqp_num_params(5), device="cuda")
f = torch.compile(lambda x, p: (wham.fwht(x) * 2, wham.iqp_encode(p).abs()), fullgraph=True)
y, s = f(x, params)
torch.testing.assert_close(y, wham.fwht(x) * 2)
torch.testing.assert_close(s, wham.iqp_encode(params).abs())
print("compiled")
"""


@pytest.mark.parametrize("imports", ["import torch, wham", "import wham, torch"])
def test_compile_plain_functions_in_a_fresh_interpreter(torch, imports):
    # What a newcomer writes first: no wham.torch_ops import, the first wham call compiled
    # (wham imported after torch registers the operators at once; before it, on first use).
    import os
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(here)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    run = subprocess.run([sys.executable, "-c", NEWCOMER.format(imports=imports)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and "compiled" in run.stdout, run.stderr[-4000:]
