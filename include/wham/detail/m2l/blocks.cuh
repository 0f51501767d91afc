/// \file wham/detail/m2l/blocks.cuh
/// \brief Device building blocks of the factorised complex M2L
/// (docs/specs/m2l.md), reusable by other M2L forms (accumulate, class).
///
/// API (T = float or double; P = order, compile time; everything __host__ __device__
/// __forceinline__, so the blocks run, and are tested, on the host too):
///
///   cpx<T>                      {re, im}, layout of cuda::std::complex<T>
///   direction<P, T>             ea[m] = e^{i m alpha}, eb[m] = e^{i m beta}, m = 0..P
///   make_direction<P>(x, y, z)  from delta, no trigonometry (rho = 0 gives alpha = 0)
///   angles<T>, make_angles      e^{i alpha}, e^{i beta} alone; the rotations below also
///                               take them and make the powers on the way (fewer registers)
///   inverse_distance(x, y, z)   1 / |delta| (the r-scalings are kept apart from the
///                               direction, so pairs of one direction class share it)
///   rotate_to_z_degree<L>(v, dir)    v[-L..L] (pointer to (L, -L)) <-
///                                    B_L^T Dz(beta) B_L^T Dz(alpha) v, in place
///   z_translate<P>(a, inv_r)         a (whole expansion) <- the z-translation,
///                                    one Hankel block per m, n + k <= P, r^-(k+1) on
///                                    the input and r^-n on the output, in place
///   rotate_from_z_degree<L>(v, dir)  v <- Dz(-alpha) B_L Dz(-beta) B_L v, in place
///   m2l_inplace<P>(a, dir, inv_r)    the whole operator on one expansion, in place
///
/// `v` and `a` are plain pointers: to a local array (then, fully unrolled, the
/// coefficients stay in registers) or to a thread's slot in shared memory. One
/// thread runs one pair; every thread of a warp touches the same table entries
/// at the same time, so the swap matrices and factorials come from __constant__
/// memory by broadcast (tables.cuh). The swap products use the parities of B_l:
/// per row pair (m, -m) one pass over k = 0..L of x_k +- x_{-k}, so a swap costs
/// (L+1)^2 real-by-complex products instead of (2L+1)^2.
///
/// Runtime-order variants for a warp per pair (higher orders) are in warp.cuh
/// (`warp_*`).
#pragma once

#include <wham/detail/m2l/tables.cuh>

#include <cmath>
#include <type_traits>
#include <utility>

// Full unrolling in device code; nothing on the host (g++ knows no `#pragma unroll`).
#if defined(__CUDA_ARCH__)
#define WHAM_M2L_UNROLL _Pragma("unroll")
#else
#define WHAM_M2L_UNROLL
#endif

namespace wham::detail::m2l {

template <class T>
struct alignas(2 * sizeof(T)) cpx {
  T re, im;
};

template <class T>
__host__ __device__ __forceinline__ cpx<T> operator+(cpx<T> a, cpx<T> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class T>
__host__ __device__ __forceinline__ cpx<T> operator-(cpx<T> a, cpx<T> b) {
  return {a.re - b.re, a.im - b.im};
}
template <class T>
__host__ __device__ __forceinline__ cpx<T> operator*(cpx<T> a, cpx<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
/// a * conj(b)
template <class T>
__host__ __device__ __forceinline__ cpx<T> mul_conj(cpx<T> a, cpx<T> b) {
  return {a.re * b.re + a.im * b.im, a.im * b.re - a.re * b.im};
}
template <class T>
__host__ __device__ __forceinline__ cpx<T> scale(cpx<T> a, T s) {
  return {a.re * s, a.im * s};
}
/// acc + s * a
template <class T>
__host__ __device__ __forceinline__ cpx<T> fma(T s, cpx<T> a, cpx<T> acc) {
  return {s * a.re + acc.re, s * a.im + acc.im};
}

/// Calls f(std::integral_constant<int, I>) for I = Begin..End-1.
template <int Begin, int End, class F>
__host__ __device__ __forceinline__ void static_for(F&& f) {
  if constexpr (Begin < End) {
    f(std::integral_constant<int, Begin>{});
    static_for<Begin + 1, End>(std::forward<F>(f));
  }
}

/// Powers of the rotation angles of one direction, m = 0..P.
template <int P, class T>
struct direction {
  cpx<T> ea[P + 1];  ///< e^{i m alpha}, alpha = atan2(x, y) (0 on the z axis)
  cpx<T> eb[P + 1];  ///< e^{i m beta},  beta = atan2(-rho, z)
};

/// The rotation angles of one direction, unpowered: e^{i alpha}, e^{i beta}.
template <class T>
struct angles {
  cpx<T> ea, eb;
};

/// e^{i alpha} = (y + i x) / rho, e^{i beta} = (z - i rho) / r. delta = 0 or a
/// non-finite delta gives non-finite values.
template <class T>
__host__ __device__ __forceinline__ angles<T> make_angles(T x, T y, T z) {
  using std::sqrt;
  const T rho2 = x * x + y * y;
  const T rho = sqrt(rho2);
  const T inv_r = T(1) / sqrt(rho2 + z * z);
  cpx<T> ea{T(1), T(0)};
  if (rho > T(0)) {
    const T inv_rho = T(1) / rho;
    ea = {y * inv_rho, x * inv_rho};
  }
  return {ea, cpx<T>{z * inv_r, -rho * inv_r}};
}

/// The angles and their powers by complex multiplication (m = 1 is the angle itself,
/// bit for bit, as in dz_powers_inplace).
template <int P, class T>
__host__ __device__ __forceinline__ direction<P, T> make_direction(T x, T y, T z) {
  const angles<T> a = make_angles(x, y, z);
  direction<P, T> d;
  d.ea[0] = {T(1), T(0)};
  d.eb[0] = {T(1), T(0)};
  if constexpr (P >= 1) {
    d.ea[1] = a.ea;
    d.eb[1] = a.eb;
  }
  WHAM_M2L_UNROLL
  for (int m = 2; m <= P; ++m) {
    d.ea[m] = d.ea[m - 1] * a.ea;
    d.eb[m] = d.eb[m - 1] * a.eb;
  }
  return d;
}

template <class T>
__host__ __device__ __forceinline__ T inverse_distance(T x, T y, T z) {
  using std::sqrt;
  return T(1) / sqrt(x * x + y * y + z * z);
}

/// What swap_store applies to a row pair on its way out.
enum class swap_post { none, dz, dz_conj };

/// dst[-L..L] <- Post(A v), A = B_L (Transpose = false) or B_L^T (true); Post: nothing,
/// Dz(e) (dst[m] *= e^{i m a}, e = e^{i a}) or Dz(conj e), then times `s` when
/// Scale. v (registers) is consumed (overwritten with its folded form); dst is
/// written once per coefficient, so the result needs no second array of registers
/// (dst may be v's own slot in shared memory). The powers of e come by the
/// recurrence of make_direction (the same bits as dz_powers_inplace).
template <int L, bool Transpose, swap_post Post, bool Scale, class T>
__host__ __device__ __forceinline__ void swap_store(cpx<T>* v, cpx<T>* dst, cpx<T> e, T s) {
  const swap_table<T>& tab = swap_constants<T>();
  constexpr int off = swap_offset(L);
  WHAM_M2L_UNROLL
  for (int k = 1; k <= L; ++k) {  // fold in place: v[L+k] = x_k + x_-k, v[L-k] = x_k - x_-k
    const cpx<T> a = v[L + k], b = v[L - k];
    v[L + k] = a + b;
    v[L - k] = a - b;
  }
  cpx<T> pw{T(1), T(0)};
  WHAM_M2L_UNROLL
  for (int m = 0; m <= L; ++m) {
    cpx<T> E{T(0), T(0)}, O{T(0), T(0)};
    WHAM_M2L_UNROLL
    for (int k = 0; k <= L; ++k) {
      const bool zero = (k == 0 && ((L + m) & 1)) || (m == 0 && ((L + k) & 1));
      if (!zero) {
        const T b = Transpose ? tab.b[off + k * (L + 1) + m] : tab.b[off + m * (L + 1) + k];
        const cpx<T> c = k == 0 ? v[L] : (((L + m) & 1) ? v[L - k] : v[L + k]);
        if (k & 1) {
          O = fma(b, c, O);
        } else {
          E = fma(b, c, E);
        }
      }
    }
    cpx<T> yp = E + O, yn = (L & 1) ? O - E : E - O;
    if constexpr (Post != swap_post::none) {
      if (m > 0) {
        pw = m == 1 ? e : pw * e;
        if constexpr (Post == swap_post::dz) {
          yp = yp * pw;
          yn = mul_conj(yn, pw);
        } else {
          yp = mul_conj(yp, pw);
          yn = yn * pw;
        }
      }
    }
    if constexpr (Scale) {
      yp = scale(yp, s);
      yn = scale(yn, s);
    }
    dst[L + m] = yp;
    if (m > 0) dst[L - m] = yn;
  }
}

/// v[-L..L] <- A v with A = B_L (Transpose = false) or B_L^T (true); v points to m = -L.
/// swap_store from a copy (the result overwrites what the rows still read).
template <int L, bool Transpose, class T>
__host__ __device__ __forceinline__ void swap_inplace(cpx<T>* v) {
  cpx<T> f[2 * L + 1];
  WHAM_M2L_UNROLL
  for (int i = 0; i < 2 * L + 1; ++i) f[i] = v[i];
  swap_store<L, Transpose, swap_post::none, false>(f, v, cpx<T>{T(1), T(0)}, T(1));
}

/// v[m] *= e^{i m a} (Conj = false) or e^{-i m a} (true), m = -L..L; pw = powers, m >= 0.
template <int L, bool Conj, class T>
__host__ __device__ __forceinline__ void dz_inplace(cpx<T>* v, const cpx<T>* pw) {
  WHAM_M2L_UNROLL
  for (int m = 1; m <= L; ++m) {
    if (Conj) {
      v[L + m] = mul_conj(v[L + m], pw[m]);
      v[L - m] = v[L - m] * pw[m];
    } else {
      v[L + m] = v[L + m] * pw[m];
      v[L - m] = mul_conj(v[L - m], pw[m]);
    }
  }
}

/// dz_inplace with the powers made on the way (e, e^2, ... by the recurrence of
/// make_direction, so the same bits): two registers instead of a table of L + 1.
template <int L, bool Conj, class T>
__host__ __device__ __forceinline__ void dz_powers_inplace(cpx<T>* v, cpx<T> e) {
  cpx<T> pw = e;
  WHAM_M2L_UNROLL
  for (int m = 1; m <= L; ++m) {
    if (m > 1) pw = pw * e;
    if (Conj) {
      v[L + m] = mul_conj(v[L + m], pw);
      v[L - m] = v[L - m] * pw;
    } else {
      v[L + m] = v[L + m] * pw;
      v[L - m] = mul_conj(v[L - m], pw);
    }
  }
}

/// rotate_to_z_degree / rotate_from_z_degree from the unpowered angles.
template <int L, class T>
__host__ __device__ __forceinline__ void rotate_to_z_degree(cpx<T>* v, const angles<T>& a) {
  dz_powers_inplace<L, false>(v, a.ea);
  swap_inplace<L, true>(v);
  dz_powers_inplace<L, false>(v, a.eb);
  swap_inplace<L, true>(v);
}

template <int L, class T>
__host__ __device__ __forceinline__ void rotate_from_z_degree(cpx<T>* v, const angles<T>& a) {
  swap_inplace<L, false>(v);
  dz_powers_inplace<L, true>(v, a.eb);
  swap_inplace<L, false>(v);
  dz_powers_inplace<L, true>(v, a.ea);
}

template <int L, int P, class T>
__host__ __device__ __forceinline__ void rotate_to_z_degree(cpx<T>* v, const direction<P, T>& dir) {
  static_assert(L <= P, "degree beyond the direction's order");
  dz_inplace<L, false>(v, dir.ea);
  swap_inplace<L, true>(v);
  dz_inplace<L, false>(v, dir.eb);
  swap_inplace<L, true>(v);
}

template <int L, int P, class T>
__host__ __device__ __forceinline__ void rotate_from_z_degree(cpx<T>* v,
                                                              const direction<P, T>& dir) {
  static_assert(L <= P, "degree beyond the direction's order");
  swap_inplace<L, false>(v);
  dz_inplace<L, true>(v, dir.eb);
  swap_inplace<L, false>(v);
  dz_inplace<L, true>(v, dir.ea);
}

/// a[n, m] <- (-1)^m r^-n sum_{k=|m|}^{P-n} (n+k)! r^-(k+1) a[k, m]; zero for n > P - |m|.
template <int P, class T>
__host__ __device__ __forceinline__ void z_translate(cpx<T>* a, T inv_r) {
  const swap_table<T>& tab = swap_constants<T>();
  T ir[P + 2];
  ir[0] = T(1);
  WHAM_M2L_UNROLL
  for (int j = 1; j <= P + 1; ++j) ir[j] = ir[j - 1] * inv_r;
  WHAM_M2L_UNROLL
  for (int m = -P; m <= P; ++m) {
    const int am = m < 0 ? -m : m;
    cpx<T> t[P + 1];
    WHAM_M2L_UNROLL
    for (int k = am; k <= P - am; ++k) t[k] = scale(a[k * k + k + m], ir[k + 1]);
    WHAM_M2L_UNROLL
    for (int n = am; n <= P; ++n) {
      cpx<T> acc{T(0), T(0)};
      WHAM_M2L_UNROLL
      for (int k = am; k <= P - n; ++k) acc = fma(tab.fact[n + k], t[k], acc);
      a[n * n + n + m] = scale(acc, (m & 1) ? -ir[n] : ir[n]);
    }
  }
}

/// The whole factorised M2L on one expansion of order P, in place.
template <int P, class T>
__host__ __device__ __forceinline__ void m2l_inplace(cpx<T>* a, const direction<P, T>& dir,
                                                     T inv_r) {
  static_for<0, P + 1>([&](auto Lc) {
    constexpr int L = decltype(Lc)::value;
    rotate_to_z_degree<L>(a + L * L, dir);
  });
  z_translate<P>(a, inv_r);
  static_for<0, P + 1>([&](auto Lc) {
    constexpr int L = decltype(Lc)::value;
    rotate_from_z_degree<L>(a + L * L, dir);
  });
}

/// Real flops of m2l_inplace per pair (the figure the benchmark's GFLOP/s uses):
/// per degree L, four swaps of 2 x 2 (L+1)^2 (products; structural zeros counted)
/// plus 8L for x_k +- x_{-k} and E +- O, two Dz of 2L complex products (6 flops);
/// the z-translation 4 flops per Hankel term, 2 per input and output scaling.
inline constexpr double flops_per_pair(int p) {
  double f = 0.0;
  for (int L = 0; L <= p; ++L) f += 4.0 * (4.0 * (L + 1) * (L + 1) + 8.0 * L) + 2.0 * 12.0 * L;
  for (int m = -p; m <= p; ++m) {
    const int am = m < 0 ? -m : m;
    for (int n = am; n <= p - am; ++n) f += 4.0 * (p - n - am + 1) + 4.0;
  }
  return f;
}

}  // namespace wham::detail::m2l
