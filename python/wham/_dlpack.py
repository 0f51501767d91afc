"""Reading a DLPack capsule with ctypes alone (no compiled extension).

The legacy (unversioned) protocol: ``obj.__dlpack__(stream=...)`` returns a PyCapsule named
"dltensor" holding a DLManagedTensor*. The consumer renames it "used_dltensor" and from then
on owns the tensor: it calls the tensor's deleter when done. `DLPackView` does both and
keeps the producer alive while it exists.
"""

import ctypes

# DLDeviceType values (dlpack.h).
KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_OPENCL = 4
KDL_VULKAN = 7
KDL_METAL = 8
KDL_ROCM = 10
KDL_ROCM_HOST = 11
KDL_CUDA_MANAGED = 13
KDL_ONEAPI = 14

DEVICE_NAMES = {
    KDL_CPU: "CPU", KDL_CUDA: "CUDA", KDL_CUDA_HOST: "CUDA pinned host", KDL_OPENCL: "OpenCL",
    KDL_VULKAN: "Vulkan", KDL_METAL: "Metal", KDL_ROCM: "ROCm", KDL_ROCM_HOST: "ROCm host",
    KDL_CUDA_MANAGED: "CUDA managed", KDL_ONEAPI: "oneAPI",
}
# Memory a CUDA kernel may address (wham accepts device, managed and registered host memory).
CUDA_ACCESSIBLE = (KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED)
# Device types whose producers take a CUDA stream in __dlpack__(stream=...); the others
# (CPU, pinned host) take None only.
_STREAMED = (KDL_CUDA, KDL_CUDA_MANAGED)

# DLDataTypeCode values -> NumPy kind letters.
_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 5: "complex", 6: "bool"}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _DELETER),
]

_api = ctypes.pythonapi
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

# PyCapsule_SetName keeps the pointer it is given: the name must outlive the capsule.
_USED = ctypes.c_char_p(b"used_dltensor")


def consumer_stream(device_type, stream):
    """The `stream` argument of ``__dlpack__`` for a consumer that runs on the CUDA stream
    handle `stream`: the producer then orders its pending work on the tensor before that
    stream. Handle 0 (the default stream, the legacy one for libwham) is DLPack's 1; the
    handles of the legacy and per-thread default streams are 1 and 2, DLPack's numbers for
    them, and any other handle is passed as it is. None for device types without streams
    (CPU, pinned host) or an unknown device type."""
    if device_type not in _STREAMED:
        return None
    return int(stream) if stream else 1


def dtype_name(code, bits, lanes):
    """"float32", "complex128", ... for a DLDataType ("?" suffix for vector lanes)."""
    kind = _CODES.get(code, f"code{code}")
    name = "bool" if kind == "bool" else f"{kind}{bits}"
    return name if lanes == 1 else f"{name}x{lanes}"


class DLPackView:
    """A consumed DLPack tensor: data pointer, shape, strides (in elements, None when
    C-contiguous), dtype name and device. Calls the producer's deleter on release() or when
    collected, whichever comes first (once)."""

    __slots__ = ("producer", "_managed", "ptr", "shape", "strides", "dtype", "itemsize",
                 "device_type", "device_id", "stream_arg")

    def __init__(self, producer, stream=None):
        self.producer = producer  # keeps the memory's owner alive as long as this view
        self._managed = None
        self.stream_arg = stream  # what __dlpack__ was given: the stream it ordered its work before
        capsule = producer.__dlpack__() if stream is None else producer.__dlpack__(stream=stream)
        if not _api.PyCapsule_IsValid(capsule, b"dltensor"):
            raise TypeError(f"{type(producer).__name__}.__dlpack__() did not return a "
                            "'dltensor' capsule (already consumed?)")
        address = _api.PyCapsule_GetPointer(capsule, b"dltensor")
        managed = ctypes.cast(address, ctypes.POINTER(DLManagedTensor))
        # From here on the deleter is ours to call: rename first, so that the capsule's own
        # destructor (which deletes an unconsumed "dltensor") leaves it alone.
        if _api.PyCapsule_SetName(capsule, _USED) != 0:
            raise RuntimeError("wham: could not mark the DLPack capsule as consumed")
        self._managed = managed
        t = managed.contents.dl_tensor
        self.ptr = (t.data or 0) + t.byte_offset
        self.shape = tuple(t.shape[i] for i in range(t.ndim))
        self.strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
        self.dtype = dtype_name(t.dtype.code, t.dtype.bits, t.dtype.lanes)
        self.itemsize = (t.dtype.bits * t.dtype.lanes + 7) // 8
        self.device_type = t.device.device_type
        self.device_id = t.device.device_id

    def release(self):
        managed, self._managed = self._managed, None
        if managed is not None:
            deleter = managed.contents.deleter
            if deleter:
                deleter(managed)

    def __del__(self):
        try:
            self.release()
        except Exception:  # interpreter shutdown: nothing sensible to do
            pass
