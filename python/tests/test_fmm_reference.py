"""The NumPy references of the GPU tests (fmm_reference.py) held to the identities they rest
on, without a GPU: the closed form of R_n^n, M2M and L2L moving expansions exactly, L2P's
gradient against central differences, P2M -> M2L -> L2P converging to the direct sum, and
P2P equal to the direct sum where every cell is near every other."""

import math

import numpy as np
import pytest

from wham import reference

import fmm_reference as F

RNG = np.random.default_rng(2718)


def _rel(got, want):
    return np.linalg.norm(np.ravel(got - want)) / np.linalg.norm(np.ravel(want))


def test_sectoral_harmonics_have_their_closed_form():
    d = RNG.uniform(-1, 1, (6, 3))
    R = F.regular_harmonics(10, d)
    for n in range(11):
        want = (d[:, 0] + 1j * d[:, 1]) ** n / (2 ** n * math.factorial(n))
        np.testing.assert_allclose(R[:, F.index(n, n)], want, rtol=1e-14, atol=0)
        np.testing.assert_allclose(R[:, F.index(n, -n)], (-1) ** n * np.conj(want), rtol=1e-14)


@pytest.mark.parametrize("p", [0, 3, 9])
def test_m2m_moves_a_multipole_exactly(p):
    # P2M about the child, then M2M to the parent = P2M about the parent.
    x, q = RNG.uniform(0, 0.25, (25, 3)), RNG.uniform(-1, 1, 25)
    child, parent = np.full((1, 3), 0.125), np.full((1, 3), 0.25)
    moved = F.m2m(F.p2m(x, q, [0, 25], child, p), parent - child, p)
    assert _rel(moved, F.p2m(x, q, [0, 25], parent, p)) < 1e-14


@pytest.mark.parametrize("p", [0, 3, 9])
def test_l2l_moves_a_local_expansion_exactly(p):
    C = (p + 1) ** 2
    L = RNG.standard_normal((1, C)) + 1j * RNG.standard_normal((1, C))
    x = RNG.uniform(0.5, 0.75, (15, 3))
    parent, child = np.full((1, 3), 0.5), np.full((1, 3), 0.625)
    phi, grad = F.l2p(L, parent, [0, 15], x, p)
    phi2, grad2 = F.l2p(F.l2l(L, child - parent, p), child, [0, 15], x, p)
    assert _rel(phi2, phi) < 1e-13
    if p:
        assert _rel(grad2, grad) < 1e-13


def test_l2p_gradient_is_the_derivative_of_the_potential():
    p, h = 8, 1e-6
    C = (p + 1) ** 2
    L = RNG.standard_normal((1, C)) + 1j * RNG.standard_normal((1, C))
    x, c = RNG.uniform(0.4, 0.6, (12, 3)), np.full((1, 3), 0.5)
    _, grad = F.l2p(L, c, [0, 12], x, p)
    numeric = np.zeros_like(grad)
    for k in range(3):
        e = np.eye(3)[k] * h
        numeric[:, k] = (F.l2p(L, c, [0, 12], x + e, p)[0] - F.l2p(L, c, [0, 12], x - e, p)[0]) / (2 * h)
    assert _rel(grad, numeric) < 1e-8


def test_vectorised_m2l_is_the_package_reference():
    p = 6
    M = RNG.standard_normal((5, (p + 1) ** 2)) + 1j * RNG.standard_normal((5, (p + 1) ** 2))
    d = RNG.uniform(-2, 2, (5, 3)) + 3.0
    assert _rel(F.m2l(M, d, p), reference.m2l(M, d, p)) < 1e-14


def test_expansions_converge_to_the_direct_sum():
    # Sources in [0, 1/4)^3, targets in [3/4, 1)^3: (a + b) / R < 0.6, so each order's error
    # is below 0.6^(p + 1) and smaller than the last.
    src, q = RNG.uniform(0, 0.25, (40, 3)), RNG.uniform(0, 1, 40)
    tgt = RNG.uniform(0.75, 1.0, (30, 3))
    cs, ct = np.full((1, 3), 0.125), np.full((1, 3), 0.875)
    want, _ = F.direct(np.concatenate([tgt, src]), np.concatenate([np.zeros(30), q]), range(30))
    last = 1.0
    for p in (2, 4, 8, 12):
        L = reference.m2l(F.p2m(src, q, [0, 40], cs, p), ct - cs, p)
        phi, _ = F.l2p(L, ct, [0, 30], tgt, p)
        err = _rel(phi, want)
        assert err < 0.6 ** (p + 1) and err < last
        last = err


def test_p2p_of_cells_near_each_other_is_the_direct_sum():
    x, q = RNG.uniform(0, 1, (50, 3)), RNG.uniform(-1, 1, 50)
    x[7] = x[3]  # coincident points are left out, as the self pair
    phi, grad = F.p2p(x, q, [0, 20, 50], [0, 2, 4], [0, 1, 1, 0])
    want_phi, want_grad = F.direct(x, q, range(50))
    assert _rel(phi, want_phi) < 1e-14 and _rel(grad, want_grad) < 1e-13
    # an id out of range adds nothing
    phi2, _ = F.p2p(x, q, [0, 20, 50], [0, 3, 5], [0, 1, 7, 1, 0])
    np.testing.assert_array_equal(phi2, phi)
