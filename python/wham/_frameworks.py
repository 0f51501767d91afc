"""Per-framework plumbing: the stream and device a call runs on, allocating an output beside
the input, the synchronisation JAX needs, and keeping borrowed memory alive until the work
that reads it is done.

Frameworks are imported only when an argument comes from them (the module name of its type).

- PyTorch: the current stream of the tensor's device, torch.cuda.current_stream(dev).
- CuPy: cupy.cuda.get_current_stream() on the array's device.
- JAX: there is no user-visible stream. wham waits for its JAX arguments
  (block_until_ready), runs on the legacy default stream of the arrays' device, and
  synchronises that stream before returning, so that the JAX array it wrote is complete
  before JAX can read it.
- Anything else (Numba, DLPack-only producers, NumPy over pinned memory): the stream its
  __cuda_array_interface__ names, else the legacy default stream, on the array's own device
  (its primary context is made current for the call and the caller's restored after).
The device is the first argument's; where that has none (pinned host or managed memory),
the first other argument's that has one; else the current device.
Arrays whose __cuda_array_interface__ names another stream than the call's are ordered
before it with an event (the protocol's rule for consumers); DLPack arguments are taken
with the call's stream, so that their producer orders its work before it.

Memory wham borrows for a call (a consumed DLPack tensor, whose deleter lets the producer
free it; a copy wham made of a conjugated or negated PyTorch view on another stream) is kept
until the call's work is done: an event is recorded on the call's stream after the launch,
and the objects are dropped by a later call (or `release_finished()`) once cuEventQuery says
the event is complete. Nothing waits on the host. During stream capture no event is
recorded (the objects are dropped at return: a captured graph reads its arrays at replay,
so they must outlive the graph's replays, as for any captured work).
"""

import ctypes
import threading

from . import _arrays

CU_EVENT_DISABLE_TIMING = 2
CUDA_ERROR_NOT_READY = 600
CU_STREAM_CAPTURE_MODE_RELAXED = 2
# CUpointer_attribute and CUmemorytype values (cuda.h).
CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2
CU_POINTER_ATTRIBUTE_IS_MANAGED = 8
CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
CU_MEMORYTYPE_HOST = 1
CU_MEMORYTYPE_DEVICE = 2


class _Driver:
    """The few CUDA driver API calls wham's Python side needs (libcuda ships with the driver),
    behind methods that take and return Python values (tests substitute a fake)."""

    def __init__(self):
        cu = ctypes.CDLL("libcuda.so.1")
        V, P = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
        I = ctypes.POINTER(ctypes.c_int)
        self.init = cu.cuInit
        self.init.argtypes = [ctypes.c_uint]
        self.device_get = cu.cuDeviceGet
        self.device_get.argtypes = [I, ctypes.c_int]
        self.ctx_get_device = cu.cuCtxGetDevice
        self.ctx_get_device.argtypes = [I]
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
        self.event_query = cu.cuEventQuery
        self.event_query.argtypes = [V]
        self.wait_event = cu.cuStreamWaitEvent
        self.wait_event.argtypes = [V, V, ctypes.c_uint]
        self.event_destroy = getattr(cu, "cuEventDestroy_v2", None) or cu.cuEventDestroy
        self.event_destroy.argtypes = [V]
        self.is_capturing = cu.cuStreamIsCapturing
        self.is_capturing.argtypes = [V, I]
        self.exchange_mode = cu.cuThreadExchangeStreamCaptureMode
        self.exchange_mode.argtypes = [I]
        self.pointer_attributes = cu.cuPointerGetAttributes
        self.pointer_attributes.argtypes = [ctypes.c_uint, I, P, ctypes.c_uint64]
        self.check("cuInit", self.init(0))

    @staticmethod
    def check(name, result):
        if result != 0:
            from ._lib import CudaError
            raise CudaError(f"wham: {name} failed (CUresult {result})", 2, name)

    def current_device(self):
        """The ordinal of the current context's device; None without a current context."""
        dev = ctypes.c_int()
        return dev.value if self.ctx_get_device(ctypes.byref(dev)) == 0 else None

    def push_primary(self, ordinal):
        """Makes `ordinal`'s primary context current; returns what pop_primary needs."""
        dev = ctypes.c_int()
        self.check("cuDeviceGet", self.device_get(ctypes.byref(dev), ordinal))
        ctx = ctypes.c_void_p()
        self.check("cuDevicePrimaryCtxRetain", self.retain(ctypes.byref(ctx), dev.value))
        result = self.push(ctx)
        if result != 0:
            self.release(dev.value)
            self.check("cuCtxPushCurrent", result)
        return dev.value

    def pop_primary(self, token):
        popped = ctypes.c_void_p()
        self.pop(ctypes.byref(popped))
        self.release(token)

    def synchronize(self, stream):
        self.check("cuStreamSynchronize", self.sync(stream))

    def stream_wait(self, waiter, producer):
        """Orders `waiter` after the work enqueued so far on `producer`."""
        event = ctypes.c_void_p()
        self.check("cuEventCreate", self.event_create(ctypes.byref(event), CU_EVENT_DISABLE_TIMING))
        try:
            self.check("cuEventRecord", self.event_record(event, producer))
            self.check("cuStreamWaitEvent", self.wait_event(waiter, event, 0))
        finally:
            self.event_destroy(event)

    def capturing(self, stream):
        """Whether work enqueued on `stream` would be captured rather than run (also when the
        driver cannot tell: the legacy stream while another stream captures)."""
        status = ctypes.c_int()
        return self.is_capturing(stream, ctypes.byref(status)) != 0 or status.value != 0

    def record_event(self, stream):
        """A new event recorded on `stream` (the current context's)."""
        event = ctypes.c_void_p()
        self.check("cuEventCreate", self.event_create(ctypes.byref(event), CU_EVENT_DISABLE_TIMING))
        result = self.event_record(event, stream)
        if result != 0:
            self.event_destroy(event)
            self.check("cuEventRecord", result)
        return event.value

    def event_done(self, event):
        """True when the event's work is complete, False while pending, None on an error."""
        result = self.event_query(event)
        return True if result == 0 else False if result == CUDA_ERROR_NOT_READY else None

    def destroy_event(self, event):
        self.event_destroy(event)

    def relax_capture_mode(self):
        """Lets this thread query events while some stream captures (the events queried are
        never recorded in a capture); returns the mode to restore."""
        mode = ctypes.c_int(CU_STREAM_CAPTURE_MODE_RELAXED)
        self.check("cuThreadExchangeStreamCaptureMode", self.exchange_mode(ctypes.byref(mode)))
        return mode.value

    def restore_capture_mode(self, mode):
        m = ctypes.c_int(mode)
        self.exchange_mode(ctypes.byref(m))

    def pointer_info(self, ptr):
        """(memory type, managed, device ordinal) of an address; memory type 0 where the
        driver does not know it (pageable host memory, a made-up pointer)."""
        attrs = (ctypes.c_int * 3)(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
        kind, managed, ordinal = ctypes.c_uint(0), ctypes.c_uint(0), ctypes.c_int(-1)
        data = (ctypes.c_void_p * 3)(ctypes.addressof(kind), ctypes.addressof(managed),
                                     ctypes.addressof(ordinal))
        if self.pointer_attributes(3, attrs, data, ptr) != 0:
            return 0, False, None
        return kind.value, bool(managed.value), ordinal.value


_driver = None
_no_driver = False


def driver():
    global _driver
    if _driver is None:
        _driver = _Driver()
    return _driver


def _driver_or_none():
    """The driver, or None where there is none (no libcuda, no GPU): asked once."""
    global _no_driver
    if _driver is not None:
        return _driver
    if _no_driver:
        return None
    try:
        return driver()
    except Exception:
        _no_driver = True
        return None


def pointer_kind(ptr):
    """("device", ordinal), ("host", None) for page-locked host memory, ("managed", None),
    or (None, None) where the driver does not know the address or there is no driver."""
    d = _driver_or_none()
    if d is None or not ptr:
        return None, None
    kind, managed, ordinal = d.pointer_info(ptr)
    if managed:
        return "managed", None
    if kind == CU_MEMORYTYPE_DEVICE and ordinal is not None and ordinal >= 0:
        return "device", ordinal
    if kind == CU_MEMORYTYPE_HOST:
        return "host", None
    return None, None


def _stream_wait(waiter, producer):
    """Orders `waiter` after the work enqueued so far on `producer`."""
    driver().stream_wait(waiter, producer)


# ---- keeping borrowed memory alive until the work that reads it is done ------------------

_pending = []            # [event handle, objects]: dropped once the event is complete
_pending_lock = threading.Lock()


def hold_until_done(stream, objects):
    """Keeps `objects` alive until the work enqueued so far on `stream` is complete (an event
    recorded now, queried by later calls); under stream capture, not at all."""
    if not objects:
        return
    d = _driver_or_none()
    if d is None or d.capturing(stream):  # no driver: no GPU work to wait for
        return
    event = d.record_event(stream)
    with _pending_lock:
        _pending.append((event, list(objects)))


def release_finished():
    """Drops the objects whose work is complete (never waits); returns how many entries
    are still pending. Every call runs it; what the driver cannot tell about stays."""
    if not _pending:
        return 0
    d = driver()
    with _pending_lock:
        entries = list(_pending)
    try:
        mode = d.relax_capture_mode()
    except Exception:
        return len(entries)
    try:
        finished = {id(e) for e in entries if d.event_done(e[0])}
        with _pending_lock:  # another thread may have taken some meanwhile
            done = [e for e in _pending if id(e) in finished]
            _pending[:] = [e for e in _pending if id(e) not in finished]
        for event, _ in done:
            d.destroy_event(event)
    finally:
        d.restore_capture_mode(mode)
    return len(_pending)  # the producers' deleters run as `done` goes, outside the lock


class Launch:
    """`with Launch(primary, arrays) as launch:` runs on the call's device and `launch.stream`.

    `primary` is the first array argument: its framework gives the stream and `empty()`
    allocates in it; `arrays` are the call's inputs (also the in-place targets). Arrays
    inspected inside the block (`out=`) are taken with `launch.stream`. On leaving, what the
    arrays borrowed is kept alive until the work enqueued meanwhile is done (module doc).
    """

    __slots__ = ("primary", "arrays", "stream", "device", "_guard", "_ctx", "_jax", "_tracked")

    def __init__(self, primary, arrays):
        self.primary = primary
        self.arrays = arrays
        self.stream = 0
        self.device = None
        self._guard = None
        self._ctx = None
        self._jax = any(a.framework == "jax" for a in arrays)
        self._tracked = None

    def __enter__(self):
        if _pending:
            release_finished()
        p = self.primary
        fw = p.framework
        device = p.device
        if device is None:  # pinned host or managed memory: the other arguments' device
            device = next((a.device for a in self.arrays if a.device is not None), None)
        try:
            if fw == "torch":
                import torch
                current = torch.cuda.current_device()
                if device is not None and device != current:
                    self._guard = torch.cuda.device(device)
                    self._guard.__enter__()
                elif device is None:
                    device = current
                self.stream = torch.cuda.current_stream(device).cuda_stream
            elif fw == "cupy":
                import cupy
                current = cupy.cuda.runtime.getDevice()
                if device is not None and device != current:
                    self._guard = cupy.cuda.Device(device)
                    self._guard.__enter__()
                elif device is None:
                    device = current
                self.stream = cupy.cuda.get_current_stream().ptr
            else:
                if device is not None:
                    self._push_primary_context(device)
                else:
                    d = _driver_or_none()
                    device = d.current_device() if d is not None else None
                self.stream = p.stream or 0
            self.device = device
            self._tracked = _arrays.track_begin(device)
            for a in self.arrays:
                _arrays.retake_for_stream(a, self.stream)
            if self._jax:
                for a in self.arrays:
                    if a.framework == "jax":
                        a.obj.block_until_ready()
            for a in self.arrays:
                if a.stream not in (None, self.stream) and a.framework != "jax":
                    _stream_wait(self.stream, a.stream)
        except BaseException:
            self._leave()
            raise
        return self

    def _push_primary_context(self, ordinal):
        """Runs the call in `ordinal`'s primary context unless a context of it is current."""
        d = _driver_or_none()
        if d is not None and d.current_device() != ordinal:
            self._ctx = d.push_primary(ordinal)

    def __exit__(self, exc_type, exc, tb):
        try:
            if self._jax and exc_type is None:
                # JAX cannot wait on a foreign stream: the result must be complete on return.
                driver().synchronize(self.stream)
            else:
                self._hold()
        finally:
            self._leave(exc_type, exc, tb)
        return False

    def _hold(self):
        """Keeps what the arrays borrowed alive until the call's work is done."""
        keep = []
        tracked = self._tracked.arrays if self._tracked is not None else []
        for a in list(self.arrays) + tracked:
            if a.keep is None:
                continue
            # A copy PyTorch allocated on this very stream may go back to its caching
            # allocator now: its reuse is ordered after this call's work.
            if a.framework == "torch" and a.stream == self.stream:
                continue
            keep.append(a.keep)
        try:
            hold_until_done(self.stream, keep)
        except Exception:
            # No event to wait for: wait here rather than free memory the work still reads.
            try:
                driver().synchronize(self.stream)
            except Exception:
                pass

    def _leave(self, exc_type=None, exc=None, tb=None):
        if self._tracked is not None:
            _arrays.track_end(self._tracked)
            self._tracked = None
        try:
            if self._ctx is not None:
                driver().pop_primary(self._ctx)
                self._ctx = None
        finally:
            if self._guard is not None:
                guard, self._guard = self._guard, None
                guard.__exit__(exc_type, exc, tb)

    def empty(self, function, name, shape, dtype):
        """A new C-contiguous array in the primary argument's framework, as an `Array`."""
        x = self.primary.obj
        fw = self.primary.framework
        if fw == "torch":
            import torch
            if x.device.type == "cpu":  # a pinned host tensor: a pinned host output like it
                obj = torch.empty(shape, dtype=getattr(torch, dtype), pin_memory=True)
            else:
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
