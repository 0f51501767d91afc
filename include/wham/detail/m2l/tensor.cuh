/// \file wham/detail/m2l/tensor.cuh
/// \brief The tensor-core schedule of the pair-streaming M2L (double, sm_80+):
/// every swap and the z-translation as FP64 matrix products (mma.m8n8k4) on a
/// tile of four pairs, one warp a tile, no barrier between warps.
///
/// Why: the swaps are products of one constant real matrix per degree with many
/// vectors. The scalar schedules spend an instruction (with a constant operand) a
/// multiply-add and, above p = 12, either unroll every term at compile time (the
/// split schedule: tens of thousands of straight-line instructions a warp) or run
/// divergent row loops (the warp schedule). One mma.m8n8k4 does 256 multiply-adds.
///
/// Layout: a warp's four pairs are eight real columns (column 2q + part of pair q);
/// rec[idx][col] in shared memory, row stride tensor_row doubles. The accumulator
/// fragment gives lane l the row l / 4 and the columns 2 (l % 4) + {0, 1}: the real
/// and imaginary parts of pair l % 4, so the complex Dz products after each swap
/// stay in the lane.
///
/// The folded swap of degree L (blocks.cuh's parities of B_L): rows m with L + m even
/// read S_k = x_k + x_-k (S_0 = x_0), rows with L + m odd read D_k = x_k - x_-k;
/// E_m sums the even k, O_m the odd k; x'_m = E + O, x'_-m = +-(E - O). So four
/// products a swap, (rows of a parity) x (k of a parity), each a small dense block
/// padded to 8 x 4 tiles: from L = 12 to 15 the padding is nil. A swap's input is
/// kept in "folded-split" order within its degree's slice: S at even k, S at odd k,
/// D at even k >= 2, D at odd k, so each product's operand rows are contiguous.
///
/// Per degree L (to z): fold (with Dz(alpha)), A: B_L^T then Dz(beta), folded; B:
/// B_L^T then r^-(L+1), natural order. z: per order m one product with the
/// factorials (n + k <= p), natural order in place. From z, per degree: fold, C:
/// B_L then Dz(-beta), folded; D: B_L then Dz(-alpha), natural order.
///
/// Below p = 12 a warp's per-degree work (fragments, folds and the products' bookkeeping
/// for four pairs) costs more than the scalar schedules' whole pair (tuning.cuh).
#pragma once

#include <wham/detail/arch/mma.cuh>
#include <wham/detail/device.cuh>
#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/staging.cuh>
#include <wham/detail/m2l/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace wham::detail::m2l {

// ---- the swap blocks as mma fragments (built at compile time) ------------------------

/// Rows of degree L whose parity L + m is even (E) / odd (O); k counts by parity.
__host__ __device__ constexpr int tensor_rows_e(int L) { return L / 2 + 1; }
__host__ __device__ constexpr int tensor_rows_o(int L) { return L + 1 - tensor_rows_e(L); }
__host__ __device__ constexpr int tensor_k_even(int L) { return L / 2 + 1; }   // S_0, S_2, ...
__host__ __device__ constexpr int tensor_k_odd(int L) { return (L + 1) / 2; }  // S_1, S_3, ...
__host__ __device__ constexpr int tensor_k_deven(int L) { return L / 2; }      // D_2, D_4, ...
__host__ __device__ constexpr int tensor_tiles(int n, int t) { return (n + t - 1) / t; }

/// Tiles of a block of degree <= 20: rows of a parity <= 11 (2 tiles of 8), k of a
/// parity <= 11 (3 tiles of 4). Up to degree 15, one row tile and two k tiles.
inline constexpr int tensor_mt = 2;
inline constexpr int tensor_kt = 3;
inline constexpr int tensor_small_degree = 15;

/// The fragments of B_L (Transpose = false) and B_L^T, lane order of the A operand of
/// mma.m8n8k4 (row = lane / 4, column = lane % 4), per degree a fixed grid of
/// 4 blocks x tensor_mt x tensor_kt fragments (blocks: 0 = rows with L + m even and even
/// k, 1 = the same rows and odd k, 2 = rows with L + m odd and even k >= 2, 3 = those
/// rows and odd k); entries outside a block are 0. 258 KB, read through L1 / L2.
struct tensor_frag_table {
  double a[2][max_table_order + 1][4][tensor_mt][tensor_kt][32];
};

constexpr tensor_frag_table make_tensor_frag_table() {
  constexpr swap_table<double> tab = make_swap_table<double>();
  tensor_frag_table t{};
  for (int tr = 0; tr < 2; ++tr) {
    for (int L = 0; L <= max_table_order; ++L) {
      const int off = swap_offset(L);
      for (int blk = 0; blk < 4; ++blk) {
        const bool orow = blk >= 2;
        const int rows = orow ? tensor_rows_o(L) : tensor_rows_e(L);
        const int kodd = blk & 1;
        const int ks = kodd ? tensor_k_odd(L) : (orow ? tensor_k_deven(L) : tensor_k_even(L));
        for (int mt = 0; mt < tensor_mt; ++mt) {
          for (int kt = 0; kt < tensor_kt; ++kt) {
            for (int lane = 0; lane < 32; ++lane) {
              const int i = mt * 8 + lane / 4, j = kt * 4 + lane % 4;
              if (i >= rows || j >= ks) continue;
              const int m = 2 * i + (orow ? 1 - (L & 1) : (L & 1));
              const int k = kodd ? 2 * j + 1 : (orow ? 2 * j + 2 : 2 * j);
              t.a[tr][L][blk][mt][kt][lane] =
                  tr ? tab.b[off + k * (L + 1) + m] : tab.b[off + m * (L + 1) + k];
            }
          }
        }
      }
    }
  }
  return t;
}

// One copy per translation unit, as the __constant__ tables (tables.cuh). Global memory:
// each lane reads its own entry (a constant-cache read of 32 addresses serialises).
static __device__ const tensor_frag_table g_tensor_frags = make_tensor_frag_table();

// ---- per warp --------------------------------------------------------------------------

/// Pairs a warp holds (one n = 8 tile of real columns).
inline constexpr int tensor_pairs = 4;
/// Row stride of rec in doubles: 8 columns + 2 (80 bytes: the staging's 16-byte writes
/// of consecutive coefficients fall in distinct banks).
inline constexpr int tensor_row = 10;
/// Shared memory of one warp at order p, in doubles: the record rows (plus 8 rows a
/// padded k tile may read past the last degree) and the pairs' powers e^{i j alpha},
/// e^{i j beta} (j <= p) and r^-j (j <= p + 1).
__host__ __device__ constexpr int tensor_warp_doubles(int p) {
  const int C = (p + 1) * (p + 1);
  return (C + 8) * tensor_row + 2 * 2 * (p + 1) * tensor_pairs + (p + 2) * tensor_pairs;
}
/// Doubles a block holds before its warps' parts: the z factors (n + k)! for
/// n + k <= p, 0 above, indices 0..63.
inline constexpr int tensor_block_doubles = 64;

/// The warp's view of its shared memory.
struct tensor_warp {
  double* rec;      ///< [C + 8][tensor_row]
  cpx<double>* pa;  ///< [p + 1][4]: e^{i j alpha}
  cpx<double>* pb;  ///< [p + 1][4]: e^{i j beta}
  double* pr;       ///< [p + 2][4]: r^-j
  int p;
};

/// Position of S_k / D_k (k >= 1 for D) in a folded-split slice of degree L.
__host__ __device__ __forceinline__ int tensor_pos_s(int L, int k) {
  return (k & 1) ? tensor_k_even(L) + (k >> 1) : (k >> 1);
}
__host__ __device__ __forceinline__ int tensor_pos_d(int L, int k) {
  return L + 1 + ((k & 1) ? tensor_k_even(L) - 1 + (k >> 1) : (k >> 1) - 1);
}

__device__ __forceinline__ cpx<double>& tensor_at(double* slice, int row, int q) {
  return *reinterpret_cast<cpx<double>*>(slice + row * tensor_row + 2 * q);
}

/// Natural order -> folded-split order of degree L for the warp's four pairs:
/// x_m (times e^{i m alpha} when Dz), x_-m (times its conjugate); S_m, D_m. Lane l
/// takes pair l % 4 and the orders l / 4 + 8 u.
template <bool Dz>
__device__ __forceinline__ void tensor_fold(const tensor_warp& w, int L) {
  const int lane = threadIdx.x & 31;
  const int q = lane & 3;
  double* slice = w.rec + L * L * tensor_row;
  cpx<double> s[3], d[3];
  const int items = (L + 8) >> 3;  // orders l / 4 + 8 u <= L, warp-uniform bound
#pragma unroll
  for (int u = 0; u < 3; ++u) {
    const int m = (lane >> 2) + 8 * u;
    if (u < items && m <= L) {
      cpx<double> a = tensor_at(slice, L + m, q);
      cpx<double> b = tensor_at(slice, L - m, q);
      if (Dz && m > 0) {
        const cpx<double> e = w.pa[m * tensor_pairs + q];
        a = a * e;
        b = mul_conj(b, e);
      }
      s[u] = m > 0 ? a + b : a;
      d[u] = a - b;
    }
  }
  __syncwarp();
#pragma unroll
  for (int u = 0; u < 3; ++u) {
    const int m = (lane >> 2) + 8 * u;
    if (u < items && m <= L) {
      tensor_at(slice, tensor_pos_s(L, m), q) = s[u];
      if (m > 0) tensor_at(slice, tensor_pos_d(L, m), q) = d[u];
    }
  }
  __syncwarp();
}

/// One degree's fragments of B_L or B_L^T in registers (both swaps of a direction use
/// the same matrix; MT x KT tiles a block: 1 x 2 up to degree 15, 2 x 3 above), and
/// what the lane's accumulator rows are: for class c (0: L + m even, 1: odd) and row
/// tile t, the order m (-1: past the class), its folded-split positions, and its pair's
/// powers e^{i m beta} (e) and e^{i m alpha} (f).
template <int MT, int KT>
struct tensor_degree {
  int L;
  int row0[4];  ///< first slice row of each block's operand
  double a[4][MT][KT];
  int m[2][MT];
  int ps[2][MT], pd[2][MT];
  cpx<double> e[2][MT], f[2][MT];
};

template <int MT, int KT>
__device__ __forceinline__ void tensor_load_degree(tensor_degree<MT, KT>& g, const tensor_warp& w,
                                                   int L, bool transpose) {
  const int lane = threadIdx.x & 31;
  const int q = lane & 3;
  g.L = L;
  g.row0[0] = 0;
  g.row0[1] = tensor_k_even(L);
  g.row0[2] = L + 1;
  g.row0[3] = L + 1 + tensor_k_deven(L);
  const auto& frag = g_tensor_frags.a[transpose ? 1 : 0][L];
#pragma unroll
  for (int blk = 0; blk < 4; ++blk) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int kt = 0; kt < KT; ++kt) g.a[blk][mt][kt] = frag[blk][mt][kt][lane];
    }
  }
  const int rows[2] = {tensor_rows_e(L), tensor_rows_o(L)};
#pragma unroll
  for (int c = 0; c < 2; ++c) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const int i = mt * 8 + (lane >> 2);
      const int m = i < rows[c] ? 2 * i + (c ? 1 - (L & 1) : (L & 1)) : -1;
      g.m[c][mt] = m;
      const int mm = m < 0 ? 0 : m;
      g.ps[c][mt] = tensor_pos_s(L, mm);
      g.pd[c][mt] = mm > 0 ? tensor_pos_d(L, mm) : 0;
      g.e[c][mt] = w.pb[mm * tensor_pairs + q];
      g.f[c][mt] = w.pa[mm * tensor_pairs + q];
    }
  }
}

/// What a swap does after the product.
enum class tensor_post { dz, dz_conj, scale };

/// One swap of degree g.L on the slice: folded-split input -> result (Fold: folded-split,
/// else natural order), in place. Post: x'_m *= e^m, x'_-m *= conj (dz), its conjugate
/// (dz_conj), or times s; Pw picks the powers (0: g.e, 1: g.f). Tiles past a block are
/// zero fragments (their operand rows are read but multiply zeros).
template <tensor_post Post, bool Fold, int Pw, int MT, int KT>
__device__ __forceinline__ void tensor_swap(const tensor_degree<MT, KT>& g, double* slice,
                                            double s) {
  const int lane = threadIdx.x & 31;
  const int L = g.L;
  double b[4][KT];
#pragma unroll
  for (int blk = 0; blk < 4; ++blk) {
    const double* src = slice + (g.row0[blk] + (lane & 3)) * tensor_row + (lane >> 2);
#pragma unroll
    for (int kt = 0; kt < KT; ++kt) b[blk][kt] = src[kt * 4 * tensor_row];
  }
  double acc[4][MT][2];
#pragma unroll
  for (int blk = 0; blk < 4; ++blk) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      acc[blk][mt][0] = acc[blk][mt][1] = 0.0;
#pragma unroll
      for (int kt = 0; kt < KT; ++kt) {
        arch::mma_m8n8k4_f64(acc[blk][mt][0], acc[blk][mt][1], g.a[blk][mt][kt], b[blk][kt]);
      }
    }
  }
  __syncwarp();  // every lane's operands read before the slice is overwritten
  const int q = lane & 3;
#pragma unroll
  for (int c = 0; c < 2; ++c) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const int m = g.m[c][mt];
      if (m < 0) continue;
      const double* E = acc[2 * c][mt];
      const double* O = acc[2 * c + 1][mt];
      cpx<double> yp{E[0] + O[0], E[1] + O[1]};
      cpx<double> yn =
          (L & 1) ? cpx<double>{O[0] - E[0], O[1] - E[1]} : cpx<double>{E[0] - O[0], E[1] - O[1]};
      if constexpr (Post == tensor_post::scale) {
        yp = scale(yp, s);
        yn = scale(yn, s);
      } else {
        const cpx<double> e = Pw ? g.f[c][mt] : g.e[c][mt];  // e^0 = 1 at m = 0
        if constexpr (Post == tensor_post::dz) {
          yp = yp * e;
          yn = mul_conj(yn, e);
        } else {
          yp = mul_conj(yp, e);
          yn = yn * e;
        }
      }
      if constexpr (Fold) {
        tensor_at(slice, g.ps[c][mt], q) = m > 0 ? yp + yn : yp;
        if (m > 0) tensor_at(slice, g.pd[c][mt], q) = yp - yn;
      } else {
        tensor_at(slice, L + m, q) = yp;
        if (m > 0) tensor_at(slice, L - m, q) = yn;
      }
    }
  }
  __syncwarp();
}

/// Both swaps of degree L in one direction (to z: fold with Dz(alpha), B_L^T then
/// Dz(beta), B_L^T then r^-(L+1); from z: fold, B_L then Dz(-beta), B_L then Dz(-alpha)).
template <bool ToZ, int MT, int KT>
__device__ __forceinline__ void tensor_degree_pass(const tensor_warp& w, int L) {
  tensor_degree<MT, KT> g;
  tensor_load_degree(g, w, L, ToZ);
  double* slice = w.rec + L * L * tensor_row;
  tensor_fold<ToZ>(w, L);
  if constexpr (ToZ) {
    tensor_swap<tensor_post::dz, true, 0>(g, slice, 1.0);
    tensor_swap<tensor_post::scale, false, 0>(g, slice,
                                              w.pr[(L + 1) * tensor_pairs + (threadIdx.x & 3)]);
  } else {
    tensor_swap<tensor_post::dz_conj, true, 0>(g, slice, 1.0);
    tensor_swap<tensor_post::dz_conj, false, 1>(g, slice, 1.0);
  }
}

/// z for order m, in place (natural order): out[n, m] = (-1)^m r^-n sum_{k=|m|}^{p-n}
/// (n+k)! t[k, m] for |m| <= n <= p - |m|, 0 for n > p - |m|. `fz`: (n + k)! where
/// n + k <= p, else 0.
__device__ __forceinline__ void tensor_z(const tensor_warp& w, int m, const double* fz) {
  constexpr int MT = 3;  // outputs <= 21 up to order 20
  const int lane = threadIdx.x & 31;
  const int p = w.p;
  const int am = m < 0 ? -m : m;
  const int c = p - 2 * am + 1;  // outputs (and inputs) of the product
  const int q = lane & 3;
  if (c > 0) {
    const int mts = tensor_tiles(c, 8), kts = tensor_tiles(c, 4);
    double acc[MT][2] = {};
    const int s0 = 2 * am + (lane >> 2) + (lane & 3);  // n + k of the lane's A entry
    for (int kt = 0; kt < kts; ++kt) {
      const int k = am + kt * 4 + (lane & 3);
      const int kk = k <= p - am ? k : p - am;  // past the block: any finite value (A is 0)
      const double b = w.rec[(kk * kk + kk + m) * tensor_row + (lane >> 2)];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        if (mt < mts) arch::mma_m8n8k4_f64(acc[mt][0], acc[mt][1], fz[s0 + 4 * kt + 8 * mt], b);
      }
    }
    __syncwarp();
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const int n = am + mt * 8 + (lane >> 2);
      if (mt < mts && n <= p - am) {
        const double r = w.pr[n * tensor_pairs + q];
        const double sc = (am & 1) ? -r : r;
        tensor_at(w.rec, n * n + n + m, q) = cpx<double>{acc[mt][0] * sc, acc[mt][1] * sc};
      }
    }
  }
  // n > p - |m|: nothing reaches them
  const int first = am > p - am ? am : p - am + 1;
  for (int it = lane; it < (p + 1 - first) * tensor_pairs; it += 32) {
    const int n = first + (it >> 2);
    tensor_at(w.rec, n * n + n + m, it & 3) = cpx<double>{0.0, 0.0};
  }
  __syncwarp();
}

/// Pair-streaming pairs (the tensor kernel's Pairs policy): pair i reads multipoles[i]
/// and deltas[i] and writes locals[i]. A policy gives
///   num_pairs
///   record(i, C)        the pair's multipole record in global memory
///   delta(i, x, y, z)   its displacement
///   flush(w, first, count, C)   the warp's `count` results (natural order in w.rec,
///                       pairs first .. first + count - 1) to their destination
struct tensor_stream {
  const cpx<double>* multipoles;
  const double* deltas;
  cpx<double>* locals;
  std::int64_t num_pairs;

  __device__ __forceinline__ const cpx<double>* record(std::int64_t i, int C) const {
    return multipoles + i * C;
  }
  __device__ __forceinline__ void delta(std::int64_t i, double& x, double& y, double& z) const {
    const double* d = deltas + 3 * i;
    x = d[0];
    y = d[1];
    z = d[2];
  }
  __device__ __forceinline__ void flush(const tensor_warp& w, std::int64_t first, int count,
                                        int C) const {
    cpx<double>* dst = locals + first * C;
    for (int j = threadIdx.x & 31; j < tensor_tiles(C, 8) * 8 * tensor_pairs; j += 32) {
      const int q = (j >> 3) & 3, idx = (j >> 5) * 8 + (j & 7);
      if (idx < C && q < count) dst[std::int64_t(q) * C + idx] = tensor_at(w.rec, idx, q);
    }
  }
};

template <class Pairs, int Warps, int MinBlocks>
__global__ void __launch_bounds__(32 * Warps, MinBlocks)
    m2l_tensor_kernel(const Pairs pairs, int p) {
  extern __shared__ __align__(16) unsigned char m2l_smem_raw[];
  double* fz = reinterpret_cast<double*>(m2l_smem_raw);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  double* base = fz + tensor_block_doubles + warp * tensor_warp_doubles(p);
  const int C = (p + 1) * (p + 1);
  tensor_warp w;
  w.p = p;
  w.rec = base;
  w.pa = reinterpret_cast<cpx<double>*>(base + (C + 8) * tensor_row);
  w.pb = w.pa + (p + 1) * tensor_pairs;
  w.pr = reinterpret_cast<double*>(w.pb + (p + 1) * tensor_pairs);
  for (int i = threadIdx.x; i < tensor_block_doubles; i += blockDim.x) {
    fz[i] = i <= p ? swap_constants<double>().fact[i] : 0.0;
  }
  const std::int64_t first = (std::int64_t(blockIdx.x) * Warps + warp) * tensor_pairs;
  const std::int64_t n = pairs.num_pairs;
  const int count = first < n ? int(min(std::int64_t(tensor_pairs), n - first)) : 0;
  // stage the records (natural order), 8 coefficients of one pair per quarter warp
  {
    const int q = (lane >> 3) & 3;
    const cpx<double>* src = q < count ? pairs.record(first + q, C) : nullptr;
    for (int j = lane; j < tensor_tiles(C, 8) * 8 * tensor_pairs; j += 32) {
      const int idx = (j >> 5) * 8 + (j & 7);
      if (idx < C && q < count) copy_async(&tensor_at(w.rec, idx, q), src + idx);
    }
  }
  for (int i = lane; i < 8 * tensor_row; i += 32) w.rec[C * tensor_row + i] = 0.0;
  if (lane < tensor_pairs) {  // the pair's powers
    double x = 0.0, y = 0.0, z = 1.0;
    if (lane < count) pairs.delta(first + lane, x, y, z);
    const angles<double> a = make_angles(x, y, z);
    const double inv_r = inverse_distance(x, y, z);
    cpx<double> qa{1.0, 0.0}, qb{1.0, 0.0};
    double ir = 1.0;
    for (int j = 0; j <= p; ++j) {
      w.pa[j * tensor_pairs + lane] = qa;
      w.pb[j * tensor_pairs + lane] = qb;
      w.pr[j * tensor_pairs + lane] = ir;
      qa = j == 0 ? a.ea : qa * a.ea;
      qb = j == 0 ? a.eb : qb * a.eb;
      ir *= inv_r;
    }
    w.pr[(p + 1) * tensor_pairs + lane] = ir;
  }
  stage_records_wait();
  __syncthreads();         // fz, and the warp's own records and powers
  if (count == 0) return;  // no block barrier below

  for (int L = 0; L <= p; ++L) {
    if (L <= tensor_small_degree) {
      tensor_degree_pass<true, 1, 2>(w, L);
    } else {
      tensor_degree_pass<true, tensor_mt, tensor_kt>(w, L);
    }
  }
  for (int m = -p; m <= p; ++m) tensor_z(w, m, fz);
  for (int L = 0; L <= p; ++L) {
    if (L <= tensor_small_degree) {
      tensor_degree_pass<false, 1, 2>(w, L);
    } else {
      tensor_degree_pass<false, tensor_mt, tensor_kt>(w, L);
    }
  }
  pairs.flush(w, first, count, C);
}

template <int Warps>
inline std::size_t tensor_smem_bytes(int p) {
  return (tensor_block_doubles + std::size_t(Warps) * tensor_warp_doubles(p)) * sizeof(double);
}

/// Launches the tensor schedule over `pairs` (a policy, as tensor_stream), Warps warps
/// (tiles of four pairs) a block, at least MinBlocks blocks an SM by registers.
template <int Warps, int MinBlocks, class Pairs>
void launch_tensor_variant(int p, const Pairs& pairs, cudaStream_t stream) {
  auto kernel = m2l_tensor_kernel<Pairs, Warps, MinBlocks>;
  const std::size_t smem = tensor_smem_bytes<Warps>(p);
  ensure_dynamic_smem(kernel, smem);
  constexpr std::int64_t per_block = std::int64_t(Warps) * tensor_pairs;
  const std::int64_t blocks = (pairs.num_pairs + per_block - 1) / per_block;
  if (blocks > 0x7fffffff) {
    throw_invalid_argument(
        "m2l", "num_pairs", pairs.num_pairs,
        "at most (2^31 - 1) * " + std::to_string(per_block) + " for m2l_path::tensor");
  }
  kernel<<<dim3(unsigned(blocks)), 32 * Warps, smem, stream>>>(pairs, p);
  WHAM_CHECK_LAUNCH("m2l_tensor_kernel");
}

/// The tensor schedule over a Pairs policy, order p in 0..20 (checked by the caller).
template <class Pairs>
void launch_tensor(int p, const Pairs& pairs, cudaStream_t stream) {
  if (pairs.num_pairs == 0) return;
  if (p <= tensor_capped_max_order) {
    launch_tensor_variant<tensor_warps, tensor_capped_min_blocks>(p, pairs, stream);
  } else {
    launch_tensor_variant<tensor_warps, 1>(p, pairs, stream);
  }
}

}  // namespace wham::detail::m2l
