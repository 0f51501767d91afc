"""wham's operators registered with PyTorch (torch.ops.wham.*), for torch.compile and autograd.
Needs PyTorch 2.4 or newer (torch.library.custom_op). `wham` imports this module itself the
first time a PyTorch call needs it (autograd, or torch.compile tracing).

There is one Python face: `wham.torch_ops.fwht` IS `wham.fwht` (likewise hadamard,
iqp_encode, m2l and its accumulate forms, m2m, l2l, their accumulate forms, p2m, l2p, p2p). Given PyTorch tensors it runs directly on the
library when nothing needs more, and through torch.ops.wham.* when autograd needs the result
or torch.compile is tracing, so `torch.compile(wham.fwht, fullgraph=True)` works.

torch.ops.wham.* are the low-level registered operators. They take the same arguments in the
same order under the same names, options keyword-only, with three differences:
- no `out=` (a registered operator returns new tensors or mutates declared arguments);
- `scale` is a float (the public functions turn "orthonormal" into 1/sqrt(n));
- the operators that add into an argument (m2l_accumulate, _centers, _classes,
  m2m_accumulate, l2l_accumulate, l2p, p2p) return None: an operator that mutates an
  argument may not also return it; the public functions return what they added into
  (locals, parents, children; l2p and p2p: (potential, gradient));
- p2m's order p must be given (the public function also reads it from out=).

Autograd: fwht is its own adjoint (the gradient is the same transform of the incoming
gradient, same scale); hadamard's gradient is the transposed call (H_m need not be
symmetric); iqp_encode is differentiable in its parameters (see `_iqp_backward`). The FMM
operators (m2l, m2m, l2l, p2m, l2p, p2p and the accumulate forms) are not differentiable.

The mutating operators are CompositeImplicitAutograd: on real tensors in eager mode they
add into their target in place on the library; under tracing (torch.compile, FakeTensor,
functionalization) they become `locals.copy_(wham::m2l_accumulate*_functional(...))` (for
l2p and p2p a copy into potential and one into gradient), an out-of-place operator and a
copy, which Inductor compiles. (A mutating custom operator on
complex tensors reaches Inductor as auto_functionalized_v2, which Inductor leaves in place
for complex inputs and then fails on.)
"""

from typing import Optional

import torch

from . import _common, ops
from . import _torch_fmm  # noqa: F401  (registers the FMM operators)
from ._torch_common import Tensor, _contiguous, _check_dtype, _static
from .ops import fwht, hadamard, iqp_encode
from ._m2l import m2l, m2l_accumulate, m2l_accumulate_centers, m2l_accumulate_classes
from ._fmm_ops import m2m, l2l, m2m_accumulate, l2l_accumulate, p2m, l2p, p2p

_common._torch_tensor = torch.Tensor

_TRANSFORM_DTYPES = ops._FLOATS + ops._COMPLEX + ops._HALVES


# ---- fwht -----------------------------------------------------------------------------

@torch.library.custom_op("wham::fwht", mutates_args=())
def _fwht_op(x: Tensor, *, scale: float = 1.0, path: str = "automatic") -> Tensor:
    x = _contiguous(x)
    return ops._fwht(x, scale, path, torch.empty_like(x, memory_format=torch.contiguous_format))


@_fwht_op.register_fake
def _(x, *, scale=1.0, path="automatic"):
    torch._check(x.dim() >= 1, lambda: "wham.fwht: x must have at least one dimension")
    _check_dtype("fwht", "x", x, _TRANSFORM_DTYPES)
    if _static(x.shape[-1]) is not None:
        ops.fwht_log_n(x.shape[-1])
    ops._choice("fwht", "path", path, ops.FWHT_PATHS)
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _fwht_setup(ctx, inputs, keyword_only_inputs, output):
    ctx.scale = keyword_only_inputs.get("scale", 1.0)
    ctx.path = keyword_only_inputs.get("path", "automatic")


def _fwht_backward(ctx, grad):
    # d(scale * H x)/dx applied to grad: H is real and symmetric, so H^T grad = H grad.
    return _fwht_op(grad, scale=ctx.scale, path=ctx.path)


_fwht_op.register_autograd(_fwht_backward, setup_context=_fwht_setup)


# ---- hadamard (rows of m * 2^k) ---------------------------------------------------------

@torch.library.custom_op("wham::hadamard", mutates_args=())
def _hadamard_op(x: Tensor, *, scale: float = 1.0, m: Optional[int] = None,
              matrices: str = "fast_hadamard_transform", transpose: bool = False) -> Tensor:
    x = _contiguous(x)
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    return ops._hadamard(x, scale, m, matrices, transpose, out)


@_hadamard_op.register_fake
def _(x, *, scale=1.0, m=None, matrices="fast_hadamard_transform", transpose=False):
    torch._check(x.dim() >= 1, lambda: "wham.hadamard: x must have at least one dimension")
    _check_dtype("hadamard", "x", x, _TRANSFORM_DTYPES)
    if _static(x.shape[-1]) is not None:
        ops.hadamard_factor(x.shape[-1], m, matrices)  # the same decision as the real call
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _hadamard_setup(ctx, inputs, keyword_only_inputs, output):
    ctx.options = dict(keyword_only_inputs)


def _hadamard_backward(ctx, grad):
    # The adjoint of scale * (H_m (x) H) is scale * (H_m^T (x) H): the transposed call.
    options = dict(ctx.options)
    options["transpose"] = not options.get("transpose", False)
    return _hadamard_op(grad, **options)


_hadamard_op.register_autograd(_hadamard_backward, setup_context=_hadamard_setup)


# ---- iqp_encode -------------------------------------------------------------------------

def _iqp_state_dtype(params, dtype):
    if dtype is None:
        return torch.complex128 if params.dtype == torch.float64 else torch.complex64
    if dtype not in (torch.complex64, torch.complex128):
        raise TypeError(f"wham.iqp_encode: dtype = {dtype} is invalid (complex64 or complex128)")
    return dtype


@torch.library.custom_op("wham::iqp_encode", mutates_args=())
def _iqp_encode_op(params: Tensor, *, num_qubits: Optional[int] = None, variant: str = "iqp",
                dtype: Optional[torch.dtype] = None, path: str = "automatic") -> Tensor:
    return ops._iqp_encode(_contiguous(params), num_qubits, variant,
                           _iqp_state_dtype(params, dtype), path, None)


@_iqp_encode_op.register_fake
def _(params, *, num_qubits=None, variant="iqp", dtype=None, path="automatic"):
    torch._check(params.dim() >= 1,
                 lambda: "wham.iqp_encode: params must have at least one dimension")
    _check_dtype("iqp_encode", "params", params, ops._FLOATS)
    n = ops.iqp_qubits("iqp_encode", int(params.shape[-1]), num_qubits, variant)
    if ops._choice("iqp_encode", "path", path, ops.IQP_PATHS) == 4 and \
            ops._choice("iqp_encode", "variant", variant, ops.IQP_VARIANTS) != 1:
        raise ValueError("wham.iqp_encode: path 'product' serves variant 'iqp_z' only")
    return params.new_empty(tuple(params.shape[:-1]) + (1 << n,),
                            dtype=_iqp_state_dtype(params, dtype))


def _iqp_setup(ctx, inputs, keyword_only_inputs, output):
    (params,) = inputs
    ctx.save_for_backward(output)
    ctx.pairs = ops._choice("iqp_encode", "variant", keyword_only_inputs.get("variant", "iqp"),
                            ops.IQP_VARIANTS) == 0
    ctx.params_dtype = params.dtype


def _iqp_backward(ctx, grad):
    """The vector-Jacobian product of psi = 2^-n H phi, phi_x = exp(i theta(x)),
    theta(x) = sum_i a_i x_i + sum_{i<j} J_ij x_i x_j (x_i = bit i of x, H = the unscaled
    Walsh-Hadamard matrix, real and symmetric, H H = 2^n).

    PyTorch's gradient of a complex tensor z = u + iv for a real loss L is
    dL/du + i dL/dv. Then
      dL/dphi   = 2^-n H grad                                  (H real: its transpose)
      dL/dtheta = Re(conj(dL/dphi) * i phi) = Im(conj(phi) * dL/dphi)
    with phi = H psi (no phases are recomputed). The parameters are sums of dL/dtheta over
    bits: with d = dL/dtheta and W = H d (W_k = sum_x d_x (-1)^popcount(x & k)), since
    (-1)^x_i = 1 - 2 x_i,
      dL/da_i  = sum_x d_x x_i     = (W_0 - W_{2^i}) / 2
      dL/dJ_ij = sum_x d_x x_i x_j = (W_0 - W_{2^i} - W_{2^j} + W_{2^i + 2^j}) / 4.
    Three transforms of a row, no dense Jacobian."""
    (psi,) = ctx.saved_tensors
    size = psi.shape[-1]
    n = int(size).bit_length() - 1
    grad = grad.to(psi.dtype)
    phi = _fwht_op(psi, scale=1.0)
    g_phi = _fwht_op(grad, scale=2.0 ** -n)
    d = (phi.conj() * g_phi).imag.contiguous()
    w = _fwht_op(d, scale=1.0)
    device = w.device
    single = torch.tensor([1 << i for i in range(n)], dtype=torch.int64, device=device)
    w0 = w[..., :1]
    w_single = torch.index_select(w, -1, single)
    result = (w0 - w_single) * 0.5
    if ctx.pairs and n > 1:
        first = [i for i in range(n) for j in range(i + 1, n)]
        second = [j for i in range(n) for j in range(i + 1, n)]
        both = torch.tensor([(1 << i) | (1 << j) for i, j in zip(first, second)],
                            dtype=torch.int64, device=device)
        wi = torch.index_select(w, -1, torch.tensor([1 << i for i in first], dtype=torch.int64,
                                                    device=device))
        wj = torch.index_select(w, -1, torch.tensor([1 << j for j in second], dtype=torch.int64,
                                                    device=device))
        pair = (w0 - wi - wj + torch.index_select(w, -1, both)) * 0.25
        result = torch.cat([result, pair], dim=-1)
    return result.to(ctx.params_dtype)


_iqp_encode_op.register_autograd(_iqp_backward, setup_context=_iqp_setup)


__all__ = ["fwht", "hadamard", "iqp_encode", "m2l", "m2l_accumulate", "m2l_accumulate_centers",
           "m2l_accumulate_classes", "m2m", "l2l", "m2m_accumulate", "l2l_accumulate", "p2m",
           "l2p", "p2p"]
