/// \file wham/detail/translations/blocks.cuh
/// \brief Device building blocks of M2M and L2L (docs/specs/translations.md), on M2L's
/// rotation machinery (detail/m2l/blocks.cuh): rotate so that delta lies on +z, translate
/// along z, rotate back. Along z only the order-0 regular harmonics survive,
/// R_j^0(0, 0, -r) = (-r)^j / j!, so each order m is one triangular Toeplitz product:
///   M2M  a'[n, m] = sum_{k=|m|}^{n} c_{n-k} a[k, m]
///   L2L  a'[k, m] = sum_{n=k}^{P}   c_{n-k} a[n, m],      c_j = (-r)^j / j!
/// The direct forms (O(p^4), the regular harmonics of -delta made on chip) are here too:
/// at low order they do less work than two rotations.
///
/// Everything __host__ __device__ __forceinline__ (runs, and is tested, on the host).
#pragma once

#include <wham/detail/m2l/blocks.cuh>

#include <cmath>

namespace wham::detail::translations {

using m2l::cpx;

/// Which translation: a multipole up (child to parent) or a local down (parent to child).
enum class kind { m2m, l2l };

/// c_j = (-r)^j / j!, j = 0..P, r = |delta| by make_geometry's scaled inverse.
template <int P, class T>
__host__ __device__ __forceinline__ void taylor_powers(T inv_r, T* c) {
  const T minus_r = -T(1) / inv_r;
  c[0] = T(1);
  WHAM_M2L_UNROLL
  for (int j = 1; j <= P; ++j) c[j] = c[j - 1] * (minus_r / T(j));
}

/// The translation along +z by r (the c_j of taylor_powers), in place, one order at a time:
/// M2M descends in n (a'[n] reads a[k <= n]), L2L ascends (a'[k] reads a[n >= k]).
template <kind K, int P, class T>
__host__ __device__ __forceinline__ void z_shift(cpx<T>* a, const T* c) {
  WHAM_M2L_UNROLL
  for (int m = -P; m <= P; ++m) {
    const int am = m < 0 ? -m : m;
    if constexpr (K == kind::m2m) {
      WHAM_M2L_UNROLL
      for (int n = P; n >= am; --n) {
        cpx<T> acc = a[n * n + n + m];
        WHAM_M2L_UNROLL
        for (int k = am; k < n; ++k) acc = m2l::fma(c[n - k], a[k * k + k + m], acc);
        a[n * n + n + m] = acc;
      }
    } else {
      WHAM_M2L_UNROLL
      for (int k = am; k <= P; ++k) {
        cpx<T> acc = a[k * k + k + m];
        WHAM_M2L_UNROLL
        for (int n = k + 1; n <= P; ++n) acc = m2l::fma(c[n - k], a[n * n + n + m], acc);
        a[k * k + k + m] = acc;
      }
    }
  }
}

/// The rotations. B_l is not orthogonal (the harmonics' normalisation is not unitary), so
/// the coefficient rotation F = B^T Dz(beta) B^T Dz(alpha) that M2L applies to a multipole
/// (delta onto +z) has F^-1 = Dz(-alpha) B^T Dz(-beta) B^T != F^T. A multipole transforms by
/// F (M = sum q R), a local by F^-T (it pairs with R in l2p), so M2M is
/// F^-1 T_z F and L2L is F^T T_z F^-T, F^-T = B Dz(beta) B Dz(alpha): M2M takes B^T in both
/// rotations, L2L takes B in both; M2L (F^T T_z F) takes one of each.
template <int L, bool Transpose, int P, class T>
__host__ __device__ __forceinline__ void rotate_forward_degree(cpx<T>* v,
                                                               const m2l::direction<P, T>& dir) {
  m2l::dz_inplace<L, false>(v, dir.ea);
  m2l::swap_inplace<L, Transpose>(v);
  m2l::dz_inplace<L, false>(v, dir.eb);
  m2l::swap_inplace<L, Transpose>(v);
}

template <int L, bool Transpose, int P, class T>
__host__ __device__ __forceinline__ void rotate_back_degree(cpx<T>* v,
                                                            const m2l::direction<P, T>& dir) {
  m2l::swap_inplace<L, Transpose>(v);
  m2l::dz_inplace<L, true>(v, dir.eb);
  m2l::swap_inplace<L, Transpose>(v);
  m2l::dz_inplace<L, true>(v, dir.ea);
}

/// The whole rotated translation of one expansion of order P, in place; dir and inv_r from
/// delta = target centre - source centre (make_direction, inverse_distance).
template <kind K, int P, class T>
__host__ __device__ __forceinline__ void translate_inplace(cpx<T>* a, const m2l::direction<P, T>& dir,
                                                          T inv_r) {
  constexpr bool transpose = K == kind::m2m;
  m2l::static_for<0, P + 1>([&](auto Lc) {
    constexpr int L = decltype(Lc)::value;
    rotate_forward_degree<L, transpose>(a + L * L, dir);
  });
  T c[P + 1];
  taylor_powers<P>(inv_r, c);
  z_shift<K, P>(a, c);
  m2l::static_for<0, P + 1>([&](auto Lc) {
    constexpr int L = decltype(Lc)::value;
    rotate_back_degree<L, transpose>(a + L * L, dir);
  });
}

/// R_n^m(x, y, z), n <= P, every m (reference::regular_harmonics' recurrence), into R.
template <int P, class T>
__host__ __device__ __forceinline__ void regular_harmonics(T x, T y, T z, cpx<T>* R) {
  const T r2 = x * x + y * y + z * z;
  const cpx<T> xy{x, y};
  R[0] = {T(1), T(0)};
  WHAM_M2L_UNROLL
  for (int m = 0; m <= P; ++m) {
    if (m > 0) R[m * m + 2 * m] = m2l::scale(R[(m - 1) * (m - 1) + 2 * (m - 1)] * xy, T(0.5) / T(m));
    if (m + 1 <= P) R[(m + 1) * (m + 1) + (m + 1) + m] = m2l::scale(R[m * m + 2 * m], z);
    WHAM_M2L_UNROLL
    for (int n = m + 2; n <= P; ++n) {
      const cpx<T> a = R[(n - 1) * (n - 1) + (n - 1) + m], b = R[(n - 2) * (n - 2) + (n - 2) + m];
      R[n * n + n + m] = m2l::scale(m2l::scale(a, T(2 * n - 1) * z) - m2l::scale(b, r2),
                                    T(1) / T((n + m) * (n - m)));
    }
    if (m > 0) {
      WHAM_M2L_UNROLL
      for (int n = m; n <= P; ++n) {
        const cpx<T> v = R[n * n + n + m];
        R[n * n + n - m] = (m & 1) ? cpx<T>{-v.re, v.im} : cpx<T>{v.re, -v.im};
      }
    }
  }
}

/// The direct translation: R = R(-delta), then
///   M2M  out[n, m] = sum_{k <= n} sum_l a[k, l] R[n-k, m-l]
///   L2L  out[k, l] = sum_{n >= k} sum_m a[n, m] conj(R[n-k, m-l])
/// a is read, out written (distinct arrays).
template <kind K, int P, class T>
__host__ __device__ __forceinline__ void translate_direct(const cpx<T>* a, T x, T y, T z,
                                                          cpx<T>* out) {
  constexpr int C = (P + 1) * (P + 1);
  cpx<T> R[C];
  regular_harmonics<P>(-x, -y, -z, R);
  WHAM_M2L_UNROLL
  for (int n = 0; n <= P; ++n) {
    WHAM_M2L_UNROLL
    for (int m = -n; m <= n; ++m) {
      cpx<T> acc{T(0), T(0)};
      if constexpr (K == kind::m2m) {
        WHAM_M2L_UNROLL
        for (int k = 0; k <= n; ++k) {
          WHAM_M2L_UNROLL
          for (int l = -k; l <= k; ++l) {
            const int j = n - k, i = m - l;
            if (i >= -j && i <= j) acc = acc + a[k * k + k + l] * R[j * j + j + i];
          }
        }
      } else {  // here (n, m) names the output (k, l) of the formula above
        WHAM_M2L_UNROLL
        for (int s = n; s <= P; ++s) {
          WHAM_M2L_UNROLL
          for (int t = -s; t <= s; ++t) {
            const int j = s - n, i = t - m;
            if (i >= -j && i <= j) acc = acc + m2l::mul_conj(a[s * s + s + t], R[j * j + j + i]);
          }
        }
      }
      out[n * n + n + m] = acc;
    }
  }
}

}  // namespace wham::detail::translations
