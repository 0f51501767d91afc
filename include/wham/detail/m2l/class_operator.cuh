/// \file wham/detail/m2l/class_operator.cuh
/// \brief The M2L of one displacement as real matrices, for many pairs that share it
/// (the class form over pairs grouped by class, detail/fmm/class_groups.cuh).
///
/// The factorised operator (blocks.cuh, reference::m2l_factorised) is
///   L = Dz(-a) B Dz(-b) B  Z  B^T Dz(b) B^T Dz(a) M        (per degree l, Z couples equal m)
/// With I = diag(i^m), the degree-l rotation R_l = B_l^T Dz(b) B_l^T equals I d_l I^-1
/// for a real matrix d_l (the spherical-harmonic phases of a y-rotation), and the way
/// back B_l Dz(-b) B_l is R_l^H = I d_l^T I^-1. Z keeps m, so I^-1 Z I = Z and
///   L = Psi^* d^T Z d Psi M,   Psi = diag(e^{i m (a - pi/2)}),
/// d = the block diagonal of the d_l. For a class, d (sum (2l+1)^2 reals) and Psi are
/// made once; per pair the work is two real matrix products per degree on the real
/// and imaginary parts, and the z-translation: no trigonometry, no per-pair tables.
///
/// d_l[i][j] = Re( i^(j-i) sum_k B_l[k][i] e^{i k b} B_l[j][k] ), i, j, k = -l..l,
/// formed in double from the folded swap table (tables.cuh) whatever T is.
///
/// Scaling follows z_translate (blocks.cuh): the rotated multipole of degree k is
/// scaled by r^-(k+1) on its way out of d, the translated local of degree n by
/// (-1)^m r^-n, so (n+k)! is the only large factor inside the sums.
#pragma once

#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/tables.cuh>

#if defined(__CUDA_ARCH__)
#define WHAM_M2L_NO_UNROLL _Pragma("unroll 1")
#else
#define WHAM_M2L_NO_UNROLL
#endif

namespace wham::detail::m2l {

/// Offset of degree l's (2l+1) x (2l+1) matrix in a table of every degree below it:
/// sum_{j<l} (2j+1)^2.
__host__ __device__ constexpr int dmat_offset(int l) { return l * (2 * l - 1) * (2 * l + 1) / 3; }

/// B_l[m][k] for m, k in -l..l from the folded table (its parities: tables.cuh).
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

/// The angles of blocks.cuh's make_angles, in double (NaN in, NaN out).
__host__ __device__ __forceinline__ class_geometry make_class_geometry(double x, double y,
                                                                       double z) {
  const double rho = sqrt(x * x + y * y);
  const double r = sqrt(rho * rho + z * z);
  cpx<double> ea{1.0, 0.0};
  if (rho > 0.0) ea = {y / rho, x / rho};
  if (!(rho == rho)) ea = {rho, rho};  // NaN stays visible
  class_geometry g;
  g.psi = {ea.im, -ea.re};
  g.eb = {z / r, -rho / r};
  g.inv_r = 1.0 / r;
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
    case 0: return acc.re;
    case 1: return -acc.im;
    case 2: return -acc.re;
    default: return acc.im;
  }
}

/// Degree L of the way in, for one pair whose coefficients sit at col[c * stride]:
/// x <- r^-(L+1) d_L Psi x, in place. `psi` = Psi's powers m = 0..L (T), `dm` the d table.
template <int L, class T>
__host__ __device__ __forceinline__ void class_forward_degree(cpx<T>* col, int stride, const T* dm,
                                                              const cpx<T>* psi, T scale_out) {
  constexpr int W = 2 * L + 1;
  cpx<T> x[W];
WHAM_M2L_UNROLL
  for (int c = 0; c < W; ++c) x[c] = col[(L * L + c) * stride];
WHAM_M2L_UNROLL
  for (int m = 1; m <= L; ++m) {
    x[L + m] = x[L + m] * psi[m];
    x[L - m] = mul_conj(x[L - m], psi[m]);
  }
  const T* d = dm + dmat_offset(L);
  // two rows at a time: four independent FMA chains a lane
WHAM_M2L_NO_UNROLL
  for (int r = 0; r + 1 < W; r += 2) {
    cpx<T> a0{T(0), T(0)}, a1{T(0), T(0)};
WHAM_M2L_UNROLL
    for (int c = 0; c < W; ++c) {
      a0 = fma(d[r * W + c], x[c], a0);
      a1 = fma(d[(r + 1) * W + c], x[c], a1);
    }
    col[(L * L + r) * stride] = scale(a0, scale_out);
    col[(L * L + r + 1) * stride] = scale(a1, scale_out);
  }
  cpx<T> acc{T(0), T(0)};  // the last row (W is odd)
WHAM_M2L_UNROLL
  for (int c = 0; c < W; ++c) acc = fma(d[(W - 1) * W + c], x[c], acc);
  col[(L * L + W - 1) * stride] = scale(acc, scale_out);
}

/// Degree L of the way out, for one pair: z = (-1)^m r^-L sum_k (L+k)! y[k, m] from the
/// rotated (and scaled) multipole at col[c * stride], then Psi^* d_L^T z; `out(c, v)`
/// receives coefficient c = L*L + L + m. `ir` = 1/r powers, `fact` = factorials.
template <int L, class T, class Out>
__host__ __device__ __forceinline__ void class_backward_degree(const cpx<T>* col, int stride,
                                                               int p, const T* dm,
                                                               const cpx<T>* psi, const T* ir,
                                                               const T* fact, Out&& out) {
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
  const T* d = dm + dmat_offset(L);
  // Psi^* on the way out; rows leave two at a time (out(c, v0, v1, true)) so that the
  // caller can write both coefficients of a pair at once, the last row alone.
  auto turn = [&](int r, cpx<T> acc) {
    const int m = r - L;
    return m >= 0 ? mul_conj(acc, psi[m]) : acc * psi[-m];
  };
WHAM_M2L_NO_UNROLL
  for (int r = 0; r + 1 < W; r += 2) {
    cpx<T> a0{T(0), T(0)}, a1{T(0), T(0)};
WHAM_M2L_UNROLL
    for (int c = 0; c < W; ++c) {
      a0 = fma(d[c * W + r], z[c], a0);
      a1 = fma(d[c * W + r + 1], z[c], a1);
    }
    out(L * L + r, turn(r, a0), turn(r + 1, a1), true);
  }
  cpx<T> acc{T(0), T(0)};
WHAM_M2L_UNROLL
  for (int c = 0; c < W; ++c) acc = fma(d[c * W + W - 1], z[c], acc);
  out(L * L + W - 1, turn(W - 1, acc), acc, false);
}

}  // namespace wham::detail::m2l
