/// \file wham/detail/fmm/class_operator.cuh
/// \brief The M2L of one displacement as real matrices, for many pairs that share it
/// (the class form over pairs grouped by class, class_groups.cuh).
///
/// The factorised operator (detail/m2l/blocks.cuh, reference::m2l_factorised) is
///   L = Dz(-a) B Dz(-b) B  Z  B^T Dz(b) B^T Dz(a) M        (per degree l, Z couples equal m)
/// With I = diag(i^m), the degree-l rotation R_l = B_l^T Dz(b) B_l^T equals I d_l I^-1
/// for a real matrix d_l (the spherical-harmonic phases of a y-rotation), and the way
/// back B_l Dz(-b) B_l is R_l^H = I d_l^T I^-1. Z keeps m, so I^-1 Z I = Z and
///   L = Psi^* d^T Z d Psi M,   Psi = diag(e^{i m (a - pi/2)}),
/// d = the block diagonal of the d_l. For a class, d (folded by its parity to
/// sum 2(l+1)^2 reals, fold_offset) and Psi are
/// made once; per pair the work is two real matrix products per degree on the real
/// and imaginary parts, and the z-translation: no trigonometry, no per-pair tables.
///
/// d_l[i][j] = Re( i^(j-i) sum_k B_l[k][i] e^{i k b} B_l[j][k] ), i, j, k = -l..l,
/// formed in double from the folded swap table (detail/m2l/tables.cuh) whatever T is.
///
/// Scaling follows m2l::z_translate (detail/m2l/blocks.cuh): the rotated multipole of
/// degree k is scaled by r^-(k+1) on its way out of d, the translated local of degree n by
/// (-1)^m r^-n, so (n+k)! is the only large factor inside the sums.
#pragma once

#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/tables.cuh>

#if defined(__CUDA_ARCH__)
#define WHAM_M2L_NO_UNROLL _Pragma("unroll 1")
#else
#define WHAM_M2L_NO_UNROLL
#endif

namespace wham::detail::fmm {

using m2l::cpx;
using m2l::swap_offset;

/// B_l[m][k] for m, k in -l..l from the folded table (its parities: detail/m2l/tables.cuh).
__host__ __device__ __forceinline__ double swap_entry(const double* folded, int l, int m, int k) {
  const int am = m < 0 ? -m : m, ak = k < 0 ? -k : k;
  double v = folded[swap_offset(l) + am * (l + 1) + ak];
  if (k < 0 && ((l + am) & 1)) v = -v;
  if (m < 0 && ((l + ak) & 1)) v = -v;
  return v;
}

/// The geometry of a class: e^{i(a - pi/2)} and e^{i b} in double, 1/r.
struct class_geometry {
  cpx<double> psi;  ///< e^{i (alpha - pi/2)} = -i e^{i alpha}
  cpx<double> eb;   ///< e^{i beta}
  double inv_r;
};

/// The angles of m2l::make_geometry, in double (NaN in, NaN out).
__host__ __device__ __forceinline__ class_geometry make_class_geometry(double x, double y,
                                                                       double z) {
  const m2l::geometry<double> a = m2l::make_geometry(x, y, z);
  class_geometry g;
  g.psi = {a.ea.im, -a.ea.re};
  g.eb = a.eb;
  g.inv_r = a.inv_r;
  return g;
}

/// Entry [i][j] (i, j in -l..l) of d_l; `pb` = e^{i k b} for k = 0..l.
__host__ __device__ __forceinline__ double class_dmat_entry(const double* folded, int l, int i,
                                                            int j, const cpx<double>* pb) {
  cpx<double> acc{0.0, 0.0};
  for (int k = -l; k <= l; ++k) {
    const double bb = swap_entry(folded, l, k, i) * swap_entry(folded, l, j, k);
    const cpx<double> e = k >= 0 ? pb[k] : cpx<double>{pb[-k].re, -pb[-k].im};
    acc = fma(bb, e, acc);
  }
  switch ((j - i) & 3) {  // Re(i^(j-i) acc)
    case 0:
      return acc.re;
    case 1:
      return -acc.im;
    case 2:
      return -acc.re;
    default:
      return acc.im;
  }
}

/// The parity of d_l, d_l[-i][-j] = (-1)^(i+j) d_l[i][j] (checked on the host for every
/// l to 16, exactly), halves the products: with u_j = x_j + (-1)^j x_-j and
/// v_j = x_j - (-1)^j x_-j (j >= 1), u_0 = x_0,
///   y_i = P_i + Q_i,  y_-i = (-1)^i (P_i - Q_i),  P_i = sum_{j>=0} A[i][j] u_j,
///   Q_i = sum_{j>=1} B[i][j] v_j,  A/B[i][j] = (d[i][j] +/- (-1)^j d[i][-j]) / 2,
/// for i, j = 0..l: 2l^2 + 2l + 1 products for the 2l + 1 rows instead of (2l+1)^2.
/// d_l^T has the same parity and its A/B are the transposes, so one table serves both
/// ways. Degree l's table holds (A[i][j], B[i][j]) pairs, row-major (i, j = 0..l), at
/// fold_offset(l) reals; B[i][0] = 0 (the pairs stay 2 T aligned: one wide load each).
__host__ __device__ constexpr int fold_offset(int l) { return l * (l + 1) * (2 * l + 1) / 3; }

/// The pair (A[i][j], B[i][j]), i, j = 0..l, of degree l's folded table (see
/// fold_offset); `pb` = e^{i k b}, k = 0..l. class_dmat_entry's sum over k = -l..l, by
/// the parities of B_l (swap_entry): with g_k = B_l[k][i] B_l[|j|][k] (k >= 0), the
/// terms of k and -k pair into 2 cos(kb) where i + j is even (the sum is real) and
/// 2i sin(kb) where it is odd (imaginary, the k = 0 term drops out of d), and d[i][j],
/// d[i][-j] share the products: with E, O the sums of g_k t_k over even, odd k
/// (t_0 = 1 or 0, t_k = 2 cos kb or 2 sin kb),
///   d[i][j] = s(j - i) (E + O),  d[i][-j] = s(-j - i) (-1)^l (E - O),
/// s(n) = +1 for n = 0, 3 mod 4, -1 for n = 1, 2. l + 1 real products for both entries,
/// against 2 (2l + 1) complex ones by the definition: the grouped class schedule makes
/// these tables at every change of class (class_groups.cuh).
struct fold_entries {
  double a, b;
};
__host__ __device__ __forceinline__ fold_entries class_fold_pair(const double* folded, int l, int i,
                                                                 int j, const cpx<double>* pb) {
  const double* t = folded + swap_offset(l);
  const bool even = ((i + j) & 1) == 0;
  double e = even ? t[i] * t[j * (l + 1)] : 0.0;  // k = 0: B[0][i] B[j][0], real sums only
  double o = 0.0;
  for (int k = 1; k <= l; ++k) {
    const double g = t[k * (l + 1) + i] * t[j * (l + 1) + k];
    const double w = 2.0 * (even ? pb[k].re : pb[k].im);
    if (k & 1) {
      o = ::fma(g, w, o);
    } else {
      e = ::fma(g, w, e);
    }
  }
  auto s = [](int n) { return ((n & 3) == 1 || (n & 3) == 2) ? -1.0 : 1.0; };
  const double a = s(j - i) * (e + o);
  if (j == 0) return {a, 0.0};
  const double b = s(-j - i) * ((l & 1) ? o - e : e - o);  // d[i][-j]
  const double sb = (j & 1) ? -b : b;
  return {0.5 * (a + sb), 0.5 * (a - sb)};
}

/// Real k of degree l's folded table (see fold_offset); `pb` = e^{i k b}, k = 0..l.
__host__ __device__ __forceinline__ double class_fold_entry(const double* folded, int l, int k,
                                                            const cpx<double>* pb) {
  const fold_entries ab = class_fold_pair(folded, l, k / (2 * (l + 1)), (k / 2) % (l + 1), pb);
  return (k & 1) ? ab.b : ab.a;
}

/// One (A, B) pair of the folded table.
template <class T>
struct alignas(2 * sizeof(T)) fold_pair {
  T a, b;
};

/// y = F x for the folded table `t` of degree L, read as rows (F = d_L) or as columns
/// (F = d_L^T); x[L + j] holds x_j. Rows come out as `emit(i, two, y_i, y_-i, y_i+1,
/// y_-i-1)`, two i at a time (eight independent FMA chains a lane), or one (`two` false:
/// i = 0, where y_-0 repeats y_0, and i = L for odd L).
template <int L, bool Transposed, class T, class Emit>
__host__ __device__ __forceinline__ void folded_product(const cpx<T>* x, const fold_pair<T>* t,
                                                        Emit&& emit) {
  constexpr int N = L + 1;
  cpx<T> u[N], v[N];
  u[0] = x[L];
  v[0] = {T(0), T(0)};
  WHAM_M2L_UNROLL
  for (int j = 1; j <= L; ++j) {
    const cpx<T> a = x[L + j], b = x[L - j];
    u[j] = (j & 1) ? a - b : a + b;
    v[j] = (j & 1) ? a + b : a - b;
  }
  auto at = [&](int i, int j) { return Transposed ? t[j * N + i] : t[i * N + j]; };
  {  // i = 0: Q_0 = 0
    cpx<T> p{T(0), T(0)};
    WHAM_M2L_UNROLL
    for (int j = 0; j <= L; ++j) p = fma(at(0, j).a, u[j], p);
    emit(0, false, p, p, p, p);
  }
  auto minus = [](int i, cpx<T> p, cpx<T> q) {  // y_-i
    const cpx<T> d = p - q;
    return (i & 1) ? cpx<T>{-d.re, -d.im} : d;
  };
  // Not unrolled: the grouped kernel already stalls on instruction-cache misses; unrolled
  // it ran 1.1-1.9x slower at p = 8-12 (H200, 16^3 level, double, bench_fmm class_groups).
  WHAM_M2L_NO_UNROLL
  for (int i = 1; i + 1 <= L; i += 2) {
    cpx<T> p0{T(0), T(0)}, q0{T(0), T(0)}, p1{T(0), T(0)}, q1{T(0), T(0)};
    p0 = fma(at(i, 0).a, u[0], p0);
    p1 = fma(at(i + 1, 0).a, u[0], p1);
    WHAM_M2L_UNROLL
    for (int j = 1; j <= L; ++j) {
      const fold_pair<T> e0 = at(i, j), e1 = at(i + 1, j);
      p0 = fma(e0.a, u[j], p0);
      q0 = fma(e0.b, v[j], q0);
      p1 = fma(e1.a, u[j], p1);
      q1 = fma(e1.b, v[j], q1);
    }
    emit(i, true, p0 + q0, minus(i, p0, q0), p1 + q1, minus(i + 1, p1, q1));
  }
  if constexpr (L % 2 == 1) {  // the last i alone
    cpx<T> p{T(0), T(0)}, q{T(0), T(0)};
    p = fma(at(L, 0).a, u[0], p);
    WHAM_M2L_UNROLL
    for (int j = 1; j <= L; ++j) {
      const fold_pair<T> e = at(L, j);
      p = fma(e.a, u[j], p);
      q = fma(e.b, v[j], q);
    }
    emit(L, false, p + q, minus(L, p, q), p, p);
  }
}

/// Degree L of the way in, for one pair whose coefficients sit at col[c * stride]:
/// x <- r^-(L+1) d_L Psi x, in place. `psi` = Psi's powers m = 0..L (T), `fold` the
/// folded table of every degree (fold_offset).
template <int L, class T>
__host__ __device__ __forceinline__ void class_forward_degree(cpx<T>* col, int stride,
                                                              const T* fold, const cpx<T>* psi,
                                                              T scale_out) {
  constexpr int W = 2 * L + 1;
  cpx<T> x[W];
  WHAM_M2L_UNROLL
  for (int c = 0; c < W; ++c) x[c] = col[(L * L + c) * stride];
  WHAM_M2L_UNROLL
  for (int m = 1; m <= L; ++m) {
    x[L + m] = x[L + m] * psi[m];
    x[L - m] = mul_conj(x[L - m], psi[m]);
  }
  const auto* t = reinterpret_cast<const fold_pair<T>*>(fold + fold_offset(L));
  folded_product<L, false>(x, t,
                           [&](int i, bool two, cpx<T> yp, cpx<T> ym, cpx<T> yp1, cpx<T> ym1) {
                             col[(L * L + L + i) * stride] = scale(yp, scale_out);
                             if (i != 0) col[(L * L + L - i) * stride] = scale(ym, scale_out);
                             if (two) {
                               col[(L * L + L + i + 1) * stride] = scale(yp1, scale_out);
                               col[(L * L + L - i - 1) * stride] = scale(ym1, scale_out);
                             }
                           });
}

/// Degree L of the way out, for one pair: z = (-1)^m r^-L sum_k (L+k)! y[k, m] from the
/// rotated (and scaled) multipole at col[c * stride], then Psi^* d_L^T z. Coefficients
/// leave two neighbours at a time where they can, `out(c, v0, v1, true)` for c and c + 1,
/// else one, `out(c, v0, _, false)`. `ir` = 1/r powers, `fact` = factorials.
template <int L, class T, class Out>
__host__ __device__ __forceinline__ void class_backward_degree(const cpx<T>* col, int stride, int p,
                                                               const T* fold, const cpx<T>* psi,
                                                               const T* ir, const T* fact,
                                                               Out&& out) {
  constexpr int W = 2 * L + 1;
  cpx<T> z[W];
  const T s = ir[L];
  WHAM_M2L_UNROLL
  for (int m = -L; m <= L; ++m) {
    const int am = m < 0 ? -m : m;
    cpx<T> acc{T(0), T(0)};
    for (int k = am; k <= p - L; ++k) acc = fma(fact[L + k], col[(k * k + k + m) * stride], acc);
    z[L + m] = scale(acc, (am & 1) ? -s : s);
  }
  const auto* t = reinterpret_cast<const fold_pair<T>*>(fold + fold_offset(L));
  // Psi^* on the way out: coefficient m gets e^{-i m (a - pi/2)}.
  constexpr int c0 = L * L + L;
  folded_product<L, true>(z, t, [&](int i, bool two, cpx<T> yp, cpx<T> ym, cpx<T> yp1, cpx<T> ym1) {
    if (two) {
      out(c0 + i, mul_conj(yp, psi[i]), mul_conj(yp1, psi[i + 1]), true);
      out(c0 - i - 1, ym1 * psi[i + 1], ym * psi[i], true);
    } else {
      out(c0 + i, mul_conj(yp, psi[i]), yp, false);
      if (i != 0) out(c0 - i, ym * psi[i], ym, false);
    }
  });
}

}  // namespace wham::detail::fmm
