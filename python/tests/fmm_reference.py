"""NumPy float64 references of the FMM operators besides M2L (wham.reference has M2L):
regular solid harmonics, M2M, L2L, P2M, L2P (potential and gradient) and P2P, by the
formulas of include/wham/translations.cuh and include/wham/particles.cuh (docs/specs/
translations.md, particles.md). Vectorised over pairs, cells and points; O(p^4) a pair for
the translations."""

import numpy as np


def index(n, m):
    return n * n + n + m


def regular_harmonics(p, d):
    """R_n^m(d), n <= p, for every row of d [..., 3]: [..., (p+1)^2] complex128.

    R_0^0 = 1, R_m^m = R_{m-1}^{m-1} (x + i y) / (2m), R_{m+1}^m = z R_m^m,
    R_n^m = ((2n-1) z R_{n-1}^m - r^2 R_{n-2}^m) / ((n+m)(n-m)), R_n^-m = (-1)^m conj(R_n^m).
    """
    d = np.asarray(d, dtype=np.float64)
    lead = d.shape[:-1]
    d = d.reshape(-1, 3)
    x, y, z = d[:, 0], d[:, 1], d[:, 2]
    r2 = x * x + y * y + z * z
    w = x + 1j * y
    R = np.zeros((len(d), (p + 1) ** 2), dtype=np.complex128)
    R[:, 0] = 1.0
    for m in range(p + 1):
        if m > 0:
            R[:, index(m, m)] = R[:, index(m - 1, m - 1)] * w / (2 * m)
        if m + 1 <= p:
            R[:, index(m + 1, m)] = z * R[:, index(m, m)]
        for n in range(m + 2, p + 1):
            R[:, index(n, m)] = ((2 * n - 1) * z * R[:, index(n - 1, m)]
                                 - r2 * R[:, index(n - 2, m)]) / ((n + m) * (n - m))
    for n in range(1, p + 1):
        for m in range(1, n + 1):
            R[:, index(n, -m)] = (-1) ** m * np.conj(R[:, index(n, m)])
    return R.reshape(lead + ((p + 1) ** 2,))


def singular_harmonics(p, d):
    """S_n^m(d), n <= p, for every row of d [..., 3] (docs/specs/m2l.md's recurrences)."""
    d = np.asarray(d, dtype=np.float64)
    lead = d.shape[:-1]
    d = d.reshape(-1, 3)
    x, y, z = d[:, 0], d[:, 1], d[:, 2]
    r2 = x * x + y * y + z * z
    w = x + 1j * y
    S = np.zeros((len(d), (p + 1) ** 2), dtype=np.complex128)
    S[:, 0] = 1.0 / np.sqrt(r2)
    for m in range(p + 1):
        if m > 0:
            S[:, index(m, m)] = S[:, index(m - 1, m - 1)] * (2 * m - 1) * w / r2
        if m + 1 <= p:
            S[:, index(m + 1, m)] = (2 * m + 1) * z * S[:, index(m, m)] / r2
        for n in range(m + 2, p + 1):
            S[:, index(n, m)] = ((2 * n - 1) * z * S[:, index(n - 1, m)]
                                 - (n + m - 1) * (n - m - 1) * S[:, index(n - 2, m)]) / r2
    for n in range(1, p + 1):
        for m in range(1, n + 1):
            S[:, index(n, -m)] = (-1) ** m * np.conj(S[:, index(n, m)])
    return S.reshape(lead + ((p + 1) ** 2,))


def m2l(multipoles, deltas, p):
    """L_n^m = sum_{k<=p-n} sum_l (-1)^l M_k^l S_{n+k}^{m-l}(delta), pair by pair (the
    direct form of wham.reference.m2l, vectorised over pairs)."""
    M = np.asarray(multipoles, dtype=np.complex128)
    S = singular_harmonics(p, deltas)
    out = np.zeros_like(M)
    for n in range(p + 1):
        for m in range(-n, n + 1):
            acc = 0
            for k in range(p - n + 1):
                for l in range(-k, k + 1):
                    acc = acc + (-1) ** (l & 1) * M[..., index(k, l)] * S[..., index(n + k, m - l)]
            out[..., index(n, m)] = acc
    return out


def m2m(multipoles, deltas, p):
    """M'_n^m = sum_{k<=n} sum_l M_k^l R_{n-k}^{m-l}(-delta), pair by pair ([..., C], [..., 3])."""
    M = np.asarray(multipoles, dtype=np.complex128)
    R = regular_harmonics(p, -np.asarray(deltas, dtype=np.float64))
    out = np.zeros_like(M)
    for n in range(p + 1):
        for m in range(-n, n + 1):
            acc = 0
            for k in range(n + 1):
                for l in range(-k, k + 1):
                    if abs(m - l) <= n - k:
                        acc = acc + M[..., index(k, l)] * R[..., index(n - k, m - l)]
            out[..., index(n, m)] = acc
    return out


def l2l(locals, deltas, p):
    """L'_k^l = sum_{n>=k} sum_m L_n^m conj(R_{n-k}^{m-l}(-delta)), pair by pair."""
    L = np.asarray(locals, dtype=np.complex128)
    Rc = np.conj(regular_harmonics(p, -np.asarray(deltas, dtype=np.float64)))
    out = np.zeros_like(L)
    for k in range(p + 1):
        for l in range(-k, k + 1):
            acc = 0
            for n in range(k, p + 1):
                for m in range(-n, n + 1):
                    if abs(m - l) <= n - k:
                        acc = acc + L[..., index(n, m)] * Rc[..., index(n - k, m - l)]
            out[..., index(k, l)] = acc
    return out


def accumulate(op, source, deltas, src, tgt, target, p):
    """target[tgt[i]] += op(source[src[i]], deltas[i]); pairs out of range add nothing.
    Returns a new complex128 array."""
    out = np.array(target, dtype=np.complex128)
    src, tgt = np.asarray(src), np.asarray(tgt)
    ok = (src >= 0) & (src < len(source)) & (tgt >= 0) & (tgt < len(out))
    moved = op(np.asarray(source)[src[ok]], np.asarray(deltas)[ok], p)
    np.add.at(out, tgt[ok], moved)
    return out


def p2m(points, charges, cell_offsets, centers, p):
    """M[c] = sum_{i in c} q_i R(x_i - centre_c): [num_cells, (p+1)^2]."""
    x = np.asarray(points, dtype=np.float64)
    q = np.asarray(charges, dtype=np.float64)
    off = np.asarray(cell_offsets)
    ctr = np.asarray(centers, dtype=np.float64)
    M = np.zeros((len(ctr), (p + 1) ** 2), dtype=np.complex128)
    for c in range(len(ctr)):
        a, b = off[c], off[c + 1]
        if b > a:
            M[c] = q[a:b] @ regular_harmonics(p, x[a:b] - ctr[c])
    return M


def _ladder_indices(p):
    """Index arrays of the ladder sums of L2P's gradient (docs/specs/particles.md)."""
    nm, up, plus, minus = [], [], [], []
    for n in range(p):
        for m in range(-n, n + 1):
            nm.append(index(n, m))
            up.append(index(n + 1, m))
            plus.append(index(n + 1, m - 1))
            minus.append(index(n + 1, m + 1))
    return [np.array(a, dtype=np.int64) for a in (nm, up, plus, minus)]


def l2p(locals, centers, cell_offsets, points, p):
    """(potential [N], gradient [N, 3]): Re sum conj(L_n^m) R_n^m(centre - x) at each point of
    each cell, and its gradient in x from the ladder identities
    dR_n^m/dz = R_{n-1}^m, (d/dx -+ i d/dy) R_n^m = +-R_{n-1}^{m-+1}."""
    L = np.asarray(locals, dtype=np.complex128)
    x = np.asarray(points, dtype=np.float64)
    off = np.asarray(cell_offsets)
    ctr = np.asarray(centers, dtype=np.float64)
    phi = np.zeros(len(x))
    grad = np.zeros((len(x), 3))
    nm, up, plus, minus = _ladder_indices(p)
    for c in range(len(ctr)):
        a, b = off[c], off[c + 1]
        if b <= a:
            continue
        R = regular_harmonics(p, ctr[c] - x[a:b])
        Lc = np.conj(L[c])
        phi[a:b] = (R @ Lc).real
        if p == 0:
            continue
        Rn = R[:, nm]
        gz = Rn @ Lc[up]
        gp = -(Rn @ Lc[plus])
        gm = Rn @ Lc[minus]
        # d phi / d(centre - x); the gradient in x is its negative
        grad[a:b, 0] = -(gp + gm).real / 2
        grad[a:b, 1] = -(gp - gm).imag / 2
        grad[a:b, 2] = -gz.real
    return phi, grad


def p2p(points, charges, cell_offsets, near_offsets, near_cells):
    """(potential, gradient) of the near field: each target cell's points from the points of
    each cell of its near list, coincident pairs left out."""
    x = np.asarray(points, dtype=np.float64)
    q = np.asarray(charges, dtype=np.float64)
    off = np.asarray(cell_offsets)
    noff = np.asarray(near_offsets)
    near = np.asarray(near_cells)
    phi = np.zeros(len(x))
    grad = np.zeros((len(x), 3))
    cells = len(off) - 1
    for t in range(cells):
        a, b = off[t], off[t + 1]
        for s in near[noff[t]:noff[t + 1]]:
            if not 0 <= s < cells or b <= a:
                continue
            d = x[a:b, None, :] - x[None, off[s]:off[s + 1], :]
            r2 = (d * d).sum(-1)
            inv = np.divide(1.0, np.sqrt(r2), out=np.zeros_like(r2), where=r2 > 0)
            qi = q[off[s]:off[s + 1]][None, :] * inv
            phi[a:b] += qi.sum(1)
            grad[a:b] -= (d * (qi * inv * inv)[..., None]).sum(1)
    return phi, grad


def direct(points, charges, targets):
    """The direct sum at points[targets] over every other point: (potential, gradient)."""
    x = np.asarray(points, dtype=np.float64)
    q = np.asarray(charges, dtype=np.float64)
    phi = np.zeros(len(targets))
    grad = np.zeros((len(targets), 3))
    for k, j in enumerate(targets):
        d = x[j] - x
        r2 = (d * d).sum(-1)
        inv = np.divide(1.0, np.sqrt(r2), out=np.zeros_like(r2), where=r2 > 0)
        phi[k] = (q * inv).sum()
        grad[k] = -(d * (q * inv ** 3)[:, None]).sum(0)
    return phi, grad


def translation_tolerance(real, p):
    """translations.cuh's documented accuracy (relative, the coefficient vector's 2-norm)."""
    if real == "float64":
        return 1.2e-14 if p <= 8 else 1.2e-13 if p <= 12 else 1.5e-12 if p <= 16 else 1.2e-11
    return 1.2e-5 if p <= 8 else 8e-5 if p <= 12 else 6e-4
