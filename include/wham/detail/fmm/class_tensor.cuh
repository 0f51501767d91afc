/// \file wham/detail/fmm/class_tensor.cuh
/// \brief The class operator of class_operator.cuh, L = Psi^* d^T Z d Psi M, on FP64
/// tensor cores: one warp applies it to the records of four pairs that share a class (the
/// grouped class schedule in double, class_groups.cuh).
///
/// The records are complex rows in shared memory, one row a coefficient, one column a pair
/// (row stride class_tensor_stride). Read as reals, four pairs are eight columns, the real
/// and imaginary parts side by side: one n = 8 tile of mma.m8n8k4. Every product has
/// the same matrix for all of them. The A operand is the class's matrix, and the B operand
/// is the tile. In the accumulator, lane l holds one row of the real and imaginary parts
/// of pair l % 4, so everything after a product stays in the lane.
///   - d_L and d_L^T: the folded table of the class (class_operator.cuh). Rows i and
///     columns j = 0..L of A and B go to two accumulators, P = A u and Q = B v. Each lane
///     folds its own operands as it loads them (u_j = x_j + (-1)^j x_-j, v_j = x_j -
///     (-1)^j x_-j, after Psi on the way in); a separate fold pass in place took the same
///     time with one more barrier a degree.
///   - Z, one product per order m: A[i][j] = (|m| + i + |m| + j)! where that is at most p,
///     else 0 (a table of factorials padded with zeros). The z rows come from rows
///     k = |m|..p of the rotated multipole, in place.
/// Each warp touches only its own four columns, so the three phases need no barrier
/// between warps: __syncwarp between the reads and the writes of a product.
#pragma once

#include <wham/detail/arch/mma.cuh>
#include <wham/detail/fmm/class_operator.cuh>
#include <wham/detail/m2l/blocks.cuh>

namespace wham::detail::fmm {

/// Complex entries a record row. 34 = 2 (mod 8): the operand loads of a quarter warp (16
/// bytes, rows c + lane % 4 of one pair) fall in four distinct 16-byte bank groups.
inline constexpr int class_tensor_stride = 34;
/// Pairs (columns) a warp.
inline constexpr int class_tensor_pairs = 4;
/// Length of the padded factorial table: index 2|m| + i + j of a z product stays below
/// 2p + 10 (tiles of 8 rows and 4 columns) <= 42 for p <= 16.
inline constexpr int class_tensor_fact = 64;

/// The columns of one warp: pairs col0 .. col0 + 3 of `rec`, `live` bit q set when pair
/// col0 + q belongs to the run (the others are read but never written).
struct class_tensor_cols {
  cpx<double>* rec;
  int col0;
  unsigned live;
};

/// The product of degree L's folded table (rows: d_L; Transposed: d_L^T) with the rows of
/// degree L of the warp's tile, folded as the operands are loaded (u_j = x_j + (-1)^j x_-j,
/// v_j = x_j - (-1)^j x_-j, after Psi: x_m e^{im psi}, x_-m e^{-im psi}, when WithPsi).
/// Rows come out as emit(i, pair, y_i, y_-i), i = 0..L, pair = lane % 4 (every lane calls
/// it; the caller checks `live`), after a __syncwarp: emit may overwrite the rows. `fold`
/// is the class's table of every degree (class_operator.cuh's layout).
template <int L, bool Transposed, bool WithPsi, class Emit>
__device__ __forceinline__ void class_tensor_product(const class_tensor_cols& w, const double* fold,
                                                     const cpx<double>* psi, Emit&& emit) {
  constexpr int S = class_tensor_stride, N = L + 1, c0 = L * L + L;
  constexpr int MT = (N + 7) / 8, KT = (N + 3) / 4;
  const int lane = threadIdx.x & 31, r = lane >> 2, k4 = lane & 3;
  const auto* t = reinterpret_cast<const fold_pair<double>*>(fold + fold_offset(L));
  // A first: independent of the records, its loads overlap the operands'.
  double aa[MT][KT], ab[MT][KT];
  WHAM_M2L_UNROLL
  for (int mt = 0; mt < MT; ++mt) {
    const int i = 8 * mt + r;
    WHAM_M2L_UNROLL
    for (int ks = 0; ks < KT; ++ks) {
      const int j = 4 * ks + k4;
      fold_pair<double> e{0.0, 0.0};
      if (i <= L && j <= L) e = Transposed ? t[j * N + i] : t[i * N + j];
      aa[mt][ks] = e.a;
      ab[mt][ks] = e.b;
    }
  }
  // B: row j = 4 ks + k4 of u and v, real column r of the tile (pair r / 2, part r % 2).
  const cpx<double>* col = w.rec + w.col0 + (r >> 1);
  const bool imag = r & 1;
  double bu[KT], bv[KT];
  WHAM_M2L_UNROLL
  for (int ks = 0; ks < KT; ++ks) {
    const int j = 4 * ks + k4;
    bu[ks] = bv[ks] = 0.0;
    if (j == 0) {
      const cpx<double> x = col[c0 * S];
      bu[ks] = imag ? x.im : x.re;
    } else if (j <= L) {
      cpx<double> a = col[(c0 + j) * S], b = col[(c0 - j) * S];
      if constexpr (WithPsi) {
        const cpx<double> e = psi[j];
        a = a * e;
        b = mul_conj(b, e);
      }
      const cpx<double> s = a + b, d = a - b;
      const cpx<double> u = (j & 1) ? d : s, v = (j & 1) ? s : d;
      bu[ks] = imag ? u.im : u.re;
      bv[ks] = imag ? v.im : v.re;
    }
  }
  double acc_p[MT][2], acc_q[MT][2];
  WHAM_M2L_UNROLL
  for (int mt = 0; mt < MT; ++mt) {
    acc_p[mt][0] = acc_p[mt][1] = acc_q[mt][0] = acc_q[mt][1] = 0.0;
    WHAM_M2L_UNROLL
    for (int ks = 0; ks < KT; ++ks) {
      arch::mma_m8n8k4_f64(acc_p[mt][0], acc_p[mt][1], aa[mt][ks], bu[ks]);
      arch::mma_m8n8k4_f64(acc_q[mt][0], acc_q[mt][1], ab[mt][ks], bv[ks]);
    }
  }
  __syncwarp();  // every lane's operands read before emit writes the rows back
  WHAM_M2L_UNROLL
  for (int mt = 0; mt < MT; ++mt) {
    const int i = 8 * mt + r;
    if (i > L) continue;
    const double* P = acc_p[mt];
    const double* Q = acc_q[mt];
    const cpx<double> yp{P[0] + Q[0], P[1] + Q[1]};
    const cpx<double> ym =
        (i & 1) ? cpx<double>{Q[0] - P[0], Q[1] - P[1]} : cpx<double>{P[0] - Q[0], P[1] - Q[1]};
    emit(i, k4, yp, ym);
  }
}

/// Degree L of the way in: x <- r^-(L+1) d_L Psi x, in place (class_forward_degree).
template <int L>
__device__ __forceinline__ void class_tensor_forward(const class_tensor_cols& w, const double* fold,
                                                     const cpx<double>* psi, double scale_out) {
  constexpr int S = class_tensor_stride, c0 = L * L + L;
  class_tensor_product<L, false, true>(w, fold, psi,
                                       [&](int i, int q, cpx<double> yp, cpx<double> ym) {
                                         if (((w.live >> q) & 1u) == 0) return;
                                         w.rec[(c0 + i) * S + w.col0 + q] = scale(yp, scale_out);
                                         if (i > 0)
                                           w.rec[(c0 - i) * S + w.col0 + q] = scale(ym, scale_out);
                                       });
}

/// Order +-A of the z-translation, in place: row (L, m) <- (-1)^m r^-L sum_k (L + k)!
/// row (k, m), k = A..p - L (class_backward_degree's sums). `fz` = k! for k <= P, then 0
/// (class_tensor_fact entries); `ir` = r^-j.
template <int A, int P>
__device__ __forceinline__ void class_tensor_z(const class_tensor_cols& w, const double* fz,
                                               const double* ir) {
  constexpr int S = class_tensor_stride, N = P - A + 1;
  constexpr int MT = (N + 7) / 8, KT = (N + 3) / 4;
  static_assert(2 * A + 8 * MT + 4 * KT - 2 < class_tensor_fact, "factorial table too short");
  const int lane = threadIdx.x & 31, r = lane >> 2, k4 = lane & 3;
  double a[MT][KT];
  WHAM_M2L_UNROLL
  for (int mt = 0; mt < MT; ++mt) {
    WHAM_M2L_UNROLL
    for (int ks = 0; ks < KT; ++ks) a[mt][ks] = fz[2 * A + 8 * mt + r + 4 * ks + k4];
  }
  const double* col = reinterpret_cast<const double*>(w.rec + w.col0) + r;
  WHAM_M2L_UNROLL
  for (int sign = 0; sign < (A > 0 ? 2 : 1); ++sign) {
    const int m = sign ? -A : A;
    double b[KT];
    WHAM_M2L_UNROLL
    for (int ks = 0; ks < KT; ++ks) {
      const int k = A + 4 * ks + k4;
      b[ks] = k <= P ? col[(k * k + k + m) * 2 * S] : 0.0;
    }
    double acc[MT][2];
    WHAM_M2L_UNROLL
    for (int mt = 0; mt < MT; ++mt) {
      acc[mt][0] = acc[mt][1] = 0.0;
      WHAM_M2L_UNROLL
      for (int ks = 0; ks < KT; ++ks) {
        arch::mma_m8n8k4_f64(acc[mt][0], acc[mt][1], a[mt][ks], b[ks]);
      }
    }
    __syncwarp();
    WHAM_M2L_UNROLL
    for (int mt = 0; mt < MT; ++mt) {
      const int L = A + 8 * mt + r;
      if (L <= P && ((w.live >> k4) & 1u)) {
        const double s = (A & 1) ? -ir[L] : ir[L];
        w.rec[(L * L + L + m) * S + w.col0 + k4] = {acc[mt][0] * s, acc[mt][1] * s};
      }
    }
  }
}

/// Degree L of the way out: Psi^* d_L^T z from the z rows, each coefficient to
/// out(c, pair, value) (class_backward_degree's products).
template <int L, class Out>
__device__ __forceinline__ void class_tensor_backward(const class_tensor_cols& w,
                                                      const double* fold, const cpx<double>* psi,
                                                      Out&& out) {
  constexpr int c0 = L * L + L;
  class_tensor_product<L, true, false>(w, fold, psi,
                                       [&](int i, int q, cpx<double> yp, cpx<double> ym) {
                                         if (((w.live >> q) & 1u) == 0) return;
                                         out(c0 + i, q, mul_conj(yp, psi[i]));
                                         if (i > 0) out(c0 - i, q, ym * psi[i]);
                                       });
}

/// The whole operator on the warp's columns: way in for every degree, the z products,
/// then the way out to `out` (every lane calls it; a warp whose `live` is 0 must not).
/// (Two warps a tile, sharing degrees over named barriers, ran 4-8% faster from p = 12 on an
/// H200, but compute-sanitizer's racecheck reported hazards across those barriers.)
template <int P, class Out>
__device__ __forceinline__ void class_tensor_apply(const class_tensor_cols& w, const double* fold,
                                                   const cpx<double>* psi, const double* ir,
                                                   const double* fz, Out&& out) {
  m2l::static_for<0, P + 1>([&](auto Lc) {
    constexpr int L = decltype(Lc)::value;
    class_tensor_forward<L>(w, fold, psi, ir[L + 1]);
  });
  __syncwarp();  // every degree rotated before the z products read across degrees
  m2l::static_for<0, P + 1>([&](auto Ac) { class_tensor_z<decltype(Ac)::value, P>(w, fz, ir); });
  __syncwarp();  // every z row written before the way out reads them
  m2l::static_for<0, P + 1>([&](auto Lc) {
    constexpr int L = decltype(Lc)::value;
    class_tensor_backward<L>(w, fold, psi, out);
  });
}

}  // namespace wham::detail::fmm
