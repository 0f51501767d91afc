"""The FMM's operators besides M2L over GPU arrays: M2M and L2L (wham/translations.cuh) and
P2M, L2P and P2P (wham/particles.cuh).

Conventions are wham.m2l's: expansions of order p are rows of (p+1)^2 complex coefficients,
index(n, m) = n*n + n + m (solidfmm's solid harmonics, docs/specs/m2l.md); a displacement
is target centre minus source centre; complex64 coefficients go with float32 coordinates
and charges, complex128 with float64. Points are grouped in cells, the points of a cell
contiguous: cell c holds points cell_offsets[c] .. cell_offsets[c+1]-1 (int64).

Options after the arrays are keyword-only. With PyTorch tensors none of these is
differentiable; writes into out=, the accumulate forms' targets and l2p/p2p's potential and
gradient move the tensors' version counters and are refused while grad mode is on and an
argument requires grad; under torch.compile the calls go through torch.ops.wham.*
(wham/torch_ops.py).
"""

from . import _arrays
from ._arrays import inspect, check_dtype, check_aligned, check_writable, check_same_device
from ._common import (_choice, _int, _output, TRANSLATION_PATHS,
                      M2L_MAX_ORDER, MAX_CELLS, MAX_POINTS, MAX_NEAR, _FLOATS, _is_torch,
                      _torch_route, _bump_version, _into, _index, _expansions, _geometry,
                      _pair_list)
from ._frameworks import Launch
from ._lib import call

_SUFFIX = {"complex64": "f32", "complex128": "f64", "float32": "f32", "float64": "f64"}


# ---- M2M and L2L ------------------------------------------------------------------------

def m2m(multipoles, deltas, *, p=None, path="automatic", out=None):
    """out[..., :] = M2M_p(multipoles[..., :], deltas[..., :]), pair by pair (child to parent).

    M'_n^m = sum_{k<=n} sum_l M_k^l R_{n-k}^{m-l}(-delta): exact, no truncation.
    multipoles: complex64 or complex128, shape [..., (p+1)^2], C-contiguous.
    deltas:     float32 (with complex64) or float64 (with complex128), shape [..., 3] with
                the same leading shape: target (parent) centre - source (child) centre.
    p:          the order, 0..16 (complex64) or 0..20 (complex128); None infers it.
    path:       "automatic", "direct" (p <= 4), "thread" (p <= 12), "split" (7..12) or
                "warp"; a path outside its orders raises wham.InvalidArgument.
    out:        None or an array like multipoles (must not overlap an input).
    Returns the moved multipoles, multipoles' shape and dtype.
    """
    f = "m2m"
    if _is_torch(multipoles):
        torch = _torch_route(f, (multipoles, deltas), out, differentiable=False)
        if torch is not None:
            return _into(torch.ops.wham.m2m(multipoles, deltas, p=_index(p), path=path), out)
        result = _translate(f, "multipoles", multipoles, deltas, p, path, out)
        if out is not None:
            _bump_version(out)
        return result
    return _translate(f, "multipoles", multipoles, deltas, p, path, out)


def l2l(locals, deltas, *, p=None, path="automatic", out=None):
    """out[..., :] = L2L_p(locals[..., :], deltas[..., :]), pair by pair (parent to child).

    L'_k^l = sum_{n>=k} sum_m L_n^m conj(R_{n-k}^{m-l}(-delta)): exact, no truncation.
    deltas: target (child) centre - source (parent) centre. Everything else as m2m.
    Returns the moved local expansions, locals' shape and dtype.
    """
    f = "l2l"
    if _is_torch(locals):
        torch = _torch_route(f, (locals, deltas), out, differentiable=False)
        if torch is not None:
            return _into(torch.ops.wham.l2l(locals, deltas, p=_index(p), path=path), out)
        result = _translate(f, "locals", locals, deltas, p, path, out)
        if out is not None:
            _bump_version(out)
        return result
    return _translate(f, "locals", locals, deltas, p, path, out)


def _translate(f, name, x, deltas, p, path, out):
    """wham.m2m / wham.l2l straight to the library."""
    xa, C, p = _expansions(f, x, name, p, "[..., (p+1)^2]")
    code = _choice(f, "path", path, TRANSLATION_PATHS)
    da = inspect(deltas, f, "deltas")
    _geometry(f, da, xa.dtype)
    if tuple(da.shape) != tuple(xa.shape[:-1]) + (3,):
        raise ValueError(f"wham.{f}: deltas has shape {tuple(da.shape)}; expected "
                         f"{tuple(xa.shape[:-1]) + (3,)} ({name}' leading shape, then 3)")
    check_aligned(f, xa)
    check_same_device(f, [xa, da])
    with Launch(xa, [xa, da]) as launch:
        oa = _output(f, launch, out, xa.shape, xa.dtype, [xa, da])
        pairs = xa.size // C
        if pairs:
            call(f"wham_{f}_{_SUFFIX[xa.dtype]}", xa.ptr, da.ptr, oa.ptr, p, pairs, code,
                 launch.stream)
    return oa.obj


def m2m_accumulate(multipoles, deltas, src, tgt, parents, *, p=None, path="automatic"):
    """In place: parents[tgt[i]] += M2M_p(multipoles[src[i]], deltas[i]) for every pair i.

    multipoles: complex64/complex128 [num_multipoles, (p+1)^2] (any [..., (p+1)^2] is read
                as rows).
    deltas:     float32/float64 [num_pairs, 3], parent minus child centre of each pair.
    src, tgt:   int32 [num_pairs] row indices; a pair with src or tgt out of range adds
                nothing. Pairs listed by parent (each parent's children consecutive) are
                summed on chip before one atomic addition a coefficient.
    parents:    [num_parents, (p+1)^2], multipoles' dtype, ADDED TO IN PLACE (atomics: zero
                it for a fresh sum; results agree to rounding run to run); must not overlap
                any input.
    path:       as m2m.
    Returns parents.
    """
    f = "m2m_accumulate"
    if _is_torch(parents):
        torch = _torch_route(f, (multipoles, deltas, src, tgt), parents, "parents",
                             differentiable=False)
        if torch is not None:
            torch.ops.wham.m2m_accumulate(multipoles, deltas, src, tgt, parents, p=_index(p),
                                          path=path)
            return parents
        _m2m_accumulate(multipoles, deltas, src, tgt, parents, p, path)
        _bump_version(parents)
        return parents
    return _m2m_accumulate(multipoles, deltas, src, tgt, parents, p, path)


def l2l_accumulate(locals, deltas, src, tgt, children, *, p=None, path="automatic"):
    """In place: children[tgt[i]] += L2L_p(locals[src[i]], deltas[i]) for every pair i.

    locals:   complex64/complex128 [num_locals, (p+1)^2]; deltas: child minus parent centre;
    children: [num_children, (p+1)^2], ADDED TO IN PLACE. Everything else as
    m2m_accumulate. Returns children.
    """
    f = "l2l_accumulate"
    if _is_torch(children):
        torch = _torch_route(f, (locals, deltas, src, tgt), children, "children",
                             differentiable=False)
        if torch is not None:
            torch.ops.wham.l2l_accumulate(locals, deltas, src, tgt, children, p=_index(p),
                                          path=path)
            return children
        _l2l_accumulate(locals, deltas, src, tgt, children, p, path)
        _bump_version(children)
        return children
    return _l2l_accumulate(locals, deltas, src, tgt, children, p, path)


def _m2m_accumulate(multipoles, deltas, src, tgt, parents, p, path):
    return _translate_pairs("m2m_accumulate", ("multipoles", "parents"), multipoles, deltas,
                            src, tgt, parents, p, path)


def _l2l_accumulate(locals, deltas, src, tgt, children, p, path):
    return _translate_pairs("l2l_accumulate", ("locals", "children"), locals, deltas, src, tgt,
                            children, p, path)


def _translate_pairs(f, names, source, deltas, src, tgt, target, p, path):
    """The accumulate forms of M2M and L2L straight to the library."""
    da = inspect(deltas, f, "deltas")
    xa, sa, ta, oa, p, pairs, n_in, n_out, arrays = _pair_list(f, source, src, tgt, target, p,
                                                              names, [da])
    code = _choice(f, "path", path, TRANSLATION_PATHS)
    _geometry(f, da, xa.dtype)
    if tuple(da.shape) != (pairs, 3):
        raise ValueError(f"wham.{f}: deltas has shape {tuple(da.shape)}; expected ({pairs}, 3)")
    with Launch(xa, arrays) as launch:
        if pairs:
            call(f"wham_{f}_{_SUFFIX[xa.dtype]}", xa.ptr, da.ptr, sa.ptr, ta.ptr, oa.ptr, p,
                 pairs, n_in, n_out, code, launch.stream)
    return target


# ---- particles: the arrays P2M, L2P and P2P share ------------------------------------------

def _points(f, points, charges=None):
    """points float32/float64 [num_points, 3] and charges [num_points] of the same dtype."""
    xa = inspect(points, f, "points")
    check_dtype(f, xa, _FLOATS)
    if len(xa.shape) != 2 or xa.shape[1] != 3:
        raise ValueError(f"wham.{f}: points must have shape [num_points, 3]; got "
                         f"{tuple(xa.shape)}")
    n = _int(f, "num_points", xa.shape[0], 0, MAX_POINTS[xa.dtype])
    if charges is None:
        return xa, n, None
    qa = inspect(charges, f, "charges")
    check_dtype(f, qa, (xa.dtype,))
    if tuple(qa.shape) != (n,):
        raise ValueError(f"wham.{f}: charges has shape {tuple(qa.shape)}; expected ({n},), one "
                         "a point")
    return xa, n, qa


def _offsets(f, offsets, name, num_cells=None):
    """int64 [num_cells + 1] offsets; returns the Array and num_cells."""
    a = inspect(offsets, f, name)
    check_dtype(f, a, ("int64",))
    if len(a.shape) != 1 or a.shape[0] < 1:
        raise ValueError(f"wham.{f}: {name} must be 1-D [num_cells + 1] (at least one entry); "
                         f"got shape {tuple(a.shape)}")
    if num_cells is not None and a.shape[0] != num_cells + 1:
        raise ValueError(f"wham.{f}: {name} has shape {tuple(a.shape)}; expected "
                         f"({num_cells + 1},), as cell_offsets")
    return a, _int(f, "num_cells", a.shape[0] - 1, 0, MAX_CELLS)


def _centers(f, centers, real, num_cells):
    ca = inspect(centers, f, "centers")
    check_dtype(f, ca, (real,))
    if tuple(ca.shape) != (num_cells, 3):
        raise ValueError(f"wham.{f}: centers has shape {tuple(ca.shape)}; expected "
                         f"({num_cells}, 3), one a cell of cell_offsets")
    return ca


def _added_to(f, potential, gradient, real, n):
    """potential [n] and gradient [n, 3] (or None) of dtype `real`, both writable."""
    pa = inspect(potential, f, "potential")
    check_dtype(f, pa, (real,))
    if tuple(pa.shape) != (n,):
        raise ValueError(f"wham.{f}: potential has shape {tuple(pa.shape)}; expected ({n},), "
                         "one a point")
    check_writable(f, pa)
    if gradient is None:
        return [pa]
    ga = inspect(gradient, f, "gradient")
    check_dtype(f, ga, (real,))
    if tuple(ga.shape) != (n, 3):
        raise ValueError(f"wham.{f}: gradient has shape {tuple(ga.shape)}; expected ({n}, 3)")
    check_writable(f, ga)
    return [pa, ga]


def _checked(f, inputs, outputs):
    """Every array aligned and on one device; each output apart from every other array."""
    arrays = inputs + outputs
    for a in arrays:
        check_aligned(f, a)
    check_same_device(f, arrays)
    for o in outputs:
        for a in arrays:
            if a is not o and _arrays.overlap(o, a):
                raise ValueError(f"wham.{f}: {o.name} overlaps {a.name}; it must be a buffer "
                                 "apart from every other argument")
    return arrays


# ---- P2M ----------------------------------------------------------------------------------

def p2m(points, charges, cell_offsets, centers, *, p=None, out=None):
    """multipoles[c] = sum_{i in cell c} charges[i] R(points[i] - centers[c]), every cell.

    points:       float32 or float64 [num_points, 3], the points of each cell contiguous.
    charges:      [num_points], points' dtype.
    cell_offsets: int64 [num_cells + 1]: cell c holds points cell_offsets[c] ..
                  cell_offsets[c+1]-1 (clamped to 0..num_points on the GPU).
    centers:      [num_cells, 3], points' dtype.
    p:            the order, 0..16 (float32) or 0..20 (float64); None: out's rows give it.
    out:          None or complex64 (float32 points) / complex128 [num_cells, (p+1)^2]; must
                  not overlap an input.
    Returns the multipoles, overwritten: every coefficient of every cell (an empty cell gets
    zeros).
    """
    f = "p2m"
    if _is_torch(points):
        torch = _torch_route(f, (points, charges, cell_offsets, centers), out,
                             differentiable=False)
        if torch is not None:
            if p is None and out is not None:
                p = _order_of_out(f, out)
            return _into(torch.ops.wham.p2m(points, charges, cell_offsets, centers,
                                            p=_index(p)), out)
        result = _p2m(points, charges, cell_offsets, centers, p, out)
        if out is not None:
            _bump_version(out)
        return result
    return _p2m(points, charges, cell_offsets, centers, p, out)


def _order_of_out(f, out):
    """The order of p2m's out= (rows of (p+1)^2 coefficients). Plain arithmetic on its shape:
    torch.compile traces this where PyTorch routes the call."""
    shape = getattr(out, "shape", None)
    if shape is None or len(shape) == 0:
        raise ValueError(f"wham.{f}: p is needed (or an out= of shape [num_cells, (p+1)^2])")
    count = int(shape[-1])
    q = int(round(count ** 0.5)) - 1
    if count < 1 or (q + 1) * (q + 1) != count:
        raise ValueError(f"wham.{f}: the last dimension of out is {count}, not a coefficient "
                         "count (p+1)^2")
    return q


def _p2m(points, charges, cell_offsets, centers, p, out):
    """wham.p2m straight to the library."""
    f = "p2m"
    xa, n, qa = _points(f, points, charges)
    oa, num_cells = _offsets(f, cell_offsets, "cell_offsets")
    ca = _centers(f, centers, xa.dtype, num_cells)
    if p is None:
        if out is None:
            raise ValueError(f"wham.{f}: p is needed (or an out= of shape [num_cells, (p+1)^2])")
        p = _order_of_out(f, out)
    p = _int(f, "p", p, 0, M2L_MAX_ORDER[xa.dtype])
    dtype = _arrays.COMPLEX_OF[xa.dtype]
    arrays = _checked(f, [xa, qa, oa, ca], [])
    with Launch(xa, arrays) as launch:
        ma = _output(f, launch, out, (num_cells, (p + 1) ** 2), dtype, arrays)
        if num_cells:
            call(f"wham_p2m_{_SUFFIX[xa.dtype]}", xa.ptr, qa.ptr, n, oa.ptr, ca.ptr, num_cells,
                 ma.ptr, p, launch.stream)
    return ma.obj


# ---- L2P ----------------------------------------------------------------------------------

def l2p(locals, centers, cell_offsets, points, potential, gradient=None, *, p=None):
    """Adds each cell's local expansion at its points, in place:
        potential[j] += Re sum_{n,m} conj(L_n^m) R_n^m(centers[c] - points[j])
        gradient[j]  += the gradient of that term in points[j]          (j in cell c)

    locals:       complex64/complex128 [num_cells, (p+1)^2].
    centers:      float32/float64 (locals' real type) [num_cells, 3].
    cell_offsets: int64 [num_cells + 1], as p2m's.
    points:       [num_points, 3], the points of each cell contiguous.
    potential:    [num_points], ADDED TO IN PLACE (zero it for a fresh sum).
    gradient:     None (not computed) or [num_points, 3], ADDED TO IN PLACE.
    p:            None infers it from locals' rows.
    potential and gradient must not overlap each other or an input.
    Returns (potential, gradient).
    """
    f = "l2p"
    if _is_torch(potential):
        inputs = (locals, centers, cell_offsets, points) + (() if gradient is None else (gradient,))
        torch = _torch_route(f, inputs, potential, _written(gradient), differentiable=False)
        if torch is not None:
            torch.ops.wham.l2p(locals, centers, cell_offsets, points, potential, gradient,
                               p=_index(p))
            return potential, gradient
        _l2p(locals, centers, cell_offsets, points, potential, gradient, p)
        _bump_versions(potential, gradient)
        return potential, gradient
    return _l2p(locals, centers, cell_offsets, points, potential, gradient, p)


def _written(gradient):
    return "potential" if gradient is None else "potential and gradient"


def _bump_versions(potential, gradient):
    _bump_version(potential)
    if gradient is not None:
        _bump_version(gradient)


def _l2p(locals, centers, cell_offsets, points, potential, gradient, p):
    """wham.l2p straight to the library."""
    f = "l2p"
    la, C, p = _expansions(f, locals, "locals", p, "[num_cells, (p+1)^2]")
    real = _arrays.REAL_OF[la.dtype]
    oa, num_cells = _offsets(f, cell_offsets, "cell_offsets")
    if tuple(la.shape) != (num_cells, C):
        raise ValueError(f"wham.{f}: locals has shape {tuple(la.shape)}; expected "
                         f"({num_cells}, {C}), one row a cell of cell_offsets")
    ca = _centers(f, centers, real, num_cells)
    xa, n, _ = _points(f, points)
    check_dtype(f, xa, (real,))
    outputs = _added_to(f, potential, gradient, real, n)
    arrays = _checked(f, [la, ca, oa, xa], outputs)
    pa, ga = outputs[0], (outputs[1] if len(outputs) > 1 else None)
    with Launch(la, arrays) as launch:
        if num_cells and n:
            call(f"wham_l2p_{_SUFFIX[real]}", la.ptr, ca.ptr, oa.ptr, num_cells, xa.ptr, n,
                 pa.ptr, ga.ptr if ga is not None else None, p, launch.stream)
    return potential, gradient


# ---- P2P ----------------------------------------------------------------------------------

def p2p(points, charges, cell_offsets, near_offsets, near_cells, potential, gradient=None):
    """The near field, added in place: for each target cell t, each source cell s in
    near_cells[near_offsets[t] .. near_offsets[t+1]-1], each point j of t and i of s with
    r = |points[j] - points[i]| > 0:
        potential[j] += charges[i] / r,   gradient[j] += -charges[i] (x_j - x_i) / r^3

    points, charges, cell_offsets: as p2m (float32 or float64).
    near_offsets: int64 [num_cells + 1]; near_cells: int32 [num_near] source cell ids (a CSR
                  list; a cell may list itself: its self pairs are left out; ids outside
                  0..num_cells-1 add nothing).
    potential:    [num_points], ADDED TO IN PLACE; gradient: None or [num_points, 3], ADDED
                  TO IN PLACE. They must not overlap each other or an input.
    Returns (potential, gradient).
    """
    f = "p2p"
    if _is_torch(potential):
        inputs = (points, charges, cell_offsets, near_offsets, near_cells) + \
            (() if gradient is None else (gradient,))
        torch = _torch_route(f, inputs, potential, _written(gradient), differentiable=False)
        if torch is not None:
            torch.ops.wham.p2p(points, charges, cell_offsets, near_offsets, near_cells,
                               potential, gradient)
            return potential, gradient
        _p2p(points, charges, cell_offsets, near_offsets, near_cells, potential, gradient)
        _bump_versions(potential, gradient)
        return potential, gradient
    return _p2p(points, charges, cell_offsets, near_offsets, near_cells, potential, gradient)


def _p2p(points, charges, cell_offsets, near_offsets, near_cells, potential, gradient):
    """wham.p2p straight to the library."""
    f = "p2p"
    xa, n, qa = _points(f, points, charges)
    oa, num_cells = _offsets(f, cell_offsets, "cell_offsets")
    na, _ = _offsets(f, near_offsets, "near_offsets", num_cells)
    ia = inspect(near_cells, f, "near_cells")
    check_dtype(f, ia, ("int32",))
    if len(ia.shape) != 1:
        raise ValueError(f"wham.{f}: near_cells must be 1-D [num_near]; got shape "
                         f"{tuple(ia.shape)}")
    num_near = _int(f, "num_near", ia.shape[0], 0, MAX_NEAR)
    outputs = _added_to(f, potential, gradient, xa.dtype, n)
    arrays = _checked(f, [xa, qa, oa, na, ia], outputs)
    pa, ga = outputs[0], (outputs[1] if len(outputs) > 1 else None)
    with Launch(xa, arrays) as launch:
        if num_cells and n and num_near:
            call(f"wham_p2p_{_SUFFIX[xa.dtype]}", xa.ptr, qa.ptr, n, oa.ptr, num_cells, na.ptr,
                 ia.ptr, num_near, pa.ptr, ga.ptr if ga is not None else None, launch.stream)
    return potential, gradient
