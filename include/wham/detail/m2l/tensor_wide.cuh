/// \file wham/detail/m2l/tensor_wide.cuh
/// \brief The wide tensor-core schedule of the pair-streaming M2L (double, sm_90):
/// eight pairs a warp as the M dimension of mma.m16n8k4, every swap four products with
/// the folded swap matrix's blocks (degrees >= 4; below, one with the whole matrix), the
/// two swaps of a degree chained in registers.
///
/// Why (against tensor.cuh's tiles of four pairs and m8n8k4): there, per four pairs, the
/// folds, the unfolds and the fragment bookkeeping of every degree cost more
/// instructions than the products (Nsight Compute, p = 16: about 4,500 instructions a
/// pair, the DP tensor pipe 36% busy). Here:
///  - rows of the product are the eight pairs' real and imaginary parts (row q: Re of
///    pair q, row q + 8: its Im), so m16n8k4 does 512 multiply-adds an instruction (the
///    H200 runs it at twice m8n8k4's FP64 rate) and a lane's accumulators hold one
///    pair's complex values: the Dz products stay in the lane;
///  - the swap matrix is applied folded (the folded table's comment below): operands
///    x_k +- x_-k, four products of (L/2 + 1)-square blocks, rows m and -m unfolded from
///    the even-k and odd-k sums, all lane-local (the fold costs a few adds an element, where
///    the four-pair schedule's costs shuffles and bookkeeping). The first version applied
///    the whole (2L+1)-square matrix to avoid that bookkeeping; folding takes 2.5x fewer
///    products over p = 20 and was 1.06-1.33x faster at every p = 8-20 (H100 80GB HBM3,
///    2026-12-06, bench_m2l tensor path, 1e5 pairs, two rounds each, us, whole -> folded:
///    double p = 8 251 -> 214, 12 458 -> 404, 13 494 -> 466, 15 652 -> 538, 16 804 -> 739,
///    18 1016 -> 893, 20 1486 -> 1114; float p = 9 263 -> 219, 12 443 -> 397, 16 791 -> 690);
///  - the columns of an n tile (8 outputs) are permuted, column c -> output
///    8 nt + (c >> 1) + 4 (c & 1), so that the accumulator of n tile nt is exactly the
///    A operand of k tiles 2 nt and 2 nt + 1 of the next product: the second swap of a
///    degree (and its Dz) reads its input from registers, not shared memory;
///  - the last swap back writes the result to global memory from the accumulators;
///  - W warps share a tile of eight pairs (one copy of the records): the degrees (and the
///    orders of z) spread over the warps, block barriers between the three phases, so
///    that shared memory holds the same pairs with W times the warps to hide latency.
///
/// Layout: a tile's records in shared memory, natural order, a row of eight complex values
/// per coefficient (row idx of the expansion, slot q: pair q), the slot XOR-swizzled by
/// 2 (row mod 4) so that a quarter warp's 16-byte accesses (rows r..r+3 x two pairs: the
/// operand loads and the accumulator stores) meet no bank conflicts. The angle powers are
/// tables over m = -p..p per pair (the conjugates stored), so a Dz factor is one load at
/// an offset known from the tile.
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/fused.cuh>
#include <wham/detail/m2l/split.cuh>
#include <wham/detail/m2l/tensor.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

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
/// tile, two k tiles, fewer products than the folded four).
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

// ---- per warp --------------------------------------------------------------------------

inline constexpr int wide_pairs = 8;
/// Strides of the powers: complex e^{i j angle} (j = -p..p) a pair, 4 modulo 8 (16-byte
/// units), and r^-j a pair, 4 modulo 16 (8-byte units): the lanes' loads fall in distinct
/// banks.
__host__ __device__ constexpr int wide_power_stride(int p) { return ((2 * p + 1 + 3) / 8) * 8 + 4; }
__host__ __device__ constexpr int wide_radius_stride(int p) { return ((p + 2 + 11) / 16) * 16 + 4; }
/// Doubles a block holds: factorials (64), the records, e^{i j alpha}, e^{i j beta}, r^-j.
__host__ __device__ constexpr int wide_block_doubles(int p) {
  return 64 + (p + 1) * (p + 1) * 2 * wide_pairs +
         2 * 2 * wide_pairs * wide_power_stride(p) + wide_pairs * wide_radius_stride(p);
}

/// Slot of (row, pair q) in the records: rows of eight complex values, the pair XOR-swizzled
/// by 2 (row mod 4), so that four consecutive rows x two pairs (a quarter warp's 16-byte
/// accesses) fall in distinct banks.
__device__ __forceinline__ int wide_slot(int row, int q) { return row * 8 + (q ^ ((row & 3) << 1)); }

/// D += A B, A 16 x 4 (a0: row lane / 4, a1: row lane / 4 + 8; column lane % 4), B 4 x 8.
__device__ __forceinline__ void wide_mma(double (&d)[4], double a0, double a1, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
      "{%0, %1, %2, %3};"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a0), "d"(a1), "d"(b));
#else
  (void)d;
  (void)a0;
  (void)a1;
  (void)b;
  __trap();  // FP64 m16n8k4 is sm_90's: never run such code silently
#endif
}

struct wide_warp {
  double* fz;         ///< [64]: (n + k)! for n + k <= p, else 0
  cpx<double>* rec;   ///< [C][8], swizzled (wide_slot)
  cpx<double>* pa;    ///< [8][power stride]: e^{i j alpha}, j = -p..p
  cpx<double>* pb;    ///< [8][power stride]: e^{i j beta}, j = -p..p
  double* pr;         ///< [8][radius stride]: r^-j
  int p, ps, rs;
};

/// v * e^{i m angle} (Conj: e^{-i m angle}) from the pair's table of powers pw[-p..p]
/// (|m| <= p).
template <bool Conj>
__device__ __forceinline__ void wide_dz(double& re, double& im, const cpx<double>* pw, int m) {
  const cpx<double> e = pw[Conj ? -m : m];
  const double r = re * e.re - im * e.im;
  im = re * e.im + im * e.re;
  re = r;
}

template <int NT>
__device__ __forceinline__ void wide_zero(double (&acc)[NT][4]) {
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0;
}

/// Both swaps of degree L in one direction, NT = wide_tiles(L). SK: two accumulators a
/// tile (even and odd k tiles), so that each chain of dependent products is half as long
/// (measured slower, see the tuning below: the kernel passes false).
/// To z: x *= Dz(alpha); B^T; *= Dz(beta); B^T; *= r^-(L+1); to the records.
/// From z: B; *= Dz(-beta); B; *= Dz(-alpha); to the lane's sink (the pair's destination in
/// global memory; every lane calls it, `ok` says whether its value is an output).
template <bool ToZ, int NT, bool SK, class Sink>
__device__ __forceinline__ void wide_degree(const wide_warp& w, int L, const Sink& sink) {
  constexpr int KT = 2 * NT;
  constexpr int S = SK ? 2 : 1;
  const int lane = threadIdx.x & 31;
  const int g = lane >> 2, tig = lane & 3;
  const double* frag = &g_wide_frags.a[ToZ ? 1 : 0][wide_frag_offset(L)][lane];
  double b[NT][KT];
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
    for (int kt = 0; kt < KT; ++kt) b[nt][kt] = frag[(nt * KT + kt) * 32];
  }
  const int r0 = L * L;
  const cpx<double>* pa = w.pa + g * w.ps + w.p;  // m = 0
  const cpx<double>* pb = w.pb + g * w.ps + w.p;
  double acc[S][NT][4];
#pragma unroll
  for (int s = 0; s < S; ++s) wide_zero(acc[s]);
#pragma unroll
  for (int kt = 0; kt < KT; ++kt) {
    // Past 2L the k tile multiplies zeros: read the degree's own last row there (finite;
    // the next degree's rows may be another warp's, being written).
    const int j = min(kt * 4 + tig, 2 * L);
    const cpx<double> x = w.rec[wide_slot(r0 + j, g)];
    double re = x.re, im = x.im;
    if constexpr (ToZ) wide_dz<false>(re, im, pa, j - L);
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) wide_mma(acc[kt % S][nt], re, im, b[nt][kt]);
  }
  if constexpr (SK) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[0][nt][c] += acc[1][nt][c];
    }
  }
  // Dz(beta) (to z) or Dz(-beta) (from z); outputs past 2L are 0 and stay 0
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // outputs past 2L are 0: any power of the degree will do
      wide_dz<!ToZ>(acc[0][nt][h], acc[0][nt][2 + h], pb, min(nt * 8 + 4 * h + tig - L, L));
    }
  }
  double acc2[S][NT][4];
#pragma unroll
  for (int s = 0; s < S; ++s) wide_zero(acc2[s]);
#pragma unroll
  for (int st = 0; st < NT; ++st) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        wide_mma(acc2[h % S][nt], acc[0][st][h], acc[0][st][2 + h], b[nt][2 * st + h]);
      }
    }
  }
  if constexpr (SK) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
      for (int c = 0; c < 4; ++c) acc2[0][nt][c] += acc2[1][nt][c];
    }
  }
  if constexpr (ToZ) {
    const double s = w.pr[g * w.rs + L + 1];
    __syncwarp();  // every lane's operands read before the degree's rows are overwritten
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int i = nt * 8 + 4 * h + tig;
        if (i <= 2 * L) w.rec[wide_slot(r0 + i, g)] = cpx<double>{acc2[0][nt][h] * s, acc2[0][nt][2 + h] * s};
      }
    }
  } else {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int i = nt * 8 + 4 * h + tig;
        double re = acc2[0][nt][h], im = acc2[0][nt][2 + h];
        wide_dz<true>(re, im, pa, min(i - L, L));  // past 2L: 0, and not an output
        sink.put(r0 + i, cpx<double>{re, im}, i <= 2 * L);
      }
    }
  }
}

/// Zeroes a folded product's accumulators ([class][k parity][n tile][4]).
template <int NT>
__device__ __forceinline__ void wide_zero_folded(double (&acc)[2][2][NT][4]) {
#pragma unroll
  for (int c = 0; c < 2; ++c) {
#pragma unroll
    for (int e = 0; e < 2; ++e) wide_zero(acc[c][e]);
  }
}

/// Rows m (E + O) and -m (sgn (E - O)) of position (nt, h) of class c, from the even-k (E)
/// and odd-k (O) accumulators.
template <int NT>
__device__ __forceinline__ void wide_unfold(const double (&acc)[2][2][NT][4], int c, int nt,
                                            int h, double sgn, double& pre, double& pim,
                                            double& mre, double& mim) {
  pre = acc[c][0][nt][h] + acc[c][1][nt][h];
  pim = acc[c][0][nt][2 + h] + acc[c][1][nt][2 + h];
  mre = sgn * (acc[c][0][nt][h] - acc[c][1][nt][h]);
  mim = sgn * (acc[c][0][nt][2 + h] - acc[c][1][nt][2 + h]);
}

/// wide_degree with the folded matrices (see the folded table's comment): NT n tiles and
/// KT k tiles a product, four products a swap (class P or M x even or odd k).
template <bool ToZ, int NT, int KT, class Sink>
__device__ __forceinline__ void wide_degree_folded(const wide_warp& w, int L, const Sink& sink) {
  static_assert(KT <= 2 * NT, "a product's k tiles come from the previous product's n tiles");
  const int lane = threadIdx.x & 31;
  const int g = lane >> 2, tig = lane & 3;
  const double* frag = &g_wide_fold_frags.a[ToZ ? 1 : 0][wide_fold_offset(L)][lane];
  double b[2][2][NT][KT];
#pragma unroll
  for (int c = 0; c < 2; ++c) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
        for (int kt = 0; kt < KT; ++kt) b[c][e][nt][kt] = frag[(((c * 2 + e) * NT + nt) * KT + kt) * 32];
      }
    }
  }
  const int rc = L * L + L;  // row of m = 0
  const double sgn = (L & 1) ? -1.0 : 1.0;
  const int c_even = L & 1;  // the class whose m are even
  const cpx<double>* pa = w.pa + g * w.ps + w.p;  // m = 0
  const cpx<double>* pb = w.pb + g * w.ps + w.p;
  double acc[2][2][NT][4];  // [class][k parity][nt][re0, re1, im0, im1]
  wide_zero_folded(acc);
#pragma unroll
  for (int e = 0; e < 2; ++e) {
#pragma unroll
    for (int kt = 0; kt < KT; ++kt) {
      // Past L the k tile multiplies zeros: any row of the degree (finite) will do.
      const int k = min(2 * (kt * 4 + tig) + e, L);
      const cpx<double> xp = w.rec[wide_slot(rc + k, g)];
      const cpx<double> xm = w.rec[wide_slot(rc - k, g)];
      double pre = xp.re, pim = xp.im, mre = xm.re, mim = xm.im;
      if constexpr (ToZ) {
        wide_dz<false>(pre, pim, pa, k);
        wide_dz<false>(mre, mim, pa, -k);
      }
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        wide_mma(acc[0][e][nt], pre + mre, pim + mim, b[0][e][nt][kt]);
        wide_mma(acc[1][e][nt], pre - mre, pim - mim, b[1][e][nt][kt]);
      }
    }
  }
  // Unfold (rows m and -m), Dz(beta) (to z) or Dz(-beta) (from z), fold again: in place,
  // acc[c][0] then holds u, acc[c][1] v of class c's positions.
#pragma unroll
  for (int c = 0; c < 2; ++c) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = min(wide_fold_m(L, c, nt * 8 + 4 * h + tig), L);  // past L: zeros
        double pre, pim, mre, mim;
        wide_unfold(acc, c, nt, h, sgn, pre, pim, mre, mim);
        wide_dz<!ToZ>(pre, pim, pb, m);
        wide_dz<!ToZ>(mre, mim, pb, -m);
        if (m == 0) {  // one row: u = 2 y_0, v = 0
          mre = pre;
          mim = pim;
        }
        acc[c][0][nt][h] = pre + mre;
        acc[c][0][nt][2 + h] = pim + mim;
        acc[c][1][nt][h] = pre - mre;
        acc[c][1][nt][2 + h] = pim - mim;
      }
    }
  }
  double acc2[2][2][NT][4];
  wide_zero_folded(acc2);
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    // even k come from the class with even m, odd k from the other (c_even is 0 or 1)
#pragma unroll
    for (int kt = 0; kt < KT; ++kt) {
      const int st = kt >> 1, h = kt & 1;
      double ure, uim, vre, vim;
      if ((e == 0) == (c_even == 0)) {
        ure = acc[0][0][st][h]; uim = acc[0][0][st][2 + h];
        vre = acc[0][1][st][h]; vim = acc[0][1][st][2 + h];
      } else {
        ure = acc[1][0][st][h]; uim = acc[1][0][st][2 + h];
        vre = acc[1][1][st][h]; vim = acc[1][1][st][2 + h];
      }
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        wide_mma(acc2[0][e][nt], ure, uim, b[0][e][nt][kt]);
        wide_mma(acc2[1][e][nt], vre, vim, b[1][e][nt][kt]);
      }
    }
  }
  double scale = 1.0;
  if constexpr (ToZ) {
    scale = w.pr[g * w.rs + L + 1];
    __syncwarp();  // every lane's operands read before the degree's rows are overwritten
  }
#pragma unroll
  for (int c = 0; c < 2; ++c) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m_raw = wide_fold_m(L, c, nt * 8 + 4 * h + tig);
        const bool ok = m_raw <= L;
        const int m = ok ? m_raw : L;
        double pre, pim, mre, mim;
        wide_unfold(acc2, c, nt, h, sgn, pre, pim, mre, mim);
        if constexpr (ToZ) {
          if (ok) {
            w.rec[wide_slot(rc + m, g)] = cpx<double>{pre * scale, pim * scale};
            if (m > 0) w.rec[wide_slot(rc - m, g)] = cpx<double>{mre * scale, mim * scale};
          }
        } else {
          wide_dz<true>(pre, pim, pa, m);
          wide_dz<true>(mre, mim, pa, -m);
          sink.put(rc + m, cpx<double>{pre, pim}, ok);  // every lane calls (warp-collective sinks)
          sink.put(rc - m, cpx<double>{mre, mim}, ok && m > 0);
        }
      }
    }
  }
}

/// Degree L's passes for the kernel compiled for orders with wide_tiles(p) <= MaxNT (the
/// folded shapes of higher degrees, and their registers, are then never compiled in).
template <bool ToZ, int MaxNT, class Sink>
__device__ __forceinline__ void wide_degree_any(const wide_warp& w, int L, const Sink& sink) {
  if (L >= wide_fold_min_degree) {
    // (NT, KT): degrees 4-7 (1, 1), 8-15 (1, 2), 16-23 (2, 3); a kernel compiles only the
    // shapes its MaxNT reaches (registers are reserved for the largest)
    if (L < 8) {
      if constexpr (MaxNT >= 2) wide_degree_folded<ToZ, 1, 1>(w, L, sink);
    } else if (L < 16) {
      if constexpr (MaxNT >= 3) wide_degree_folded<ToZ, 1, 2>(w, L, sink);
    } else {
      if constexpr (MaxNT >= 5) wide_degree_folded<ToZ, 2, 3>(w, L, sink);
    }
    return;
  }
  wide_degree<ToZ, 1, false>(w, L, sink);
}

/// z for order m, in place: out[n, m] = (-1)^m r^-n sum_{k=|m|}^{p-n} (n+k)! t[k, m] for
/// |m| <= n <= p - |m|; NT n tiles cover the p - 2|m| + 1 outputs.
template <int NT>
__device__ __forceinline__ void wide_z(const wide_warp& w, int m) {
  constexpr int KT = 2 * NT;
  const int lane = threadIdx.x & 31;
  const int g = lane >> 2, tig = lane & 3;
  const int p = w.p;
  const int am = m < 0 ? -m : m;
  double acc[NT][4];
  wide_zero(acc);
#pragma unroll
  for (int kt = 0; kt < KT; ++kt) {
    const int k = am + kt * 4 + tig;
    const int kk = min(k, p - am);  // past the block: any finite value (B is 0)
    const cpx<double> x = w.rec[wide_slot(kk * kk + kk + m, g)];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      // B (k = tig, n = g): (n + k)!, zero past the truncation (n + k > p)
      wide_mma(acc[nt], x.re, x.im, w.fz[k + am + nt * 8 + wide_col_row(g)]);
    }
  }
  __syncwarp();
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int n = am + nt * 8 + 4 * h + tig;
      if (n <= p - am) {
        const double r = w.pr[g * w.rs + n];
        const double s = (am & 1) ? -r : r;
        w.rec[wide_slot(n * n + n + m, g)] = cpx<double>{acc[nt][h] * s, acc[nt][2 + h] * s};
      }
    }
  }
  __syncwarp();
}

/// Rows n > p - |m| of order m: nothing reaches them.
__device__ __forceinline__ void wide_z_rest(const wide_warp& w, int m) {
  const int lane = threadIdx.x & 31;
  const int p = w.p;
  const int am = m < 0 ? -m : m;
  const int first_n = am > p - am ? am : p - am + 1;
  for (int it = lane; it < (p + 1 - first_n) * wide_pairs; it += 32) {
    const int n = first_n + (it >> 3);
    w.rec[wide_slot(n * n + n + m, it & 7)] = cpx<double>{0.0, 0.0};
  }
}

/// Whether warp `warp` of W takes item t (degrees, orders): a snake over 2W, so that the
/// costlier items (higher degrees) spread over the warps.
template <int W>
__device__ __forceinline__ bool wide_takes(int t, int warp) {
  const int r = t % (2 * W);
  return r == warp || r == 2 * W - 1 - warp;
}

/// W warps a block share one tile of eight pairs (its records in shared memory): the
/// degrees and the orders of z spread over the warps, block barriers between the phases.
template <class Pairs, int W, int MinBlocks, int MaxNT>
__global__ void __launch_bounds__(32 * W, MinBlocks) m2l_tensor_wide_kernel(const Pairs pairs, int p) {
  extern __shared__ __align__(16) unsigned char m2l_smem_raw[];
  const int t = threadIdx.x;
  const int warp = t >> 5;
  const int C = (p + 1) * (p + 1);
  wide_warp w;
  w.p = p;
  w.ps = wide_power_stride(p);
  w.rs = wide_radius_stride(p);
  w.fz = reinterpret_cast<double*>(m2l_smem_raw);
  w.rec = reinterpret_cast<cpx<double>*>(w.fz + 64);
  w.pa = w.rec + C * wide_pairs;
  w.pb = w.pa + wide_pairs * w.ps;
  w.pr = reinterpret_cast<double*>(w.pb + wide_pairs * w.ps);
  for (int i = t; i < 64; i += 32 * W) w.fz[i] = i <= p ? swap_constants<double>().fact[i] : 0.0;
  const std::int64_t first = std::int64_t(blockIdx.x) * wide_pairs;
  const int count = int(min(std::int64_t(wide_pairs), pairs.num_pairs - first));
  // stage the records: thread -> pair (t / 4) % 8, coefficients 4 (t / 32) + t % 4 + 4 W u
  // (conflict-free rows of the swizzle), one 16-byte asynchronous copy each
  {
    const int q = (t >> 2) & 7;
    const auto* src = q < count ? pairs.record(first + q, C) : nullptr;  // double or float
    for (int idx = (t & 3) + 4 * warp; idx < C; idx += 4 * W) {
      cpx<double>* dst = &w.rec[wide_slot(idx, q)];
      if (q < count) {
        copy_async(dst, src + idx);
      } else {
        *dst = cpx<double>{0.0, 0.0};
      }
    }
  }
  if (t < wide_pairs) {  // the pair's powers
    double x = 0.0, y = 0.0, z = 1.0;
    if (t < count) pairs.delta(first + t, x, y, z);
    const angles<double> a = make_angles(x, y, z);
    const double inv_r = inverse_distance(x, y, z);
    cpx<double> qa{1.0, 0.0}, qb{1.0, 0.0};
    double ir = 1.0;
    for (int j = 0; j <= p; ++j) {
      w.pa[t * w.ps + p + j] = qa;
      w.pa[t * w.ps + p - j] = cpx<double>{qa.re, -qa.im};
      w.pb[t * w.ps + p + j] = qb;
      w.pb[t * w.ps + p - j] = cpx<double>{qb.re, -qb.im};
      w.pr[t * w.rs + j] = ir;
      qa = j == 0 ? a.ea : qa * a.ea;
      qb = j == 0 ? a.eb : qb * a.eb;
      ir *= inv_r;
    }
    w.pr[t * w.rs + p + 1] = ir;
  }
  stage_records_wait();
  __syncthreads();

  const auto sink = pairs.sink(first, count, C);
  for (int L = 0; L <= p; ++L) {
    if (wide_takes<W>(L, warp)) wide_degree_any<true, MaxNT>(w, L, sink);
  }
  __syncthreads();
  for (int m = -p; m <= p; ++m) {
    if (!wide_takes<W>(m + p, warp)) continue;
    const int am = m < 0 ? -m : m;
    const int c = p - 2 * am + 1;  // outputs n = |m| .. p - |m|
    if (c > 16) {
      wide_z<3>(w, m);
    } else if (c > 8) {
      wide_z<2>(w, m);
    } else if (c > 0) {
      wide_z<1>(w, m);
    }
    wide_z_rest(w, m);
  }
  __syncthreads();
  for (int L = 0; L <= p; ++L) {
    if (wide_takes<W>(L, warp)) wide_degree_any<false, MaxNT>(w, L, sink);
  }
}

/// The wide kernel's Pairs policy (as tensor.cuh's, less `flush`):
///   num_pairs, record(i, C), delta(i, x, y, z)
///   sink(first, count, C)   the lane's sink for pair first + lane / 4 of a tile of `count`
///                           pairs: put(idx, value, ok) takes coefficient idx of the lane's
///                           pair (every lane of the warp calls it at once; ok: an output)
/// Pair streaming in T: pair i writes locals[i]. The schedule computes in double; float
/// coefficients are widened as they are staged (split.cuh's copy_async for float sources)
/// and locals narrowed as they are stored (where float `automatic` takes it, and the
/// figures: tensor_automatic_float).
template <class T>
struct wide_stream {
  const cpx<T>* multipoles;
  const T* deltas;
  cpx<T>* locals;
  std::int64_t num_pairs;

  __device__ __forceinline__ const cpx<T>* record(std::int64_t i, int C) const {
    return multipoles + i * C;
  }
  __device__ __forceinline__ void delta(std::int64_t i, double& x, double& y, double& z) const {
    const T* d = deltas + 3 * i;
    x = d[0];
    y = d[1];
    z = d[2];
  }
  struct store_sink {
    cpx<T>* dst;  ///< the pair's locals, null past the tile's count
    __device__ __forceinline__ void put(int idx, cpx<double> v, bool ok) const {
      if (ok && dst != nullptr) dst[idx] = cpx<T>{T(v.re), T(v.im)};
    }
  };
  __device__ __forceinline__ store_sink sink(std::int64_t first, int count, int C) const {
    const int q = (threadIdx.x & 31) >> 2;
    return {q < count ? locals + (first + q) * C : nullptr};
  }
};

inline std::size_t tensor_wide_smem_bytes(int p) {
  return std::size_t(wide_block_doubles(p)) * sizeof(double);
}

/// Launches the wide schedule over a Pairs policy (double, sm_90): W warps a tile of eight
/// pairs, registers for MinBlocks blocks an SM, compiled for orders with wide_tiles(p) <= MaxNT.
template <int W, int MinBlocks, int MaxNT, class Pairs>
void launch_tensor_wide(int p, const Pairs& pairs, cudaStream_t stream) {
  if (pairs.num_pairs == 0) return;
  if (p < 0 || wide_tiles(p) > MaxNT) {
    throw_invalid_argument("m2l", "p", p,
                           "0.." + std::to_string(4 * MaxNT - 1) + " for this wide kernel");
  }
  auto kernel = m2l_tensor_wide_kernel<Pairs, W, MinBlocks, MaxNT>;
  const std::size_t smem = tensor_wide_smem_bytes(p);
  ensure_dynamic_smem(kernel, smem);
  const std::int64_t blocks = (pairs.num_pairs + wide_pairs - 1) / wide_pairs;
  if (blocks > 0x7fffffff) {
    throw_invalid_argument("m2l", "num_pairs", pairs.num_pairs,
                           "at most (2^31 - 1) * 8 for the wide tensor schedule");
  }
  kernel<<<dim3(unsigned(blocks)), 32 * W, smem, stream>>>(pairs, p);
  WHAM_CHECK_LAUNCH("m2l_tensor_wide_kernel");
}

// ---- tuning (H200, sm_90) -----------------------------------------------------------------
// Probes beside the tests (2026-12-04, 1e5 pairs, median of 15 event-timed launches, us),
// against the four-pair schedule (tensor.cuh) and, at p <= 12, the split schedule:
//   p            9    10    11    12    13    14    15    16    17    18    19    20
//   four-pair  416   487   564   648   753   871   969  1178  1355  1694  1842  2153
//   split      276   339   497   648
//   wide       270   333   364   456   485   573   620   789   903   981  1039  1462
// Shapes (W warps a tile, registers for MinBlocks blocks an SM, MaxNT), as launched below:
// the fastest tried at each order, or within 1-4% of it with one shape fewer; others, same
// run: p = 11-13 (4, 4, 4) 350, 469, 516 (248 bytes of spills); p = 15 (2, 6, 4) 680;
// p = 16-17 (4, 3, 5) 835, 911; p = 18-19 (3, 4, 5) 1117, 1229; an earlier run (powers
// by |m| and a sign) p = 20 (2, 4, 6) 1656, (3, 3, 6) 1885 against 1611 for (4, 3, 6).
// One warp a tile (255 registers, 4-5 blocks an SM by shared memory) took 562, 710, 815,
// 997, 1165, 1726, 1952, 2570, 2932 at p = 12-20 (Nsight Compute at p = 16: 1.2 warps a
// scheduler, 43% of the stalls on fixed-latency dependencies, 0.75 instructions a cycle,
// integer work 4 instructions in 5); two accumulators a tile (chains of dependent products
// half as deep) lost with every W (spills); powers by |m| and a sign instead of the signed
// tables: 2-10% slower (374, 471, 502, 587, 630, 820, 917, 1011, 1062, 1611 at p = 11-20).
// Each warp prefetching its next degree's fragments to L1 (prefetch.L1, one line a lane
// per 4 KB) while the current degree runs, with the fragment offsets in closed form
// (2026-12-05, bench_m2l, tensor path, three rounds against this code): 1-3% slower at
// every p = 11-20 (p = 11 372-375 against 359-362 us, p = 20 1467-1470 against 1426-1429).
// Not profiled; a likely cause: at 3-4 blocks an SM their shared memory leaves L1 little
// room for the fragments of a dozen warps' degrees (up to 12.8 KB each).
/// Lowest order `automatic` gives the wide schedule (double): from p = 11 it beats the split
/// schedule (above); at 9 and 10 the two were within 2%. After the fold (the file comment)
/// the wide schedule also wins there in pair streaming (H100 80GB HBM3, 2026-12-06, bench_m2l,
/// 1e5 pairs, two rounds, us, split vs wide: p = 8 124-126 vs 213-224, 9 289-290 vs 234-238,
/// 10 417-424 vs 295-297); not moved yet, since the FMM accumulate form takes the same
/// threshold (fmm/accumulate.cuh's pick_schedule) and was not measured at those orders.
inline constexpr int wide_min_order = 11;

/// The wide schedule at order p (0..20) with the tuned shape, over a Pairs policy.
template <class Pairs>
inline void launch_tensor_wide_tuned(int p, const Pairs& s, cudaStream_t stream) {
  if (p <= 13) return launch_tensor_wide<2, 6, 4>(p, s, stream);
  if (p <= 15) return launch_tensor_wide<4, 4, 4>(p, s, stream);
  if (p <= 17) return launch_tensor_wide<3, 4, 5>(p, s, stream);
  if (p <= 19) return launch_tensor_wide<4, 3, 5>(p, s, stream);
  return launch_tensor_wide<4, 3, 6>(p, s, stream);
}

/// Whether the wide schedule runs on the current device: compute capability 9.0+ and the
/// kernel's code compiled for it (its body is a trap below __CUDA_ARCH__ 900, so a build for
/// sm_80 alone, running on an H200, must keep the four-pair schedule). Looked up once per
/// device.
inline bool wide_supported() {
  const device_limits& l = current_device_limits();
  if (l.cc_major < 9) return false;
  constexpr int max_devices = 64;
  static std::array<int, max_devices> ptx_version{};
  static std::array<std::once_flag, max_devices> once{};
  std::call_once(once[l.device], [&l] {
    cudaFuncAttributes a{};
    WHAM_CUDA_TRY(cudaFuncGetAttributes(&a, m2l_tensor_wide_kernel<wide_stream<double>, 2, 6, 4>));
    ptx_version[l.device] = a.ptxVersion;
  });
  return ptx_version[l.device] >= 90;
}

/// Whether `automatic` takes the tensor schedule at order p in double (pair streaming and
/// the accumulate form alike): from wide_min_order where the wide schedule runs, else from
/// tensor_min_order. The device is asked only at the orders where the answer depends on it.
static_assert(wide_min_order < tensor_min_order, "the wide schedule starts lower");
inline bool tensor_automatic(int p) {
  return p >= tensor_min_order || (p >= wide_min_order && wide_supported());
}

/// Whether pair-streaming `automatic` takes the wide schedule at order p in float (computed
/// in double, sm_90 only): above the split schedule's orders, where the warp schedule was
/// the alternative. H100 80GB HBM3, bench_m2l, 1e5 pairs, median us (2026-12-05): p = 13,
/// 14, 15, 16 wide 456, 560, 584, 783 against warp 959, 1039, 1255, 1430; at p = 12 the
/// split schedule stays (355 against 439).
inline bool tensor_automatic_float(int p) { return p > split_max_order && wide_supported(); }

/// The tensor schedule over the caller's pairs: the wide one (policy `wide`) where it runs,
/// else the four-pair one (policy `four`, tensor.cuh).
template <class Wide, class Four>
void launch_tensor_any(int p, const Wide& wide, const Four& four, cudaStream_t stream) {
  if (wide_supported()) {
    launch_tensor_wide_tuned(p, wide, stream);
  } else {
    launch_tensor(p, four, stream);
  }
}

}  // namespace wham::detail::m2l
