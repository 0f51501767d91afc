"""How arrays reach a call, on a GPU: conjugated and negated PyTorch views (read as they
show, refused as outputs), a DLPack producer whose data is written on its own stream (asked
for the call's stream, its tensor held until the work is done), pinned host memory, and the
device of JAX and Numba arrays. Skipped, with the reason, without a GPU or libwham.so."""

import ctypes

import numpy as np
import pytest

import wham
from wham import _arrays, _dlpack, _frameworks, reference

from gpu_support import Framework, rel_err, require_library

pytestmark = pytest.mark.gpu
RNG = np.random.default_rng(3141)
# torch.cuda._sleep cycles: about 0.1 s on an H100, so work queued behind it is still
# pending when the call returns.
SLEEP_CYCLES = 200_000_000


def _complex(shape, dtype=np.complex64):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _deltas(pairs):
    d = RNG.uniform(-1, 1, (pairs, 3))
    return d / np.linalg.norm(d, axis=1, keepdims=True) * RNG.uniform(2, 4, (pairs, 1))


# ---- conjugated and negated views ---------------------------------------------------------

def test_conjugated_input_is_transformed_as_it_reads(torch):
    a = _complex((4, 256))
    x = torch.as_tensor(a, device="cuda")
    xc = x.conj()
    assert xc.is_conj()
    y = wham.fwht(xc)
    assert not y.is_conj()
    assert rel_err(y.cpu().numpy(), reference.fwht(a.conj())) < 4e-5
    np.testing.assert_array_equal(x.cpu().numpy(), a)  # the input is untouched


def test_negated_input_is_transformed_as_it_reads(torch):
    if not hasattr(torch, "_neg_view"):
        pytest.skip("this PyTorch has no torch._neg_view")
    a = RNG.standard_normal((4, 256)).astype(np.float32)
    xn = torch._neg_view(torch.as_tensor(a, device="cuda"))
    assert xn.is_neg()
    y = wham.fwht(xn)
    assert rel_err(y.cpu().numpy(), reference.fwht(-a)) < 4e-5


def test_conjugated_multipoles_in_m2l(torch):
    p, pairs = 4, 6
    M = _complex((pairs, (p + 1) ** 2), np.complex128)
    d = _deltas(pairs)
    L = wham.m2l(torch.as_tensor(M, device="cuda").conj(), torch.as_tensor(d, device="cuda"))
    assert rel_err(L.cpu().numpy(), reference.m2l(M.conj(), d, p)) < 1e-12


def test_conjugated_or_negated_output_is_refused(torch):
    x = torch.as_tensor(_complex((4, 256)), device="cuda")
    y = torch.zeros_like(x)
    with pytest.raises(ValueError, match="out is a conjugated view"):
        wham.fwht(x, out=y.conj())
    xc = x.conj()
    with pytest.raises(ValueError, match="x is a conjugated view"):
        wham.fwht(xc, out=xc)  # in place
    torch.cuda.synchronize()
    np.testing.assert_array_equal(y.cpu().numpy(), 0)  # nothing was written
    p, pairs = 2, 6
    M = torch.as_tensor(_complex((4, (p + 1) ** 2), np.complex128), device="cuda")
    d = torch.as_tensor(_deltas(pairs), device="cuda")
    idx = torch.as_tensor((np.arange(pairs) % 4).astype(np.int32), device="cuda")
    L = torch.zeros_like(M)
    with pytest.raises(ValueError, match="locals is a conjugated view"):
        wham.m2l_accumulate(M, d, idx, idx.flip(0).contiguous(), L.conj())
    if hasattr(torch, "_neg_view"):
        r = torch.zeros(4, 256, device="cuda")
        with pytest.raises(ValueError, match="out is a negated view"):
            wham.fwht(torch.ones_like(r), out=torch._neg_view(r))


# ---- a DLPack producer with its own stream ----------------------------------------------------

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_DLTENSOR = ctypes.c_char_p(b"dltensor")  # the capsule keeps this pointer
_CODES = {"torch.float32": (2, 32), "torch.float64": (2, 64), "torch.complex64": (5, 64),
          "torch.complex128": (5, 128)}


class TorchProducer:
    """DLPack-only view of a torch tensor whose pending writes are on `stream`. Its
    __dlpack__(stream=s) records s and orders s after `stream` (the producer's duty); its
    capsules' deleter counts its calls."""

    def __init__(self, torch, tensor, stream):
        self.torch, self.tensor, self.stream = torch, tensor, stream
        self.streams = []
        self.deleted = 0
        self._keep = []
        self._deleter = _dlpack._DELETER(self._delete)

    def _delete(self, managed):
        self.deleted += 1

    def __dlpack_device__(self):
        return (_dlpack.KDL_CUDA, self.tensor.device.index)

    def __dlpack__(self, stream=None):
        torch, t = self.torch, self.tensor
        self.streams.append(stream)
        if stream is not None and stream != -1:
            consumer = (torch.cuda.default_stream(t.device) if stream == 1
                        else torch.cuda.ExternalStream(stream, device=t.device))
            consumer.wait_stream(self.stream)
        n = t.dim()
        shape = (ctypes.c_int64 * n)(*t.shape)
        m = _dlpack.DLManagedTensor()
        dl = m.dl_tensor
        dl.data = t.data_ptr()
        dl.device = _dlpack.DLDevice(_dlpack.KDL_CUDA, t.device.index)
        dl.ndim = n
        dl.dtype = _dlpack.DLDataType(*_CODES[str(t.dtype)], 1)
        dl.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        dl.byte_offset = 0
        m.deleter = self._deleter
        self._keep += [shape, m]
        return _api.PyCapsule_New(ctypes.addressof(m), _DLTENSOR, None)


def _written_late(torch, src):
    """A zeroed copy of `src` and a stream that writes src into it after a long sleep."""
    buf = torch.zeros_like(src)
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        torch.cuda._sleep(SLEEP_CYCLES)
        buf.copy_(src)
    return buf, stream


def test_dlpack_first_argument_runs_after_its_producer(torch):
    a = RNG.standard_normal((8, 1024)).astype(np.float32)
    out = torch.empty(8, 1024, device="cuda")
    buf, stream = _written_late(torch, torch.as_tensor(a, device="cuda"))
    x = TorchProducer(torch, buf, stream)
    wham.fwht(x, out=out)
    assert x.streams == [1]  # the legacy default stream, which the call runs on
    assert x.deleted == 0    # held: the work is pending behind the producer's sleep
    torch.cuda.synchronize()
    _frameworks.release_finished()
    assert x.deleted == 1
    assert rel_err(out.cpu().numpy(), reference.fwht(a)) < 4e-5


def test_dlpack_arguments_run_on_the_torch_stream_after_their_producer(torch):
    p, pairs = 3, 8
    M = _complex((pairs, (p + 1) ** 2), np.complex128)
    d = _deltas(pairs)
    multipoles = torch.as_tensor(M, device="cuda")
    out = torch.zeros(pairs, (p + 1) ** 2, dtype=torch.complex128, device="cuda")
    buf, stream = _written_late(torch, torch.as_tensor(d, device="cuda"))
    deltas = TorchProducer(torch, buf, stream)
    locals_ = TorchProducer(torch, out, torch.cuda.current_stream())
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        got = wham.m2l(multipoles, deltas, out=locals_)
    assert got is locals_
    assert None not in deltas.streams and deltas.streams[-1] == s.cuda_stream
    assert locals_.streams == [s.cuda_stream]
    # Views taken for another stream are handed back at once; the one used is held.
    assert deltas.deleted == len(deltas.streams) - 1 and locals_.deleted == 0
    torch.cuda.synchronize()
    _frameworks.release_finished()
    assert deltas.deleted == len(deltas.streams) and locals_.deleted == 1
    assert rel_err(out.cpu().numpy(), reference.m2l(M, d, p)) < 1e-12


def test_dlpack_array_on_another_device(torch):
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    a = RNG.standard_normal((4, 256)).astype(np.float32)
    t = torch.as_tensor(a, device="cuda:1")
    out = torch.empty_like(t)
    torch.cuda.synchronize(1)
    assert torch.cuda.current_device() == 0
    wham.fwht(TorchProducer(torch, t, torch.cuda.current_stream(1)), out=out)
    torch.cuda.synchronize(1)
    assert rel_err(out.cpu().numpy(), reference.fwht(a)) < 4e-5
    with pytest.raises(ValueError, match="different devices"):
        wham.fwht(TorchProducer(torch, t, torch.cuda.current_stream(1)),
                  out=torch.empty(4, 256, device="cuda:0"))


# ---- pinned host memory -----------------------------------------------------------------------

def test_pinned_host_tensor_is_accepted(torch):
    a = RNG.standard_normal((4, 256)).astype(np.float32)
    x = torch.from_numpy(a).pin_memory()
    assert x.is_pinned()
    want = reference.fwht(a)
    out = torch.empty(4, 256, device="cuda")
    wham.fwht(x, out=out)  # pinned input, device output
    torch.cuda.synchronize()
    assert rel_err(out.cpu().numpy(), want) < 4e-5
    y = wham.fwht(x)       # a new output like x: pinned host memory
    torch.cuda.synchronize()
    assert y.device.type == "cpu" and y.is_pinned()
    assert rel_err(y.numpy(), want) < 4e-5
    z = torch.zeros(4, 256).pin_memory()
    wham.fwht(torch.as_tensor(a, device="cuda"), out=z)  # device input, pinned output
    torch.cuda.synchronize()
    assert rel_err(z.numpy(), want) < 4e-5


def test_pinned_numpy_array_from_cupyx():
    require_library()
    cupy = Framework("cupy").mod
    import cupyx
    a = RNG.standard_normal((4, 256)).astype(np.float32)
    x = cupyx.empty_pinned((4, 256), dtype=np.float32)
    x[...] = a
    out = cupy.empty((4, 256), dtype=cupy.float32)
    wham.fwht(x, out=out)
    cupy.cuda.Device().synchronize()
    assert rel_err(cupy.asnumpy(out), reference.fwht(a)) < 4e-5


# ---- devices of JAX and Numba arrays ------------------------------------------------------------

def test_jax_array_device_is_its_cuda_ordinal():
    require_library()
    jax = Framework("jax").mod
    x = jax.device_put(np.arange(8, dtype=np.float32), jax.devices("gpu")[0])
    (dev,) = x.devices()
    assert _arrays.inspect(x, "fwht", "x").device == dev.local_hardware_id


def test_numba_array_device_and_result():
    require_library()
    try:
        from numba import cuda
    except ImportError:
        pytest.skip("Numba is not installed")
    except Exception as e:  # a Numba that does not fit this NumPy, say
        pytest.skip(f"Numba does not import: {e}")
    a = RNG.standard_normal((4, 256)).astype(np.float32)
    try:
        x = cuda.to_device(a)
        out = cuda.device_array_like(a)
        device = cuda.get_current_device().id
    except Exception as e:  # a Numba without a usable CUDA here
        pytest.skip(f"Numba cannot use the GPU: {e}")
    assert _arrays.inspect(x, "fwht", "x").device == device
    wham.fwht(x, out=out)
    cuda.synchronize()
    assert rel_err(out.copy_to_host(), reference.fwht(a)) < 4e-5
