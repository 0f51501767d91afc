"""Seeded random inputs of the FMM operators' GPU tests, as NumPy arrays: expansions and
displacements, interaction lists, and points sorted into a uniform grid of cells with their
near lists."""

import math

import numpy as np

REAL = {"complex64": "float32", "complex128": "float64"}
COMPLEX = {"float32": "complex64", "float64": "complex128"}


def coefficients(rng, rows, p, dtype):
    C = (p + 1) ** 2
    return (rng.standard_normal((rows, C)) + 1j * rng.standard_normal((rows, C))).astype(dtype)


def deltas(rng, pairs, real):
    """Random directions at distances 0.2..1, with delta = 0 (the identity) and the two
    poles (delta on the z axis) among the first rows."""
    d = rng.standard_normal((pairs, 3))
    d *= rng.uniform(0.2, 1.0, (pairs, 1)) / np.linalg.norm(d, axis=1, keepdims=True)
    d[0] = 0.0
    if pairs > 2:
        d[1], d[2] = (0.0, 0.0, 0.7), (0.0, 0.0, -0.4)
    return d.astype(real)


def pair_list(rng, pairs, rows_in, rows_out):
    """src, tgt int32 with a few indices out of range (they add nothing); listed by target."""
    src = rng.integers(-1, rows_in + 1, pairs).astype(np.int32)
    tgt = rng.integers(-1, rows_out + 1, pairs).astype(np.int32)
    order = np.argsort(tgt, kind="stable")
    return src[order], tgt[order]


class Grid:
    """Points in the unit cube sorted into side^3 cells of edge h = 1/side (cell id
    (iz * side + iy) * side + ix), some cells empty; charges in -1..1; each cell's near list
    its (up to) 27 neighbours, itself included."""

    def __init__(self, rng, side, per_cell, real, empty=(1,)):
        cells = side ** 3
        self.h = 1.0 / side
        ids = np.arange(cells)
        ijk = np.stack([ids % side, ids // side % side, ids // (side * side)], axis=1)
        self.centers = ((ijk + 0.5) * self.h).astype(real)
        counts = rng.integers(1, 2 * per_cell, cells)
        counts[[e for e in empty if e < cells]] = 0
        self.offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.points = np.concatenate(
            [self.centers[c].astype(np.float64) + rng.uniform(-self.h / 2, self.h / 2, (counts[c], 3))
             for c in range(cells)]).astype(real)
        self.charges = rng.uniform(-1, 1, len(self.points)).astype(real)
        near, noff = [], [0]
        for t in range(cells):
            for s in range(cells):
                if np.abs(ijk[s] - ijk[t]).max() <= 1:
                    near.append(s)
            noff.append(len(near))
        self.near_cells = np.array(near, dtype=np.int32)
        self.near_offsets = np.array(noff, dtype=np.int64)
        # the radius of a cell about its centre, for the degree weights n! / a^n
        self.radius = self.h * math.sqrt(3) / 2

    @property
    def num_cells(self):
        return len(self.centers)


def degree_weights(p, a):
    """n! / a^n for each coefficient (n, m): what makes every degree of an expansion of points
    within a of its centre count alike."""
    return np.array([math.factorial(n) / a ** n for n in range(p + 1) for _ in range(2 * n + 1)])
