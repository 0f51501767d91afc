"""wham's operators as PyTorch custom operators (torch.ops.wham.*), for torch.compile and
autograd. Needs PyTorch 2.4 or newer (torch.library.custom_op); imported only on demand.

    import wham.torch_ops as wt
    y = wt.fwht(x, "orthonormal")          # differentiable; traced by torch.compile(fullgraph=True)
    s = wt.iqp_encode(params)              # [..., 2^n] complex

Each operator has a fake (meta) implementation giving shapes and dtypes, so that
torch.compile and torch.export trace through it; the real one calls libwham.so on the
tensor's current stream. fwht has autograd: the transform is symmetric, so the gradient
is the same transform of the incoming gradient with the same scale; hadamard's gradient is
the transposed call (H_m need not be symmetric). The other operators
are not differentiable here. The accumulate forms mutate `locals` (declared to torch with
mutates_args) and return nothing.

The plain functions of `wham` also take torch tensors; use these inside torch.compile
(the plain ones read data pointers, which dynamo cannot trace) and where autograd matters.
"""


import torch

from . import _m2l as m2l_ops, ops

Tensor = torch.Tensor


def _contiguous(t):
    return t if t.is_contiguous() else t.contiguous()


# ---- fwht -----------------------------------------------------------------------------

@torch.library.custom_op("wham::fwht", mutates_args=())
def _fwht(x: Tensor, scale: float, path: str) -> Tensor:
    x = _contiguous(x)
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    ops.fwht(x, scale, out=out, path=path)
    return out


@_fwht.register_fake
def _(x, scale, path):
    n = x.shape[-1] if x.dim() else 0
    torch._check(x.dim() >= 1, lambda: "wham::fwht: x needs at least one dimension")
    if isinstance(n, int) and (n < 1 or n & (n - 1)):
        raise ValueError(f"wham::fwht: the last dimension of x is {n}, not a power of two")
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _fwht_setup(ctx, inputs, output):
    _, ctx.scale, ctx.path = inputs


def _fwht_backward(ctx, grad):
    # d(scale * H x) / dx applied to grad: H is real and symmetric, so H^T grad = H grad.
    return _fwht(grad, ctx.scale, ctx.path), None, None


_fwht.register_autograd(_fwht_backward, setup_context=_fwht_setup)


def fwht(x, scale=1.0, path="automatic"):
    """torch.ops.wham.fwht: the batched Walsh-Hadamard transform of x's rows (wham.fwht),
    out of place, differentiable. scale: a number or "orthonormal"."""
    if isinstance(scale, str):
        if scale != "orthonormal":
            raise ValueError(f"wham.torch_ops.fwht: scale = {scale!r} (a number or 'orthonormal')")
        scale = float(x.shape[-1]) ** -0.5
    return _fwht(x, float(scale), path)


# ---- hadamard (rows of m * 2^k) ---------------------------------------------------------

@torch.library.custom_op("wham::hadamard", mutates_args=())
def _hadamard(x: Tensor, scale: float, m: int, matrices: str, transpose: bool) -> Tensor:
    x = _contiguous(x)
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    ops.hadamard(x, scale, out=out, m=m, matrices=matrices, transpose=transpose)
    return out


@_hadamard.register_fake
def _(x, scale, m, matrices, transpose):
    torch._check(x.dim() >= 1, lambda: "wham::hadamard: x needs at least one dimension")
    n = x.shape[-1]
    if isinstance(n, int):
        ops.hadamard_factor(n, m, matrices)
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _hadamard_setup(ctx, inputs, output):
    _, ctx.scale, ctx.m, ctx.matrices, ctx.transpose = inputs


def _hadamard_backward(ctx, grad):
    # The adjoint of scale * (H_m (x) H) is scale * (H_m^T (x) H): the transposed call.
    return _hadamard(grad, ctx.scale, ctx.m, ctx.matrices, not ctx.transpose), None, None, None, None


_hadamard.register_autograd(_hadamard_backward, setup_context=_hadamard_setup)


def hadamard(x, scale=1.0, m=None, matrices="fast_hadamard_transform", transpose=False):
    """torch.ops.wham.hadamard: the transform of x's rows of m * 2^k by H_m (x) H_(2^k)
    (wham.hadamard), out of place, differentiable (the gradient is the transposed call).
    scale: a number or "orthonormal"; m: None (inferred, wham.ops.hadamard_factor) or the
    order."""
    n = x.shape[-1]
    if m is None:
        m, _ = ops.hadamard_factor(n, None, matrices)
    if isinstance(scale, str):
        if scale != "orthonormal":
            raise ValueError(f"wham.torch_ops.hadamard: scale = {scale!r} (a number or 'orthonormal')")
        scale = float(n) ** -0.5
    return _hadamard(x, float(scale), int(m), matrices, bool(transpose))


# ---- iqp_encode -------------------------------------------------------------------------

@torch.library.custom_op("wham::iqp_encode", mutates_args=())
def _iqp_encode(params: Tensor, num_qubits: int, variant: str, complex128: bool,
                path: str) -> Tensor:
    return ops.iqp_encode(_contiguous(params), num_qubits, variant,
                          dtype="complex128" if complex128 else "complex64", path=path)


@_iqp_encode.register_fake
def _(params, num_qubits, variant, complex128, path):
    shape = tuple(params.shape[:-1]) + (1 << num_qubits,)
    return params.new_empty(shape, dtype=torch.complex128 if complex128 else torch.complex64)


def iqp_encode(params, num_qubits=None, variant="iqp", dtype=None, path="automatic"):
    """torch.ops.wham.iqp_encode: IQP states of params [..., num_params] (wham.iqp_encode).
    dtype: torch.complex64 / torch.complex128 (default from params: float32 -> complex64)."""
    v = ops._choice("iqp_encode", "variant", variant, ops.IQP_VARIANTS)
    if num_qubits is None:
        num_qubits = ops._qubits_from_params("iqp_encode", params.shape[-1], v)
        if num_qubits is None:
            raise ValueError(f"wham.iqp_encode: params has {params.shape[-1]} values a sample, "
                             f"iqp_num_params(n, {variant!r}) for no n in 1..30")
    if dtype is None:
        wide = params.dtype == torch.float64
    else:
        wide = ops.dtype_name(dtype) == "complex128"
    return _iqp_encode(params, int(num_qubits), variant, wide, path)


# ---- m2l and the accumulate forms --------------------------------------------------------

def _order(t):
    return ops._order_from_coeffs("m2l", "multipoles", t.shape[-1], None,
                                  "float32" if t.dtype == torch.complex64 else "float64")


@torch.library.custom_op("wham::m2l", mutates_args=())
def _m2l(multipoles: Tensor, deltas: Tensor, p: int, path: str) -> Tensor:
    return m2l_ops.m2l(_contiguous(multipoles), _contiguous(deltas), p, path=path)


@_m2l.register_fake
def _(multipoles, deltas, p, path):
    return torch.empty_like(multipoles, memory_format=torch.contiguous_format)


def m2l(multipoles, deltas, p=None, path="automatic"):
    """torch.ops.wham.m2l (wham.m2l): local expansions of [..., (p+1)^2] multipoles."""
    return _m2l(multipoles, deltas, _order(multipoles) if p is None else int(p), path)


@torch.library.custom_op("wham::m2l_accumulate", mutates_args=("locals",))
def _m2l_accumulate(multipoles: Tensor, deltas: Tensor, src: Tensor, tgt: Tensor,
                    locals: Tensor, p: int, method: str) -> None:
    m2l_ops.m2l_accumulate(multipoles, deltas, src, tgt, locals, p, method)


@_m2l_accumulate.register_fake
def _(multipoles, deltas, src, tgt, locals, p, method):
    return None


@torch.library.custom_op("wham::m2l_accumulate_centers", mutates_args=("locals",))
def _m2l_accumulate_centers(multipoles: Tensor, centers: Tensor, src: Tensor, tgt: Tensor,
                            locals: Tensor, p: int, method: str) -> None:
    m2l_ops.m2l_accumulate_centers(multipoles, centers, src, tgt, locals, p, method)


@_m2l_accumulate_centers.register_fake
def _(multipoles, centers, src, tgt, locals, p, method):
    return None


@torch.library.custom_op("wham::m2l_accumulate_classes", mutates_args=("locals",))
def _m2l_accumulate_classes(multipoles: Tensor, class_deltas: Tensor, cls: Tensor, src: Tensor,
                            tgt: Tensor, locals: Tensor, p: int, method: str,
                            grouped: bool) -> None:
    m2l_ops.m2l_accumulate_classes(multipoles, class_deltas, cls, src, tgt, locals, p, method,
                               grouped)


@_m2l_accumulate_classes.register_fake
def _(multipoles, class_deltas, cls, src, tgt, locals, p, method, grouped):
    return None


def m2l_accumulate(multipoles, deltas, src, tgt, locals, p=None, method="automatic"):
    """torch.ops.wham.m2l_accumulate: locals[tgt[i]] += M2L(multipoles[src[i]], deltas[i]),
    in place on locals (wham.m2l_accumulate). Returns None."""
    _m2l_accumulate(multipoles, deltas, src, tgt, locals,
                    _order(multipoles) if p is None else int(p), method)


def m2l_accumulate_centers(multipoles, centers, src, tgt, locals, p=None, method="automatic"):
    """torch.ops.wham.m2l_accumulate_centers, in place on locals. Returns None."""
    _m2l_accumulate_centers(multipoles, centers, src, tgt, locals,
                            _order(multipoles) if p is None else int(p), method)


def m2l_accumulate_classes(multipoles, class_deltas, cls, src, tgt, locals, p=None,
                           method="automatic", grouped=False):
    """torch.ops.wham.m2l_accumulate_classes, in place on locals. Returns None."""
    _m2l_accumulate_classes(multipoles, class_deltas, cls, src, tgt, locals,
                            _order(multipoles) if p is None else int(p), method, bool(grouped))


__all__ = ["fwht", "hadamard", "iqp_encode", "m2l", "m2l_accumulate", "m2l_accumulate_centers",
           "m2l_accumulate_classes"]
