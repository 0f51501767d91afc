"""The M2L operator and its FMM accumulate forms (wham/m2l.cuh, wham/fmm.cuh) over GPU arrays.

Expansions of order p are rows of (p+1)^2 complex coefficients, index(n, m) = n*n + n + m
(solidfmm's solid harmonics, docs/specs/m2l.md); displacements are target centre minus
source centre. complex64 coefficients go with float32 geometry, complex128 with float64.

Options after the arrays are keyword-only. With PyTorch tensors none of these is
differentiable; writes into out= or locals move the tensor's version counter and are
refused while grad mode is on and an argument requires grad; under torch.compile the
calls go through torch.ops.wham.* (wham/torch_ops.py).
"""

from ._arrays import inspect, check_dtype, check_aligned, check_writable, check_same_device
from ._common import (_choice, _int, _output, M2L_PATHS, ACCUMULATE_METHODS, MAX_CLASSES,
                      MAX_ROWS, MAX_PAIRS, _is_torch, _torch_route, _bump_version, _into, _index,
                      _rows, _expansions, _geometry, _pair_list)
from ._frameworks import Launch
from ._lib import call

_SUFFIX = {"complex64": "f32", "complex128": "f64"}


def _multipoles(f, multipoles, p, shape):
    """The multipole array every M2L form takes: its Array, coefficients a row and order."""
    return _expansions(f, multipoles, "multipoles", p, shape)


def m2l(multipoles, deltas, *, p=None, path="automatic", out=None):
    """locals[..., :] = M2L_p(multipoles[..., :], deltas[..., :]), pair by pair.

    multipoles: complex64 or complex128, shape [..., (p+1)^2], C-contiguous.
    deltas:     float32 (with complex64) or float64 (with complex128), shape [..., 3] with
                the same leading shape: target centre - source centre (x, y, z). A zero or
                non-finite delta gives that pair non-finite values (not checked).
    p:          the order, 0..16 (complex64) or 0..20 (complex128); None infers it.
    path:       "automatic", "thread", "warp", "split", "direct" (the O(p^4) sum, a
                cross-check) or "tensor".
    out:        None or an array like multipoles (must not overlap an input).
    Returns the local expansions, multipoles' shape and dtype.
    """
    f = "m2l"
    if _is_torch(multipoles):
        torch = _torch_route(f, (multipoles, deltas), out, differentiable=False)
        if torch is not None:
            return _into(torch.ops.wham.m2l(multipoles, deltas, p=_index(p), path=path), out)
        result = _m2l(multipoles, deltas, p, path, out)
        if out is not None:
            _bump_version(out)
        return result
    return _m2l(multipoles, deltas, p, path, out)


def _m2l(multipoles, deltas, p, path, out):
    """wham.m2l straight to the library."""
    f = "m2l"
    ma, C, p = _multipoles(f, multipoles, p, "[..., (p+1)^2]")
    code = _choice(f, "path", path, M2L_PATHS)
    da = inspect(deltas, f, "deltas")
    _geometry(f, da, ma.dtype)
    if tuple(da.shape) != tuple(ma.shape[:-1]) + (3,):
        raise ValueError(f"wham.{f}: deltas has shape {tuple(da.shape)}; expected "
                         f"{tuple(ma.shape[:-1]) + (3,)} (multipoles' leading shape, then 3)")
    check_aligned(f, ma)
    check_same_device(f, [ma, da])
    with Launch(ma, [ma, da]) as launch:
        oa = _output(f, launch, out, ma.shape, ma.dtype, [ma, da])
        pairs = ma.size // C
        if pairs:
            call("wham_m2l_" + _SUFFIX[ma.dtype], ma.ptr, da.ptr, oa.ptr, p, pairs, code,
                 launch.stream)
    return oa.obj


def _list(f, multipoles, src, tgt, locals, p, method, extra):
    """The checks every accumulate form shares; returns the Arrays and sizes."""
    ma, sa, ta, la, p, num_pairs, nm, nl, arrays = _pair_list(
        f, multipoles, src, tgt, locals, p, ("multipoles", "locals"), extra)
    code = _choice(f, "method", method, ACCUMULATE_METHODS)
    return ma, sa, ta, la, p, code, num_pairs, nm, nl, arrays


def m2l_accumulate(multipoles, deltas, src, tgt, locals, *, p=None, method="automatic"):
    """In place: locals[tgt[i]] += M2L_p(multipoles[src[i]], deltas[i]) for every pair i.

    multipoles: complex64/complex128 [num_multipoles, (p+1)^2] (any [..., (p+1)^2] is read
                as rows).
    deltas:     float32/float64 [num_pairs, 3], target minus source centre of each pair.
    src, tgt:   int32 [num_pairs] row indices. A pair with src or tgt out of range adds
                nothing (check_interaction_list counts them).
    locals:     [num_locals, (p+1)^2], multipoles' dtype, ADDED TO IN PLACE (zero it for a
                fresh sum); must not overlap any input.
    method:     "automatic" (= atomic), "atomic" (any pair order, agrees to rounding run to
                run) or "deterministic" (each target's pairs contiguous; bitwise reproducible).
    Returns locals.
    """
    if _is_torch(locals):
        torch = _torch_route("m2l_accumulate", (multipoles, deltas, src, tgt), locals, "locals",
                             differentiable=False)
        if torch is not None:
            torch.ops.wham.m2l_accumulate(multipoles, deltas, src, tgt, locals, p=_index(p),
                                          method=method)
            return locals
        _m2l_accumulate(multipoles, deltas, src, tgt, locals, p, method)
        _bump_version(locals)
        return locals
    return _m2l_accumulate(multipoles, deltas, src, tgt, locals, p, method)


def _m2l_accumulate(multipoles, deltas, src, tgt, locals, p, method):
    f = "m2l_accumulate"
    da = inspect(deltas, f, "deltas")
    ma, sa, ta, la, p, code, pairs, nm, nl, arrays = _list(f, multipoles, src, tgt, locals, p,
                                                          method, [da])
    _geometry(f, da, ma.dtype)
    if tuple(da.shape) != (pairs, 3):
        raise ValueError(f"wham.{f}: deltas has shape {tuple(da.shape)}; expected ({pairs}, 3)")
    with Launch(ma, arrays) as launch:
        if pairs:
            call("wham_m2l_accumulate_" + _SUFFIX[ma.dtype], ma.ptr, da.ptr, sa.ptr, ta.ptr,
                 la.ptr, p, pairs, nm, nl, code, launch.stream)
    return locals


def m2l_accumulate_centers(multipoles, centers, src, tgt, locals, *, p=None, method="automatic"):
    """In place: locals[tgt[i]] += M2L_p(multipoles[src[i]], centers[tgt[i]] - centers[src[i]]).

    centers: float32/float64 [R, 3] cell centres with R >= max(num_multipoles, num_locals)
             (a source row and a target row with one index are one cell). Everything else
             as m2l_accumulate. Returns locals.
    """
    if _is_torch(locals):
        torch = _torch_route("m2l_accumulate_centers", (multipoles, centers, src, tgt), locals,
                             "locals", differentiable=False)
        if torch is not None:
            torch.ops.wham.m2l_accumulate_centers(multipoles, centers, src, tgt, locals,
                                                  p=_index(p), method=method)
            return locals
        _m2l_accumulate_centers(multipoles, centers, src, tgt, locals, p, method)
        _bump_version(locals)
        return locals
    return _m2l_accumulate_centers(multipoles, centers, src, tgt, locals, p, method)


def _m2l_accumulate_centers(multipoles, centers, src, tgt, locals, p, method):
    f = "m2l_accumulate_centers"
    ca = inspect(centers, f, "centers")
    ma, sa, ta, la, p, code, pairs, nm, nl, arrays = _list(f, multipoles, src, tgt, locals, p,
                                                          method, [ca])
    _geometry(f, ca, ma.dtype)
    rows = _rows(f, ca, 3, "x, y, z a cell")
    if len(ca.shape) != 2 or rows < max(nm, nl):
        raise ValueError(f"wham.{f}: centers has shape {tuple(ca.shape)}; expected "
                         f"[R, 3] with R >= max(num_multipoles, num_locals) = {max(nm, nl)}")
    with Launch(ma, arrays) as launch:
        if pairs:
            call("wham_m2l_accumulate_centers_" + _SUFFIX[ma.dtype], ma.ptr, ca.ptr, sa.ptr,
                 ta.ptr, la.ptr, p, pairs, nm, nl, code, launch.stream)
    return locals


def m2l_accumulate_classes(multipoles, class_deltas, cls, src, tgt, locals, *, p=None,
                           method="automatic", grouped=False):
    """In place: locals[tgt[i]] += M2L_p(multipoles[src[i]], class_deltas[cls[i]]).

    class_deltas: float32/float64 [num_classes, 3], 1 <= num_classes <= 1024 (a uniform
                  octree level has 316 classes).
    cls:          int32 [num_pairs] class of each pair (out of range: NaN in that target).
    grouped:      True when each class's pairs are contiguous: runs
                  m2l_accumulate_class_groups (each class's operator made once and applied to
                  many pairs; atomic, so method must be "automatic" or "atomic").
    Everything else as m2l_accumulate. Returns locals.
    """
    if _is_torch(locals):
        torch = _torch_route("m2l_accumulate_classes", (multipoles, class_deltas, cls, src, tgt),
                             locals, "locals", differentiable=False)
        if torch is not None:
            torch.ops.wham.m2l_accumulate_classes(multipoles, class_deltas, cls, src, tgt, locals,
                                                  p=_index(p), method=method, grouped=bool(grouped))
            return locals
        _m2l_accumulate_classes(multipoles, class_deltas, cls, src, tgt, locals, p, method, grouped)
        _bump_version(locals)
        return locals
    return _m2l_accumulate_classes(multipoles, class_deltas, cls, src, tgt, locals, p, method,
                                   grouped)


def _m2l_accumulate_classes(multipoles, class_deltas, cls, src, tgt, locals, p, method, grouped):
    f = "m2l_accumulate_classes"
    ka = inspect(class_deltas, f, "class_deltas")
    ca = inspect(cls, f, "cls")
    ma, sa, ta, la, p, code, pairs, nm, nl, arrays = _list(f, multipoles, src, tgt, locals, p,
                                                          method, [ka, ca])
    _geometry(f, ka, ma.dtype)
    if len(ka.shape) != 2 or ka.shape[1] != 3:
        raise ValueError(f"wham.{f}: class_deltas must have shape [num_classes, 3]; got "
                         f"{tuple(ka.shape)}")
    num_classes = _int(f, "num_classes (rows of class_deltas)", ka.shape[0], 1, MAX_CLASSES)
    check_dtype(f, ca, ("int32",))
    if tuple(ca.shape) != (pairs,):
        raise ValueError(f"wham.{f}: cls has shape {tuple(ca.shape)}; expected ({pairs},), one "
                         "class a pair")
    if grouped and code == 2:
        raise ValueError(f"wham.{f}: grouped=True accumulates with atomics; method must be "
                         "'automatic' or 'atomic'")
    with Launch(ma, arrays) as launch:
        if pairs and grouped:
            call("wham_m2l_accumulate_class_groups_" + _SUFFIX[ma.dtype], ma.ptr, ka.ptr,
                 ca.ptr, sa.ptr, ta.ptr, la.ptr, p, pairs, num_classes, nm, nl, launch.stream)
        elif pairs:
            call("wham_m2l_accumulate_classes_" + _SUFFIX[ma.dtype], ma.ptr, ka.ptr, ca.ptr,
                 sa.ptr, ta.ptr, la.ptr, p, pairs, num_classes, nm, nl, code, launch.stream)
    return locals


def check_interaction_list(src, tgt, num_multipoles, num_locals, *, cls=None, num_classes=None,
                           out=None):
    """Counts the pairs the accumulate forms skip: src[i] outside 0..num_multipoles-1, tgt[i]
    outside 0..num_locals-1, or (with cls) cls[i] outside 0..num_classes-1.

    src, tgt, cls: int32 [num_pairs] on the GPU.
    out:  None: the count is returned as a Python int (this waits for the GPU). Else a
          one-element int64 or uint64 GPU array the count is written to, stream-ordered
          (set, not added to); out is returned without waiting.
    """
    f = "check_interaction_list"
    sa = inspect(src, f, "src")
    ta = inspect(tgt, f, "tgt")
    arrays = [sa, ta]
    for a in arrays:
        check_dtype(f, a, ("int32",))
        if len(a.shape) != 1:
            raise ValueError(f"wham.{f}: {a.name} must be 1-D [num_pairs]; got shape {tuple(a.shape)}")
    pairs = sa.shape[0]
    if ta.shape[0] != pairs:
        raise ValueError(f"wham.{f}: src has {pairs} pairs, tgt {ta.shape[0]}")
    _int(f, "num_pairs", pairs, 0, MAX_PAIRS)
    nm = _int(f, "num_multipoles", num_multipoles, 0, MAX_ROWS)
    nl = _int(f, "num_locals", num_locals, 0, MAX_ROWS)
    cptr, nc = None, 0
    if cls is not None:
        ca = inspect(cls, f, "cls")
        check_dtype(f, ca, ("int32",))
        if tuple(ca.shape) != (pairs,):
            raise ValueError(f"wham.{f}: cls has shape {tuple(ca.shape)}; expected ({pairs},)")
        if num_classes is None:
            raise ValueError(f"wham.{f}: num_classes is needed with cls")
        nc = _int(f, "num_classes", num_classes, 1, MAX_CLASSES)
        arrays.append(ca)
        cptr = ca.ptr
    elif num_classes is not None:
        raise ValueError(f"wham.{f}: num_classes given without cls")
    for a in arrays:
        check_aligned(f, a)
    check_same_device(f, arrays)
    with Launch(sa, arrays) as launch:
        if out is None:
            oa = launch.empty(f, "out", (1,), "int64")
        else:
            oa = inspect(out, f, "out", launch.stream)
            check_dtype(f, oa, ("int64", "uint64"))
            if oa.size != 1:
                raise ValueError(f"wham.{f}: out must hold one element; got shape {tuple(oa.shape)}")
            check_writable(f, oa)
            check_aligned(f, oa)
        call("wham_check_interaction_list", sa.ptr, ta.ptr, cptr, pairs, nm, nl, nc, oa.ptr,
             launch.stream)
    return int(oa.obj[0]) if out is None else out
