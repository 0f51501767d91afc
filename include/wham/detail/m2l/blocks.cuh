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
///   geometry<T>, make_geometry  e^{i alpha}, e^{i beta} and 1 / |delta| together; every
///                               M2L form takes its geometry from here (or make_unit)
///   unit<T>, make_unit          delta / |delta| and 1 / |delta| (the singular harmonics)
///
/// No square of a component of delta is formed unscaled: x, y, z are scaled by exact
/// powers of two first, as hypot does, so the geometry is right to rounding for every
/// finite delta != 0 whose 1 / |delta| is a normal number, however far from 1 or how
/// close to an axis (docs/specs/m2l.md, "Range of |delta|").
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

#include <cuda/std/bit>

#include <cmath>
#include <cstdint>
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

/// An exact scale for v >= 0: down = 2^-k, up = 2^k, with v * down in [1, 2) when v is
/// normal (k clamped so that both are normal: a subnormal v maps below 1, a huge one to
/// [2, 4), inf and NaN stay what they are). Bit arithmetic on the exponent: a
/// multiplication by it never rounds, unlike one by 1 / v.
template <class T>
struct pow2_scale {
  T down, up;
};

template <class T>
__host__ __device__ __forceinline__ pow2_scale<T> make_pow2_scale(T v) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "float or double");
  using U = std::conditional_t<std::is_same_v<T, double>, std::uint64_t, std::uint32_t>;
  constexpr int mant = std::is_same_v<T, double> ? 52 : 23;
  constexpr int top = std::is_same_v<T, double> ? 2046 : 254;  // largest biased exponent
  const int e = int(cuda::std::bit_cast<U>(v) >> mant);        // v >= 0: no sign bit
  int b = top - e;                                             // 2^-k biased: top - e
  b = b < 1 ? 1 : (b > top - 1 ? top - 1 : b);
  return {cuda::std::bit_cast<T>(U(b) << mant), cuda::std::bit_cast<T>(U(top - b) << mant)};
}

/// delta / |delta| and 1 / |delta|.
template <class T>
struct unit {
  T x, y, z, inv_r;
};

/// The unit vector by the exact scale of (x, y, z) (make_geometry's); a component far
/// below |delta| may come out subnormal or 0, where it is negligible. delta = 0 or a
/// non-finite delta gives non-finite values.
template <class T>
__host__ __device__ __forceinline__ unit<T> make_unit(T x, T y, T z) {
  using std::fabs;
  using std::fmax;
  using std::sqrt;
  const pow2_scale<T> s = make_pow2_scale(fmax(fmax(fabs(x), fabs(y)), fabs(z)));
  const T xs = x * s.down, ys = y * s.down, zs = z * s.down;
  const T inv = T(1) / sqrt(xs * xs + ys * ys + zs * zs);
  return {xs * inv, ys * inv, zs * inv, inv * s.down};
}

/// The geometry of one displacement, as the rotations and the z-translation take it.
template <class T>
struct geometry {
  cpx<T> ea;  ///< e^{i alpha} = (y + i x) / rho, 1 when rho = 0
  cpx<T> eb;  ///< e^{i beta} = (z - i rho) / r
  T inv_r;    ///< 1 / r
};

/// e^{i alpha} by the scale of (x, y) alone, so that it is a unit to rounding however
/// close delta is to the z axis (a 5% error in |e^{i alpha}| grows to (1.05)^(2m) in
/// the order-m coefficients); e^{i beta} and 1 / r by the scale of (x, y, z). delta = 0
/// or a non-finite delta gives non-finite values (NaN in x or y a NaN e^{i alpha}).
template <class T>
__host__ __device__ __forceinline__ geometry<T> make_geometry(T x, T y, T z) {
  using std::fabs;
  using std::fmax;
  using std::sqrt;
  const T t = fmax(fabs(x), fabs(y));
  const pow2_scale<T> st = make_pow2_scale(t), sr = make_pow2_scale(fmax(t, fabs(z)));
  const T xt = x * st.down, yt = y * st.down;
  const T q = sqrt(xt * xt + yt * yt);  // rho 2^-kt
  const T xs = x * sr.down, ys = y * sr.down, zs = z * sr.down;
  const T inv = T(1) / sqrt(xs * xs + ys * ys + zs * zs);  // 2^kr / r
  geometry<T> g;
  g.ea = {T(1), T(0)};
  if (q != T(0)) {  // NaN passes
    const T inv_q = T(1) / q;
    g.ea = {yt * inv_q, xt * inv_q};
  }
  g.eb = {zs * inv, -(q * (st.up * sr.down)) * inv};  // rho 2^-kr: 0 where negligible
  g.inv_r = inv * sr.down;
  return g;
}

/// e^{i alpha}, e^{i beta} of make_geometry.
template <class T>
__host__ __device__ __forceinline__ angles<T> make_angles(T x, T y, T z) {
  const geometry<T> g = make_geometry(x, y, z);
  return {g.ea, g.eb};
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

/// 1 / |delta| of make_unit.
template <class T>
__host__ __device__ __forceinline__ T inverse_distance(T x, T y, T z) {
  return make_unit(x, y, z).inv_r;
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
