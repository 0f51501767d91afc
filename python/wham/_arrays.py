"""What wham needs to know of a caller's array, from whichever protocol it speaks.

`inspect(x, function, name)` returns an `Array`: device pointer, shape, dtype name, device
id and framework, after checking that the memory is CUDA-accessible and C-contiguous.
Order of preference: PyTorch tensors directly (their `__cuda_array_interface__` refuses
tensors that require grad, and the attributes are cheaper), then
`__cuda_array_interface__` (CuPy, Numba, JAX, PyTorch), then `__dlpack__` /
`__dlpack_device__` (read with ctypes, `_dlpack.py`).

The device of an array is its framework's word (PyTorch, CuPy, JAX, DLPack's device id),
else the driver's for its pointer (Numba and other __cuda_array_interface__ producers);
None for pinned host and managed memory, which every device reads.

A PyTorch tensor with the conjugate or negative bit (`x.conj()` of a complex tensor, views
of it) holds other values than its memory: as an input it is copied with resolve_conj() /
resolve_neg() (the copy is what wham reads, kept alive until the work is done); as an
output or in-place target (`writable=True`, or check_writable) it is refused.
"""

import threading

from . import _dlpack

# Item sizes of the dtypes wham takes; a pointer must be aligned to its element type
# (cuda::std::complex<T> is aligned to twice T's alignment: its item size).
ITEMSIZE = {"float32": 4, "float64": 8, "complex64": 8, "complex128": 16,
            "float16": 2, "bfloat16": 2,
            "int32": 4, "int64": 8, "uint64": 8}
REAL_OF = {"complex64": "float32", "complex128": "float64"}
COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}

# __cuda_array_interface__ typestr -> dtype name (little-endian or native byte order).
_TYPESTR = {"f4": "float32", "f8": "float64", "c8": "complex64", "c16": "complex128",
            "i4": "int32", "i8": "int64", "u8": "uint64", "f2": "float16", "i2": "int16",
            "i1": "int8", "u1": "uint8", "u4": "uint32", "b1": "bool"}


def framework_of(x):
    """'torch', 'cupy', 'jax', 'numba', 'numpy', ... from the type's module (no import)."""
    module = type(x).__module__ or ""
    top = module.split(".", 1)[0]
    return "jax" if top in ("jax", "jaxlib") else top


class Array:
    """A checked view of a caller's GPU array (the object itself stays in `obj`)."""

    __slots__ = ("obj", "name", "ptr", "shape", "dtype", "device", "framework", "readonly",
                 "stream", "keep", "resolved")

    def __init__(self, obj, name, ptr, shape, dtype, device, framework, readonly=False,
                 stream=None, keep=None, resolved=None):
        self.obj = obj
        self.name = name
        self.ptr = ptr
        self.shape = shape
        self.dtype = dtype
        # CUDA device ordinal; None for memory every device reads (pinned host, managed) or
        # where nothing says.
        self.device = device
        self.framework = framework
        self.readonly = readonly
        self.stream = stream        # the stream the data was produced on, if wham must order after it
        # What must outlive the work that reads this array (a consumed DLPack view, a copy
        # wham made): the call keeps it until its work is done (_frameworks.Launch).
        self.keep = keep
        # "conjugated" / "negated": ptr is wham's copy of such a view of `name`, not its memory.
        self.resolved = resolved

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n


def _describe(x):
    shape = getattr(x, "shape", None)
    return f"{type(x).__module__}.{type(x).__qualname__}" + (f" of shape {tuple(shape)}" if shape is not None else "")


def _check_contiguous(function, name, shape, strides, itemsize, unit_bytes):
    """strides in bytes (unit_bytes) or elements; None means C-contiguous."""
    if strides is None:
        return
    expected = 1 if not unit_bytes else itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent != 1 and stride != expected:
            raise ValueError(
                f"wham.{function}: {name} must be C-contiguous (row-major, no gaps); got shape "
                f"{tuple(shape)} with strides {tuple(strides)}"
                f"{' bytes' if unit_bytes else ' elements'}. Make a contiguous copy first "
                "(torch: .contiguous(), CuPy: cupy.ascontiguousarray, JAX arrays always are).")
        expected *= extent


def _not_cuda(function, name, x, where):
    return ValueError(
        f"wham.{function}: {name} must be in CUDA device memory (device, managed or pinned); "
        f"got {_describe(x)} on {where}. Move it to the GPU first (e.g. "
        "torch.as_tensor(x, device='cuda'), cupy.asarray(x), jax.device_put(x, jax.devices('gpu')[0])).")


def _torch_current_stream(device):
    import torch
    return torch.cuda.current_stream(device).cuda_stream


_VIEW_BITS = {"conjugated": ("is_conj()", "resolve_conj()"),
              "negated": ("is_neg()", "resolve_neg()")}


def _view_bit(x):
    """"conjugated" or "negated" for a PyTorch view whose values are not its memory's."""
    if getattr(x, "is_conj", None) is not None and x.is_conj():
        return "conjugated"
    if getattr(x, "is_neg", None) is not None and x.is_neg():
        return "negated"
    return None


def _from_torch(x, function, name, writable=False):
    if x.device.type == "cuda":
        device = x.device.index
    elif x.device.type == "cpu" and x.is_pinned():
        device = None  # page-locked: every device reads it; the call's device is the others'
    else:
        raise _not_cuda(function, name, x, f"the {x.device.type} device")
    dtype = str(x.dtype)[6:]  # "torch.float32" -> "float32"
    shape = tuple(x.shape)
    if not x.is_contiguous():
        _check_contiguous(function, name, shape, tuple(x.stride()), 0, False)
    bit = _view_bit(x)
    if bit is None:
        return Array(x, name, x.data_ptr(), shape, dtype, device, "torch")
    query, method = _VIEW_BITS[bit]
    if writable:
        raise ValueError(
            f"wham.{function}: {name} is a {bit} view ({query} is True): its memory does not "
            f"hold the values it shows, so wham cannot write into it. Pass a tensor without "
            f"the bit (torch.empty_like(...) gives one) and conjugate or negate the result")
    if device is None:
        raise ValueError(
            f"wham.{function}: {name} is a {bit} view of pinned host memory; wham would have to "
            f"copy it to pageable memory. Pass {name}.{method}.pin_memory(), or a CUDA tensor")
    # The copy holds the values the view shows; PyTorch allocates it on the current stream
    # of the tensor's device, where it is also written.
    r = x.resolve_conj().resolve_neg()
    if not r.is_contiguous():
        _check_contiguous(function, name, shape, tuple(r.stride()), 0, False)
    return Array(r, name, r.data_ptr(), shape, dtype, device, "torch",
                 stream=_torch_current_stream(device), keep=r, resolved=bit)


def _from_cai(x, cai, function, name, framework):
    typestr = cai["typestr"]
    if typestr[0] == ">" and typestr[1:] not in ("i1", "u1", "b1"):
        raise TypeError(f"wham.{function}: {name} is big-endian ({typestr}); wham takes native "
                        "little-endian data")
    dtype = _TYPESTR.get(typestr[1:], typestr)
    shape = tuple(int(s) for s in cai["shape"])
    ptr, readonly = cai["data"]
    itemsize = ITEMSIZE.get(dtype) or int(typestr[2:] or 0)
    _check_contiguous(function, name, shape, cai.get("strides"), itemsize, True)
    device = None
    if framework == "cupy":
        device = x.device.id
    elif framework == "jax":
        device = _jax_device(x)
    elif ptr:  # Numba and the rest: the device the driver knows the pointer on
        device = _pointer_device(ptr)
    return Array(x, name, ptr or 0, shape, dtype, device, framework, bool(readonly),
                 cai.get("stream"))


def _jax_device(x):
    try:
        (dev,) = x.devices()
    except (AttributeError, ValueError):
        return None
    # local_hardware_id is the CUDA ordinal in this process (0 on every rank of a job with one
    # GPU a process); id is JAX's global device number.
    ordinal = getattr(dev, "local_hardware_id", None)
    return ordinal if ordinal is not None else getattr(dev, "id", None)


def _pointer_device(ptr):
    from . import _frameworks
    kind, ordinal = _frameworks.pointer_kind(ptr)
    return ordinal if kind == "device" else None


def _from_dlpack(x, function, name, framework, stream):
    try:
        device_type = int(x.__dlpack_device__()[0])
    except AttributeError:
        device_type = None
    if device_type is not None and device_type not in _dlpack.CUDA_ACCESSIBLE + (_dlpack.KDL_CPU,):
        where = _dlpack.DEVICE_NAMES.get(device_type, f"DLPack device type {device_type}")
        raise _not_cuda(function, name, x, f"the {where} device (DLPack device type {device_type})")
    if device_type == _dlpack.KDL_CPU and not _may_be_pinned():
        raise _not_cuda(function, name, x, "the CPU device (DLPack device type 1)")
    # The stream wham will run on (default: the legacy default stream; Launch takes the
    # tensor again where the call's stream turns out to be another), so that the producer
    # orders its pending work on the tensor before it.
    try:
        view = _dlpack.DLPackView(x, stream=_dlpack.consumer_stream(device_type, stream or 0))
    except Exception:
        if device_type != _dlpack.KDL_CPU:
            raise
        # A CPU array it cannot export (NumPy's object arrays, say) is refused as host memory.
        raise _not_cuda(function, name, x, "the CPU device (DLPack device type 1)") from None
    try:
        if view.device_type == _dlpack.KDL_CPU:
            from . import _frameworks
            if _frameworks.pointer_kind(view.ptr)[0] != "host":
                raise _not_cuda(function, name, x, "the CPU device (DLPack device type 1)")
        elif view.device_type not in _dlpack.CUDA_ACCESSIBLE:
            raise _not_cuda(function, name, x,
                            _dlpack.DEVICE_NAMES.get(view.device_type, "a non-CUDA device"))
        _check_contiguous(function, name, view.shape, view.strides, view.itemsize, False)
    except ValueError:
        view.release()
        raise
    # Pinned host and managed memory is read by every device: no device of its own.
    device = view.device_id if view.device_type == _dlpack.KDL_CUDA else None
    return Array(x, name, view.ptr, view.shape, view.dtype, device, framework, keep=view)


def _may_be_pinned():
    """Whether host memory could be page-locked here (there is a CUDA driver)."""
    from . import _frameworks
    return _frameworks._driver_or_none() is not None


def retake_for_stream(a, stream):
    """Takes DLPack argument `a` again with the call's stream `stream` where it was taken for
    another, so that its producer orders its work before the call; releases the first view."""
    view = a.keep
    if not isinstance(view, _dlpack.DLPackView):
        return
    want = _dlpack.consumer_stream(view.device_type, stream)
    if want == view.stream_arg:
        return
    new = _dlpack.DLPackView(a.obj, stream=want)
    if (new.ptr, new.shape, new.dtype) != (a.ptr, a.shape, a.dtype):
        new.release()
        raise RuntimeError(f"wham: {a.name}.__dlpack__(stream={want}) describes other memory "
                           "than its first call did")
    a.keep = new
    view.release()


# Arrays inspected while a Launch is active on this thread (out=): they must be on the
# call's device, and the Launch keeps what they borrowed alive with its inputs'.
_tracking = threading.local()


class Tracked:
    __slots__ = ("device", "arrays")

    def __init__(self, device):
        self.device = device  # the device the call runs on, None where unknown
        self.arrays = []


def track_begin(device):
    stack = getattr(_tracking, "stack", None)
    if stack is None:
        stack = _tracking.stack = []
    tracked = Tracked(device)
    stack.append(tracked)
    return tracked


def track_end(tracked):
    stack = getattr(_tracking, "stack", None)
    if stack and tracked in stack:
        stack.remove(tracked)


def _track(a, function):
    stack = getattr(_tracking, "stack", None)
    if stack:
        tracked = stack[-1]
        if a.device is not None and tracked.device is not None and a.device != tracked.device:
            raise ValueError(f"wham.{function}: arrays on different devices: {a.name} on "
                             f"cuda:{a.device}, the call's other arrays on cuda:{tracked.device}")
        if a.keep is not None:
            tracked.arrays.append(a)
    return a


def inspect(x, function, name, stream=None, writable=False):
    """The checked `Array` of argument `name` of wham.`function`.

    stream:   the CUDA stream handle the call runs on, where known (a DLPack producer is
              asked to order its work before it; None: the legacy default stream, and
              Launch takes the array again if the call's stream is another).
    writable: True for an output or in-place target: a conjugated or negated PyTorch view
              is refused (an input is read through a copy instead).
    Raises TypeError for an object that is no array (or a CPU array of a framework without
    DLPack), ValueError for memory a CUDA kernel cannot address or a non-contiguous layout.
    """
    return _track(_inspect(x, function, name, stream, writable), function)


def _is_torch_tensor(x):
    """A torch.Tensor, also of a subclass defined outside torch (its conjugate and negative
    bits would not show through __cuda_array_interface__)."""
    return any(c.__name__ == "Tensor" and c.__module__ == "torch" for c in type(x).__mro__)


def _inspect(x, function, name, stream, writable):
    framework = framework_of(x)
    if framework == "jax" and any(c.__name__ == "Tracer" for c in type(x).__mro__):
        from . import jax as wham_jax  # JAX is loaded: x is one of its tracers
        instead = (f"call wham.jax.{function}, its XLA operation (docs/jax.md)"
                   if function in wham_jax.__all__ else "call it outside them")
        raise TypeError(f"wham.{function}: {name} is a JAX tracer (inside jax.jit, vmap or "
                        f"grad), but wham.{function} runs at once on concrete GPU arrays; under "
                        f"JAX's transformations {instead}")
    if (framework == "torch" and hasattr(x, "data_ptr")) or _is_torch_tensor(x):
        return _from_torch(x, function, name, writable)
    failure = None
    try:
        cai = x.__cuda_array_interface__
    except AttributeError:
        cai = None
    except Exception as e:  # a producer that refuses (a CPU array of some frameworks, say)
        cai, failure = None, e
    if cai is not None:
        return _from_cai(x, cai, function, name, framework)
    if hasattr(x, "__dlpack__"):
        return _from_dlpack(x, function, name, framework, stream)
    if failure is not None:
        raise TypeError(f"wham.{function}: {name}.__cuda_array_interface__ failed: {failure}") from failure
    if hasattr(x, "__array__") or hasattr(x, "__array_interface__") or isinstance(x, (list, tuple)):
        raise _not_cuda(function, name, x, "the host")
    raise TypeError(
        f"wham.{function}: {name} must be a GPU array exposing __cuda_array_interface__ or "
        f"__dlpack__ (PyTorch, CuPy, JAX, Numba); got {_describe(x)}")


def check_dtype(function, a, allowed):
    if a.dtype not in allowed:
        raise TypeError(f"wham.{function}: {a.name} has dtype {a.dtype}; expected "
                        + " or ".join(allowed))


def check_aligned(function, a):
    align = ITEMSIZE.get(a.dtype, 1)
    if a.ptr % align:
        raise ValueError(f"wham.{function}: {a.name} at address {a.ptr:#x} is not aligned to its "
                         f"element type ({a.dtype}, {align} bytes)")


def check_writable(function, a):
    if a.resolved is not None:
        query, method = _VIEW_BITS[a.resolved]
        raise ValueError(f"wham.{function}: {a.name} is a {a.resolved} view ({query} is True) "
                         "and would be written; its memory does not hold the values it shows. "
                         f"Pass a tensor without the bit ({method} gives one)")
    if a.readonly:
        raise ValueError(f"wham.{function}: {a.name} is read-only (its __cuda_array_interface__ "
                         "says so) and would be written")


def check_same_device(function, arrays):
    devices = {a.device for a in arrays if a.device is not None}
    if len(devices) > 1:
        raise ValueError(f"wham.{function}: arrays on different devices: "
                         + ", ".join(f"{a.name} on cuda:{a.device}" for a in arrays if a.device is not None))


def overlap(a, b):
    """Whether the byte ranges of two arrays share a byte."""
    na = a.size * ITEMSIZE.get(a.dtype, 1)
    nb = b.size * ITEMSIZE.get(b.dtype, 1)
    return na > 0 and nb > 0 and a.ptr < b.ptr + nb and b.ptr < a.ptr + na
