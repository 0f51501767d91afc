"""The FMM operators registered with PyTorch (torch.ops.wham.m2l, m2m, l2l, p2m and the
mutating m2l_accumulate*, m2m_accumulate, l2l_accumulate, l2p, p2p); imported by
wham.torch_ops, whose docstring describes them."""

from typing import List, Optional

import torch

from . import _common, _fmm_ops as fmm_ops, _m2l as m2l_ops, ops
from ._torch_common import Tensor, _contiguous, _check_dtype, _eager, _library


# ---- m2l --------------------------------------------------------------------------------

@torch.library.custom_op("wham::m2l", mutates_args=())
def _m2l_op(multipoles: Tensor, deltas: Tensor, *, p: Optional[int] = None,
         path: str = "automatic") -> Tensor:
    return m2l_ops._m2l(_contiguous(multipoles), _contiguous(deltas), p, path, None)


@_m2l_op.register_fake
def _(multipoles, deltas, *, p=None, path="automatic"):
    _check_dtype("m2l", "multipoles", multipoles, ops._COMPLEX)
    return torch.empty_like(multipoles, memory_format=torch.contiguous_format)


# ---- the mutating operators ------------------------------------------------------------------
# Each is an out-of-place custom operator (what traced graphs hold) and a mutating
# CompositeImplicitAutograd operator defined by schema below, the public
# torch.ops.wham.m2l_accumulate*, m2m_accumulate, l2l_accumulate, l2p and p2p.

@torch.library.custom_op("wham::m2l_accumulate_functional", mutates_args=())
def _m2l_accumulate_functional(multipoles: Tensor, deltas: Tensor, src: Tensor, tgt: Tensor,
                               locals: Tensor, *, p: Optional[int] = None,
                               method: str = "automatic") -> Tensor:
    out = _contiguous(locals).clone(memory_format=torch.contiguous_format)
    m2l_ops._m2l_accumulate(_contiguous(multipoles), _contiguous(deltas), _contiguous(src),
                            _contiguous(tgt), out, p, method)
    return out


@torch.library.custom_op("wham::m2l_accumulate_centers_functional", mutates_args=())
def _m2l_accumulate_centers_functional(multipoles: Tensor, centers: Tensor, src: Tensor,
                                       tgt: Tensor, locals: Tensor, *, p: Optional[int] = None,
                                       method: str = "automatic") -> Tensor:
    out = _contiguous(locals).clone(memory_format=torch.contiguous_format)
    m2l_ops._m2l_accumulate_centers(_contiguous(multipoles), _contiguous(centers),
                                    _contiguous(src), _contiguous(tgt), out, p, method)
    return out


@torch.library.custom_op("wham::m2l_accumulate_classes_functional", mutates_args=())
def _m2l_accumulate_classes_functional(multipoles: Tensor, class_deltas: Tensor, cls: Tensor,
                                       src: Tensor, tgt: Tensor, locals: Tensor, *,
                                       p: Optional[int] = None, method: str = "automatic",
                                       grouped: bool = False) -> Tensor:
    out = _contiguous(locals).clone(memory_format=torch.contiguous_format)
    m2l_ops._m2l_accumulate_classes(_contiguous(multipoles), _contiguous(class_deltas),
                                    _contiguous(cls), _contiguous(src), _contiguous(tgt), out, p,
                                    method, grouped)
    return out


def _fake_like_locals(locals, function="m2l_accumulate", name="locals"):
    _check_dtype(function, name, locals, ops._COMPLEX)
    return torch.empty_like(locals, memory_format=torch.contiguous_format)


@_m2l_accumulate_functional.register_fake
def _(multipoles, deltas, src, tgt, locals, *, p=None, method="automatic"):
    return _fake_like_locals(locals)


@_m2l_accumulate_centers_functional.register_fake
def _(multipoles, centers, src, tgt, locals, *, p=None, method="automatic"):
    return _fake_like_locals(locals)


@_m2l_accumulate_classes_functional.register_fake
def _(multipoles, class_deltas, cls, src, tgt, locals, *, p=None, method="automatic",
      grouped=False):
    return _fake_like_locals(locals)


_ACCUMULATE_SCHEMAS = {
    "m2l_accumulate": "Tensor multipoles, Tensor deltas, Tensor src, Tensor tgt, "
                      "Tensor(a!) locals, *, int? p=None, str method=\"automatic\"",
    "m2l_accumulate_centers": "Tensor multipoles, Tensor centers, Tensor src, Tensor tgt, "
                              "Tensor(a!) locals, *, int? p=None, str method=\"automatic\"",
    "m2l_accumulate_classes": "Tensor multipoles, Tensor class_deltas, Tensor cls, Tensor src, "
                              "Tensor tgt, Tensor(a!) locals, *, int? p=None, "
                              "str method=\"automatic\", bool grouped=False",
    "m2m_accumulate": "Tensor multipoles, Tensor deltas, Tensor src, Tensor tgt, "
                      "Tensor(a!) parents, *, int? p=None, str path=\"automatic\"",
    "l2l_accumulate": "Tensor locals, Tensor deltas, Tensor src, Tensor tgt, "
                      "Tensor(a!) children, *, int? p=None, str path=\"automatic\"",
    "l2p": "Tensor locals, Tensor centers, Tensor cell_offsets, Tensor points, "
           "Tensor(a!) potential, Tensor(b!)? gradient=None, *, int? p=None",
    "p2p": "Tensor points, Tensor charges, Tensor cell_offsets, Tensor near_offsets, "
           "Tensor near_cells, Tensor(a!) potential, Tensor(b!)? gradient=None",
}
for _name, _arguments in _ACCUMULATE_SCHEMAS.items():
    _library.define(f"{_name}({_arguments}) -> ()")


def _accumulate_kernel(name, direct, functional, written="locals"):
    def kernel(*args, **options):
        *inputs, locals = args
        if _eager(args):
            _common._torch_route(name, inputs, locals, written, differentiable=False)
            direct(*args, **options)
            _common._bump_version(locals)
        else:
            locals.copy_(functional(*args, **options))
    kernel.__name__ = name
    return kernel


def _direct(function):
    # The library call, given the options the registered operator passes as keywords.
    def call(*args, p=None, method="automatic"):
        return function(*args, p, method)
    return call


_library.impl("m2l_accumulate",
              _accumulate_kernel("m2l_accumulate", _direct(m2l_ops._m2l_accumulate),
                                 _m2l_accumulate_functional),
              "CompositeImplicitAutograd")
_library.impl("m2l_accumulate_centers",
              _accumulate_kernel("m2l_accumulate_centers",
                                 _direct(m2l_ops._m2l_accumulate_centers),
                                 _m2l_accumulate_centers_functional),
              "CompositeImplicitAutograd")


def _classes_direct(*args, p=None, method="automatic", grouped=False):
    return m2l_ops._m2l_accumulate_classes(*args, p, method, grouped)


_library.impl("m2l_accumulate_classes",
              _accumulate_kernel("m2l_accumulate_classes", _classes_direct,
                                 _m2l_accumulate_classes_functional),
              "CompositeImplicitAutograd")


# ---- m2m, l2l, p2m -------------------------------------------------------------------------

@torch.library.custom_op("wham::m2m", mutates_args=())
def _m2m_op(multipoles: Tensor, deltas: Tensor, *, p: Optional[int] = None,
            path: str = "automatic") -> Tensor:
    return fmm_ops._translate("m2m", "multipoles", _contiguous(multipoles), _contiguous(deltas),
                              p, path, None)


@torch.library.custom_op("wham::l2l", mutates_args=())
def _l2l_op(locals: Tensor, deltas: Tensor, *, p: Optional[int] = None,
            path: str = "automatic") -> Tensor:
    return fmm_ops._translate("l2l", "locals", _contiguous(locals), _contiguous(deltas), p, path,
                              None)


@_m2m_op.register_fake
def _(multipoles, deltas, *, p=None, path="automatic"):
    return _fake_like_locals(multipoles, "m2m", "multipoles")


@_l2l_op.register_fake
def _(locals, deltas, *, p=None, path="automatic"):
    return _fake_like_locals(locals, "l2l")


@torch.library.custom_op("wham::p2m", mutates_args=())
def _p2m_op(points: Tensor, charges: Tensor, cell_offsets: Tensor, centers: Tensor, *,
            p: Optional[int] = None) -> Tensor:
    return fmm_ops._p2m(_contiguous(points), _contiguous(charges), _contiguous(cell_offsets),
                        _contiguous(centers), p, None)


@_p2m_op.register_fake
def _(points, charges, cell_offsets, centers, *, p=None):
    _check_dtype("p2m", "points", points, ops._FLOATS)
    if p is None:
        raise ValueError("wham.p2m: p is needed (torch.ops.wham.p2m has no out= to read it from)")
    dtype = torch.complex64 if points.dtype == torch.float32 else torch.complex128
    return points.new_empty((cell_offsets.shape[0] - 1, (p + 1) ** 2), dtype=dtype)


# ---- m2m_accumulate, l2l_accumulate, l2p, p2p: mutating, as the m2l accumulate forms --------

@torch.library.custom_op("wham::m2m_accumulate_functional", mutates_args=())
def _m2m_accumulate_functional(multipoles: Tensor, deltas: Tensor, src: Tensor, tgt: Tensor,
                               parents: Tensor, *, p: Optional[int] = None,
                               path: str = "automatic") -> Tensor:
    out = _contiguous(parents).clone(memory_format=torch.contiguous_format)
    fmm_ops._m2m_accumulate(_contiguous(multipoles), _contiguous(deltas), _contiguous(src),
                            _contiguous(tgt), out, p, path)
    return out


@torch.library.custom_op("wham::l2l_accumulate_functional", mutates_args=())
def _l2l_accumulate_functional(locals: Tensor, deltas: Tensor, src: Tensor, tgt: Tensor,
                               children: Tensor, *, p: Optional[int] = None,
                               path: str = "automatic") -> Tensor:
    out = _contiguous(children).clone(memory_format=torch.contiguous_format)
    fmm_ops._l2l_accumulate(_contiguous(locals), _contiguous(deltas), _contiguous(src),
                            _contiguous(tgt), out, p, path)
    return out


@_m2m_accumulate_functional.register_fake
def _(multipoles, deltas, src, tgt, parents, *, p=None, path="automatic"):
    return _fake_like_locals(parents, "m2m_accumulate", "parents")


@_l2l_accumulate_functional.register_fake
def _(locals, deltas, src, tgt, children, *, p=None, path="automatic"):
    return _fake_like_locals(children, "l2l_accumulate", "children")


def _fresh(t):
    """A contiguous copy of an output that is added to (None stays None)."""
    return None if t is None else _contiguous(t).clone(memory_format=torch.contiguous_format)


def _results(potential, gradient):
    return [potential] if gradient is None else [potential, gradient]


@torch.library.custom_op("wham::l2p_functional", mutates_args=())
def _l2p_functional(locals: Tensor, centers: Tensor, cell_offsets: Tensor, points: Tensor,
                    potential: Tensor, gradient: Optional[Tensor] = None, *,
                    p: Optional[int] = None) -> List[Tensor]:
    phi, grad = _fresh(potential), _fresh(gradient)
    fmm_ops._l2p(_contiguous(locals), _contiguous(centers), _contiguous(cell_offsets),
                 _contiguous(points), phi, grad, p)
    return _results(phi, grad)


@torch.library.custom_op("wham::p2p_functional", mutates_args=())
def _p2p_functional(points: Tensor, charges: Tensor, cell_offsets: Tensor, near_offsets: Tensor,
                    near_cells: Tensor, potential: Tensor,
                    gradient: Optional[Tensor] = None) -> List[Tensor]:
    phi, grad = _fresh(potential), _fresh(gradient)
    fmm_ops._p2p(_contiguous(points), _contiguous(charges), _contiguous(cell_offsets),
                 _contiguous(near_offsets), _contiguous(near_cells), phi, grad)
    return _results(phi, grad)


def _fake_added_to(function, potential, gradient):
    _check_dtype(function, "potential", potential, ops._FLOATS)
    return [torch.empty_like(t, memory_format=torch.contiguous_format)
            for t in _results(potential, gradient)]


@_l2p_functional.register_fake
def _(locals, centers, cell_offsets, points, potential, gradient=None, *, p=None):
    return _fake_added_to("l2p", potential, gradient)


@_p2p_functional.register_fake
def _(points, charges, cell_offsets, near_offsets, near_cells, potential, gradient=None):
    return _fake_added_to("p2p", potential, gradient)


def _translation_direct(function):
    def call(*args, p=None, path="automatic"):
        return function(*args, p, path)
    return call


_library.impl("m2m_accumulate",
              _accumulate_kernel("m2m_accumulate", _translation_direct(fmm_ops._m2m_accumulate),
                                 _m2m_accumulate_functional, "parents"),
              "CompositeImplicitAutograd")
_library.impl("l2l_accumulate",
              _accumulate_kernel("l2l_accumulate", _translation_direct(fmm_ops._l2l_accumulate),
                                 _l2l_accumulate_functional, "children"),
              "CompositeImplicitAutograd")


def _added_to_kernel(name, num_inputs, direct, functional):
    """l2p / p2p: the inputs, then potential and an optional gradient, both added to (the
    dispatcher leaves a trailing gradient=None out of args)."""
    def kernel(*args, **options):
        inputs = list(args[:num_inputs])
        potential = args[num_inputs]
        gradient = args[num_inputs + 1] if len(args) > num_inputs + 1 else None
        written = _results(potential, gradient)
        if _eager(inputs + written):
            _common._torch_route(name, inputs + written[1:], potential,
                                 fmm_ops._written(gradient), differentiable=False)
            direct(*inputs, potential, gradient, **options)
            for t in written:
                _common._bump_version(t)
        else:
            for t, r in zip(written, functional(*inputs, potential, gradient, **options)):
                t.copy_(r)
    kernel.__name__ = name
    return kernel


def _l2p_direct(locals, centers, cell_offsets, points, potential, gradient, *, p=None):
    return fmm_ops._l2p(locals, centers, cell_offsets, points, potential, gradient, p)


_library.impl("l2p", _added_to_kernel("l2p", 4, _l2p_direct, _l2p_functional),
              "CompositeImplicitAutograd")
_library.impl("p2p", _added_to_kernel("p2p", 5, fmm_ops._p2p, _p2p_functional),
              "CompositeImplicitAutograd")
