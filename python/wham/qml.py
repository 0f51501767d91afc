"""Parameters of PennyLane's and Qiskit's IQP circuits in wham's (a, J) layout.

wham encodes  |psi> = H^n diag(exp(i theta)) H^n |0>,
theta(x) = sum_i a_i x_i + sum_{i<j} J_ij x_i x_j  (x_i = bit i of the basis index x),
parameters a_0..a_{n-1} then J_ij for i < j in the order (0,1), (0,2), ..., (n-2,n-1).

Qiskit, ``qiskit.circuit.library.iqp(M)`` (and the older ``IQP(M)``): H on every qubit,
CPhase(pi/2 * M_ij) on (i, j) for i < j, Phase(pi/8 * M_ii) on i, H on every qubit; qubit i
is bit i of the state's index, as in wham. Phase(t) = diag(1, e^{it}) and CPhase(t) puts
e^{it} on |11>, so
    a_i = pi/8 * M_ii,   J_ij = pi/2 * M_ij   (i < j),
and ``iqp_encode(qiskit_iqp_params(M))`` equals ``Statevector(iqp(M))`` exactly: no global
phase. Qiskit leaves out CPhase where M_ij is a multiple of 4 (an identity) and Phase where
M_ii is a multiple of 8, which for M_ii = 8 (mod 16) drops a Z (Phase(pi)): the mapping
follows the circuit Qiskit builds, a_i = 0 there.

PennyLane, ``qml.IQPEmbedding(features, wires, n_repeats=1, pattern=None)``: per repeat, on
each wire w, H then RZ(f_w); then MultiRZ(f_v f_w) on each pair (v, w) of the pattern
(default: every pair v < w). There is no final Hadamard layer. With
RZ(t) = diag(e^{-it/2}, e^{it/2}) = e^{-it/2} Phase(t) and
MultiRZ(t) = exp(-i t/2 Z (x) Z), whose phase on |y_v y_w> is
-t/2 + t (y_v + y_w) - 2 t y_v y_w, one repeat is e^{i gamma} diag(e^{i theta}) H^n with
    a_w  = f_w + sum over the pattern's pairs containing w of f_v f_w
    J_vw = -2 * sum over the pattern's pairs {v, w} of f_v f_w
    gamma = -(sum_w f_w + sum over the pattern of f_v f_w) / 2       (a global phase)
PennyLane orders the state's index with wires[0] as the most significant bit, wham with
qubit 0 the least: wire position w is mapped to wham qubit n-1-w, so that the indices of
both states agree. For n_repeats = 1,
    qml.state() = e^{i gamma} H^n iqp_encode(params)
                = e^{i gamma} fwht(iqp_encode(params), scale=2^{-n/2}),
(H^n undoes wham's last Hadamard layer) and for n_repeats = r, with u the state of one
repeat, state_r = u * fwht(state_{r-1}) elementwise. `pennylane_iqp_state` computes this
exactly (global phase included) from wham's GPU operators.

The mappings take NumPy arrays (or anything np.asarray takes) and PyTorch, CuPy and JAX
arrays, and return an array of the same kind on the same device (differentiable in
PyTorch and JAX: linear in the features and their pairwise products).
"""

from itertools import combinations
import math

import numpy as np

from ._arrays import framework_of

__all__ = ["pennylane_iqp_params", "pennylane_iqp_phase", "pennylane_iqp_state",
           "qiskit_iqp_params"]


# ---- framework-neutral helpers (the few operations the mappings need) -------------------

def _float_array(x, dtype):
    """x as a floating array of its own framework (NumPy for lists and scalars)."""
    fw = framework_of(x)
    if fw == "torch":
        import torch
        if dtype is not None:
            return x.to(getattr(torch, dtype))
        return x if x.is_floating_point() else x.to(torch.float64)
    if fw in ("cupy", "jax"):
        kind = x.dtype.kind
        if dtype is not None or kind not in "f":
            return x.astype(dtype or "float64")
        return x
    a = np.asarray(x)
    if dtype is not None or a.dtype.kind != "f":
        a = a.astype(dtype or np.float64)
    return a


def _const(values, like, integer=False):
    """A NumPy constant moved to like's framework, device and dtype (int64 for indices)."""
    fw = framework_of(like)
    values = np.asarray(values, dtype=np.int64 if integer else None)
    if fw == "torch":
        import torch
        return torch.as_tensor(values, dtype=torch.int64 if integer else like.dtype, device=like.device)
    if fw == "cupy":
        import cupy
        return cupy.asarray(values, dtype=values.dtype if integer else like.dtype)
    if fw == "jax":
        import jax.numpy as jnp
        return jnp.asarray(values, dtype=values.dtype if integer else like.dtype)
    return values if integer else values.astype(like.dtype)


def _exp_i(x):
    fw = framework_of(x)
    if fw == "torch":
        import torch
        return torch.polar(torch.ones_like(x), x)
    if fw == "cupy":
        import cupy
        return cupy.exp(1j * x)
    if fw == "jax":
        import jax.numpy as jnp
        return jnp.exp(1j * x)
    return np.exp(1j * x)


def _pair_offset(n, i, j):
    return n + i * n - i * (i + 1) // 2 + (j - i - 1)


# ---- PennyLane ------------------------------------------------------------------------

def _pennylane_pattern(n, pattern, wires):
    wires = list(range(n)) if wires is None else list(wires)
    if len(wires) != n:
        raise ValueError(f"wham.qml: {n} features but {len(wires)} wires")
    position = {w: k for k, w in enumerate(wires)}
    if len(position) != n:
        raise ValueError("wham.qml: wires must be distinct")
    if pattern is None:
        return list(combinations(range(n), 2))
    pairs = []
    for pair in pattern:
        pair = list(pair)
        if len(pair) != 2 or pair[0] not in position or pair[1] not in position:
            raise ValueError(f"wham.qml: pattern entry {pair!r} is not a pair of wires of {wires}")
        v, w = position[pair[0]], position[pair[1]]
        if v == w:
            raise ValueError(f"wham.qml: pattern entry {pair!r} names one wire twice")
        pairs.append((v, w))
    return pairs


def _pennylane_linear(n, pairs):
    """Matrices E [n, P], G [K, P] and vectors e [n], g [K] with params = f E + prod G and
    gamma = f e + prod g, where prod[k] = f[v_k] f[w_k] over the pattern's pairs."""
    P = n + n * (n - 1) // 2
    q = [n - 1 - w for w in range(n)]  # PennyLane's wire position -> wham's qubit
    E = np.zeros((n, P))
    for w in range(n):
        E[w, q[w]] = 1.0
    G = np.zeros((max(len(pairs), 1), P))
    for k, (v, w) in enumerate(pairs):
        a, b = sorted((q[v], q[w]))
        G[k, a] += 1.0
        G[k, b] += 1.0
        G[k, _pair_offset(n, a, b)] += -2.0
    return E, G[: len(pairs)], np.full(n, -0.5), np.full(len(pairs), -0.5)


def _pennylane_terms(features, pattern, wires, dtype):
    f = _float_array(features, dtype)
    if len(f.shape) < 1:
        raise ValueError("wham.qml: features must have shape [..., n]")
    n = int(f.shape[-1])
    if not 1 <= n <= 30:
        raise ValueError(f"wham.qml: {n} features; wham encodes 1..30 qubits")
    pairs = _pennylane_pattern(n, pattern, wires)
    E, G, e, g = _pennylane_linear(n, pairs)
    if pairs:
        prod = f[..., _const([v for v, _ in pairs], f, True)] * f[..., _const([w for _, w in pairs], f, True)]
    else:
        prod = None
    return f, n, prod, E, G, e, g


def pennylane_iqp_params(features, pattern=None, wires=None, dtype=None):
    """wham's iqp parameters [..., n + n(n-1)/2] for qml.IQPEmbedding(features, wires,
    pattern=pattern): features [..., n]; pattern as PennyLane's (pairs of wire labels, None:
    every pair); wires: the template's wires (default range(n)); dtype: e.g. "float32"
    (default: the features' floating type, float64 for integers).
    Up to the global phase `pennylane_iqp_phase` and a final Hadamard layer (module doc)."""
    f, n, prod, E, G, _, _ = _pennylane_terms(features, pattern, wires, dtype)
    params = f @ _const(E, f)
    return params if prod is None else params + prod @ _const(G, f)


def pennylane_iqp_phase(features, pattern=None, wires=None, dtype=None):
    """The global phase gamma [...] of one repeat of qml.IQPEmbedding (module doc)."""
    f, n, prod, _, _, e, g = _pennylane_terms(features, pattern, wires, dtype)
    gamma = f @ _const(e, f)
    return gamma if prod is None else gamma + prod @ _const(g, f)


def pennylane_iqp_state(features, pattern=None, n_repeats=1, wires=None, dtype=None):
    """qml.state() after qml.IQPEmbedding(features, wires, n_repeats, pattern) on a device
    whose wires are `wires` (default range(n)), from wham's GPU operators: exactly, global
    phase included. features: a GPU array [..., n] (PyTorch, CuPy, JAX); dtype: the state's
    complex type (default complex64 for float32 features, else complex128).
    Returns [..., 2^n], PennyLane's index order."""
    from . import ops
    n_repeats = int(n_repeats)
    if n_repeats < 1:
        raise ValueError(f"wham.qml: n_repeats = {n_repeats}; it must be at least 1")
    f = _float_array(features, None)
    real = "float32" if str(f.dtype).endswith("float32") else "float64"
    params = pennylane_iqp_params(f, pattern, wires, real)
    gamma = pennylane_iqp_phase(f, pattern, wires, real)
    if dtype is None:
        dtype = "complex64" if real == "float32" else "complex128"
    return _compose(params, gamma, f.shape[-1], n_repeats,
                    lambda p: ops.iqp_encode(p, dtype=dtype), ops.fwht)


def _compose(params, gamma, n, n_repeats, encode, transform):
    """PennyLane's state from wham's: u = e^{i gamma} H^n iqp(params) (one repeat), then
    state_r = u * (unnormalised WHT of state_{r-1}) (see the module doc)."""
    u = transform(encode(params), scale=2.0 ** (-n / 2))
    phase = _exp_i(gamma)[..., None]
    # the phase in the state's own precision (NumPy would promote complex64 to complex128)
    u = u * (phase.to(u.dtype) if framework_of(phase) == "torch" else phase.astype(u.dtype))
    state = u
    for _ in range(n_repeats - 1):
        state = u * transform(state, scale=1.0)
    return state


# ---- Qiskit ---------------------------------------------------------------------------

def qiskit_iqp_params(interactions, dtype=None):
    """wham's iqp parameters [..., n + n(n-1)/2] for qiskit.circuit.library.iqp(M):
    a_i = pi/8 M_ii (0 where M_ii is a multiple of 8, as Qiskit omits that gate),
    J_ij = pi/2 M_ij (i < j). interactions: a symmetric [..., n, n] matrix
    (Qiskit's are integers; any real values are mapped the same way). The states agree
    exactly (same qubit order, no global phase)."""
    M = _float_array(interactions, dtype)
    shape = tuple(M.shape)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"wham.qml: interactions must be square [..., n, n]; got shape {shape}")
    n = shape[-1]
    if not 1 <= n <= 30:
        raise ValueError(f"wham.qml: {n} qubits; wham encodes 1..30")
    flat = M.reshape(shape[:-2] + (n * n,))
    transposed = np.arange(n * n).reshape(n, n).T.reshape(-1)
    if bool((flat != flat[..., _const(transposed, flat, True)]).any()):
        raise ValueError("wham.qml: the interactions matrix is not symmetric (Qiskit requires it)")
    P = n + n * (n - 1) // 2
    Q = np.zeros((n * n, P))  # the pairs: J_ij = pi/2 M_ij
    D = np.zeros((n, P))      # the diagonal: a_i = pi/8 M_ii
    for i in range(n):
        D[i, i] = math.pi / 8
        for j in range(i + 1, n):
            Q[i * n + j, _pair_offset(n, i, j)] = math.pi / 2
    diag = flat[..., _const([i * n + i for i in range(n)], flat, True)]
    # Qiskit leaves out Phase(pi/8 M_ii) where M_ii is a multiple of 8, although
    # Phase(k pi) = Z^k is no identity for odd k: the mapping follows the circuit.
    diag = diag * (diag % 8 != 0)
    return flat @ _const(Q, flat) + diag @ _const(D, flat)
