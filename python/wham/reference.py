"""NumPy ports of wham's host references (include/wham/reference/*.hpp), in double.

For testing and for checking one's own data; O(n 2^n) for the transforms, O(p^4) a pair
for M2L. Only NumPy is needed (no GPU, no libwham.so).
"""

import numpy as np


def fwht(x, scale=1.0):
    """out[..., k] = scale * sum_j x[..., j] (-1)^popcount(j & k), in float64/complex128."""
    x = np.asarray(x)
    v = np.array(x, dtype=np.complex128 if np.iscomplexobj(x) else np.float64)
    n = v.shape[-1]
    if n < 1 or n & (n - 1):
        raise ValueError("fwht: the last dimension must be a power of two")
    lead = v.shape[:-1]
    h = 1
    while h < n:
        w = v.reshape(lead + (n // (2 * h), 2, h))
        a, b = w[..., 0, :].copy(), w[..., 1, :].copy()
        w[..., 0, :] = a + b
        w[..., 1, :] = a - b
        h *= 2
    return v * scale


def hadamard(x, h_m, scale=1.0, transpose=False):
    """wham.hadamard's definition: each row of m * 2^k becomes scale * (H_m (x) H_(2^k)) row,
    with h_m the m x m matrix (wham.hadamard_matrix(m, ...); None or m = 1: the WHT)."""
    x = np.asarray(x)
    if h_m is None:
        return fwht(x, scale)
    h = np.asarray(h_m, dtype=np.float64)
    h = h.T if transpose else h
    m = h.shape[0]
    n = x.shape[-1]
    seg = fwht(x.reshape(x.shape[:-1] + (m, n // m)))  # H_(2^k) on each segment
    return (np.einsum("ab,...bc->...ac", h, seg) * scale).reshape(x.shape)


def walsh_matrix(log_n):
    """The 2^log_n x 2^log_n matrix (-1)^popcount(j & k) (the O(4^n) definition)."""
    k = np.arange(1 << log_n)
    bits = np.bitwise_and.outer(k, k)
    parity = np.zeros_like(bits)
    while bits.any():
        parity ^= bits & 1
        bits >>= 1
    return 1.0 - 2.0 * parity


def iqp_pair_offset(n, i, j):
    """Position of J_ij (i < j) in one sample's parameters."""
    return n + i * n - i * (i + 1) // 2 + (j - i - 1)


def iqp_phase(params, n, with_pairs=True):
    """theta(x) for every basis index x (last axis), params [..., num_params]."""
    params = np.asarray(params, dtype=np.float64)
    x = np.arange(1 << n)
    bits = ((x[:, None] >> np.arange(n)) & 1).astype(np.float64)  # [2^n, n]
    theta = params[..., :n] @ bits.T
    if with_pairs:
        for i in range(n):
            for j in range(i + 1, n):
                theta = theta + params[..., iqp_pair_offset(n, i, j), None] * (bits[:, i] * bits[:, j])
    return theta


def iqp_state(params, n, with_pairs=True):
    """amp[..., k] = 2^-n sum_x exp(i theta(x)) (-1)^popcount(x & k): H^n diag(e^{i theta}) H^n |0>."""
    return fwht(np.exp(1j * iqp_phase(params, n, with_pairs)), 2.0 ** -n)


def m2l_index(n, m):
    return n * n + n + m


def singular_harmonics(p, delta):
    """S_n^m(delta), n <= p, for one displacement (the spec's recurrences, as the C++ reference)."""
    x, y, z = (float(c) for c in delta)
    S = np.zeros((p + 1) ** 2, dtype=np.complex128)
    r = float(np.sqrt(x * x + y * y + z * z))
    inv_r, uz, uxy = 1.0 / r, z / r, complex(x / r, y / r)
    S[0] = inv_r
    for m in range(p + 1):
        if m > 0:
            S[m2l_index(m, m)] = S[m2l_index(m - 1, m - 1)] * (2 * m - 1) * uxy * inv_r
        if m + 1 <= p:
            S[m2l_index(m + 1, m)] = (2 * m + 1) * uz * S[m2l_index(m, m)] * inv_r
        for n in range(m + 2, p + 1):
            S[m2l_index(n, m)] = ((2 * n - 1) * uz * S[m2l_index(n - 1, m)]
                                  - (n + m - 1) * (n - m - 1) * S[m2l_index(n - 2, m)] * inv_r) * inv_r
    for n in range(p + 1):
        for m in range(1, n + 1):
            S[m2l_index(n, -m)] = (-1) ** m * np.conj(S[m2l_index(n, m)])
    return S


def m2l_direct(p, M, delta):
    """L_n^m = sum_{k<=p-n} sum_{|l|<=k} (-1)^l M_k^l S_{n+k}^{m-l}(delta), one pair."""
    S = singular_harmonics(p, delta)
    M = np.asarray(M, dtype=np.complex128)
    L = np.zeros((p + 1) ** 2, dtype=np.complex128)
    for n in range(p + 1):
        for m in range(-n, n + 1):
            acc = 0j
            for k in range(p - n + 1):
                for l in range(-k, k + 1):
                    acc += (-1) ** (l & 1) * M[m2l_index(k, l)] * S[m2l_index(n + k, m - l)]
            L[m2l_index(n, m)] = acc
    return L


def m2l(multipoles, deltas, p):
    """m2l_direct pair by pair: multipoles [..., (p+1)^2], deltas [..., 3]."""
    M = np.asarray(multipoles).reshape(-1, (p + 1) ** 2)
    d = np.asarray(deltas, dtype=np.float64).reshape(-1, 3)
    out = np.stack([m2l_direct(p, M[i], d[i]) for i in range(len(M))]) if len(M) else \
        np.zeros((0, (p + 1) ** 2), np.complex128)
    return out.reshape(np.shape(multipoles))


def m2l_accumulate(multipoles, deltas, src, tgt, locals, p):
    """locals[tgt[i]] += M2L(multipoles[src[i]], deltas[i]); out-of-range pairs add nothing.
    Returns a new float64/complex128 array (locals is not modified)."""
    L = np.array(locals, dtype=np.complex128)
    for i, (s, t) in enumerate(zip(np.asarray(src), np.asarray(tgt))):
        if 0 <= s < len(multipoles) and 0 <= t < len(L):
            L[t] += m2l_direct(p, multipoles[s], deltas[i])
    return L
