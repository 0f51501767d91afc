/// \file wham/detail/fmm/core.cuh
/// \brief Per-thread building blocks of the accumulate and class forms: the M2L of one
/// pair with its coefficients in registers (compile-time order P), factorised as the
/// spec says (rotate to z with the swap matrices, z-translation, rotate back).
///
/// This is the fmm helper's minimal adapter: when this was written the M2L concept's
/// device building blocks (`detail/m2l/`) were not yet in the tree, so the per-thread
/// factorised operator is here, written from `shared/specs/m2l.md` and checked on the
/// host against `wham::reference::m2l_direct` (tests/fmm/test_fmm_core.cu: every
/// function here is `__host__ __device__`).
///
/// Structure exploited (Dehnen's swap matrices, see wham/reference/m2l.hpp):
///   B_l[-j][m] = (-1)^(l+m) B_l[j][m]   and   B_l[m][-j] = (-1)^(l+m) B_l[m][j],
/// so `B^T u` and `B v` need only the quadrant j, m >= 0 of B_l: for each m >= 0
///   b_j = u_j + (-1)^(l+m) u_{-j} (b_0 = u_0),  E = sum_{j even} B[j][m] b_j,
///   O = sum_{j odd} B[j][m] b_j,  (B^T u)_m = E + O,  (B^T u)_{-m} = (-1)^l (E - O),
/// and the same with B[m][j] for `B v`: (l+1)^2 complex-by-real products per degree
/// instead of (2l+1)^2.
#pragma once

#include <cuda/std/complex>

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define WHAM_FMM_HD __host__ __device__
#else
#define WHAM_FMM_HD
#endif
#if defined(__CUDA_ARCH__)
#define WHAM_FMM_UNROLL _Pragma("unroll")
#else
#define WHAM_FMM_UNROLL
#endif

namespace wham::detail::fmm {

/// Highest order the constant tables serve.
constexpr int max_order = 20;

/// sum_{j < l} (j + 1)^2: where degree l's quadrant starts in the swap table.
constexpr int swap_offset(int l) { return l * (l + 1) * (2 * l + 1) / 6; }

/// The quadrant j, m >= 0 of every swap matrix B_l, l <= max_order, in precision T:
/// B_l[j][m] at `swap_offset(l) + j * (l + 1) + m` (row j, column m).
template <class T>
struct swap_table {
  T v[swap_offset(max_order + 1)];
  T factorial[max_order + 1];  ///< n!, n <= max_order (n + k <= p in the z-core)
};

/// Builds the table at compile time by the spec's recursion on the degree (in double;
/// the entries are dyadic rationals, exact in double).
template <class T>
constexpr swap_table<T> make_swap_table() {
  swap_table<T> t{};
  constexpr int W = 2 * max_order + 1;
  double prev[W * W] = {};
  double next[W * W] = {};
  prev[0] = 1.0;
  t.v[0] = T(1);
  for (int n = 0; n < max_order; ++n) {
    const int w = 2 * n + 1, w1 = 2 * n + 3;
    auto at = [&prev, n, w](int a, int b) -> double {  // B_n[a][b], 0 outside -n..n
      if (a < -n || a > n || b < -n || b > n) return 0.0;
      return prev[(a + n) * w + (b + n)];
    };
    for (int m = -(n + 1); m <= n + 1; ++m) {
      for (int k = -(n + 1); k <= n + 1; ++k) {
        double v = 0.0;
        if (m == n + 1) {
          v = 0.5 * (at(n, k - 1) + at(n, k + 1) + 2.0 * at(n, k));
        } else if (m == -(n + 1)) {
          v = 0.5 * (at(-n, k - 1) + at(-n, k + 1) - 2.0 * at(-n, k));
        } else {
          v = 0.5 * (at(m, k - 1) - at(m, k + 1));
        }
        next[(m + n + 1) * w1 + (k + n + 1)] = v;
      }
    }
    const int l = n + 1;
    for (int j = 0; j <= l; ++j)
      for (int m = 0; m <= l; ++m)
        t.v[swap_offset(l) + j * (l + 1) + m] = T(next[(j + l) * w1 + (m + l)]);
    for (int i = 0; i < w1 * w1; ++i) prev[i] = next[i];
  }
  double f = 1.0;
  t.factorial[0] = T(1);
  for (int i = 1; i <= max_order; ++i) {
    f *= i;
    t.factorial[i] = T(f);
  }
  return t;
}

/// Host copies (host execution of the building blocks, in tests) ...
template <class T>
struct host_tables {
  static constexpr swap_table<T> value = make_swap_table<T>();
};
#if defined(__CUDACC__)
/// ... and the device copies, in constant memory: every lane of a warp reads the same
/// entry at the same time (one thread per pair, all at the same degree).
static __constant__ swap_table<double> device_swap_d = make_swap_table<double>();
static __constant__ swap_table<float> device_swap_f = make_swap_table<float>();
#endif

template <class T>
WHAM_FMM_HD inline const swap_table<T>& swap_constants() {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == sizeof(double)) {
    return device_swap_d;
  } else {
    return device_swap_f;
  }
#else
  return host_tables<T>::value;
#endif
}

/// Everything the rotation needs from a displacement: made once per pair, or once per
/// displacement class in the class form.
template <class T>
struct rotation {
  T ea_re, ea_im;  ///< e^{i alpha} = (y + i x) / rho  (1 when rho = 0)
  T eb_re, eb_im;  ///< e^{i beta}  = (z - i rho) / r
  T inv_r;         ///< 1 / r
};

template <class T>
WHAM_FMM_HD inline rotation<T> make_rotation(T x, T y, T z) {
  using std::sqrt;
  const T rho2 = x * x + y * y;
  const T rho = sqrt(rho2);
  const T r = sqrt(rho2 + z * z);
  rotation<T> rd;
  if (rho > T(0)) {
    const T inv_rho = T(1) / rho;
    rd.ea_re = y * inv_rho;
    rd.ea_im = x * inv_rho;
  } else {
    rd.ea_re = T(1);
    rd.ea_im = T(0);
  }
  rd.inv_r = T(1) / r;
  rd.eb_re = z * rd.inv_r;
  rd.eb_im = -rho * rd.inv_r;
  return rd;
}

/// Powers e^{i k a}, k = 0..P, by complex multiplication.
template <int P, class T>
WHAM_FMM_HD inline void powers(T re0, T im0, T (&re)[P + 1], T (&im)[P + 1]) {
  re[0] = T(1);
  im[0] = T(0);
WHAM_FMM_UNROLL
  for (int k = 1; k <= P; ++k) {
    re[k] = re[k - 1] * re0 - im[k - 1] * im0;
    im[k] = re[k - 1] * im0 + im[k - 1] * re0;
  }
}

/// Applies B_l^T (transposed = false: rows j of B sum into column m) or B_l
/// (transposed = true) to the 2l+1 values x[-l..l] (stored x[l + k]), in place.
/// `transpose_b`: out_m = sum_j B[j][m] x_j;  otherwise out_m = sum_j B[m][j] x_j.
template <int L, bool TransposeB, class T>
WHAM_FMM_HD inline void apply_swap(T (&xr)[2 * L + 1], T (&xi)[2 * L + 1]) {
  const T* B = swap_constants<T>().v + swap_offset(L);
  T outr[2 * L + 1], outi[2 * L + 1];
WHAM_FMM_UNROLL
  for (int m = 0; m <= L; ++m) {
    const bool plus = ((L + m) & 1) == 0;  // (-1)^(l+m)
    T er = T(0), ei = T(0), or_ = T(0), oi = T(0);
WHAM_FMM_UNROLL
    for (int j = 0; j <= L; ++j) {
      const T b = TransposeB ? B[j * (L + 1) + m] : B[m * (L + 1) + j];
      T br = xr[L + j], bi = xi[L + j];
      if (j > 0) {
        br = plus ? br + xr[L - j] : br - xr[L - j];
        bi = plus ? bi + xi[L - j] : bi - xi[L - j];
      }
      if ((j & 1) == 0) {
        er += b * br;
        ei += b * bi;
      } else {
        or_ += b * br;
        oi += b * bi;
      }
    }
    outr[L + m] = er + or_;
    outi[L + m] = ei + oi;
    if (m > 0) {
      outr[L - m] = (L & 1) ? or_ - er : er - or_;
      outi[L - m] = (L & 1) ? oi - ei : ei - oi;
    }
  }
WHAM_FMM_UNROLL
  for (int k = 0; k < 2 * L + 1; ++k) {
    xr[k] = outr[k];
    xi[k] = outi[k];
  }
}

/// x[k] *= e^{i k a} (conj = false) or e^{-i k a} (conj = true), k = -L..L, from the
/// powers e^{i k a}, k >= 0 (e^{-i k a} = conj(e^{i k a})).
template <int L, int P, bool Conj, class T>
WHAM_FMM_HD inline void apply_phase(T (&xr)[2 * L + 1], T (&xi)[2 * L + 1],
                                    const T (&pr)[P + 1], const T (&pi)[P + 1]) {
WHAM_FMM_UNROLL
  for (int k = -L; k <= L; ++k) {
    const int a = k < 0 ? -k : k;
    const bool neg = (k < 0) != Conj;  // multiply by conj(p[a])
    const T er = pr[a], ei = neg ? -pi[a] : pi[a];
    const T r = xr[L + k], i = xi[L + k];
    xr[L + k] = r * er - i * ei;
    xi[L + k] = r * ei + i * er;
  }
}

/// Rotates degree L of (re, im) to z, in place.
template <int L, int P, class T>
WHAM_FMM_HD inline void rotate_degree_to_z(T* re, T* im, const T (&ar)[P + 1],
                                           const T (&ai)[P + 1], const T (&br)[P + 1],
                                           const T (&bi)[P + 1]) {
  T xr[2 * L + 1], xi[2 * L + 1];
WHAM_FMM_UNROLL
  for (int k = 0; k < 2 * L + 1; ++k) {
    xr[k] = re[L * L + k];
    xi[k] = im[L * L + k];
  }
  apply_phase<L, P, false>(xr, xi, ar, ai);
  apply_swap<L, true>(xr, xi);
  apply_phase<L, P, false>(xr, xi, br, bi);
  apply_swap<L, true>(xr, xi);
WHAM_FMM_UNROLL
  for (int k = 0; k < 2 * L + 1; ++k) {
    re[L * L + k] = xr[k];
    im[L * L + k] = xi[k];
  }
}

/// Rotates degree L of (re, im) back from z, in place: Dz(-alpha) B Dz(-beta) B.
template <int L, int P, class T>
WHAM_FMM_HD inline void rotate_degree_back(T* re, T* im, const T (&ar)[P + 1],
                                           const T (&ai)[P + 1], const T (&br)[P + 1],
                                           const T (&bi)[P + 1]) {
  T xr[2 * L + 1], xi[2 * L + 1];
WHAM_FMM_UNROLL
  for (int k = 0; k < 2 * L + 1; ++k) {
    xr[k] = re[L * L + k];
    xi[k] = im[L * L + k];
  }
  apply_swap<L, false>(xr, xi);
  apply_phase<L, P, true>(xr, xi, br, bi);
  apply_swap<L, false>(xr, xi);
  apply_phase<L, P, true>(xr, xi, ar, ai);
WHAM_FMM_UNROLL
  for (int k = 0; k < 2 * L + 1; ++k) {
    re[L * L + k] = xr[k];
    im[L * L + k] = xi[k];
  }
}

/// Every degree L..P, to z or back.
template <int L, int P, bool Back, class T>
WHAM_FMM_HD inline void rotate_degrees(T* re, T* im, const T (&ar)[P + 1], const T (&ai)[P + 1],
                                       const T (&br)[P + 1], const T (&bi)[P + 1]) {
  if constexpr (L <= P) {
    if constexpr (Back) {
      rotate_degree_back<L, P>(re, im, ar, ai, br, bi);
    } else {
      rotate_degree_to_z<L, P>(re, im, ar, ai, br, bi);
    }
    rotate_degrees<L + 1, P, Back>(re, im, ar, ai, br, bi);
  }
}

/// The M2L of one pair, in place: (re, im) hold the multipole M (index n*n + n + m) on
/// entry and the local L = M2L_P(M, delta) on return; `rd` is make_rotation(delta).
template <int P, class T>
WHAM_FMM_HD inline void m2l_pair(const rotation<T>& rd, T (&re)[(P + 1) * (P + 1)],
                                 T (&im)[(P + 1) * (P + 1)]) {
  constexpr int C = (P + 1) * (P + 1);
  T ar[P + 1], ai[P + 1], br[P + 1], bi[P + 1];
  powers<P>(rd.ea_re, rd.ea_im, ar, ai);
  powers<P>(rd.eb_re, rd.eb_im, br, bi);
  rotate_degrees<0, P, false>(re, im, ar, ai, br, bi);

  // z-translation, scaled: M_rot[k] *= r^{-(k+1)}; L_z[n,m] = (-1)^m sum_k (n+k)! M_rot[k,m];
  // L_z[n] *= r^{-n}.
  T inv_rp[P + 2];
  inv_rp[0] = T(1);
WHAM_FMM_UNROLL
  for (int k = 1; k <= P + 1; ++k) inv_rp[k] = inv_rp[k - 1] * rd.inv_r;
WHAM_FMM_UNROLL
  for (int k = 0; k <= P; ++k) {
WHAM_FMM_UNROLL
    for (int m = -k; m <= k; ++m) {
      re[k * k + k + m] *= inv_rp[k + 1];
      im[k * k + k + m] *= inv_rp[k + 1];
    }
  }
  const T* fact = swap_constants<T>().factorial;
  T lr[C], li[C];
WHAM_FMM_UNROLL
  for (int n = 0; n <= P; ++n) {
WHAM_FMM_UNROLL
    for (int m = -n; m <= n; ++m) {
      const int am = m < 0 ? -m : m;
      T sr = T(0), si = T(0);
WHAM_FMM_UNROLL
      for (int k = am; k <= P - n; ++k) {
        const T f = fact[n + k];
        sr += f * re[k * k + k + m];
        si += f * im[k * k + k + m];
      }
      const T s = (am & 1) ? -inv_rp[n] : inv_rp[n];
      lr[n * n + n + m] = s * sr;
      li[n * n + n + m] = s * si;
    }
  }
  rotate_degrees<0, P, true>(lr, li, ar, ai, br, bi);
WHAM_FMM_UNROLL
  for (int c = 0; c < C; ++c) {
    re[c] = lr[c];
    im[c] = li[c];
  }
}

}  // namespace wham::detail::fmm
