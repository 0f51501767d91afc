/// \file wham/detail/iqp/phase.cuh
/// \brief The IQP input policy of the Walsh-Hadamard family: generates
/// exp(i theta(x)) on chip for E contiguous basis states of one sample.
///
/// Works for any segment split of a row (fused rows, Kronecker segments, the
/// baseline's fill): from the flat index g0 it takes sample = g0 >> n and
/// x0 = g0 & (2^n - 1). The phases are formed in double, whatever the parameter
/// and output types, so complex64 keeps its tolerance at |theta| of thousands.
///
/// Cost per thread of E elements (x = x0 | l, l < E = 2^L, x0 a multiple of E):
///   theta(x0) and the effective fields f_i = a_i + sum_{j >= L, x0_j = 1} J_ij of the
///   L low qubits: O(n * popcount(x0)) adds, once per thread;
///   theta(x0 | l) = theta(x0) + sum_{i in l} (f_i + sum_{k < i, k in l} J_ki): a few
///   adds per element (the bit tests fold at compile time);
/// then one sine/cosine per element (double for complex128; for complex64 the
/// argument is reduced modulo 2 pi in double and the fast single-precision
/// intrinsic used, max abs error ~4e-7 on [-pi, pi]).
#pragma once

#include <wham/detail/wht/common.cuh>

#include <cuda/std/complex>
#include <cuda/std/type_traits>

#include <cstdint>
#include <cstring>

namespace wham::detail::iqp {

/// sin and cos of theta in double: reduction by the nearest multiple of pi/2 (two
/// fma steps: pi/2 in two doubles), then Taylor polynomials on [-pi/4, pi/4]
/// (the first omitted terms are below 1e-16 relative): about 22 FP64 operations,
/// cheaper than the general sincos(), whose cost the stores could not hide.
/// Valid for |theta| < 2^50 (beyond, the phase itself has lost every digit).
__host__ __device__ __forceinline__ void sincos_reduced(double theta, double* s, double* c) {
  constexpr double two_over_pi = 0.63661977236758134307553505349006;
  constexpr double pio2_hi = 1.5707963267948966;       // pi/2 rounded to double
  constexpr double pio2_lo = 6.123233995736766e-17;    // pi/2 - pio2_hi
  // Round to nearest by the 1.5 * 2^52 shifter: two FP64 operations instead of a
  // conversion-pipe rint; the quadrant is the shifted value's low mantissa bits.
  constexpr double shifter = 6755399441055744.0;
  const double shifted = fma(theta, two_over_pi, shifter);
  const double q = shifted - shifter;
  double r = fma(-q, pio2_hi, theta);
  r = fma(-q, pio2_lo, r);
  const double r2 = r * r;
  // sin r = r + r^3 (-1/3! + r^2 / 5! - ... - r^12 / 15!)
  double ps = -7.647163731819816e-13;
  ps = fma(ps, r2, 1.6059043836821613e-10);
  ps = fma(ps, r2, -2.505210838544172e-08);
  ps = fma(ps, r2, 2.7557319223985893e-06);
  ps = fma(ps, r2, -0.0001984126984126984);
  ps = fma(ps, r2, 0.008333333333333333);
  ps = fma(ps, r2, -0.16666666666666666);
  const double sr = fma(r * r2, ps, r);
  // cos r = 1 + r^2 (-1/2! + r^2 / 4! - ... + r^14 / 16!)
  double pc = 4.779477332387385e-14;
  pc = fma(pc, r2, -1.1470745597729725e-11);
  pc = fma(pc, r2, 2.08767569878681e-09);
  pc = fma(pc, r2, -2.755731922398589e-07);
  pc = fma(pc, r2, 2.48015873015873e-05);
  pc = fma(pc, r2, -0.001388888888888889);
  pc = fma(pc, r2, 0.041666666666666664);
  pc = fma(pc, r2, -0.5);
  const double cr = fma(r2, pc, 1.0);
  std::uint64_t bits;
  memcpy(&bits, &shifted, sizeof bits);
  const unsigned quadrant = static_cast<unsigned>(bits) & 3u;
  const double s_abs = (quadrant & 1u) ? cr : sr;
  const double c_abs = (quadrant & 1u) ? sr : cr;
  *s = (quadrant & 2u) ? -s_abs : s_abs;
  *c = ((quadrant + 1u) & 2u) ? -c_abs : c_abs;
}

/// exp(i theta) as the complex value type V (complex<float> or complex<double>).
template <class V>
__device__ __forceinline__ V unit_phase(double theta) {
  using R = wht::real_t<V>;
  if constexpr (cuda::std::is_same_v<R, double>) {
    double s, c;
    sincos_reduced(theta, &s, &c);
    return V(c, s);
  } else {
    constexpr double two_pi = 6.283185307179586476925286766559;
    constexpr double inv_two_pi = 0.15915494309189533576888376337251;
    constexpr double shifter = 6755399441055744.0;  // 1.5 * 2^52: round to nearest
    const double k = fma(theta, inv_two_pi, shifter) - shifter;
    const float r = static_cast<float>(fma(-k, two_pi, theta));
    float s, c;
    __sincosf(r, &s, &c);
    return V(c, s);
  }
}

/// Input policy: E contiguous amplitudes exp(i theta(x)) of one sample.
///   params      row-major [batch][per_sample], float or double
///   n           qubits (row length 2^n)
///   per_sample  n (iqp_z) or n + n(n-1)/2 (iqp)
template <class P, class V>
struct phase_input {
  static_assert(wht::is_complex_v<V>, "IQP amplitudes are complex");
  const P* params;
  std::int64_t per_sample;
  int n;
  bool pairs;

  /// Offset of J(i, j), i < j, is row(i) + j.
  __device__ __forceinline__ int pair_row(int i) const {
    return n + i * n - (i * (i + 1)) / 2 - i - 1;
  }

  __device__ __forceinline__ double phase_slow(const P* p, unsigned x) const {
    double theta = 0.0;
    for (int i = 0; i < n; ++i) {
      if (((x >> i) & 1u) == 0) continue;
      theta += double(p[i]);
      if (!pairs) continue;
      const int row = pair_row(i);
      for (int j = i + 1; j < n; ++j) {
        if ((x >> j) & 1u) theta += double(p[row + j]);
      }
    }
    return theta;
  }

  template <int E>
  __device__ __forceinline__ void load(std::int64_t g0, V (&v)[E]) const {
    constexpr int L = wht::ilog2(E);
    if (L > n) {  // E spans several samples: never on wham's own schedules
#pragma unroll
      for (int j = 0; j < E; ++j) {
        const std::int64_t g = g0 + j;
        const P* p = params + (g >> n) * per_sample;
        v[j] = unit_phase<V>(phase_slow(p, static_cast<unsigned>(g & ((std::int64_t(1) << n) - 1))));
      }
      return;
    }
    const std::int64_t sample = g0 >> n;
    const unsigned x0 = static_cast<unsigned>(g0 & ((std::int64_t(1) << n) - 1));
    const P* p = params + sample * per_sample;

    // theta(x0) and the fields of the low qubits, over the set high bits of x0.
    double base = 0.0;
    double f[L > 0 ? L : 1];
#pragma unroll
    for (int i = 0; i < L; ++i) f[i] = double(p[i]);
    for (unsigned rest = x0; rest != 0; rest &= rest - 1) {
      const int j = __ffs(static_cast<int>(rest)) - 1;
      base += double(p[j]);
      if (pairs) {
#pragma unroll
        for (int i = 0; i < L; ++i) f[i] += double(p[pair_row(i) + j]);
        for (unsigned below = x0 & ((1u << j) - 1u); below != 0; below &= below - 1) {
          const int k = __ffs(static_cast<int>(below)) - 1;
          base += double(p[pair_row(k) + j]);
        }
      }
    }
    // Couplings among the low qubits (the same for every thread of a sample).
    double jl[L > 1 ? L : 1][L > 1 ? L : 1];
#pragma unroll
    for (int i = 0; i < L; ++i) {
#pragma unroll
      for (int k = 0; k < i; ++k) jl[k][i] = pairs ? double(p[pair_row(k) + i]) : 0.0;
    }
    // theta(x0 | l) = theta(x0) + sum_{i in l} (f_i + sum_{k < i, k in l} J_ki): the
    // bit tests fold at compile time, so each element costs popcount(l) + pairs(l) adds.
#pragma unroll
    for (int l = 0; l < E; ++l) {
      double th = base;
#pragma unroll
      for (int i = 0; i < L; ++i) {
        if ((l >> i) & 1) {
          th += f[i];
#pragma unroll
          for (int k = 0; k < i; ++k) {
            if ((l >> k) & 1) th += jl[k][i];
          }
        }
      }
      v[l] = unit_phase<V>(th);
    }
  }
};

}  // namespace wham::detail::iqp
