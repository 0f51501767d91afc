"""PyTorch integration on a GPU: streams (a side stream, CUDA graph capture), the custom
operators under torch.compile(fullgraph=True), autograd of fwht, torch.library.opcheck,
CuPy streams, and the PennyLane state from wham's operators."""

import numpy as np
import pytest

import wham
from wham import qml
from wham import reference

import simulators as sim
from gpu_support import Framework, rel_err, require_library

pytestmark = pytest.mark.gpu
RNG = np.random.default_rng(1952)


def test_side_stream(torch):
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.randn(64, 1 << 14, device="cuda")  # produced on s
        y = wham.fwht(x)                              # must run on s, after x
        z = y * 1.0
    s.synchronize()
    want = reference.fwht(x.cpu().numpy())
    assert rel_err(z.cpu().numpy(), want) < 4e-5


def test_cuda_graph_capture_uses_the_current_stream(torch):
    # Capture fails if wham enqueues on any stream but the capturing one.
    x = torch.randn(8, 1024, device="cuda")
    out = torch.empty_like(x)
    states = torch.empty(8, 1 << 6, dtype=torch.complex128, device="cuda")
    params = torch.randn(8, wham.iqp_num_params(6), dtype=torch.float64, device="cuda")
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        with torch.cuda.graph(g, stream=s):
            wham.fwht(x, scale=2.0, out=out)
            wham.iqp_encode(params, out=states)
    torch.cuda.current_stream().wait_stream(s)
    x.copy_(torch.randn_like(x))
    g.replay()
    torch.cuda.synchronize()
    assert rel_err(out.cpu().numpy(), reference.fwht(x.cpu().numpy(), 2.0)) < 4e-5
    assert rel_err(states.cpu().numpy(), reference.iqp_state(params.cpu().numpy(), 6)) < 4e-12


def test_other_device(torch):
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    x = torch.randn(4, 256, device="cuda:1")
    y = wham.fwht(x)
    assert y.device == x.device
    assert rel_err(y.cpu().numpy(), reference.fwht(x.cpu().numpy())) < 4e-5


def test_cupy_side_stream():
    require_library()
    cupy = Framework("cupy").mod
    with cupy.cuda.Stream(non_blocking=True) as s:
        x = cupy.random.standard_normal((64, 1 << 14), dtype=cupy.float32)
        y = wham.fwht(x)
        z = y * 1.0
    s.synchronize()
    assert rel_err(cupy.asnumpy(z), reference.fwht(cupy.asnumpy(x))) < 4e-5


def test_compile_fwht_and_iqp(torch, wt):
    def f(x, params):
        return wt.fwht(x * 2.0, scale="orthonormal") + 1.0, wt.iqp_encode(params).abs() ** 2

    compiled = torch.compile(f, fullgraph=True)
    x = torch.randn(16, 256, device="cuda")
    params = torch.randn(16, wham.iqp_num_params(8), device="cuda")
    got = compiled(x, params)
    want = f(x, params)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        torch.testing.assert_close(g, w)


def test_compile_m2l(torch, wt):
    M = torch.randn(10, 25, dtype=torch.complex128, device="cuda")
    d = torch.randn(10, 3, dtype=torch.float64, device="cuda") + 3.0
    compiled = torch.compile(lambda M, d: wt.m2l(M, d) * 2, fullgraph=True)
    torch.testing.assert_close(compiled(M, d), wt.m2l(M, d) * 2)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_fwht_gradcheck(torch, wt, dtype):
    x = torch.randn(3, 16, dtype=getattr(torch, dtype), device="cuda", requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: wt.fwht(t, scale=0.37), (x,))
    assert torch.autograd.gradgradcheck(lambda t: wt.fwht(t, scale=0.37), (x,))


def test_plain_fwht_is_differentiable(torch, wt):
    x = torch.randn(2, 32, dtype=torch.float64, device="cuda", requires_grad=True)
    y = wham.fwht(x, scale="orthonormal")  # routed through torch.ops.wham.fwht
    (y * y).sum().backward()
    torch.testing.assert_close(x.grad, 2 * x.detach())  # orthonormal: |Hx|^2 = |x|^2


def test_opcheck(torch, wt):
    opcheck = torch.library.opcheck
    x = torch.randn(4, 64, device="cuda", requires_grad=True)
    opcheck(torch.ops.wham.fwht.default, (x,), dict(scale=0.5, path="automatic"))
    params = torch.randn(3, wham.iqp_num_params(5), device="cuda")
    opcheck(torch.ops.wham.iqp_encode.default, (params,),
            dict(num_qubits=5, variant="iqp", dtype=torch.complex64, path="automatic"))
    M = torch.randn(6, 16, dtype=torch.complex128, device="cuda")
    d = torch.randn(4, 3, dtype=torch.float64, device="cuda") + 3.0
    src = torch.tensor([0, 1, 2, 5], dtype=torch.int32, device="cuda")
    tgt = torch.tensor([1, 1, 3, 0], dtype=torch.int32, device="cuda")
    L = torch.zeros(4, 16, dtype=torch.complex128, device="cuda")
    opcheck(torch.ops.wham.m2l_accumulate.default, (M, d, src, tgt, L),
            dict(p=3, method="atomic"), test_utils=("test_schema", "test_faketensor"))


@pytest.mark.parametrize("n_repeats", [1, 2])
def test_pennylane_state_on_gpu(torch, n_repeats):
    f = RNG.uniform(-2, 2, (3, 4))
    got = qml.pennylane_iqp_state(torch.as_tensor(f, device="cuda"), n_repeats=n_repeats)
    want = np.stack([sim.pennylane_iqp_embedding(row, None, n_repeats) for row in f])
    assert rel_err(got.cpu().numpy(), want) < 1e-12


def test_qiskit_params_on_gpu(torch):
    M = torch.tensor([[3, 1, 6], [1, 5, 2], [6, 2, 7]], device="cuda")
    params = qml.qiskit_iqp_params(M)
    s = wham.iqp_encode(params)
    assert rel_err(s.cpu().numpy(), sim.qiskit_iqp(M.cpu().numpy())) < 1e-12
