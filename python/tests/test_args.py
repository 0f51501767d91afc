"""Argument checks that need neither a GPU nor libwham.so: fake device arrays (made-up
pointers) and CPU NumPy arrays, each rejected with a message naming what is wrong."""

import numpy as np
import pytest

import wham


def test_import_and_sizes_without_library():
    assert wham.iqp_num_params(1) == 1
    assert wham.iqp_num_params(4) == 10
    assert wham.iqp_num_params(30, "iqp_z") == 30
    assert wham.iqp_num_params(30) == 465
    assert wham.m2l_num_coeffs(0) == 1
    assert wham.m2l_num_coeffs(20) == 441
    with pytest.raises(ValueError, match=r"num_qubits = 31 is invalid \(valid: 1..30\)"):
        wham.iqp_num_params(31)
    with pytest.raises(ValueError, match="variant"):
        wham.iqp_num_params(3, "zz")
    with pytest.raises(ValueError, match="p = -1"):
        wham.m2l_num_coeffs(-1)
    with pytest.raises(TypeError, match="integer"):
        wham.m2l_num_coeffs(2.5)


def test_first_call_without_library_says_how_to_get_it(no_library, fake):
    x = fake((4, 8), "float32")
    with pytest.raises(RuntimeError, match="WHAM_LIBRARY") as info:
        wham.fwht(x, out=fake((4, 8), "float32"))
    assert isinstance(info.value, wham.LibraryNotFoundError)
    assert "cmake" in str(info.value)
    assert not wham.available()


CPU_CALLS = {
    "fwht": lambda a: wham.fwht(a),
    "iqp_encode": lambda a: wham.iqp_encode(a),
    "m2l": lambda a: wham.m2l(a, a),
}


@pytest.mark.parametrize("name", sorted(CPU_CALLS))
def test_cpu_numpy_arrays_are_rejected(name):
    with pytest.raises(ValueError, match=r"must be in CUDA device memory.*numpy.ndarray.*CPU"):
        CPU_CALLS[name](np.zeros((2, 4), np.float32))


def test_non_arrays_are_rejected():
    with pytest.raises(ValueError, match="CUDA device memory"):
        wham.fwht([1.0, 2.0])
    with pytest.raises(TypeError, match="__cuda_array_interface__ or __dlpack__"):
        wham.fwht(object())


def test_fwht_checks(fake):
    with pytest.raises(TypeError, match="dtype int32; expected float32 or float64 or complex64 or complex128 or float16 or bfloat16"):
        wham.fwht(fake((8,), "int32"))
    with pytest.raises(ValueError, match="last dimension of x is 6; it must be a power of two"):
        wham.fwht(fake((3, 6), "float32"))
    with pytest.raises(ValueError, match="power of two from 1 to 2\\^30"):
        wham.fwht(fake((1 << 31,), "float32"))
    with pytest.raises(ValueError, match="at least one dimension"):
        wham.fwht(fake((), "float32"))
    with pytest.raises(ValueError, match="C-contiguous"):
        wham.fwht(fake((4, 8), "float32", strides=(4, 16)))
    with pytest.raises(ValueError, match="not aligned"):
        wham.fwht(fake((4, 8), "complex128", ptr=0x10008))
    with pytest.raises(ValueError, match="path = 'fast' is invalid"):
        wham.fwht(fake((4, 8), "float32"), path="fast")
    with pytest.raises(ValueError, match="scale"):
        wham.fwht(fake((4, 8), "float32"), scale="unitary")
    x = fake((4, 8), "float32")
    with pytest.raises(ValueError, match="out has shape"):
        wham.fwht(x, out=fake((4, 16), "float32"))
    with pytest.raises(TypeError, match="out has dtype float64"):
        wham.fwht(x, out=fake((4, 8), "float64"))
    with pytest.raises(ValueError, match="out overlaps x"):
        wham.fwht(x, out=fake((4, 8), "float32", ptr=x.ptr + 4))
    with pytest.raises(ValueError, match="read-only"):
        wham.fwht(x, out=fake((4, 8), "float32", readonly=True))
    with pytest.raises(TypeError, match="pass out="):
        wham.fwht(x)  # no framework to allocate in


def test_contiguity_ignores_unit_dimensions(fake, stub):
    # strides of extent-1 dimensions do not matter
    x = fake((1, 8), "float32", strides=(12345, 4))
    wham.fwht(x, out=fake((1, 8), "float32"))


def test_iqp_checks(fake):
    with pytest.raises(TypeError, match="params has dtype complex64"):
        wham.iqp_encode(fake((2, 10), "complex64"))
    with pytest.raises(ValueError, match="7 values a sample, which is iqp_num_params"):
        wham.iqp_encode(fake((2, 7), "float32"))
    with pytest.raises(ValueError, match="4 qubits \\('iqp'\\) need 10"):
        wham.iqp_encode(fake((2, 6), "float32"), num_qubits=4)
    with pytest.raises(ValueError, match="num_qubits = 0"):
        wham.iqp_encode(fake((2, 6), "float32"), num_qubits=0)
    with pytest.raises(ValueError, match="'product' serves variant 'iqp_z' only"):
        wham.iqp_encode(fake((2, 6), "float32"), path="product")
    with pytest.raises(TypeError, match="dtype = float32 is invalid"):
        wham.iqp_encode(fake((2, 6), "float32"), dtype="float32")
    with pytest.raises(ValueError, match=r"out has shape \(2, 16\); expected \(2, 8\)"):
        wham.iqp_encode(fake((2, 6), "float32"), out=fake((2, 16), "complex64"))
    with pytest.raises(ValueError, match="params has 31 values"):
        wham.iqp_encode(fake((31,), "float32"), variant="iqp_z")


def test_m2l_checks(fake):
    with pytest.raises(ValueError, match="last dimension of multipoles is 10, not a coefficient count"):
        wham.m2l(fake((5, 10), "complex128"), fake((5, 3), "float64"))
    with pytest.raises(ValueError, match="p = 3 needs 16 coefficients"):
        wham.m2l(fake((5, 9), "complex128"), fake((5, 3), "float64"), p=3)
    with pytest.raises(ValueError, match="p = 17 is invalid \\(valid: 0..16\\)"):
        wham.m2l(fake((5, 18 * 18), "complex64"), fake((5, 3), "float32"))
    with pytest.raises(TypeError, match="deltas has dtype float64; expected float32"):
        wham.m2l(fake((5, 9), "complex64"), fake((5, 3), "float64"))
    with pytest.raises(ValueError, match="deltas has shape \\(4, 3\\); expected \\(5, 3\\)"):
        wham.m2l(fake((5, 9), "complex128"), fake((4, 3), "float64"))
    with pytest.raises(TypeError, match="multipoles has dtype float64"):
        wham.m2l(fake((5, 9), "float64"), fake((5, 3), "float64"))
    with pytest.raises(ValueError, match="path = 'gemm'"):
        wham.m2l(fake((5, 9), "complex128"), fake((5, 3), "float64"), path="gemm")
    m, d = fake((5, 9), "complex128"), fake((5, 3), "float64")
    with pytest.raises(ValueError, match="out overlaps multipoles"):
        wham.m2l(m, d, out=fake((5, 9), "complex128", ptr=m.ptr + 16))


def _list(fake, pairs=6, rows=4, p=2, dtype="complex128"):
    C = (p + 1) ** 2
    real = {"complex128": "float64", "complex64": "float32"}[dtype]
    return dict(multipoles=fake((rows, C), dtype), deltas=fake((pairs, 3), real),
                src=fake((pairs,), "int32"), tgt=fake((pairs,), "int32"),
                locals=fake((rows, C), dtype))


def test_accumulate_checks(fake):
    a = _list(fake)
    with pytest.raises(TypeError, match="src has dtype int64; expected int32"):
        wham.m2l_accumulate(**dict(a, src=fake((6,), "int64")))
    with pytest.raises(ValueError, match="src has 6 pairs, tgt 5"):
        wham.m2l_accumulate(**dict(a, tgt=fake((5,), "int32")))
    with pytest.raises(ValueError, match="must be 1-D"):
        wham.m2l_accumulate(**dict(a, src=fake((6, 1), "int32")))
    with pytest.raises(TypeError, match="locals has dtype complex64"):
        wham.m2l_accumulate(**dict(a, locals=fake((4, 9), "complex64")))
    with pytest.raises(ValueError, match="locals must have shape \\[..., 9\\]"):
        wham.m2l_accumulate(**dict(a, locals=fake((4, 16), "complex128")))
    with pytest.raises(ValueError, match="deltas has shape \\(5, 3\\); expected \\(6, 3\\)"):
        wham.m2l_accumulate(**dict(a, deltas=fake((5, 3), "float64")))
    with pytest.raises(ValueError, match="read-only"):
        wham.m2l_accumulate(**dict(a, locals=fake((4, 9), "complex128", readonly=True)))
    m = a["multipoles"]
    with pytest.raises(ValueError, match="locals overlaps multipoles"):
        wham.m2l_accumulate(**dict(a, locals=fake((4, 9), "complex128", ptr=m.ptr)))
    with pytest.raises(ValueError, match="method = 'fast'"):
        wham.m2l_accumulate(**a, method="fast")


def test_centers_and_classes_checks(fake):
    a = _list(fake)
    a.pop("deltas")
    with pytest.raises(ValueError, match="R >= max\\(num_multipoles, num_locals\\) = 4"):
        wham.m2l_accumulate_centers(centers=fake((3, 3), "float64"), **a)
    cls = fake((6,), "int32")
    with pytest.raises(ValueError, match="num_classes \\(rows of class_deltas\\) = 1025"):
        wham.m2l_accumulate_classes(class_deltas=fake((1025, 3), "float64"), cls=cls, **a)
    with pytest.raises(ValueError, match="cls has shape \\(5,\\); expected \\(6,\\)"):
        wham.m2l_accumulate_classes(class_deltas=fake((316, 3), "float64"),
                                    cls=fake((5,), "int32"), **a)
    with pytest.raises(ValueError, match="grouped=True accumulates with atomics"):
        wham.m2l_accumulate_classes(class_deltas=fake((316, 3), "float64"), cls=cls, **a,
                                    method="deterministic", grouped=True)


def test_check_interaction_list_checks(fake):
    s, t = fake((6,), "int32"), fake((6,), "int32")
    with pytest.raises(ValueError, match="num_classes given without cls"):
        wham.check_interaction_list(s, t, 4, 4, num_classes=3)
    with pytest.raises(ValueError, match="num_classes is needed with cls"):
        wham.check_interaction_list(s, t, 4, 4, cls=fake((6,), "int32"))
    with pytest.raises(ValueError, match="num_locals = -1"):
        wham.check_interaction_list(s, t, 4, -1)
    with pytest.raises(TypeError, match="out has dtype int32"):
        wham.check_interaction_list(s, t, 4, 4, out=fake((1,), "int32"))


def test_dlpack_reader_on_numpy():
    from wham._dlpack import DLPackView
    a = np.arange(24, dtype=np.complex64).reshape(4, 6)[:, ::2]
    v = DLPackView(a)
    assert v.ptr == a.ctypes.data and v.shape == (4, 3) and v.dtype == "complex64"
    assert v.strides == (6, 2) and v.device_type == 1 and v.itemsize == 8
    v.release()


def test_dlpack_producer_cpu_and_layout(fake_dlpack):
    x = fake_dlpack((4, 8), "float32", device=(1, 0))
    with pytest.raises(ValueError, match="CPU device"):
        wham.fwht(x)
    x = fake_dlpack((4, 8), "float32", strides=(16, 2))
    with pytest.raises(ValueError, match="C-contiguous"):
        wham.fwht(x)
    assert x.deleted == 1  # the consumed tensor was handed back
    with pytest.raises(ValueError, match="ROCm"):
        wham.fwht(fake_dlpack((8,), "float32", device=(10, 0)))


def test_hadamard_factor():
    assert wham.hadamard_factor(96) == (12, 3)
    assert wham.hadamard_factor(128) == (1, 7)
    assert wham.hadamard_factor(5120) == (20, 8)
    assert wham.hadamard_factor(5120, matrices="quarot") == (40, 7)  # QuaRot's get_hadK
    assert wham.hadamard_factor(5120, m=40) == (40, 7)
    assert wham.hadamard_factor(14336) == (28, 9)
    with pytest.raises(ValueError, match="m \\* 2\\^k"):
        wham.hadamard_factor(24 * 7)


def test_hadamard_checks(fake):
    with pytest.raises(TypeError, match="dtype int32"):
        wham.hadamard(fake((8, 96), "int32"))
    with pytest.raises(ValueError, match="last dimension of x is 168"):
        wham.hadamard(fake((2, 168), "float16"))
    with pytest.raises(ValueError, match="m = 24 is invalid"):
        wham.hadamard(fake((2, 96), "float16"), m=24)
    with pytest.raises(ValueError, match="not 20 times a power of two"):
        wham.hadamard(fake((2, 96), "float16"), m=20)
    with pytest.raises(ValueError, match="matrices = 'sloane' is invalid"):
        wham.hadamard(fake((2, 96), "float16"), matrices="sloane")
    with pytest.raises(ValueError, match="scale = 'unit' is invalid"):
        wham.hadamard(fake((2, 96), "float16"), scale="unit")
