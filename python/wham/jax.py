"""wham's operators as XLA operations, for JAX: usable under jax.jit, jax.vmap, jax.grad
(fwht, hadamard) and inside jax.shard_map.

Each function checks its arguments in Python (TypeError, ValueError: shapes, dtypes and
ranges are static under jit), then emits one XLA custom call (jax.ffi.ffi_call) to a
handler of libwham_jax.so (src/jax), which enqueues the wham launcher on XLA's own stream:
no allocation (the outputs are XLA's buffers), no synchronisation, recordable in XLA's
command buffers (CUDA graphs). An error the library reports at run time (an explicit path
this GPU cannot serve, say) comes back as XLA's error carrying wham's message.

Arrays are functional, as everywhere in JAX: the accumulate forms (m2l_accumulate*,
m2m_accumulate, l2l_accumulate) and the add-to forms (l2p, p2p) return the updated target;
the custom call updates it in place through input_output_aliases, so under jax.jit with
the target donated (donate_argnums) no copy is made.

Batching (jax.vmap): the row operators (fwht, hadamard, iqp_encode, m2l, m2m, l2l) fold the
mapped axis into their rows (vmap_method "broadcast_all": an unmapped argument of m2l, m2m
or l2l is broadcast along it); the operators over index lists and cells (the accumulate
forms, p2m, l2p, p2p) run once per mapped element (vmap_method "sequential").

Sharding: inside jax.shard_map each device calls the handler on its own shard. Under plain
jax.jit, XLA's partitioner cannot split a custom call: sharded operands are gathered onto
each device first (correct, not parallel); use shard_map to keep the work per device.

float64, complex128 (and int64 offsets) need JAX's 64-bit types
(jax.config.update("jax_enable_x64", True)); without them a 64-bit NumPy input or a 64-bit
dtype= raises TypeError instead of being narrowed. Cell offsets may be int32 without them.

The handlers live in libwham_jax.so, built beside libwham.so by CMake where JAX is installed
(docs/jax.md); it is looked for at WHAM_JAX_LIBRARY (a file or a folder), beside the
libwham.so the package loaded, then in the package.
"""

import ctypes
import functools
import os
import threading

import numpy as np

import jax
import jax.numpy as jnp

from . import _lib
from ._common import (ACCUMULATE_METHODS, FWHT_PATHS, HADAMARD_MATRICES, IQP_PATHS,
                      IQP_VARIANTS, M2L_PATHS, MAX_CLASSES, TRANSLATION_PATHS, _choice, _int,
                      _order_from_coeffs)
from .ops import _scale, fwht_log_n, hadamard_factor, iqp_qubits

__all__ = ["fwht", "hadamard", "iqp_encode", "m2l", "m2l_accumulate", "m2l_accumulate_centers",
           "m2l_accumulate_classes", "m2m", "l2l", "m2m_accumulate", "l2l_accumulate", "p2m",
           "l2p", "p2p", "library_path"]


_REAL_OF = {"complex64": "float32", "complex128": "float64"}
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}
_TRANSFORM_DTYPES = ("float32", "float64", "complex64", "complex128", "float16", "bfloat16")
_WIDE = ("float64", "complex128")

# Handlers (wham_jax_<name> in libwham_jax.so), registered as XLA targets "wham_<name>".
_TARGETS = ("fwht", "hadamard", "iqp_encode", "m2l", "m2l_accumulate", "m2l_accumulate_centers",
            "m2l_accumulate_classes", "m2l_accumulate_class_groups", "m2m", "l2l",
            "m2m_accumulate", "l2l_accumulate", "p2m", "l2p", "l2p_potential", "p2p",
            "p2p_potential")

_HERE = os.path.dirname(os.path.abspath(__file__))
_NAME = "libwham_jax.so"
_lock = threading.Lock()
_loaded = None


# ---- loading and registration ------------------------------------------------------------

def _candidates():
    env = os.environ.get("WHAM_JAX_LIBRARY")
    if env:
        return [os.path.join(env, _NAME) if os.path.isdir(env) else env]
    found = []
    wham_path = _lib.library().path  # libwham.so first: libwham_jax.so links it
    if os.sep in wham_path:
        found.append(os.path.join(os.path.dirname(os.path.realpath(wham_path)), _NAME))
        found.append(os.path.join(os.path.dirname(wham_path), _NAME))
    found += [os.path.join(_HERE, _NAME), _NAME]
    return list(dict.fromkeys(found))


def _load():
    """libwham_jax.so, loaded and its handlers registered with XLA (once a process)."""
    global _loaded
    if _loaded is not None:
        return _loaded
    with _lock:
        if _loaded is None:
            errors = []
            for path in _candidates():
                if os.sep in path and not os.path.exists(path):
                    errors.append(f"{path}: no such file")
                    continue
                try:
                    lib = ctypes.CDLL(path)
                except OSError as e:
                    errors.append(f"{path}: {e}")
                    continue
                lib.wham_jax_version_number.restype = ctypes.c_int32
                number = int(lib.wham_jax_version_number())
                want = _lib._version_number(_lib.PACKAGE_VERSION)
                if number != want:
                    errors.append(f"{path} was built for wham {_lib._version_text(number)}, this "
                                  f"package is wham {_lib.PACKAGE_VERSION}")
                    continue
                _register(lib)
                _loaded = (lib, path)
                break
            if _loaded is None:
                raise _lib.LibraryNotFoundError(
                    f"wham.jax: {_NAME} could not be loaded ({'; '.join(errors)}). It holds the "
                    "XLA handlers of wham's operators and is built beside libwham.so where JAX "
                    "is installed: `cmake -S . -B build && cmake --build build --target "
                    "wham_jax` (docs/jax.md); or set WHAM_JAX_LIBRARY=/path/to/libwham_jax.so.")
    return _loaded


def _register(lib):
    for name in _TARGETS:
        jax.ffi.register_ffi_target("wham_" + name, jax.ffi.pycapsule(getattr(lib, "wham_jax_" + name)),
                                    platform="CUDA")


def library_path():
    """The path of the libwham_jax.so in use (loads it and registers its handlers)."""
    return _load()[1]


def _call(name, results, *args, vmap_method, aliases=None, **attributes):
    """The custom call to handler `name` (XLA target "wham_<name>"); integer attributes are
    passed as int64, the others as float64."""
    _load()
    attrs = {k: (np.float64(v) if isinstance(v, float) else np.int64(v))
             for k, v in attributes.items()}
    return jax.ffi.ffi_call("wham_" + name, results, vmap_method=vmap_method,
                            input_output_aliases=aliases)(*args, **attrs)


# ---- argument checks -----------------------------------------------------------------------

def _x64():
    return bool(jax.config.read("jax_enable_x64"))


def _need_x64(function, what):
    raise TypeError(
        f"wham.jax.{function}: {what} needs JAX's 64-bit types: call "
        "jax.config.update('jax_enable_x64', True) first (without them JAX would narrow it to "
        "32 bits)")


def _array(function, name, x, dtypes):
    """x as a JAX array (or tracer) of one of `dtypes`; a 64-bit NumPy input without
    jax_enable_x64 is refused rather than narrowed."""
    dtype = getattr(x, "dtype", None)
    if dtype is not None and not isinstance(x, jax.Array):
        if np.dtype(dtype).name in _WIDE and not _x64():
            _need_x64(function, f"{name} of dtype {np.dtype(dtype).name}")
    x = jnp.asarray(x)
    if x.dtype.name not in dtypes:
        raise TypeError(f"wham.jax.{function}: {name} has dtype {x.dtype.name}; expected "
                        + " or ".join(dtypes))
    return x


def _shape(function, name, x, shape, what):
    if tuple(x.shape) != tuple(shape):
        raise ValueError(f"wham.jax.{function}: {name} has shape {tuple(x.shape)}; expected "
                         f"{tuple(shape)} ({what})")


_INT32_MAX = 0x7FFFFFFF


def _index_list(function, name, x, pairs=None):
    """A pair list as the handlers take it, int32. int64 lists (jaccpot's, with x64) are
    narrowed on the device, each index outside 0..2^31 - 1 (a negative padding entry, or a
    row no int32 reaches) becoming -1, which the operators skip as out of range: no index
    wraps onto a valid row."""
    x = _array(function, name, x, ("int32", "int64"))
    if x.dtype.name == "int64":
        x = jnp.where((x < 0) | (x > _INT32_MAX), -1, x).astype(jnp.int32)
    if x.ndim != 1:
        raise ValueError(f"wham.jax.{function}: {name} must be 1-D [num_pairs]; got shape "
                         f"{tuple(x.shape)}")
    if pairs is not None:
        _shape(function, name, x, (pairs,), "one a pair")
    return x


def _offsets(function, name, x, count=None):
    """Offsets [count] as the handlers take them: int64, or int32 (low, high) word pairs
    ([count, 2], the same bytes) where JAX has no 64-bit integers."""
    if isinstance(x, np.ndarray) and x.dtype == np.int64 and not _x64():
        x = jnp.asarray(np.ascontiguousarray(x).view(np.int32).reshape(x.shape + (2,)))
        words = True
    else:
        x = _array(function, name, x, ("int32", "int64"))
        words = x.dtype.name == "int32"
        if words:
            # the sign extension as the high word: little-endian int64
            x = jnp.stack([x, jnp.right_shift(x, 31)], axis=-1)
    if x.ndim != (2 if words else 1):
        raise ValueError(f"wham.jax.{function}: {name} must be 1-D [num_cells + 1]")
    if count is not None and x.shape[0] != count:
        raise ValueError(f"wham.jax.{function}: {name} has {x.shape[0]} offsets; expected "
                         f"{count} (num_cells + 1)")
    return x


def _order(function, name, a, p):
    """The order of the expansions in `a` ([..., (p+1)^2])."""
    if a.ndim == 0:
        raise ValueError(f"wham.jax.{function}: {name} must have shape [..., (p+1)^2]")
    return _order_from_coeffs(function, name, a.shape[-1], p, _REAL_OF[a.dtype.name])


def _geometry(function, name, x, real, shape, what):
    x = _array(function, name, x, (real,))
    _shape(function, name, x, shape, what)
    return x


def _like(x, shape=None, dtype=None):
    return jax.ShapeDtypeStruct(x.shape if shape is None else shape,
                                x.dtype if dtype is None else dtype)


# ---- Walsh-Hadamard and Hadamard transforms -------------------------------------------------

def fwht(x, *, scale=1.0, path="automatic"):
    """Walsh-Hadamard transform of the rows of x (the last dimension, 2^log_n elements):
    out[..., k] = scale * sum_j x[..., j] (-1)^popcount(j & k); as wham.fwht, returning a
    new array. Differentiable (the transform is symmetric: its VJP is itself); vmap folds the
    mapped axis into the rows."""
    f = "fwht"
    x = _array(f, "x", x, _TRANSFORM_DTYPES)
    if x.ndim == 0:
        raise ValueError(f"wham.jax.{f}: x must have at least one dimension (rows are the last)")
    n = x.shape[-1]
    return _fwht(x, fwht_log_n(n), _scale(f, scale, n), _choice(f, "path", path, FWHT_PATHS))


def _fwht_call(x, log_n, scale, path):
    return _call("fwht", _like(x), x, vmap_method="broadcast_all", log_n=log_n,
                 scale=float(scale), path=path)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3))
def _fwht(x, log_n, scale, path):
    return _fwht_call(x, log_n, scale, path)


def _fwht_fwd(x, log_n, scale, path):
    return _fwht_call(x, log_n, scale, path), None


def _fwht_bwd(log_n, scale, path, _, g):
    return (_fwht_call(g, log_n, scale, path),)


_fwht.defvjp(_fwht_fwd, _fwht_bwd)


def hadamard(x, *, scale=1.0, m=None, matrices="fast_hadamard_transform", transpose=False):
    """Hadamard transform of the rows of x by H_m (x) H_(2^k) (m in 1, 12, 20, 28, 40), as
    wham.hadamard, returning a new array. Differentiable: the VJP is the transform with H_m^T
    (transpose flipped); vmap folds the mapped axis into the rows."""
    f = "hadamard"
    x = _array(f, "x", x, _TRANSFORM_DTYPES)
    if x.ndim == 0:
        raise ValueError(f"wham.jax.{f}: x must have at least one dimension (rows are the last)")
    n = x.shape[-1]
    code = _choice(f, "matrices", matrices, HADAMARD_MATRICES)
    m, log_k = hadamard_factor(n, m, matrices)
    return _hadamard(x, m, log_k, _scale(f, scale, n), code, bool(transpose))


def _hadamard_call(x, m, log_k, scale, matrices, transpose):
    return _call("hadamard", _like(x), x, vmap_method="broadcast_all", m=m, log_k=log_k,
                 scale=float(scale), matrices=matrices, transpose=int(transpose))


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3, 4, 5))
def _hadamard(x, m, log_k, scale, matrices, transpose):
    return _hadamard_call(x, m, log_k, scale, matrices, transpose)


def _hadamard_fwd(x, m, log_k, scale, matrices, transpose):
    return _hadamard_call(x, m, log_k, scale, matrices, transpose), None


def _hadamard_bwd(m, log_k, scale, matrices, transpose, _, g):
    return (_hadamard_call(g, m, log_k, scale, matrices, not transpose),)


_hadamard.defvjp(_hadamard_fwd, _hadamard_bwd)


# ---- IQP encoding ------------------------------------------------------------------------

def iqp_encode(params, *, num_qubits=None, variant="iqp", dtype=None, path="automatic"):
    """IQP states of parameter rows ([..., P] -> [..., 2^n]), as wham.iqp_encode. dtype:
    complex64 (default for float32 params) or complex128 (default for float64). vmap folds
    the mapped axis into the samples."""
    f = "iqp_encode"
    v = _choice(f, "variant", variant, IQP_VARIANTS)
    code = _choice(f, "path", path, IQP_PATHS)
    if code == IQP_PATHS["product"] and v != IQP_VARIANTS["iqp_z"]:
        raise ValueError(f"wham.jax.{f}: path 'product' serves variant 'iqp_z' only")
    params = _array(f, "params", params, ("float32", "float64"))
    if params.ndim == 0:
        raise ValueError(f"wham.jax.{f}: params must have at least one dimension ([..., P])")
    n = iqp_qubits(f, params.shape[-1], num_qubits, variant)
    if dtype is None:
        dtype = _COMPLEX_OF[params.dtype.name]
    else:
        dtype = np.dtype(dtype).name
        if dtype not in _REAL_OF:
            raise TypeError(f"wham.jax.{f}: dtype = {dtype} is invalid (complex64 or complex128)")
        if dtype == "complex128" and not _x64():
            _need_x64(f, "dtype = complex128")
    out = jax.ShapeDtypeStruct(params.shape[:-1] + (1 << n,), dtype)
    return _call(f, out, params, vmap_method="broadcast_all", num_qubits=n, variant=v, path=code)


# ---- M2L and its accumulate forms ----------------------------------------------------------

def _expansions(function, name, a, p):
    a = _array(function, name, a, ("complex64", "complex128"))
    return a, _order(function, name, a, p)


def m2l(multipoles, deltas, *, p=None, path="automatic"):
    """locals[..., :] = M2L_p(multipoles[..., :], deltas[..., :]), as wham.m2l, returning the
    locals. vmap folds the mapped axis into the pairs."""
    f = "m2l"
    multipoles, p = _expansions(f, "multipoles", multipoles, p)
    real = _REAL_OF[multipoles.dtype.name]
    deltas = _geometry(f, "deltas", deltas, real, multipoles.shape[:-1] + (3,),
                       "multipoles' leading shape, then 3")
    return _call(f, _like(multipoles), multipoles, deltas, vmap_method="broadcast_all", p=p,
                 path=_choice(f, "path", path, M2L_PATHS))


def _accumulate_list(function, sources, src, tgt, targets, p, source_name, target_name):
    """Checks what every accumulate form shares; returns them as JAX arrays with p."""
    sources, p = _expansions(function, source_name, sources, p)
    targets = _array(function, target_name, targets, (sources.dtype.name,))
    width = sources.shape[-1]
    if targets.ndim == 0 or targets.shape[-1] != width:
        raise ValueError(f"wham.jax.{function}: {target_name} must have shape [rows, {width}] "
                         f"({source_name}' coefficients a row); got {tuple(targets.shape)}")
    src = _index_list(function, "src", src)
    tgt = _index_list(function, "tgt", tgt, src.shape[0])
    return sources, src, tgt, targets, p


def m2l_accumulate(multipoles, deltas, src, tgt, locals, *, p=None, method="automatic"):
    """locals[tgt[i]] += M2L_p(multipoles[src[i]], deltas[i]); returns the updated locals
    (in place through aliasing). vmap: one call a mapped element."""
    f = "m2l_accumulate"
    multipoles, src, tgt, locals, p = _accumulate_list(f, multipoles, src, tgt, locals, p,
                                                       "multipoles", "locals")
    deltas = _geometry(f, "deltas", deltas, _REAL_OF[multipoles.dtype.name],
                       (src.shape[0], 3), "[num_pairs, 3]")
    return _call(f, _like(locals), multipoles, deltas, src, tgt, locals,
                 vmap_method="sequential", aliases={4: 0}, p=p,
                 method=_choice(f, "method", method, ACCUMULATE_METHODS))


def m2l_accumulate_centers(multipoles, centers, src, tgt, locals, *, p=None,
                           method="automatic"):
    """locals[tgt[i]] += M2L_p(multipoles[src[i]], centers[tgt[i]] - centers[src[i]]);
    returns the updated locals. centers: [R, 3], R >= max(rows of multipoles, of locals).
    This is jaccpot's M2L accumulation in one jitted call: src / tgt int32 or int64, a
    negative index marks a padding pair (skipped), locals may be donated (updated in place)."""
    f = "m2l_accumulate_centers"
    multipoles, src, tgt, locals, p = _accumulate_list(f, multipoles, src, tgt, locals, p,
                                                       "multipoles", "locals")
    centers = _array(f, "centers", centers, (_REAL_OF[multipoles.dtype.name],))
    rows = max(multipoles.size // multipoles.shape[-1] if multipoles.shape[-1] else 0,
               locals.size // locals.shape[-1] if locals.shape[-1] else 0)
    if centers.ndim != 2 or centers.shape[1] != 3 or centers.shape[0] < rows:
        raise ValueError(f"wham.jax.{f}: centers has shape {tuple(centers.shape)}; expected "
                         f"[R, 3] with R >= max(num_multipoles, num_locals) = {rows}")
    return _call(f, _like(locals), multipoles, centers, src, tgt, locals,
                 vmap_method="sequential", aliases={4: 0}, p=p,
                 method=_choice(f, "method", method, ACCUMULATE_METHODS))


def m2l_accumulate_classes(multipoles, class_deltas, cls, src, tgt, locals, *, p=None,
                           method="automatic", grouped=False):
    """locals[tgt[i]] += M2L_p(multipoles[src[i]], class_deltas[cls[i]]); returns the
    updated locals. grouped=True: each class's pairs are contiguous (the class-group form,
    atomic: method "automatic" or "atomic")."""
    f = "m2l_accumulate_classes"
    multipoles, src, tgt, locals, p = _accumulate_list(f, multipoles, src, tgt, locals, p,
                                                       "multipoles", "locals")
    class_deltas = _array(f, "class_deltas", class_deltas, (_REAL_OF[multipoles.dtype.name],))
    if class_deltas.ndim != 2 or class_deltas.shape[1] != 3:
        raise ValueError(f"wham.jax.{f}: class_deltas must have shape [num_classes, 3]; got "
                         f"{tuple(class_deltas.shape)}")
    _int(f, "num_classes (rows of class_deltas)", class_deltas.shape[0], 1, MAX_CLASSES)
    cls = _index_list(f, "cls", cls, src.shape[0])
    code = _choice(f, "method", method, ACCUMULATE_METHODS)
    args = (multipoles, class_deltas, cls, src, tgt, locals)
    if grouped:
        if code == ACCUMULATE_METHODS["deterministic"]:
            raise ValueError(f"wham.jax.{f}: grouped=True accumulates with atomics; method must "
                             "be 'automatic' or 'atomic'")
        return _call("m2l_accumulate_class_groups", _like(locals), *args,
                     vmap_method="sequential", aliases={5: 0}, p=p)
    return _call(f, _like(locals), *args, vmap_method="sequential", aliases={5: 0}, p=p,
                 method=code)


# ---- M2M and L2L -----------------------------------------------------------------------------

def _translate(function, name, expansions, deltas, p, path):
    expansions, p = _expansions(function, name, expansions, p)
    deltas = _geometry(function, "deltas", deltas, _REAL_OF[expansions.dtype.name],
                       expansions.shape[:-1] + (3,), f"{name}' leading shape, then 3")
    return _call(function, _like(expansions), expansions, deltas, vmap_method="broadcast_all",
                 p=p, path=_choice(function, "path", path, TRANSLATION_PATHS))


def m2m(multipoles, deltas, *, p=None, path="automatic"):
    """out[..., :] = M2M_p(multipoles[..., :], deltas[..., :]) (child to parent; delta =
    parent centre - child centre; wham/translations.cuh). path: "automatic", "direct",
    "thread", "split" or "warp". vmap folds the mapped axis into the pairs."""
    return _translate("m2m", "multipoles", multipoles, deltas, p, path)


def l2l(locals, deltas, *, p=None, path="automatic"):
    """out[..., :] = L2L_p(locals[..., :], deltas[..., :]) (parent to child; delta = child
    centre - parent centre). As m2m otherwise."""
    return _translate("l2l", "locals", locals, deltas, p, path)


def _translate_accumulate(function, name, target_name, expansions, deltas, src, tgt, targets,
                          p, path):
    expansions, src, tgt, targets, p = _accumulate_list(function, expansions, src, tgt, targets,
                                                        p, name, target_name)
    deltas = _geometry(function, "deltas", deltas, _REAL_OF[expansions.dtype.name],
                       (src.shape[0], 3), "[num_pairs, 3]")
    return _call(function, _like(targets), expansions, deltas, src, tgt, targets,
                 vmap_method="sequential", aliases={4: 0}, p=p,
                 path=_choice(function, "path", path, TRANSLATION_PATHS))


def m2m_accumulate(multipoles, deltas, src, tgt, parents, *, p=None, path="automatic"):
    """parents[tgt[i]] += M2M_p(multipoles[src[i]], deltas[i]); returns the updated parents.
    Pairs with src or tgt out of range add nothing. vmap: one call a mapped element."""
    return _translate_accumulate("m2m_accumulate", "multipoles", "parents", multipoles, deltas,
                                 src, tgt, parents, p, path)


def l2l_accumulate(locals, deltas, src, tgt, children, *, p=None, path="automatic"):
    """children[tgt[i]] += L2L_p(locals[src[i]], deltas[i]); returns the updated children."""
    return _translate_accumulate("l2l_accumulate", "locals", "children", locals, deltas, src,
                                 tgt, children, p, path)


# ---- particles: P2M, L2P, P2P -----------------------------------------------------------------

def _points(function, points, charges=None):
    points = _array(function, "points", points, ("float32", "float64"))
    if points.ndim != 2 or points.shape[1] != 3:
        raise ValueError(f"wham.jax.{function}: points must have shape [num_points, 3]; got "
                         f"{tuple(points.shape)}")
    if charges is not None:
        charges = _geometry(function, "charges", charges, points.dtype.name,
                            (points.shape[0],), "one a point")
    return points, charges


def _fields(function, points, potential, gradient):
    real, n = points.dtype.name, points.shape[0]
    potential = _geometry(function, "potential", potential, real, (n,), "one a point")
    if gradient is not None:
        gradient = _geometry(function, "gradient", gradient, real, (n, 3), "[num_points, 3]")
    return potential, gradient


def p2m(points, charges, cell_offsets, centers, *, p):
    """multipoles[c] = sum over cell c's points of q_i R(x_i - centers[c]) (every cell,
    overwritten; wham/particles.cuh). points [N, 3], charges [N], cell_offsets [C + 1]
    (int32 or int64), centers [C, 3]; returns [C, (p+1)^2] complex. vmap: one call a mapped
    element."""
    f = "p2m"
    points, charges = _points(f, points, charges)
    real = points.dtype.name
    centers = _array(f, "centers", centers, (real,))
    if centers.ndim != 2 or centers.shape[1] != 3:
        raise ValueError(f"wham.jax.{f}: centers must have shape [num_cells, 3]; got "
                         f"{tuple(centers.shape)}")
    cell_offsets = _offsets(f, "cell_offsets", cell_offsets, centers.shape[0] + 1)
    p = _int(f, "p", p, 0, 46339)
    out = jax.ShapeDtypeStruct((centers.shape[0], (p + 1) ** 2), _COMPLEX_OF[real])
    return _call(f, out, points, charges, cell_offsets, centers, vmap_method="sequential", p=p)


def l2p(locals, centers, cell_offsets, points, potential, gradient=None, *, p=None):
    """potential[j] += Re sum conj(L_n^m) R_n^m(centers[c] - x_j) for the points j of each
    cell c, and gradient[j] += its gradient in x_j where gradient is given. Returns the
    updated potential, or (potential, gradient). locals [C, (p+1)^2]; vmap: one call a
    mapped element."""
    f = "l2p"
    locals, p = _expansions(f, "locals", locals, p)
    real = _REAL_OF[locals.dtype.name]
    cells = locals.size // locals.shape[-1] if locals.shape[-1] else 0
    centers = _geometry(f, "centers", centers, real, (cells, 3), "[num_cells, 3]")
    cell_offsets = _offsets(f, "cell_offsets", cell_offsets, cells + 1)
    points, _ = _points(f, points)
    if points.dtype.name != real:
        raise TypeError(f"wham.jax.{f}: points has dtype {points.dtype.name}; expected {real}")
    potential, gradient = _fields(f, points, potential, gradient)
    args = (locals, centers, cell_offsets, points, potential)
    if gradient is None:
        return _call("l2p_potential", _like(potential), *args, vmap_method="sequential",
                     aliases={4: 0}, p=p)
    return tuple(_call(f, (_like(potential), _like(gradient)), *args, gradient,
                       vmap_method="sequential", aliases={4: 0, 5: 1}, p=p))


def p2p(points, charges, cell_offsets, near_offsets, near_cells, potential, gradient=None):
    """For each target cell t, each source cell s in near_cells[near_offsets[t] ..
    near_offsets[t+1]), points j of t and i of s with r = |x_j - x_i| > 0: potential[j] +=
    q_i / r, gradient[j] += -q_i (x_j - x_i) / r^3 (where given). Returns the updated
    potential, or (potential, gradient). Offsets int32 or int64, near_cells int32."""
    f = "p2p"
    points, charges = _points(f, points, charges)
    cell_offsets = _offsets(f, "cell_offsets", cell_offsets)
    near_offsets = _offsets(f, "near_offsets", near_offsets, cell_offsets.shape[0])
    near_cells = _array(f, "near_cells", near_cells, ("int32",))
    if near_cells.ndim != 1:
        raise ValueError(f"wham.jax.{f}: near_cells must be 1-D [num_near]")
    potential, gradient = _fields(f, points, potential, gradient)
    args = (points, charges, cell_offsets, near_offsets, near_cells, potential)
    if gradient is None:
        return _call("p2p_potential", _like(potential), *args, vmap_method="sequential",
                     aliases={5: 0})
    return tuple(_call(f, (_like(potential), _like(gradient)), *args, gradient,
                       vmap_method="sequential", aliases={5: 0, 6: 1}))
