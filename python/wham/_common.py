"""What every operator module shares: option tables, argument checks, output allocation and
the PyTorch routing (torch.ops.wham when torch.compile traces or autograd needs the result,
version counters of tensors written through their data pointer).

Imports only the array plumbing (_arrays); the operator modules (ops, _m2l, _fmm_ops) and
the PyTorch registrations (torch_ops, _torch_fmm) import this one, never the other way
round. torch_ops is reached through `register_torch_ops`, which the package sets.
"""

import math
import operator

from . import _arrays
from ._arrays import inspect, check_dtype, check_aligned, check_writable, check_same_device

FWHT_PATHS = {"automatic": 0, "fused": 1, "kronecker": 2, "baseline": 3}
IQP_VARIANTS = {"iqp": 0, "iqp_z": 1}
IQP_PATHS = {"automatic": 0, "fused": 1, "kronecker": 2, "baseline": 3, "product": 4}
M2L_PATHS = {"automatic": 0, "thread": 1, "warp": 2, "split": 3, "direct": 4, "tensor": 5}
ACCUMULATE_METHODS = {"automatic": 0, "atomic": 1, "deterministic": 2}
TRANSLATION_PATHS = {"automatic": 0, "direct": 1, "thread": 2, "split": 3, "warp": 4}
M2L_MAX_ORDER = {"float32": 16, "float64": 20}
MAX_CLASSES = 1024
MAX_ROWS = 1 << 31
# wham/particles.cuh's ranges: cell ids are int32, byte counts fit int64.
MAX_CELLS = (1 << 31) - 1
MAX_POINTS = {"float32": ((1 << 63) - 1) // 12, "float64": ((1 << 63) - 1) // 24}
MAX_NEAR = ((1 << 63) - 1) // 4
MAX_PAIRS = 0x7fffffff * 32

_FLOATS = ("float32", "float64")
_COMPLEX = ("complex64", "complex128")
_HALVES = ("float16", "bfloat16")
_SUFFIX = {"float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128",
           "float16": "f16", "bfloat16": "bf16"}
HADAMARD_MATRICES = {"fast_hadamard_transform": 0, "quarot": 1}
HADAMARD_ORDERS = (12, 20, 28, 40)


def _choice(function, name, value, table):
    key = value.lower() if isinstance(value, str) else None
    if key in table:
        return table[key]
    raise ValueError(f"wham.{function}: {name} = {value!r} is invalid (valid: "
                     + ", ".join(repr(k) for k in table) + ")")


def _int(function, name, value, lo, hi):
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = value.__index__()
        except AttributeError:
            raise TypeError(f"wham.{function}: {name} must be an integer; got {value!r}") from None
    if not lo <= value <= hi:
        raise ValueError(f"wham.{function}: {name} = {value} is invalid (valid: {lo}..{hi})")
    return value


def dtype_name(dtype):
    """'complex64', ... from a string, a NumPy/CuPy/JAX dtype or scalar type, or a torch.dtype."""
    if isinstance(dtype, str):
        return dtype
    text = str(dtype)
    if text.startswith("torch."):
        return text[6:]
    name = getattr(dtype, "name", None)  # numpy.dtype
    if isinstance(name, str):
        return name
    import numpy
    return numpy.dtype(dtype).name


def _output(function, launch, out, shape, dtype, inputs):
    """The output `Array`: `out` checked (shape, dtype, writable, no overlap), or a new one."""
    if out is None:
        return launch.empty(function, "out", shape, dtype)
    o = inspect(out, function, "out", launch.stream)
    check_dtype(function, o, (dtype,))
    if tuple(o.shape) != tuple(shape):
        raise ValueError(f"wham.{function}: out has shape {tuple(o.shape)}; expected {tuple(shape)}")
    check_writable(function, o)
    check_aligned(function, o)
    check_same_device(function, inputs + [o])
    for a in inputs:
        if _arrays.overlap(o, a):
            raise ValueError(f"wham.{function}: out overlaps {a.name}; pass a separate buffer")
    return o


# ---- PyTorch: routing, out= and version counters -------------------------------------------

# torch.Tensor once wham.torch_ops is imported: then the test below is an isinstance, which
# torch.compile traces without reading type names.
_torch_tensor = None


def _is_torch(x):
    if _torch_tensor is not None:
        return isinstance(x, _torch_tensor)
    return _arrays.framework_of(x) == "torch"


def _torch_route(function, inputs, written=None, written_name="out", differentiable=True):
    """For PyTorch tensors: the torch module when the call must go through torch.ops.wham
    (torch.compile is tracing, or autograd needs the result), else None (run directly).
    Refuses a write into `written` that autograd would not see, as PyTorch's out= ops do."""
    try:
        import torch
    except ImportError:  # a tensor-like object that only names torch as its module
        return None
    grad = torch.is_grad_enabled()
    if grad and written is not None:
        for t in tuple(inputs) + (written,):
            if getattr(t, "requires_grad", False):
                raise RuntimeError(
                    f"wham.{function}: the write into {written_name} does not support automatic "
                    "differentiation, but an argument requires grad (PyTorch's out= functions "
                    "refuse this too); "
                    + ("call it without out= (then it is differentiable) or under "
                       "torch.no_grad()" if differentiable else
                       "it is not differentiable: call it under torch.no_grad() or with "
                       "detached tensors"))
    if torch.compiler.is_compiling():
        return _registered(torch)
    if differentiable and grad and written is None:
        for t in inputs:
            if getattr(t, "requires_grad", False):
                return _registered(torch)
    return None


# Imports wham.torch_ops (which registers torch.ops.wham.*). The package's __init__ sets
# it, so that this module imports none of the operator modules.
register_torch_ops = None


def _registered(torch):
    """torch, once torch.ops.wham.* are registered (wham/torch_ops.py)."""
    register_torch_ops()
    return torch


def _index(value):
    """An optional integer option as the int a registered operator takes (None stays None)."""
    return None if value is None else operator.index(value)


def _row(x):
    """The row length of a tensor (0 for a 0-d one, which the operators refuse)."""
    return x.shape[-1] if len(x.shape) else 0


def _bump_version(t):
    """Tells autograd that `t` was written in place (through its data pointer), so that a
    backward that saved it raises instead of using the new values."""
    try:
        import torch
    except ImportError:
        return
    # Only tensors carry a version counter: a DLPack producer or a tensor-like object that
    # wraps one has none to move. Inference tensors have none either.
    if not isinstance(t, torch.Tensor) or t.is_inference():
        return
    increment = getattr(torch.autograd.graph, "increment_version", None)
    if increment is not None:
        increment(t)
    else:
        torch._C._increment_version(t)


def _into(result, out):
    """`result` (from torch.ops.wham) copied into `out` when given; the traced form of out=."""
    if out is None:
        return result
    out.copy_(result)
    return out



def _order_from_coeffs(function, name, count, p, real):
    q = math.isqrt(count) - 1
    if count < 1 or (q + 1) * (q + 1) != count:
        raise ValueError(f"wham.{function}: the last dimension of {name} is {count}, not a "
                         "coefficient count (p+1)^2")
    if p is not None and _int(function, "p", p, 0, 46339) != q:
        raise ValueError(f"wham.{function}: p = {p} needs {(p + 1) ** 2} coefficients a row; "
                         f"{name} has {count}")
    _int(function, "p", q, 0, M2L_MAX_ORDER[real])
    return q


# ---- rows of expansions and interaction lists ----------------------------------------------

def _rows(function, a, width, what):
    """Rows of `a` read as [rows][width] (a C-contiguous [..., width] array)."""
    if not a.shape or a.shape[-1] != width:
        raise ValueError(f"wham.{function}: {a.name} must have shape [..., {width}] ({what}); "
                         f"got {tuple(a.shape)}")
    return a.size // width


def _expansions(function, x, name, p, shape):
    """An array of expansions (rows of (p+1)^2 complex coefficients): its Array, the
    coefficients a row and the order (p checked against the row, or inferred from it)."""
    a = inspect(x, function, name)
    check_dtype(function, a, _COMPLEX)
    if not a.shape:
        raise ValueError(f"wham.{function}: {name} must have shape {shape}")
    C = a.shape[-1]
    return a, C, _order_from_coeffs(function, name, C, p, _arrays.REAL_OF[a.dtype])


def _geometry(function, a, coeff_dtype):
    """Coordinates that go with coefficients of `coeff_dtype`: its real type, aligned."""
    check_dtype(function, a, (_arrays.REAL_OF[coeff_dtype],))
    check_aligned(function, a)


def _pair_list(f, source, src, tgt, target, p, names, extra):
    """The checks every accumulate form shares: source expansions (rows read), int32 src
    and tgt of one length, target expansions (rows added to; writable, apart from every
    input). names = (source name, target name). Returns the Arrays and sizes:
    (source, src, tgt, target, p, num_pairs, source rows, target rows, every array)."""
    in_name, out_name = names
    ma, C, p = _expansions(f, source, in_name, p, f"[num_{in_name}, (p+1)^2]")
    la = inspect(target, f, out_name)
    check_dtype(f, la, (ma.dtype,))
    num_in = _rows(f, ma, C, "(p+1)^2 coefficients a row")
    num_out = _rows(f, la, C, f"(p+1)^2 coefficients a row, as {in_name}")
    sa = inspect(src, f, "src")
    ta = inspect(tgt, f, "tgt")
    for a in (sa, ta):
        check_dtype(f, a, ("int32",))
        if len(a.shape) != 1:
            raise ValueError(f"wham.{f}: {a.name} must be 1-D [num_pairs]; got shape {tuple(a.shape)}")
    num_pairs = sa.shape[0]
    if ta.shape[0] != num_pairs:
        raise ValueError(f"wham.{f}: src has {num_pairs} pairs, tgt {ta.shape[0]}")
    _int(f, "num_pairs", num_pairs, 0, MAX_PAIRS)
    if num_pairs:
        _int(f, f"rows of {in_name}", num_in, 1, MAX_ROWS)
        _int(f, f"rows of {out_name}", num_out, 1, MAX_ROWS)
    check_writable(f, la)
    arrays = [ma, sa, ta] + extra + [la]
    for a in arrays:
        check_aligned(f, a)
    check_same_device(f, arrays)
    for a in arrays[:-1]:
        if _arrays.overlap(la, a):
            raise ValueError(f"wham.{f}: {out_name} overlaps {a.name}; it must be a buffer apart "
                             "from every input")
    return ma, sa, ta, la, p, num_pairs, num_in, num_out, arrays
