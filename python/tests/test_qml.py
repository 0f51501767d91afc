"""The PennyLane and Qiskit parameter mappings, checked against gate-by-gate simulations
of their circuits (NumPy only: no GPU, no libwham.so)."""

import numpy as np
import pytest

import wham
from wham import qml, reference
from wham.qml import _compose

import simulators as sim

RNG = np.random.default_rng(52)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_reference_matches_gate_by_gate_definition(n):
    params = RNG.uniform(-4, 4, wham.iqp_num_params(n))
    np.testing.assert_allclose(reference.iqp_state(params, n), sim.wham_gates(params, n), atol=1e-12)
    z = params[:n]
    np.testing.assert_allclose(reference.iqp_state(z, n, False), sim.wham_gates(z, n, False), atol=1e-12)


def test_reference_fwht_is_the_definition():
    x = RNG.standard_normal((3, 16)) + 1j * RNG.standard_normal((3, 16))
    np.testing.assert_allclose(reference.fwht(x, 0.25), 0.25 * x @ reference.walsh_matrix(4), atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_qiskit_mapping_is_exact(n):
    M = RNG.integers(-9, 17, (n, n))
    M = np.triu(M) + np.triu(M, 1).T
    params = qml.qiskit_iqp_params(M)
    assert params.shape == (wham.iqp_num_params(n),)
    # equal amplitudes, global phase included
    np.testing.assert_allclose(reference.iqp_state(params, n), sim.qiskit_iqp(M), atol=1e-12)


def test_qiskit_mapping_batched_and_float32():
    M = RNG.integers(0, 8, (4, 3, 3))
    M = M + np.swapaxes(M, -1, -2)
    params = qml.qiskit_iqp_params(M, dtype="float32")
    assert params.shape == (4, 6) and params.dtype == np.float32
    for b in range(4):
        np.testing.assert_allclose(params[b], qml.qiskit_iqp_params(M[b]), rtol=1e-6)


def test_qiskit_mapping_rejects_asymmetric():
    with pytest.raises(ValueError, match="not symmetric"):
        qml.qiskit_iqp_params([[0, 1], [2, 0]])
    with pytest.raises(ValueError, match="square"):
        qml.qiskit_iqp_params([[0, 1, 2], [1, 0, 3]])


def _pennylane_from_wham(features, pattern=None, n_repeats=1):
    """wham's route (the mapping, then iqp_encode and fwht) on the NumPy references."""
    f = np.asarray(features, dtype=np.float64)
    n = f.shape[-1]
    params = qml.pennylane_iqp_params(f, pattern)
    gamma = qml.pennylane_iqp_phase(f, pattern)
    return _compose(params, gamma, n, n_repeats, lambda p: reference.iqp_state(p, n),
                    reference.fwht)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_pennylane_mapping_default_pattern(n):
    f = RNG.uniform(-2, 2, n)
    # one repeat: e^{i gamma} H^n (wham's state), exactly
    np.testing.assert_allclose(_pennylane_from_wham(f), sim.pennylane_iqp_embedding(f), atol=1e-12)


@pytest.mark.parametrize("pattern", [[[0, 1], [1, 2]], [[1, 2], [0, 2], [1, 0]], [[2, 0], [2, 0]], []])
def test_pennylane_mapping_custom_patterns(pattern):
    f = RNG.uniform(-2, 2, 3)
    want = sim.pennylane_iqp_embedding(f, [tuple(p) for p in pattern])
    np.testing.assert_allclose(_pennylane_from_wham(f, pattern), want, atol=1e-12)


@pytest.mark.parametrize("n_repeats", [2, 3])
def test_pennylane_mapping_repeats(n_repeats):
    f = RNG.uniform(-2, 2, 4)
    want = sim.pennylane_iqp_embedding(f, None, n_repeats)
    np.testing.assert_allclose(_pennylane_from_wham(f, None, n_repeats), want, atol=1e-12)


def test_pennylane_mapping_batched_and_wires():
    f = RNG.uniform(-2, 2, (5, 3))
    params = qml.pennylane_iqp_params(f)
    gamma = qml.pennylane_iqp_phase(f)
    assert params.shape == (5, 6) and gamma.shape == (5,)
    for b in range(5):
        np.testing.assert_allclose(params[b], qml.pennylane_iqp_params(f[b]), atol=1e-15)
    # wire labels: the pattern names labels, positions follow `wires`
    by_label = qml.pennylane_iqp_params(f, [["a", "c"]], wires=["a", "b", "c"])
    np.testing.assert_allclose(by_label, qml.pennylane_iqp_params(f, [[0, 2]]), atol=1e-15)


def test_pennylane_mapping_formula():
    # two wires, one pair: a = f + f0 f1 on both, J = -2 f0 f1, gamma = -(f0 + f1 + f0 f1)/2;
    # wire 0 is wham's qubit 1 (PennyLane's most significant bit)
    f0, f1 = 0.3, -1.1
    params = qml.pennylane_iqp_params([f0, f1])
    np.testing.assert_allclose(params, [f1 + f0 * f1, f0 + f0 * f1, -2 * f0 * f1])
    np.testing.assert_allclose(qml.pennylane_iqp_phase([f0, f1]), -(f0 + f1 + f0 * f1) / 2)


def test_pennylane_mapping_rejects():
    with pytest.raises(ValueError, match="names one wire twice"):
        qml.pennylane_iqp_params([1.0, 2.0], [[0, 0]])
    with pytest.raises(ValueError, match="not a pair of wires"):
        qml.pennylane_iqp_params([1.0, 2.0], [[0, 5]])
    with pytest.raises(ValueError, match="wires"):
        qml.pennylane_iqp_params([1.0, 2.0], wires=[0, 1, 2])
    with pytest.raises(ValueError, match="n_repeats"):
        qml.pennylane_iqp_state(np.zeros(2), n_repeats=0)


def test_qiskit_mapping_follows_the_omitted_gates():
    # Qiskit omits Phase(pi/8 M_ii) for M_ii % 8 == 0, a Z when M_ii = 8 (mod 16), and
    # CPhase(pi/2 M_ij) for M_ij % 4 == 0 (an identity)
    M = np.array([[8, 4, 1], [4, 24, 3], [1, 3, -8]])
    params = qml.qiskit_iqp_params(M)
    np.testing.assert_allclose(params[:3], 0.0)
    np.testing.assert_allclose(reference.iqp_state(params, 3), sim.qiskit_iqp(M), atol=1e-12)
