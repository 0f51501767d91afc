"""Shared fixtures: fake GPU arrays (made-up pointers behind __cuda_array_interface__ or a
DLPack capsule built with ctypes), the stub library, and the skip rules of the GPU tests."""

import ctypes
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # simulators.py, gpu_support.py
ROOT = os.path.dirname(os.path.dirname(HERE))
if not os.environ.get("WHAM_TEST_INSTALLED"):
    # the package of this checkout, not an installed one (WHAM_TEST_INSTALLED=1: the installed)
    sys.path.insert(0, os.path.dirname(HERE))

import wham  # noqa: E402,F401  (the checkout's package, first)
from wham import _dlpack, _lib  # noqa: E402

TYPESTR = {"float32": "<f4", "float64": "<f8", "complex64": "<c8", "complex128": "<c16",
           "int32": "<i4", "int64": "<i8", "uint64": "<u8", "float16": "<f2"}
ITEM = {"float32": 4, "float64": 8, "complex64": 8, "complex128": 16, "int32": 4, "int64": 8,
        "uint64": 8, "float16": 2}


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU and libwham.so (skipped otherwise)")


class FakeCAI:
    """Device memory that is not there: only the interface, for argument checks."""

    _next = 0x7f0000000000

    def __init__(self, shape, dtype, ptr=None, strides=None, readonly=False, stream=None):
        if ptr is None:
            ptr = FakeCAI._next
            FakeCAI._next += 1 << 32
        self.shape = tuple(shape)
        self.dtype = dtype
        self.ptr = ptr
        self.__cuda_array_interface__ = {
            "shape": self.shape, "typestr": TYPESTR.get(dtype, dtype), "data": (ptr, readonly),
            "version": 3, "strides": strides, "stream": stream}


@pytest.fixture
def fake():
    return FakeCAI


# ---- a DLPack producer in pure ctypes --------------------------------------------------

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_DLTENSOR = ctypes.c_char_p(b"dltensor")


class FakeDLPack:
    """A producer of DLPack capsules over a made-up pointer; counts the deleter's calls."""

    CODES = {"float32": (2, 32), "float64": (2, 64), "complex64": (5, 64),
             "complex128": (5, 128), "int32": (0, 32)}

    def __init__(self, shape, dtype, ptr=0x7e0000000000, device=(2, 0), strides=None,
                 byte_offset=0):
        self.shape, self.dtype, self.ptr, self.device = tuple(shape), dtype, ptr, device
        self.strides, self.byte_offset = strides, byte_offset
        self.deleted = 0
        self.streams = []
        self._keep = []
        self._deleter = _dlpack._DELETER(self._delete)

    def _delete(self, managed):
        self.deleted += 1

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        n = len(self.shape)
        shape = (ctypes.c_int64 * max(n, 1))(*self.shape)
        strides = (ctypes.c_int64 * max(n, 1))(*self.strides) if self.strides else None
        m = _dlpack.DLManagedTensor()
        t = m.dl_tensor
        t.data = self.ptr
        t.device = _dlpack.DLDevice(*self.device)
        t.ndim = n
        code, bits = self.CODES[self.dtype]
        t.dtype = _dlpack.DLDataType(code, bits, 1)
        t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        if strides is not None:
            t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = self.byte_offset
        m.deleter = self._deleter
        self._keep += [shape, strides, m]
        return _api.PyCapsule_New(ctypes.addressof(m), _DLTENSOR, None)


@pytest.fixture
def fake_dlpack():
    return FakeDLPack


# ---- the stub library ---------------------------------------------------------------------

@pytest.fixture(scope="session")
def stub_path(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler to build the stub library")
    out = str(tmp_path_factory.mktemp("stub") / "libwham_stub.so")
    subprocess.run([cc, "-shared", "-fPIC", "-Wall", "-Werror", "-I", os.path.join(ROOT, "include"),
                    "-o", out, os.path.join(HERE, "stub", "wham_stub.c")], check=True)
    return out


@pytest.fixture
def stub(stub_path, monkeypatch):
    """wham bound to the stub library for the test; `stub.last()` is the last call's text."""
    monkeypatch.setenv("WHAM_LIBRARY", stub_path)
    monkeypatch.setattr(_lib, "_library", None)
    lib = ctypes.CDLL(stub_path)
    lib.stub_last_call.restype = ctypes.c_char_p
    lib.stub_set_status.argtypes = [ctypes.c_int, ctypes.c_char_p]
    lib.stub_set_status(0, b"")

    class Stub:
        def last(self):
            return lib.stub_last_call().decode()

        def fail(self, status, message):
            lib.stub_set_status(status, message.encode())

    yield Stub()
    lib.stub_set_status(0, b"")


@pytest.fixture
def no_library(monkeypatch, tmp_path):
    monkeypatch.setenv("WHAM_LIBRARY", str(tmp_path / "missing" / "libwham.so"))
    monkeypatch.setattr(_lib, "_library", None)


@pytest.fixture
def torch():
    """PyTorch with a GPU and libwham.so (the test is skipped otherwise)."""
    from gpu_support import Framework, require_library
    require_library()
    return Framework("torch").mod


@pytest.fixture
def wt(torch):
    """wham.torch_ops (PyTorch 2.4+: torch.library.custom_op)."""
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("torch.library.custom_op needs PyTorch 2.4 or newer")
    import wham.torch_ops
    return wham.torch_ops
