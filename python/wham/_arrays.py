"""What wham needs to know of a caller's array, from whichever protocol it speaks.

`inspect(x, function, name)` returns an `Array`: device pointer, shape, dtype name, device
id and framework, after checking that the memory is CUDA-accessible and C-contiguous.
Order of preference: PyTorch tensors directly (their `__cuda_array_interface__` refuses
tensors that require grad, and the attributes are cheaper), then
`__cuda_array_interface__` (CuPy, Numba, JAX, PyTorch), then `__dlpack__` /
`__dlpack_device__` (read with ctypes, `_dlpack.py`).
"""

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
                 "stream", "keep")

    def __init__(self, obj, name, ptr, shape, dtype, device, framework, readonly=False,
                 stream=None, keep=None):
        self.obj = obj
        self.name = name
        self.ptr = ptr
        self.shape = shape
        self.dtype = dtype
        self.device = device        # CUDA device ordinal, None when the protocol does not say
        self.framework = framework
        self.readonly = readonly
        self.stream = stream        # the producer's stream (__cuda_array_interface__ v3), if any
        self.keep = keep            # a consumed DLPack view: released with this object

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


def _from_torch(x, function, name):
    if x.device.type != "cuda":
        raise _not_cuda(function, name, x, f"the {x.device.type} device")
    dtype = str(x.dtype)[6:]  # "torch.float32" -> "float32"
    shape = tuple(x.shape)
    if not x.is_contiguous():
        _check_contiguous(function, name, shape, tuple(x.stride()), 0, False)
    return Array(x, name, x.data_ptr(), shape, dtype, x.device.index, "torch")


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
    return Array(x, name, ptr or 0, shape, dtype, device, framework, bool(readonly),
                 cai.get("stream"))


def _jax_device(x):
    try:
        (dev,) = x.devices()
    except (AttributeError, ValueError):
        return None
    return getattr(dev, "local_hardware_id", None) or getattr(dev, "id", None)


def _from_dlpack(x, function, name, framework, stream):
    try:
        device_type = x.__dlpack_device__()[0]
    except AttributeError:
        device_type = None
    if device_type is not None and int(device_type) not in _dlpack.CUDA_ACCESSIBLE:
        where = _dlpack.DEVICE_NAMES.get(int(device_type), f"DLPack device type {int(device_type)}")
        raise _not_cuda(function, name, x, f"the {where} device (DLPack device type {int(device_type)})")
    # stream: the one wham will run on, so that the producer orders its pending work before
    # it (DLPack: 1 names the legacy default stream, 0 is not allowed).
    view = _dlpack.DLPackView(x, stream=(stream or 1) if stream is not None else None)
    if view.device_type not in _dlpack.CUDA_ACCESSIBLE:
        view.release()
        raise _not_cuda(function, name, x, _dlpack.DEVICE_NAMES.get(view.device_type, "a non-CUDA device"))
    try:
        _check_contiguous(function, name, view.shape, view.strides, view.itemsize, False)
    except ValueError:
        view.release()
        raise
    return Array(x, name, view.ptr, view.shape, view.dtype, view.device_id, framework, keep=view)


def inspect(x, function, name, stream=None):
    """The checked `Array` of argument `name` of wham.`function`.

    Raises TypeError for an object that is no array (or a CPU array of a framework without
    DLPack), ValueError for memory a CUDA kernel cannot address or a non-contiguous layout.
    """
    framework = framework_of(x)
    if framework == "torch" and hasattr(x, "data_ptr"):
        return _from_torch(x, function, name)
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
