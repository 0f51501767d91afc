"""Per-framework plumbing: the stream a call runs on, the device it runs on, allocating an
output beside the input, and the synchronisation JAX needs.

Frameworks are imported only when an argument comes from them (the module name of its type).

- PyTorch: the current stream of the tensor's device, torch.cuda.current_stream(dev).
- CuPy: cupy.cuda.get_current_stream() on the array's device.
- JAX: there is no user-visible stream. wham waits for its JAX arguments
  (block_until_ready), runs on the legacy default stream of the arrays' device, and
  synchronises that stream before returning, so that the JAX array it wrote is complete
  before JAX can read it.
- Anything else (Numba, ...): the stream its __cuda_array_interface__ names, else the
  legacy default stream, on the current device.
Arrays whose __cuda_array_interface__ names another stream than the call's are ordered
before it with an event (the protocol's rule for consumers).
"""

import ctypes

from . import _arrays


class _Driver:
    """The few CUDA driver API calls wham's Python side needs (libcuda ships with the driver)."""

    def __init__(self):
        cu = ctypes.CDLL("libcuda.so.1")
        V, P = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
        self.init = cu.cuInit
        self.init.argtypes = [ctypes.c_uint]
        self.device_get = cu.cuDeviceGet
        self.device_get.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        self.retain = cu.cuDevicePrimaryCtxRetain
        self.retain.argtypes = [P, ctypes.c_int]
        self.release = getattr(cu, "cuDevicePrimaryCtxRelease_v2", None) or cu.cuDevicePrimaryCtxRelease
        self.release.argtypes = [ctypes.c_int]
        self.push = getattr(cu, "cuCtxPushCurrent_v2", None) or cu.cuCtxPushCurrent
        self.push.argtypes = [V]
        self.pop = getattr(cu, "cuCtxPopCurrent_v2", None) or cu.cuCtxPopCurrent
        self.pop.argtypes = [P]
        self.sync = cu.cuStreamSynchronize
        self.sync.argtypes = [V]
        self.event_create = cu.cuEventCreate
        self.event_create.argtypes = [P, ctypes.c_uint]
        self.event_record = cu.cuEventRecord
        self.event_record.argtypes = [V, V]
        self.wait_event = cu.cuStreamWaitEvent
        self.wait_event.argtypes = [V, V, ctypes.c_uint]
        self.event_destroy = getattr(cu, "cuEventDestroy_v2", None) or cu.cuEventDestroy
        self.event_destroy.argtypes = [V]
        self.check("cuInit", self.init(0))

    @staticmethod
    def check(name, result):
        if result != 0:
            from ._lib import CudaError
            raise CudaError(f"wham: {name} failed (CUresult {result})", 2, name)


_driver = None


def driver():
    global _driver
    if _driver is None:
        _driver = _Driver()
    return _driver


def _stream_wait(waiter, producer):
    """Orders `waiter` after the work enqueued so far on `producer`."""
    d = driver()
    event = ctypes.c_void_p()
    d.check("cuEventCreate", d.event_create(ctypes.byref(event), 2))  # CU_EVENT_DISABLE_TIMING
    try:
        d.check("cuEventRecord", d.event_record(event, producer))
        d.check("cuStreamWaitEvent", d.wait_event(waiter, event, 0))
    finally:
        d.event_destroy(event)


class Launch:
    """`with Launch(primary, arrays) as stream:` runs on primary's device and stream.

    `primary` is the first array argument; `empty()` allocates in its framework.
    """

    __slots__ = ("primary", "arrays", "stream", "_guard", "_ctx", "_jax")

    def __init__(self, primary, arrays):
        self.primary = primary
        self.arrays = arrays
        self.stream = 0
        self._guard = None
        self._ctx = None
        self._jax = any(a.framework == "jax" for a in arrays)

    def __enter__(self):
        p = self.primary
        fw = p.framework
        if fw == "torch":
            import torch
            if p.device != torch.cuda.current_device():
                self._guard = torch.cuda.device(p.device)
                self._guard.__enter__()
            self.stream = torch.cuda.current_stream(p.device).cuda_stream
        elif fw == "cupy":
            import cupy
            if p.device is not None and p.device != cupy.cuda.runtime.getDevice():
                self._guard = cupy.cuda.Device(p.device)
                self._guard.__enter__()
            self.stream = cupy.cuda.get_current_stream().ptr
        else:
            if fw == "jax" and p.device is not None:
                self._push_primary_context(p.device)
            self.stream = p.stream or 0
        if self._jax:
            for a in self.arrays:
                if a.framework == "jax":
                    a.obj.block_until_ready()
        for a in self.arrays:
            if a.stream not in (None, self.stream) and a.framework != "jax":
                _stream_wait(self.stream, a.stream)
        return self

    def _push_primary_context(self, ordinal):
        d = driver()
        dev = ctypes.c_int()
        d.check("cuDeviceGet", d.device_get(ctypes.byref(dev), ordinal))
        ctx = ctypes.c_void_p()
        d.check("cuDevicePrimaryCtxRetain", d.retain(ctypes.byref(ctx), dev.value))
        d.check("cuCtxPushCurrent", d.push(ctx))
        self._ctx = dev.value

    def __exit__(self, exc_type, exc, tb):
        try:
            if self._jax and exc_type is None:
                # JAX cannot wait on a foreign stream: the result must be complete on return.
                d = driver()
                d.check("cuStreamSynchronize", d.sync(self.stream))
        finally:
            if self._ctx is not None:
                d = driver()
                popped = ctypes.c_void_p()
                d.pop(ctypes.byref(popped))
                d.release(self._ctx)
            if self._guard is not None:
                self._guard.__exit__(exc_type, exc, tb)
        return False

    def empty(self, function, name, shape, dtype):
        """A new C-contiguous array in the primary argument's framework, as an `Array`."""
        x = self.primary.obj
        fw = self.primary.framework
        if fw == "torch":
            import torch
            obj = torch.empty(shape, dtype=getattr(torch, dtype), device=x.device)
        elif fw == "cupy":
            import cupy
            obj = cupy.empty(shape, dtype=dtype)
        elif fw == "jax":
            obj = _jax_empty(function, shape, dtype, x)
        else:
            raise TypeError(
                f"wham.{function}: cannot allocate {name} for a {type(x).__module__}."
                f"{type(x).__qualname__} argument (wham allocates for PyTorch, CuPy and JAX); "
                f"pass out= ({dtype}, shape {tuple(shape)}, C-contiguous, on the same device)")
        a = _arrays.inspect(obj, function, name)
        if a.dtype != dtype:
            raise TypeError(f"wham.{function}: the framework allocated {a.dtype} for {name}, not "
                            f"{dtype}" + (" (JAX: enable 64-bit types, "
                                           "jax.config.update('jax_enable_x64', True))" if fw == "jax" else ""))
        if self._jax or fw == "jax":
            # The allocation is itself a JAX computation: it must be done before wham writes.
            obj.block_until_ready()
            self._jax = True
        return a


def _jax_empty(function, shape, dtype, like):
    import jax.numpy as jnp
    device = None
    try:
        (device,) = like.devices()
    except (AttributeError, ValueError):
        pass
    # jnp.zeros, not jnp.empty: JAX has no uninitialised arrays (jnp.empty is zeros too).
    try:
        return jnp.zeros(shape, dtype=dtype, device=device)
    except TypeError:  # JAX before the device= argument
        import jax
        return jax.device_put(jnp.zeros(shape, dtype=dtype), device)
