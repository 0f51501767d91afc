"""The ctypes plumbing against a stub libwham.so built from wham.h's prototypes: which C
function each call reaches, with which arguments, and how statuses become exceptions."""


import ctypes
import os
import re

import pytest

import wham
from wham import _lib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_version_and_availability(stub):
    assert wham.available()
    assert wham.version() == wham.__version__


def test_one_version_everywhere():
    # The package, its load check, pyproject.toml and wham.h name the same version.
    with open(os.path.join(ROOT, "python", "pyproject.toml")) as f:
        pyproject = re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)
    with open(os.path.join(ROOT, "include", "wham", "wham.h")) as f:
        header = re.search(r'#define WHAM_VERSION_STRING "([^"]+)"', f.read()).group(1)
    assert wham.__version__ == _lib.PACKAGE_VERSION == pyproject == header


@pytest.fixture
def stub_version(stub, stub_path, monkeypatch):
    """Sets the version the stub library reports, for the next load."""
    lib = ctypes.CDLL(stub_path)
    lib.stub_set_version.argtypes = [ctypes.c_int32, ctypes.c_char_p]

    def set_version(number, text):
        lib.stub_set_version(number, text.encode())
        monkeypatch.setattr(_lib, "_library", None)

    yield set_version
    v = _lib.PACKAGE_VERSION
    lib.stub_set_version(_lib._version_number(v), v.encode())


def test_a_library_of_another_version_is_refused(stub, stub_version, stub_path, fake):
    stub_version(10203, "1.2.3")
    with pytest.raises(wham.LibraryNotFoundError) as info:
        wham.fwht(fake((2, 8), "float32"), out=fake((2, 8), "float32"))
    message = str(info.value)
    assert stub_path in message
    assert "libwham 1.2.3" in message and f"wham {wham.__version__}" in message
    assert not wham.available()
    # The matching version loads again.
    stub_version(_lib._version_number(wham.__version__), wham.__version__)
    assert wham.available() and wham.version() == wham.__version__


def test_version_numbers():
    assert _lib._version_number("0.3.0") == 300
    assert _lib._version_number("1.12.7") == 11207
    assert _lib._version_text(11207) == "1.12.7"


def test_status_strings(stub):
    lib = _lib.library()
    assert lib.status_string(_lib.ERROR_NOT_SUPPORTED) == "not supported on this device or build"
    assert lib.status_string(_lib.ERROR_NO_DEVICE) == "no CUDA device or driver available"
    assert lib.status_string(99) == "unknown wham_status"


@pytest.mark.parametrize("dtype,suffix", [("float32", "f32"), ("float64", "f64"),
                                          ("complex64", "c64"), ("complex128", "c128")])
def test_fwht_arguments(stub, fake, dtype, suffix):
    x, out = fake((3, 5, 16), dtype), fake((3, 5, 16), dtype)
    assert wham.fwht(x, scale=0.5, out=out, path="kronecker") is out
    assert stub.last() == f"wham_fwht_{suffix} {x.ptr:x} {out.ptr:x} 4 15 0.5 2 0"


def test_fwht_in_place_orthonormal_and_stream(stub, fake):
    x = fake((1 << 10,), "float64", stream=0x1234)
    wham.fwht(x, scale="orthonormal", out=x)
    name, i, o, log_n, batch, scale, path, stream = stub.last().split()
    assert (i, o, log_n, batch, path, stream) == (f"{x.ptr:x}", f"{x.ptr:x}", "10", "1", "0", "1234")
    assert float(scale) == 2.0 ** -5


def test_fwht_empty_batch_calls_nothing(stub, fake):
    wham.m2l_num_coeffs(1)
    wham.fwht(fake((2,), "float32"), out=fake((2,), "float32"))
    before = stub.last()
    wham.fwht(fake((0, 8), "float32"), out=fake((0, 8), "float32"))
    wham.iqp_encode(fake((0, 3), "float32"), out=fake((0, 4), "complex64"))
    wham.hadamard(fake((2, 0, 96), "float32"), out=fake((2, 0, 96), "float32"))
    wham.m2l(fake((0, 4), "complex64"), fake((0, 3), "float32"), out=fake((0, 4), "complex64"))
    assert stub.last() == before


@pytest.mark.parametrize("params,states", [("float32", "complex64"), ("float32", "complex128"),
                                           ("float64", "complex64"), ("float64", "complex128")])
def test_iqp_arguments(stub, fake, params, states):
    p, out = fake((7, 2, 15), params), fake((7, 2, 32), states)
    wham.iqp_encode(p, out=out)  # 15 = 5 + 10: five qubits inferred; dtype from out
    s = {"float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128"}
    assert stub.last() == f"wham_iqp_encode_{s[params]}_{s[states]} {p.ptr:x} {out.ptr:x} 5 14 0 0 0"


def test_iqp_z_and_path(stub, fake):
    p, out = fake((6,), "float64"), fake((64,), "complex128")
    wham.iqp_encode(p, variant="iqp_z", out=out, path="product")
    assert stub.last().endswith(f"{out.ptr:x} 6 1 1 4 0")


def test_m2l_arguments(stub, fake):
    m, d, out = fake((2, 3, 49), "complex64"), fake((2, 3, 3), "float32"), fake((2, 3, 49), "complex64")
    wham.m2l(m, d, out=out, path="direct")
    assert stub.last() == f"wham_m2l_f32 {m.ptr:x} {d.ptr:x} {out.ptr:x} 6 6 4 0"


def test_accumulate_arguments(stub, fake):
    m, d = fake((10, 25), "complex128"), fake((7, 3), "float64")
    s, t, l = fake((7,), "int32"), fake((7,), "int32"), fake((12, 25), "complex128")
    assert wham.m2l_accumulate(m, d, s, t, l, method="deterministic") is l
    assert stub.last() == (f"wham_m2l_accumulate_f64 {m.ptr:x} {d.ptr:x} {s.ptr:x} {t.ptr:x} "
                           f"{l.ptr:x} 4 7 10 12 2 0")
    c = fake((12, 3), "float64")
    wham.m2l_accumulate_centers(m, c, s, t, l, p=4)
    assert stub.last().startswith(f"wham_m2l_accumulate_centers_f64 {m.ptr:x} {c.ptr:x}")
    k, cls = fake((316, 3), "float64"), fake((7,), "int32")
    wham.m2l_accumulate_classes(m, k, cls, s, t, l, method="atomic")
    assert stub.last() == (f"wham_m2l_accumulate_classes_f64 {m.ptr:x} {k.ptr:x} {cls.ptr:x} "
                           f"{s.ptr:x} {t.ptr:x} {l.ptr:x} 4 7 316 10 12 1 0")
    wham.m2l_accumulate_classes(m, k, cls, s, t, l, grouped=True)
    assert stub.last() == (f"wham_m2l_accumulate_class_groups_f64 {m.ptr:x} {k.ptr:x} "
                           f"{cls.ptr:x} {s.ptr:x} {t.ptr:x} {l.ptr:x} 4 7 316 10 12 0")


def test_check_interaction_list_arguments(stub, fake):
    s, t, out = fake((9,), "int32"), fake((9,), "int32"), fake((1,), "uint64")
    assert wham.check_interaction_list(s, t, 5, 6, out=out) is out
    assert stub.last() == f"wham_check_interaction_list {s.ptr:x} {t.ptr:x} 0 9 5 6 0 {out.ptr:x} 0"
    cls = fake((9,), "int32")
    wham.check_interaction_list(s, t, 5, 6, cls=cls, num_classes=316, out=out)
    assert f" {cls.ptr:x} 9 5 6 316 " in stub.last()


def test_dlpack_input(stub, fake, fake_dlpack):
    x = fake_dlpack((2, 8), "complex64", byte_offset=64)
    out = fake((2, 8), "complex64", stream=0)
    wham.fwht(x, out=out)
    assert stub.last() == f"wham_fwht_c64 {x.ptr + 64:x} {out.ptr:x} 3 2 1 0 0"
    assert x.streams == [1]  # the legacy default stream, which the call runs on
    while wham._frameworks.release_finished():  # the view is held until the work is done
        pass
    assert x.deleted == 1


def test_status_becomes_exception(stub, fake):
    x, out = fake((4, 8), "float32"), fake((4, 8), "float32")
    stub.fail(1, "wham::fwht: log_n = 31 is invalid (valid: 0..30)")
    with pytest.raises(wham.InvalidArgument, match="log_n = 31 is invalid") as info:
        wham.fwht(x, out=out)
    assert isinstance(info.value, ValueError) and isinstance(info.value, wham.WhamError)
    assert info.value.status == 1 and info.value.function == "wham_fwht_f32"
    stub.fail(2, "wham::fwht: cudaLaunchKernel failed: invalid device function")
    with pytest.raises(wham.CudaError, match="invalid device function"):
        wham.fwht(x, out=out)
    stub.fail(3, "")
    with pytest.raises(wham.WhamError, match="returned status 3") as info:
        wham.fwht(x, out=out)
    assert not isinstance(info.value, ValueError) and isinstance(info.value, RuntimeError)
    stub.fail(4, "wham::fwht: log_n = 20 is invalid (valid: 0..15 for this element type on "
                 "this device (fused path))")
    with pytest.raises(wham.NotSupported, match="fused path") as info:
        wham.fwht(x, out=out, path="fused")
    assert info.value.status == 4 and not isinstance(info.value, ValueError)
    stub.fail(5, "wham: no CUDA device is available (cudaErrorNoDevice in cudaGetDevice)")
    with pytest.raises(wham.NoDevice, match="no CUDA device is available") as info:
        wham.fwht(x, out=out)
    assert info.value.status == 5 and isinstance(info.value, wham.WhamError)
    stub.fail(17, "from a newer library")
    with pytest.raises(wham.WhamError, match="from a newer library") as info:
        wham.fwht(x, out=out)
    assert type(info.value) is wham.WhamError and info.value.status == 17


@pytest.mark.parametrize("dtype,suffix", [("float16", "f16"), ("bfloat16", "bf16")])
def test_fwht_16_bit_arguments(stub, fake, dtype, suffix):
    x, y = fake((3, 16), dtype), fake((3, 16), dtype)
    wham.fwht(x, scale=0.25, out=y)
    assert stub.last() == f"wham_fwht_{suffix} {x.ptr:x} {y.ptr:x} 4 3 0.25 0 0"


@pytest.mark.parametrize("dtype,suffix", [("float32", "f32"), ("float64", "f64"), ("complex64", "c64"),
                                          ("complex128", "c128"), ("float16", "f16"),
                                          ("bfloat16", "bf16")])
def test_hadamard_arguments(stub, fake, dtype, suffix):
    x, y = fake((2, 5, 5120), dtype), fake((2, 5, 5120), dtype)
    wham.hadamard(x, scale=0.5, out=y, matrices="quarot", transpose=True)
    assert stub.last() == f"wham_hadamard_{suffix} {x.ptr:x} {y.ptr:x} 40 7 10 0.5 1 1 0"
    wham.hadamard(x, scale="orthonormal", out=y)
    name, i, o, m, log_k, batch, scale, matrices, transpose, stream = stub.last().split()
    assert (m, log_k, batch, matrices, transpose) == ("20", "8", "10", "0", "0")
    assert abs(float(scale) - 5120 ** -0.5) < 1e-8  # float32 for all but the double types


def test_hadamard_matrix_arguments(stub):
    h = wham.hadamard_matrix(28, "quarot")
    assert h.shape == (28, 28) and h.dtype.name == "int8"
    assert stub.last() == "wham_hadamard_matrix 28 1"
