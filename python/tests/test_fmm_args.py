"""wham.m2m, l2l, m2m_accumulate, l2l_accumulate, p2m, l2p and p2p without a GPU: the C
arguments each call passes (against the stub library), the calls that enqueue nothing, and
the argument checks, each naming what is wrong. Fake device arrays (made-up pointers)."""

import os
import shutil
import subprocess

import pytest

import wham
from wham import _lib

SUFFIX = {"complex64": "f32", "complex128": "f64", "float32": "f32", "float64": "f64"}
REAL = {"complex64": "float32", "complex128": "float64"}
COMPLEX = {"float32": "complex64", "float64": "complex128"}


def _hex(*arrays):
    return " ".join("0" if a is None else f"{a.ptr:x}" for a in arrays)


# ---- the C arguments ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["m2m", "l2l"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("path,code", [("automatic", 0), ("direct", 1), ("thread", 2),
                                       ("split", 3), ("WARP", 4)])
def test_translation_arguments(stub, fake, name, dtype, path, code):
    x, d = fake((2, 3, 49), dtype, stream=0x77), fake((2, 3, 3), REAL[dtype])
    out = fake((2, 3, 49), dtype)
    assert getattr(wham, name)(x, d, out=out, path=path) is out
    # on the stream the first argument names
    assert stub.last() == f"wham_{name}_{SUFFIX[dtype]} {_hex(x, d, out)} 6 6 {code} 77"


@pytest.mark.parametrize("name,names", [("m2m_accumulate", ("multipoles", "parents")),
                                        ("l2l_accumulate", ("locals", "children"))])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_translation_accumulate_arguments(stub, fake, name, names, dtype):
    x, d = fake((10, 25), dtype), fake((7, 3), REAL[dtype])
    s, t, y = fake((7,), "int32"), fake((7,), "int32"), fake((3, 25), dtype)
    assert getattr(wham, name)(x, d, s, t, y, path="split") is y
    assert stub.last() == f"wham_{name}_{SUFFIX[dtype]} {_hex(x, d, s, t, y)} 4 7 10 3 3 0"
    getattr(wham, name)(x, d, s, t, y, p=4)
    assert stub.last().endswith(" 4 7 10 3 0 0")


@pytest.mark.parametrize("real", ["float32", "float64"])
def test_p2m_arguments(stub, fake, real):
    x, q = fake((100, 3), real), fake((100,), real)
    off, c = fake((9,), "int64"), fake((8, 3), real)
    out = fake((8, 36), COMPLEX[real])
    assert wham.p2m(x, q, off, c, out=out) is out  # p = 5 from out's rows
    assert stub.last() == f"wham_p2m_{SUFFIX[real]} {_hex(x, q)} 100 {_hex(off, c)} 8 {out.ptr:x} 5 0"
    wham.p2m(x, q, off, c, p=5, out=out)
    assert stub.last().endswith(f"{out.ptr:x} 5 0")


def test_p2m_without_points_writes_zeros(stub, fake):
    # No points: the library still writes every cell (zeros); with no cells it is not called.
    x, q, off, c = fake((0, 3), "float64"), fake((0,), "float64"), fake((3,), "int64"), fake((2, 3), "float64")
    out = fake((2, 4), "complex128")
    wham.p2m(x, q, off, c, out=out)
    assert stub.last() == f"wham_p2m_f64 {_hex(x, q)} 0 {_hex(off, c)} 2 {out.ptr:x} 1 0"


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("with_gradient", [True, False])
def test_l2p_arguments(stub, fake, dtype, with_gradient):
    real = REAL[dtype]
    L, c, off = fake((8, 16), dtype, stream=0x99), fake((8, 3), real), fake((9,), "int64")
    x, phi = fake((50, 3), real), fake((50,), real)
    g = fake((50, 3), real) if with_gradient else None
    assert wham.l2p(L, c, off, x, phi, g) == (phi, g)
    assert stub.last() == (f"wham_l2p_{SUFFIX[real]} {_hex(L, c, off)} 8 {x.ptr:x} 50 "
                           f"{_hex(phi, g)} 3 99")


@pytest.mark.parametrize("real", ["float32", "float64"])
@pytest.mark.parametrize("with_gradient", [True, False])
def test_p2p_arguments(stub, fake, real, with_gradient):
    x, q, off = fake((50, 3), real), fake((50,), real), fake((9,), "int64")
    noff, near = fake((9,), "int64"), fake((30,), "int32")
    phi = fake((50,), real)
    g = fake((50, 3), real) if with_gradient else None
    assert wham.p2p(x, q, off, noff, near, phi, gradient=g) == (phi, g)
    assert stub.last() == (f"wham_p2p_{SUFFIX[real]} {_hex(x, q)} 50 {off.ptr:x} 8 "
                           f"{_hex(noff, near)} 30 {_hex(phi, g)} 0")


def test_empty_calls_call_nothing(stub, fake):
    wham.m2l_num_coeffs(1)
    wham.fwht(fake((2,), "float32"), out=fake((2,), "float32"))
    before = stub.last()
    c64, f32 = "complex64", "float32"
    wham.m2m(fake((0, 9), c64), fake((0, 3), f32), out=fake((0, 9), c64))
    wham.l2l(fake((2, 0, 9), c64), fake((2, 0, 3), f32), out=fake((2, 0, 9), c64))
    e = fake((0,), "int32")
    wham.m2m_accumulate(fake((0, 9), c64), fake((0, 3), f32), e, e, fake((0, 9), c64))
    wham.l2l_accumulate(fake((3, 9), c64), fake((0, 3), f32), e, e, fake((2, 9), c64))
    one = fake((1,), "int64")  # no cells
    wham.p2m(fake((5, 3), f32), fake((5,), f32), one, fake((0, 3), f32),
             out=fake((0, 9), c64))
    phi, x = fake((5,), f32), fake((5, 3), f32)
    wham.l2p(fake((0, 9), c64), fake((0, 3), f32), one, x, phi)
    off = fake((3,), "int64")
    wham.l2p(fake((2, 9), c64), fake((2, 3), f32), off, fake((0, 3), f32), fake((0,), f32))
    wham.p2p(x, fake((5,), f32), off, fake((3,), "int64"), e, phi)  # no near entries
    wham.p2p(fake((0, 3), f32), fake((0,), f32), off, fake((3,), "int64"),
             fake((4,), "int32"), fake((0,), f32))
    assert stub.last() == before


def test_fmm_status_becomes_exception(stub, fake):
    x, d, out = fake((4, 25), "complex64"), fake((4, 3), "float32"), fake((4, 25), "complex64")
    stub.fail(1, "wham::m2m: p = 4 is invalid (valid: 7..12 for translation_path::split)")
    with pytest.raises(wham.InvalidArgument, match="7..12 for translation_path::split") as info:
        wham.m2m(x, d, out=out, path="split")
    assert info.value.function == "wham_m2m_f32"
    stub.fail(2, "wham::p2p: cudaLaunchKernel failed")
    with pytest.raises(wham.CudaError, match="cudaLaunchKernel"):
        wham.p2p(fake((5, 3), "float64"), fake((5,), "float64"), fake((2,), "int64"),
                 fake((2,), "int64"), fake((1,), "int32"), fake((5,), "float64"))


def test_a_library_without_the_fmm_functions_is_refused(tmp_path, monkeypatch, fake):
    # Every function the package binds must be there: a libwham.so of this version built
    # without them fails to load, naming the missing symbol, rather than at the first call.
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler to build the stub library")
    here = os.path.dirname(os.path.abspath(__file__))
    out = str(tmp_path / "libwham_partial.so")
    subprocess.run([cc, "-shared", "-fPIC", "-DWHAM_STUB_WITHOUT_FMM", "-I",
                    os.path.join(os.path.dirname(os.path.dirname(here)), "include"), "-o", out,
                    os.path.join(here, "stub", "wham_stub.c")], check=True)
    monkeypatch.setenv("WHAM_LIBRARY", out)
    monkeypatch.setattr(_lib, "_library", None)
    with pytest.raises(wham.LibraryNotFoundError, match="wham_m2m_f32"):
        wham.fwht(fake((2, 8), "float32"), out=fake((2, 8), "float32"))
    monkeypatch.setattr(_lib, "_library", None)


# ---- the checks ---------------------------------------------------------------------------

def test_translation_checks(fake):
    m, d = fake((5, 9), "complex128"), fake((5, 3), "float64")
    with pytest.raises(ValueError, match="last dimension of multipoles is 10, not a coefficient count"):
        wham.m2m(fake((5, 10), "complex128"), d)
    with pytest.raises(ValueError, match="p = 3 needs 16 coefficients"):
        wham.l2l(fake((5, 9), "complex128"), d, p=3)
    with pytest.raises(ValueError, match="p = 17 is invalid \\(valid: 0..16\\)"):
        wham.m2m(fake((5, 18 * 18), "complex64"), fake((5, 3), "float32"))
    with pytest.raises(TypeError, match="deltas has dtype float32; expected float64"):
        wham.l2l(m, fake((5, 3), "float32"))
    with pytest.raises(TypeError, match="locals has dtype float64"):
        wham.l2l(fake((5, 9), "float64"), d)
    with pytest.raises(ValueError, match="deltas has shape \\(4, 3\\); expected \\(5, 3\\)"):
        wham.m2m(m, fake((4, 3), "float64"))
    with pytest.raises(ValueError, match="path = 'tensor' is invalid"):
        wham.m2m(m, d, path="tensor")  # M2L's tensor-core path is not a translation path
    with pytest.raises(ValueError, match="out overlaps deltas"):
        wham.l2l(m, d, out=fake((5, 9), "complex128", ptr=d.ptr + 16))
    with pytest.raises(ValueError, match="read-only"):
        wham.m2m(m, d, out=fake((5, 9), "complex128", readonly=True))
    with pytest.raises(ValueError, match="C-contiguous"):
        wham.m2m(fake((5, 9), "complex128", strides=(16 * 18, 16)), d)
    with pytest.raises(ValueError, match="not aligned"):
        wham.l2l(fake((5, 9), "complex128", ptr=0x10008), d)


def _pairs(fake, source="multipoles", target="parents", pairs=6, rows=4):
    return {source: fake((rows, 9), "complex128"), "deltas": fake((pairs, 3), "float64"),
            "src": fake((pairs,), "int32"), "tgt": fake((pairs,), "int32"),
            target: fake((rows, 9), "complex128")}


@pytest.mark.parametrize("name,source,target", [("m2m_accumulate", "multipoles", "parents"),
                                                ("l2l_accumulate", "locals", "children")])
def test_translation_accumulate_checks(fake, name, source, target):
    f = getattr(wham, name)
    a = _pairs(fake, source, target)
    with pytest.raises(TypeError, match="src has dtype int64; expected int32"):
        f(**dict(a, src=fake((6,), "int64")))
    with pytest.raises(ValueError, match="src has 6 pairs, tgt 5"):
        f(**dict(a, tgt=fake((5,), "int32")))
    with pytest.raises(TypeError, match=f"{target} has dtype complex64"):
        f(**dict(a, **{target: fake((4, 9), "complex64")}))
    with pytest.raises(ValueError, match=f"{target} must have shape \\[..., 9\\]"):
        f(**dict(a, **{target: fake((4, 16), "complex128")}))
    with pytest.raises(ValueError, match="deltas has shape \\(5, 3\\); expected \\(6, 3\\)"):
        f(**dict(a, deltas=fake((5, 3), "float64")))
    with pytest.raises(ValueError, match="read-only"):
        f(**dict(a, **{target: fake((4, 9), "complex128", readonly=True)}))
    with pytest.raises(ValueError, match=f"{target} overlaps {source}"):
        f(**dict(a, **{target: fake((4, 9), "complex128", ptr=a[source].ptr + 64)}))
    with pytest.raises(ValueError, match=f"{target} overlaps tgt"):
        f(**dict(a, **{target: fake((4, 9), "complex128", ptr=a["tgt"].ptr)}))
    with pytest.raises(ValueError, match=f"rows of {source} = 0"):
        f(**dict(a, **{source: fake((0, 9), "complex128")}))
    with pytest.raises(ValueError, match="path = 'atomic' is invalid"):
        f(**a, path="atomic")
    with pytest.raises(TypeError, match="method"):
        f(**a, method="atomic")  # no method: the translations accumulate with atomics only


def _cells(fake, real="float64", n=20, cells=4, p=2):
    cx = "complex128" if real == "float64" else "complex64"
    return dict(points=fake((n, 3), real), charges=fake((n,), real),
                cell_offsets=fake((cells + 1,), "int64"), centers=fake((cells, 3), real),
                locals=fake((cells, (p + 1) ** 2), cx), potential=fake((n,), real),
                gradient=fake((n, 3), real), near_offsets=fake((cells + 1,), "int64"),
                near_cells=fake((3 * cells,), "int32"))


def _p2m(a, **kw):
    return wham.p2m(a["points"], a["charges"], a["cell_offsets"], a["centers"], **kw)


def test_p2m_checks(fake):
    a = _cells(fake)
    with pytest.raises(ValueError, match="p is needed"):
        _p2m(a)
    with pytest.raises(TypeError, match="points has dtype float16"):
        _p2m(dict(a, points=fake((20, 3), "float16")), p=2)
    with pytest.raises(ValueError, match="points must have shape \\[num_points, 3\\]"):
        _p2m(dict(a, points=fake((20, 4), "float64")), p=2)
    with pytest.raises(TypeError, match="charges has dtype float32; expected float64"):
        _p2m(dict(a, charges=fake((20,), "float32")), p=2)
    with pytest.raises(ValueError, match="charges has shape \\(19,\\); expected \\(20,\\)"):
        _p2m(dict(a, charges=fake((19,), "float64")), p=2)
    with pytest.raises(TypeError, match="cell_offsets has dtype int32; expected int64"):
        _p2m(dict(a, cell_offsets=fake((5,), "int32")), p=2)
    with pytest.raises(ValueError, match="cell_offsets must be 1-D \\[num_cells \\+ 1\\]"):
        _p2m(dict(a, cell_offsets=fake((0,), "int64")), p=2)
    with pytest.raises(ValueError, match="centers has shape \\(3, 3\\); expected \\(4, 3\\)"):
        _p2m(dict(a, centers=fake((3, 3), "float64")), p=2)
    with pytest.raises(ValueError, match="p = 21 is invalid \\(valid: 0..20\\)"):
        _p2m(a, p=21)
    with pytest.raises(ValueError, match="p = 17 is invalid \\(valid: 0..16\\)"):
        _p2m(_cells(fake, "float32"), p=17)
    with pytest.raises(ValueError, match="out has shape \\(4, 16\\); expected \\(4, 9\\)"):
        _p2m(a, p=2, out=fake((4, 16), "complex128"))
    with pytest.raises(TypeError, match="out has dtype complex64; expected complex128"):
        _p2m(a, out=fake((4, 9), "complex64"))
    with pytest.raises(ValueError, match="last dimension of out is 10"):
        _p2m(a, out=fake((4, 10), "complex128"))
    with pytest.raises(ValueError, match="out overlaps centers"):
        _p2m(a, out=fake((4, 9), "complex128", ptr=a["centers"].ptr))
    with pytest.raises(TypeError, match="pass out="):
        _p2m(a, p=2)  # fake arrays: no framework to allocate in


def _l2p(a, **kw):
    return wham.l2p(a["locals"], a["centers"], a["cell_offsets"], a["points"], a["potential"],
                    a["gradient"], **kw)


def test_l2p_checks(fake):
    a = _cells(fake)
    with pytest.raises(ValueError, match="p = 3 needs 16 coefficients a row; locals has 9"):
        _l2p(a, p=3)
    with pytest.raises(ValueError, match="locals has shape \\(5, 9\\); expected \\(4, 9\\)"):
        _l2p(dict(a, locals=fake((5, 9), "complex128")))
    with pytest.raises(TypeError, match="centers has dtype float32; expected float64"):
        _l2p(dict(a, centers=fake((4, 3), "float32")))
    with pytest.raises(TypeError, match="points has dtype float32; expected float64"):
        _l2p(dict(a, points=fake((20, 3), "float32")))
    with pytest.raises(ValueError, match="potential has shape \\(21,\\); expected \\(20,\\)"):
        _l2p(dict(a, potential=fake((21,), "float64")))
    with pytest.raises(TypeError, match="potential has dtype float32"):
        _l2p(dict(a, potential=fake((20,), "float32")))
    with pytest.raises(ValueError, match="gradient has shape \\(20,\\); expected \\(20, 3\\)"):
        _l2p(dict(a, gradient=fake((20,), "float64")))
    with pytest.raises(ValueError, match="potential is read-only"):
        _l2p(dict(a, potential=fake((20,), "float64", readonly=True)))
    with pytest.raises(ValueError, match="gradient is read-only"):
        _l2p(dict(a, gradient=fake((20, 3), "float64", readonly=True)))
    with pytest.raises(ValueError, match="potential overlaps points"):
        _l2p(dict(a, potential=fake((20,), "float64", ptr=a["points"].ptr + 8)))
    g = a["gradient"]
    with pytest.raises(ValueError, match="potential overlaps gradient"):
        _l2p(dict(a, potential=fake((20,), "float64", ptr=g.ptr + 8 * 40)))
    with pytest.raises(ValueError, match="gradient overlaps locals"):
        _l2p(dict(a, gradient=fake((20, 3), "float64", ptr=a["locals"].ptr)))


def _p2p(a):
    return wham.p2p(a["points"], a["charges"], a["cell_offsets"], a["near_offsets"],
                    a["near_cells"], a["potential"], a["gradient"])


def test_p2p_checks(fake):
    a = _cells(fake, "float32")
    with pytest.raises(ValueError, match="near_offsets has shape \\(4,\\); expected \\(5,\\)"):
        _p2p(dict(a, near_offsets=fake((4,), "int64")))
    with pytest.raises(TypeError, match="near_offsets has dtype int32; expected int64"):
        _p2p(dict(a, near_offsets=fake((5,), "int32")))
    with pytest.raises(TypeError, match="near_cells has dtype int64; expected int32"):
        _p2p(dict(a, near_cells=fake((12,), "int64")))
    with pytest.raises(ValueError, match="near_cells must be 1-D"):
        _p2p(dict(a, near_cells=fake((4, 3), "int32")))
    with pytest.raises(TypeError, match="potential has dtype float64; expected float32"):
        _p2p(dict(a, potential=fake((20,), "float64")))
    with pytest.raises(ValueError, match="gradient overlaps near_cells"):
        _p2p(dict(a, gradient=fake((20, 3), "float32", ptr=a["near_cells"].ptr + 4)))
    with pytest.raises(ValueError, match="potential overlaps charges"):
        _p2p(dict(a, potential=fake((20,), "float32", ptr=a["charges"].ptr)))
    with pytest.raises(ValueError, match="C-contiguous"):
        _p2p(dict(a, points=fake((20, 3), "float32", strides=(16, 4))))


def test_cpu_arrays_are_rejected():
    np = pytest.importorskip("numpy")
    x = np.zeros((4, 3))
    with pytest.raises(ValueError, match="must be in CUDA device memory"):
        wham.p2p(x, np.zeros(4), np.zeros(2, np.int64), np.zeros(2, np.int64),
                 np.zeros(1, np.int32), np.zeros(4))
