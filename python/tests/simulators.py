"""Small dense state-vector simulators (n <= 5) of PennyLane's and Qiskit's IQP circuits,
written from their gate definitions, independent of wham's formulas."""

import numpy as np

H = np.array([[1, 1], [1, -1]]) / np.sqrt(2)


def rz(t):
    return np.diag([np.exp(-0.5j * t), np.exp(0.5j * t)])


def phase(t):
    return np.diag([1.0, np.exp(1j * t)])


class State:
    """2^n amplitudes; bit(wire) says which bit of the index a wire is."""

    def __init__(self, n, big_endian):
        self.n = n
        self.big_endian = big_endian
        self.psi = np.zeros(1 << n, dtype=np.complex128)
        self.psi[0] = 1.0

    def bit(self, wire):
        return self.n - 1 - wire if self.big_endian else wire

    def one(self, gate, wire):
        b = self.bit(wire)
        psi = self.psi.reshape((1 << (self.n - 1 - b), 2, 1 << b))
        self.psi = np.einsum("ij,ajb->aib", gate, psi).reshape(-1)

    def diagonal(self, fn):
        """Multiplies each amplitude by fn(bits of its index, as a wire -> 0/1 map)."""
        for x in range(1 << self.n):
            bits = [(x >> self.bit(w)) & 1 for w in range(self.n)]
            self.psi[x] *= fn(bits)


def pennylane_iqp_embedding(features, pattern=None, n_repeats=1):
    """qml.IQPEmbedding(features, wires=range(n), n_repeats, pattern): per repeat, H and
    RZ(f_w) on each wire, then MultiRZ(f_v f_w) = exp(-i t/2 Z_v Z_w) on each pair.
    PennyLane's order: wire 0 is the most significant bit."""
    f = np.asarray(features, dtype=np.float64)
    n = len(f)
    if pattern is None:
        pattern = [(v, w) for v in range(n) for w in range(v + 1, n)]
    s = State(n, big_endian=True)
    for _ in range(n_repeats):
        for w in range(n):
            s.one(H, w)
            s.one(rz(f[w]), w)
        for v, w in pattern:
            t = f[v] * f[w]
            s.diagonal(lambda b, v=v, w=w, t=t: np.exp(-0.5j * t * (1 - 2 * (b[v] ^ b[w]))))
    return s.psi


def qiskit_iqp(M):
    """qiskit.circuit.library.iqp(M): H on all; CPhase(pi/2 M_ij) for i < j (skipped when
    M_ij % 4 == 0); Phase(pi/8 M_ii) (skipped when M_ii % 8 == 0); H on all. Qiskit's order:
    qubit i is bit i."""
    M = np.asarray(M)
    n = len(M)
    s = State(n, big_endian=False)
    for q in range(n):
        s.one(H, q)
    for i in range(n):
        for j in range(i + 1, n):
            if M[i][j] % 4 != 0:
                t = M[i][j] * np.pi / 2
                s.diagonal(lambda b, i=i, j=j, t=t: np.exp(1j * t) if b[i] and b[j] else 1.0)
    for i in range(n):
        if M[i][i] % 8 != 0:
            s.one(phase(M[i][i] * np.pi / 8), i)
    for q in range(n):
        s.one(H, q)
    return s.psi


def wham_gates(params, n, with_pairs=True):
    """wham's definition gate by gate (as reference/iqp.hpp's iqp_state_gates): H, Phase(a_i),
    CPhase(J_ij), H; qubit i is bit i."""
    from wham.reference import iqp_pair_offset
    s = State(n, big_endian=False)
    for q in range(n):
        s.one(H, q)
    for q in range(n):
        s.one(phase(params[q]), q)
    if with_pairs:
        for i in range(n):
            for j in range(i + 1, n):
                t = params[iqp_pair_offset(n, i, j)]
                s.diagonal(lambda b, i=i, j=j, t=t: np.exp(1j * t) if b[i] and b[j] else 1.0)
    for q in range(n):
        s.one(H, q)
    return s.psi
