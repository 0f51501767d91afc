/// \file wham/reference/iqp_columns.hpp
/// \brief The phase arithmetic of the IQP encoder's columns-first schedule
/// (wham/detail/iqp/columns.cuh), shared by the device kernel and its CPU tests
/// (plain C++17, no CUDA needed).
///
/// The schedule views a row of 2^n amplitudes as 2^L rows of 2^S columns (n = S + L).
/// A thread owns one column x0 < 2^S and the 2^L elements x = x0 + (l << S), l < 2^L,
/// whose phases factor as
///   theta(x0 + (l << S)) = theta(x0) + sum_{i in l} f_i + w(l),
///   f_i  = a_{S+i} + sum_{k in x0} J(k, S+i),
///   w(l) = sum_{i < i' in l} J(S+i, S+i')   (the same for every column of a sample),
/// so that a thread makes its 2^L phases from 1 + L sines/cosines and a table of w.
/// The sums over x0 split its bits as a warp's threads see them: the low LaneBits bits
/// (a lane's own) as 0/1 multipliers (no branch on them), the bits above as a loop whose
/// tests are the same for every lane of a warp.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define WHAM_IQP_COLUMNS_HD __host__ __device__ __forceinline__
#else
#define WHAM_IQP_COLUMNS_HD inline
#endif

namespace wham::reference::iqp_columns {

/// Offset of J(i, j), i < j, in one sample's parameters (the spec's pair order).
WHAM_IQP_COLUMNS_HD constexpr int pair_offset(int n, int i, int j) {
  return n + i * n - i * (i + 1) / 2 + (j - i - 1);
}

/// theta(x0) (`base`) and the fields f_i (i < L) of the thread whose column is x0
/// (x0 < 2^S, S + L = n), from one sample's parameters p in double: n linear terms,
/// then the couplings when `pairs`.
template <int L, int LaneBits = 5>
WHAM_IQP_COLUMNS_HD void angles(const double* p, int n, bool pairs, int S, unsigned x0,
                                double& base, double (&f)[L]) {
  double g[LaneBits];  // sum over the set bits of x0 above the lane bits of J(k, j), k a lane bit
  base = 0.0;
  for (int i = 0; i < L; ++i) f[i] = p[S + i];
  for (int k = 0; k < LaneBits; ++k) g[k] = 0.0;
  // The bits above the lane bits: the same tests for every lane of a warp.
  for (int j = LaneBits; j < S; ++j) {
    if (((x0 >> j) & 1u) == 0) continue;
    base += p[j];
    if (!pairs) continue;
    for (int i = 0; i < L; ++i) f[i] += p[pair_offset(n, j, S + i)];
    for (int k = 0; k < LaneBits && k < S; ++k) g[k] += p[pair_offset(n, k, j)];
    for (int j2 = j + 1; j2 < S; ++j2) {
      if ((x0 >> j2) & 1u) base += p[pair_offset(n, j, j2)];
    }
  }
  // The lane bits, as 0.0 / 1.0 multipliers (fma(0, x, y) = y exactly for finite x).
  double on[LaneBits];
  for (int k = 0; k < LaneBits; ++k) on[k] = static_cast<double>((x0 >> k) & 1u);
  for (int k = 0; k < LaneBits && k < S; ++k) {
    double add = p[k];
    if (pairs) {
      add += g[k];
      for (int k2 = 0; k2 < k; ++k2) add += on[k2] * p[pair_offset(n, k2, k)];
      for (int i = 0; i < L; ++i) f[i] += on[k] * p[pair_offset(n, k, S + i)];
    }
    base += on[k] * add;
  }
}

/// w(l): the couplings among the L row qubits (S .. S + L - 1) set in l.
template <int L>
WHAM_IQP_COLUMNS_HD double row_couplings(const double* p, int n, bool pairs, int S, unsigned l) {
  double w = 0.0;
  if (!pairs) return w;
  for (int i = 0; i < L; ++i) {
    for (int i2 = i + 1; i2 < L; ++i2) {
      if (((l >> i) & (l >> i2) & 1u) != 0) w += p[pair_offset(n, S + i, S + i2)];
    }
  }
  return w;
}

// ---- stage A's tile with M mid bits (the streamed schedule) ------------------------
// Rows of 2^n, n = Lo + M + 4: the 4 top bits [Lo + M, n) in a thread's registers, the M
// mid bits [Lo, Lo + M) across the threads of a block, the Lo low bits left to stage B.
// A tile is C = T >> M adjacent columns (T threads a block) x every mid and top value.
//  - first, thread t makes the 16 phases of column x0 = a_column(...) (mid m = t / C,
//    column c = t % C) and transforms the top bits, then writes them to the block's
//    exchange buffer at exchange_slot(m, l, c);
//  - then thread t's register j holds mid j % 2^M, top (t / C) * (16 >> M) + j / 2^M of
//    column c: it transforms the mid bits (register bits [0, M)) and stores each at
//    element(...): neighbouring lanes, neighbouring columns.

/// Columns a tile: T >> M.
WHAM_IQP_COLUMNS_HD constexpr int tile_columns(int M, int T = 256) { return T >> M; }

/// The column (bits below Lo + M) whose 16 phases thread t of tile `tile` makes.
WHAM_IQP_COLUMNS_HD constexpr unsigned a_column(int Lo, int M, unsigned tile, unsigned t,
                                                int T = 256) {
  const unsigned C = unsigned(tile_columns(M, T));
  return tile * C + t % C + ((t / C) << Lo);
}

/// Slot of (mid m, top l, column c) in the tile's exchange buffer (16 T values).
WHAM_IQP_COLUMNS_HD constexpr unsigned exchange_slot(int M, unsigned m, unsigned l, unsigned c,
                                                     int T = 256) {
  return (m * 16u + l) * unsigned(tile_columns(M, T)) + c;
}

/// After the exchange: the mid and the top of thread t's register j (its column: t % C).
WHAM_IQP_COLUMNS_HD constexpr unsigned b_mid(int M, unsigned j) { return j & ((1u << M) - 1u); }
WHAM_IQP_COLUMNS_HD constexpr unsigned b_top(int M, unsigned t, unsigned j, int T = 256) {
  return (t / unsigned(tile_columns(M, T))) * (16u >> M) + (j >> M);
}

/// Index within the row of (column c of tile `tile`, mid m, top l).
WHAM_IQP_COLUMNS_HD constexpr std::uint64_t element(int Lo, int M, unsigned tile, unsigned c,
                                                    unsigned m, unsigned l, int T = 256) {
  return std::uint64_t(tile) * unsigned(tile_columns(M, T)) + c + (std::uint64_t(m) << Lo) +
         (std::uint64_t(l) << (Lo + M));
}

}  // namespace wham::reference::iqp_columns
