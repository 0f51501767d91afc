/// \file wham/detail/m2l/tensor_wide_degree.cuh
/// \brief The wide tensor schedule's per-warp steps (tensor_wide.cuh for the layout and
/// why): both swaps of a degree, whole or folded, chained in registers, and the
/// z-translation of one order, as FP64 mma.m16n8k4 products on a tile of eight pairs.
#pragma once

#include <wham/detail/arch/mma.cuh>
#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/tensor_wide_tables.cuh>

namespace wham::detail::m2l {

inline constexpr int wide_pairs = 8;
/// Strides of the powers: complex e^{i j angle} (j = -p..p) a pair, 4 modulo 8 (16-byte
/// units), and r^-j a pair, 4 modulo 16 (8-byte units): the lanes' loads fall in distinct
/// banks.
__host__ __device__ constexpr int wide_power_stride(int p) { return ((2 * p + 1 + 3) / 8) * 8 + 4; }
__host__ __device__ constexpr int wide_radius_stride(int p) { return ((p + 2 + 11) / 16) * 16 + 4; }
/// Doubles a block holds: factorials (64), the records, e^{i j alpha}, e^{i j beta}, r^-j.
__host__ __device__ constexpr int wide_block_doubles(int p) {
  return 64 + (p + 1) * (p + 1) * 2 * wide_pairs + 2 * 2 * wide_pairs * wide_power_stride(p) +
         wide_pairs * wide_radius_stride(p);
}

/// Slot of (row, pair q) in the records: rows of eight complex values, the pair XOR-swizzled
/// by 2 (row mod 4), so that four consecutive rows x two pairs (a quarter warp's 16-byte
/// accesses) fall in distinct banks.
__device__ __forceinline__ int wide_slot(int row, int q) {
  return row * 8 + (q ^ ((row & 3) << 1));
}

/// D += A B on an accumulator tile d[4] (arch::mma_m16n8k4_f64's fragment order).
__device__ __forceinline__ void wide_mma(double (&d)[4], double a0, double a1, double b) {
  arch::mma_m16n8k4_f64(d[0], d[1], d[2], d[3], a0, a1, b);
}

struct wide_warp {
  double* fz;        ///< [64]: (n + k)! for n + k <= p, else 0
  cpx<double>* rec;  ///< [C][8], swizzled (wide_slot)
  cpx<double>* pa;   ///< [8][power stride]: e^{i j alpha}, j = -p..p
  cpx<double>* pb;   ///< [8][power stride]: e^{i j beta}, j = -p..p
  double* pr;        ///< [8][radius stride]: r^-j
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
/// (slower with every W on an H200, by spills: the kernel passes false).
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
        if (i <= 2 * L)
          w.rec[wide_slot(r0 + i, g)] = cpx<double>{acc2[0][nt][h] * s, acc2[0][nt][2 + h] * s};
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
__device__ __forceinline__ void wide_unfold(const double (&acc)[2][2][NT][4], int c, int nt, int h,
                                            double sgn, double& pre, double& pim, double& mre,
                                            double& mim) {
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
        for (int kt = 0; kt < KT; ++kt)
          b[c][e][nt][kt] = frag[(((c * 2 + e) * NT + nt) * KT + kt) * 32];
      }
    }
  }
  const int rc = L * L + L;  // row of m = 0
  const double sgn = (L & 1) ? -1.0 : 1.0;
  const int c_even = L & 1;                       // the class whose m are even
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
        ure = acc[0][0][st][h];
        uim = acc[0][0][st][2 + h];
        vre = acc[0][1][st][h];
        vim = acc[0][1][st][2 + h];
      } else {
        ure = acc[1][0][st][h];
        uim = acc[1][0][st][2 + h];
        vre = acc[1][1][st][h];
        vim = acc[1][1][st][2 + h];
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

}  // namespace wham::detail::m2l
