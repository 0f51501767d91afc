"""wham's operators on GPU arrays of any framework (PyTorch, CuPy, JAX, Numba, ...).

Every function checks its arguments in Python first (TypeError for a wrong kind of object
or dtype, ValueError for shapes, layouts and ranges; none of these needs the library or a
GPU), then calls libwham.so, whose own checks raise `wham.InvalidArgument` (a ValueError)
and CUDA failures `wham.CudaError`. Work is enqueued on the framework's current stream
(see `_frameworks.py`; JAX: synchronous) and, except for JAX, not waited for.
Outputs are new arrays of the first argument's framework unless `out=` is given; they
never alias an input unless the function says so.

Options after the array arguments are keyword-only. PyTorch tensors: a call that autograd
must see (an input requires grad) or that torch.compile traces goes through the custom
operators torch.ops.wham.* (wham/torch_ops.py); every other call runs directly. A call
that writes into a tensor (out=, the accumulate forms' locals) moves that tensor's version
counter, as PyTorch's in-place operations do, and is refused (RuntimeError) while grad mode
is on and an argument requires grad: autograd cannot see such a write.
"""

import math

from . import _arrays
from ._arrays import inspect, check_dtype, check_aligned, check_writable
from ._common import (FWHT_PATHS, IQP_VARIANTS, IQP_PATHS, HADAMARD_MATRICES, HADAMARD_ORDERS,
                      _FLOATS, _COMPLEX, _HALVES, _SUFFIX, _choice, _int, dtype_name, _output,
                      _is_torch, _torch_route, _index, _row, _bump_version, _into)
from ._frameworks import Launch
from ._lib import call

# ---- sizes -----------------------------------------------------------------------------

def iqp_num_params(num_qubits, variant="iqp"):
    """Parameters a sample: n for 'iqp_z', n + n(n-1)/2 for 'iqp' (1 <= n <= 30)."""
    n = _int("iqp_num_params", "num_qubits", num_qubits, 1, 30)
    v = _choice("iqp_num_params", "variant", variant, IQP_VARIANTS)
    return n + n * (n - 1) // 2 if v == 0 else n


def m2l_num_coeffs(p):
    """Coefficients of an order-p expansion, (p+1)^2 (0 <= p <= 46339)."""
    p = _int("m2l_num_coeffs", "p", p, 0, 46339)
    return (p + 1) * (p + 1)


def _qubits_from_params(function, count, variant):
    """n such that iqp_num_params(n, variant) == count, or None."""
    if variant == 1:
        return count if 1 <= count <= 30 else None
    n = (math.isqrt(8 * count + 1) - 1) // 2  # n(n+1)/2 = count
    return n if 1 <= n <= 30 and n * (n + 1) // 2 == count else None


# ---- Walsh-Hadamard transform -------------------------------------------------------------

def fwht(x, *, scale=1.0, path="automatic", out=None):
    """Batched Walsh-Hadamard transform of the rows of `x` (the last dimension).

        out[..., k] = scale * sum_j x[..., j] * (-1)^popcount(j & k)

    x:     float32, float64, complex64, complex128, float16 or bfloat16, C-contiguous, last
           dimension a power of two 2^log_n (1 .. 2^30); every leading dimension is batch
           (a batch of 0 rows returns an empty result).
           float16 and bfloat16 are computed in float32 and rounded once on each store.
    scale: a number, or "orthonormal" for 2^(-log_n/2). Applied in the element's real
           precision (float32 for float32, complex64, float16 and bfloat16).
    path:  "automatic", "fused", "kronecker" or "baseline" (README: what automatic picks).
    out:   None (a new array like x), or an array of x's shape and dtype; `out=x` transforms
           in place. Any other overlap with x is refused.
    Returns out. The transform is its own inverse up to scale: fwht(fwht(x, scale=s),
    scale=1/(s 2^log_n)) == x. PyTorch: differentiable without out= (torch.ops.wham.fwht).
    """
    f = "fwht"
    if _is_torch(x):
        torch = _torch_route(f, (x,), out)
        if torch is not None:
            return _into(torch.ops.wham.fwht(x, scale=_scale(f, scale, _row(x)), path=path),
                         out)
        result = _fwht(x, scale, path, out)
        if out is not None:
            _bump_version(out)
        return result
    return _fwht(x, scale, path, out)


def _fwht(x, scale, path, out):
    """wham.fwht on any framework's arrays, straight to the library."""
    f = "fwht"
    xa = inspect(x, f, "x")
    check_dtype(f, xa, _FLOATS + _COMPLEX + _HALVES)
    if not xa.shape:
        raise ValueError(f"wham.{f}: x must have at least one dimension (rows are the last)")
    n = xa.shape[-1]
    log_n = fwht_log_n(n)
    scale = _scale(f, scale, n)
    code = _choice(f, "path", path, FWHT_PATHS)
    return _transform_rows(f, x, xa, out, n, lambda oa, batch, stream: call(
        "wham_fwht_" + _SUFFIX[xa.dtype], xa.ptr, oa.ptr, log_n, batch, scale, code, stream))


def fwht_log_n(n):
    """log2 of a row length fwht takes (a power of two from 1 to 2^30); ValueError otherwise."""
    if n < 1 or n & (n - 1) or n > 1 << 30:
        raise ValueError(f"wham.fwht: the last dimension of x is {n}; it must be a power of two "
                         "from 1 to 2^30")
    return n.bit_length() - 1


def _scale(function, scale, n):
    """A number, or "orthonormal": 1/sqrt(n) (rows of n >= 1; the row checks refuse the rest)."""
    if isinstance(scale, str):
        if scale != "orthonormal":
            raise ValueError(f"wham.{function}: scale = {scale!r} is invalid (a number or "
                             "'orthonormal')")
        return 1.0 / math.sqrt(n) if n >= 1 else 1.0
    return float(scale)


def _transform_rows(function, x, xa, out, n, launch_rows):
    """The rows of n elements of x (checked as `xa`) into `out` (None: new; x: in place):
    launch_rows(out_array, batch, stream) enqueues the C call (not made for 0 rows)."""
    check_aligned(function, xa)
    with Launch(xa, [xa]) as launch:
        if out is x:
            oa = xa
            check_writable(function, oa)
        else:
            oa = _output(function, launch, out, xa.shape, xa.dtype, [xa])
        batch = xa.size // n
        if batch:
            launch_rows(oa, batch, launch.stream)
    return oa.obj


def hadamard_factor(n, m=None, matrices="fast_hadamard_transform"):
    """(m, log_k) with n = m * 2^log_k for wham.hadamard: m = 1 for a power of two, else 12,
    20, 28 or 40. A length of 40 * 2^j (j >= 0) is also 20 * 2^(j+1): m = None takes 40 for
    matrices="quarot" (any case; what QuaRot's get_hadK picks) and 20 otherwise (the smallest
    factor); pass m to choose. wham.hadamard and torch.ops.wham.hadamard both decide here."""
    f = "hadamard"
    quarot = _choice(f, "matrices", matrices, HADAMARD_MATRICES) == HADAMARD_MATRICES["quarot"]
    n = _int(f, "row length", n, 1, 40 << 25)
    if m is not None:
        m = _int(f, "m", m, 1, 40)
        if m not in (1,) + HADAMARD_ORDERS:
            raise ValueError(f"wham.{f}: m = {m} is invalid (valid: 1, 12, 20, 28 or 40)")
        q, r = divmod(n, m)
        if r or q & (q - 1):
            raise ValueError(f"wham.{f}: a row of {n} elements is not {m} times a power of two")
        return m, q.bit_length() - 1
    odd = n >> ((n & -n).bit_length() - 1)
    choices = {1: (1,), 3: (12,), 5: (40, 20) if quarot else (20, 40), 7: (28,)}
    for c in choices.get(odd, ()):
        if n % c == 0:
            return c, (n // c).bit_length() - 1
    raise ValueError(f"wham.{f}: the last dimension of x is {n}; it must be m * 2^k with m in "
                     "1, 12, 20, 28 or 40 (for example 96 = 12 * 8, 5120 = 20 * 256, 14336 = 28 * 512)")


def hadamard(x, *, scale=1.0, m=None, matrices="fast_hadamard_transform", transpose=False,
             out=None):
    """Batched Hadamard transform of the rows of `x` by H_m (x) H_(2^k) (wham/hadamard.cuh).

    Row length n = m * 2^k (the last dimension), m in 1, 12, 20, 28, 40 (hadamard_factor):
        out[..., a * 2^k + c] = scale * sum_{a', b} H_m[a, a'] (-1)^popcount(b & c) x[..., a' * 2^k + b]
    x:         float32, float64, complex64, complex128, float16 or bfloat16, C-contiguous
               (a batch of 0 rows returns an empty result).
    scale:     a number, or "orthonormal" for 1/sqrt(n).
    m:         None (inferred from n by hadamard_factor) or the order of H_m.
    matrices:  "fast_hadamard_transform" (its hadamard_transform_mN's matrices and results)
               or "quarot" (QuaRot's matrices: its matmul_hadU with scale="orthonormal");
               any case.
    transpose: H_m^T in place of H_m (the inverse up to scale; the gradient of the other).
    out:       None (a new array like x), or an array like x; out=x transforms in place.
    Returns out. PyTorch: differentiable without out= (torch.ops.wham.hadamard).
    """
    f = "hadamard"
    if _is_torch(x):
        torch = _torch_route(f, (x,), out)
        if torch is not None:
            n = _row(x)
            m, _ = hadamard_factor(n, m, matrices)
            return _into(torch.ops.wham.hadamard(
                x, scale=_scale(f, scale, n), m=m, matrices=matrices.lower(),
                transpose=bool(transpose)), out)
        result = _hadamard(x, scale, m, matrices, transpose, out)
        if out is not None:
            _bump_version(out)
        return result
    return _hadamard(x, scale, m, matrices, transpose, out)


def _hadamard(x, scale, m, matrices, transpose, out):
    """wham.hadamard on any framework's arrays, straight to the library."""
    f = "hadamard"
    xa = inspect(x, f, "x")
    check_dtype(f, xa, _FLOATS + _COMPLEX + _HALVES)
    if not xa.shape:
        raise ValueError(f"wham.{f}: x must have at least one dimension (rows are the last)")
    n = xa.shape[-1]
    set_code = _choice(f, "matrices", matrices, HADAMARD_MATRICES)
    m, log_k = hadamard_factor(n, m, matrices)
    scale = _scale(f, scale, n)
    return _transform_rows(f, x, xa, out, n, lambda oa, batch, stream: call(
        "wham_hadamard_" + _SUFFIX[xa.dtype], xa.ptr, oa.ptr, m, log_k, batch, scale, set_code,
        int(bool(transpose)), stream))


def hadamard_matrix(m, matrices="fast_hadamard_transform"):
    """H_m (m in 12, 20, 28, 40) of the set wham.hadamard uses, as a NumPy int8 array of +-1
    (host only)."""
    import ctypes
    import numpy
    f = "hadamard_matrix"
    m = _int(f, "m", m, 12, 40)
    code = _choice(f, "matrices", matrices, HADAMARD_MATRICES)
    h = numpy.empty((m, m), dtype=numpy.int8)
    call("wham_hadamard_matrix", m, code, h.ctypes.data_as(ctypes.c_void_p))
    return h


# ---- IQP encoding ---------------------------------------------------------------------------

def iqp_encode(params, *, num_qubits=None, variant="iqp", dtype=None, path="automatic",
               out=None):
    """IQP states H^n diag(exp(i theta)) H^n |0> / 2^n of a batch of parameter vectors.

    params:     float32 or float64, shape [..., P] (1-D: one sample; a batch of 0 samples
                returns an empty result), C-contiguous, where P = iqp_num_params(n, variant):
                a_0..a_{n-1}, then for 'iqp' J_ij for i < j in the order (0,1), (0,2), ...,
                (0,n-1), (1,2), ..., (n-2,n-1).
                theta(x) = sum_i a_i x_i + sum_{i<j} J_ij x_i x_j, x_i = bit i of x.
    num_qubits: n, 1..30; None infers it from P.
    variant:    "iqp" (with pair couplings) or "iqp_z" (a_i only).
    dtype:      the states' type, "complex64" or "complex128" (also NumPy/torch dtypes);
                default: out's, else complex64 for float32 params and complex128 for float64.
                Phases are formed in double in every case.
    path:       "automatic", "fused", "kronecker", "baseline" or "product" (iqp_z only).
    out:        None, or a C-contiguous complex array of shape [..., 2^n].
    Returns the states, shape params.shape[:-1] + (2^n,); qubit i is bit i of the index.
    PyTorch: differentiable in params without out= (torch.ops.wham.iqp_encode).
    """
    f = "iqp_encode"
    if _is_torch(params):
        torch = _torch_route(f, (params,), out)
        if torch is not None:
            if dtype is None and out is not None:
                dtype = out.dtype
            if dtype is not None:
                name = dtype_name(dtype)
                if name not in _COMPLEX:
                    raise TypeError(f"wham.{f}: dtype = {name} is invalid (complex64 or "
                                    "complex128)")
                dtype = getattr(torch, name)
            return _into(torch.ops.wham.iqp_encode(params, num_qubits=_index(num_qubits),
                                                   variant=variant, dtype=dtype, path=path), out)
        result = _iqp_encode(params, num_qubits, variant, dtype, path, out)
        if out is not None:
            _bump_version(out)
        return result
    return _iqp_encode(params, num_qubits, variant, dtype, path, out)


def iqp_qubits(function, count, num_qubits, variant):
    """n for a params row of `count` values (checked against num_qubits when given)."""
    v = _choice(function, "variant", variant, IQP_VARIANTS)
    if num_qubits is None:
        n = _qubits_from_params(function, count, v)
        if n is None:
            raise ValueError(f"wham.{function}: params has {count} values a sample, which is "
                             f"iqp_num_params(n, {variant!r}) for no n in 1..30")
        return n
    n = _int(function, "num_qubits", num_qubits, 1, 30)
    if iqp_num_params(n, variant) != count:
        raise ValueError(f"wham.{function}: params has {count} values a sample; {n} qubits "
                         f"({variant!r}) need {iqp_num_params(n, variant)}")
    return n


def _iqp_encode(params, num_qubits, variant, dtype, path, out):
    """wham.iqp_encode on any framework's arrays, straight to the library."""
    f = "iqp_encode"
    v = _choice(f, "variant", variant, IQP_VARIANTS)
    code = _choice(f, "path", path, IQP_PATHS)
    if code == 4 and v != 1:
        raise ValueError(f"wham.{f}: path 'product' serves variant 'iqp_z' only")
    pa = inspect(params, f, "params")
    check_dtype(f, pa, _FLOATS)
    if not pa.shape:
        raise ValueError(f"wham.{f}: params must have at least one dimension ([..., num_params])")
    count = pa.shape[-1]
    n = iqp_qubits(f, count, num_qubits, variant)
    if dtype is not None:
        dtype = dtype_name(dtype)
        if dtype not in _COMPLEX:
            raise TypeError(f"wham.{f}: dtype = {dtype} is invalid (complex64 or complex128)")
    elif out is not None:
        dtype = inspect(out, f, "out").dtype
        if dtype not in _COMPLEX:
            raise TypeError(f"wham.{f}: out has dtype {dtype}; expected complex64 or complex128")
    else:
        dtype = _arrays.COMPLEX_OF[pa.dtype]
    check_aligned(f, pa)
    shape = pa.shape[:-1] + (1 << n,)
    with Launch(pa, [pa]) as launch:
        oa = _output(f, launch, out, shape, dtype, [pa])
        batch = pa.size // count
        if batch:
            call(f"wham_iqp_encode_{_SUFFIX[pa.dtype]}_{_SUFFIX[dtype]}", pa.ptr, oa.ptr, n,
                 batch, v, code, launch.stream)
    return oa.obj
