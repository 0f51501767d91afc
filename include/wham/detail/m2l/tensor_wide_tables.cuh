/// \file wham/detail/m2l/tensor_wide_tables.cuh
/// \brief The wide tensor schedule's swap matrices as mma.m16n8k4 B fragments, built at
/// compile time: whole matrices for degrees below wide_fold_min_degree, folded blocks
/// from there (tensor_wide.cuh for the schedule).
#pragma once

#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/tables.cuh>

namespace wham::detail::m2l {

// ---- the whole swap matrices of the low degrees as m16n8k4 B fragments (compile time) ----

/// n tiles (8 outputs) of degree L: 2L + 1 outputs; the k tiles (4 inputs) are twice as
/// many (the last ones past 2L multiply zeros).
__host__ __device__ constexpr int wide_tiles(int L) { return L / 4 + 1; }
__host__ __device__ constexpr int wide_frags(int L) { return 2 * wide_tiles(L) * wide_tiles(L); }
__host__ __device__ constexpr int wide_frag_offset(int L) {
  int o = 0;
  for (int l = 0; l < L; ++l) o += wide_frags(l);
  return o;
}
/// Degrees from which a swap takes the folded blocks (below, the whole matrix: one n
/// tile, two k tiles, fewer products than the folded four). A structural constant of the
/// tables, listed in tuning.cuh.
inline constexpr int wide_fold_min_degree = 4;
inline constexpr int wide_frag_count = wide_frag_offset(wide_fold_min_degree);
/// Output of column c of an n tile (see the file comment).
__host__ __device__ constexpr int wide_col_row(int c) { return (c >> 1) + 4 * (c & 1); }

/// Entry (row, col) in -L..L of A = B_L (Transpose = false) or B_L^T (true) as
/// swap_store applies it from the folded table (blocks.cuh): rows m >= 0 read
/// x_k + x_-k (L + m even) or x_k - x_-k (odd) through b(m, k); row -m is
/// (-1)^L (E - O) of row m's even-k and odd-k sums.
constexpr double wide_swap_entry(const swap_table<double>& tab, int L, bool transpose, int row,
                                 int col) {
  const int m = row < 0 ? -row : row;
  const int k = col < 0 ? -col : col;
  const int off = swap_offset(L);
  if ((k == 0 && ((L + m) & 1)) || (m == 0 && ((L + k) & 1))) return 0.0;
  const double b = transpose ? tab.b[off + k * (L + 1) + m] : tab.b[off + m * (L + 1) + k];
  const double v = (col < 0 && ((L + m) & 1)) ? -b : b;
  if (row >= 0) return v;
  const double s = (L & 1) ? -1.0 : 1.0;
  return (k & 1) ? -s * v : s * v;
}

struct wide_frag_table {
  double a[2][wide_frag_count][32];  ///< [transpose][degree's fragments: nt, kt][lane]
};

constexpr wide_frag_table make_wide_frag_table() {
  constexpr swap_table<double> tab = make_swap_table<double>();
  wide_frag_table t{};
  for (int tr = 0; tr < 2; ++tr) {
    int frag = 0;  // wide_frag_offset(L), kept incrementally (constexpr evaluation budget)
    for (int L = 0; L < wide_fold_min_degree; ++L) {
      const int NT = wide_tiles(L), KT = 2 * NT;
      for (int nt = 0; nt < NT; ++nt) {
        for (int kt = 0; kt < KT; ++kt, ++frag) {
          for (int lane = 0; lane < 32; ++lane) {
            // B operand of m16n8k4 (4 x 8, col): lane holds (k = lane % 4, n = lane / 4).
            const int i = nt * 8 + wide_col_row(lane >> 2);
            const int j = kt * 4 + (lane & 3);
            if (i <= 2 * L && j <= 2 * L) {
              t.a[tr][frag][lane] = wide_swap_entry(tab, L, tr != 0, i - L, j - L);
            }
          }
        }
      }
    }
  }
  return t;
}

// One copy per translation unit; each lane reads its own entry (L1 / L2).
static __device__ const wide_frag_table g_wide_frags = make_wide_frag_table();

// ---- the folded swap matrices (degrees L >= wide_fold_min_degree) -----------------------
// Rows m >= 0 of B_L read u_k = x_k + x_-k (L + m even: class P) or v_k = x_k - x_-k (L + m
// odd: class M) through the folded entries b(m, k), m, k = 0..L; row -m is (-1)^L (E - O)
// of row m's sums over even k (E) and odd k (O). So a swap is four products with
// (L/2 + 1)-square blocks (class P or M x even or odd k) instead of one with the
// (2L + 1)-square matrix: a quarter of the multiply-adds, plus a fold before and an unfold
// after, lane-local. u_0 = 2 x_0, so the k = 0 entries are halved (exact).
// Positions: class P holds m = (L & 1) + 2a, class M m = 1 - (L & 1) + 2a at position a;
// the even-k list holds k = 2a, the odd-k list k = 2a + 1. The class whose m are even
// feeds the next product's even-k operand, the other its odd-k operand.
__host__ __device__ constexpr int wide_fold_count(int L) { return L / 2 + 1; }
__host__ __device__ constexpr int wide_fold_nt(int L) { return (wide_fold_count(L) + 7) / 8; }
__host__ __device__ constexpr int wide_fold_kt(int L) { return (wide_fold_count(L) + 3) / 4; }
__host__ __device__ constexpr int wide_fold_frags(int L) {
  return L < wide_fold_min_degree ? 0 : 4 * wide_fold_nt(L) * wide_fold_kt(L);
}
__host__ __device__ constexpr int wide_fold_offset(int L) {
  int o = 0;
  for (int l = 0; l < L; ++l) o += wide_fold_frags(l);
  return o;
}
inline constexpr int wide_fold_frag_count = wide_fold_offset(max_table_order + 1);
/// m of position a of class c (0: P, 1: M) at degree L.
__host__ __device__ constexpr int wide_fold_m(int L, int c, int a) {
  return (c == 0 ? (L & 1) : 1 - (L & 1)) + 2 * a;
}

struct wide_fold_table {
  double a[2][wide_fold_frag_count][32];  ///< [transpose][degree's: class, k parity, nt, kt][lane]
};

constexpr wide_fold_table make_wide_fold_table() {
  constexpr swap_table<double> tab = make_swap_table<double>();
  wide_fold_table t{};
  for (int tr = 0; tr < 2; ++tr) {
    int frag = 0;
    for (int L = wide_fold_min_degree; L <= max_table_order; ++L) {
      const int NT = wide_fold_nt(L), KT = wide_fold_kt(L);
      for (int c = 0; c < 2; ++c) {
        for (int e = 0; e < 2; ++e) {
          for (int nt = 0; nt < NT; ++nt) {
            for (int kt = 0; kt < KT; ++kt, ++frag) {
              for (int lane = 0; lane < 32; ++lane) {
                const int m = wide_fold_m(L, c, nt * 8 + wide_col_row(lane >> 2));
                const int k = 2 * (kt * 4 + (lane & 3)) + e;
                if (m <= L && k <= L) {
                  const double b = wide_swap_entry(tab, L, tr != 0, m, k);
                  t.a[tr][frag][lane] = k == 0 ? 0.5 * b : b;
                }
              }
            }
          }
        }
      }
    }
  }
  return t;
}

static __device__ const wide_fold_table g_wide_fold_frags = make_wide_fold_table();

}  // namespace wham::detail::m2l
