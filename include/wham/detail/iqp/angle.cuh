/// \file wham/detail/iqp/angle.cuh
/// \brief Sines and cosines of the IQP phases' angles: the fast reduction (sincos_reduced)
/// and its range, and the exact reduction of any double (reduce_exact) for the rare angles
/// beyond it. Host and device: the host tests check them against the C library.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace wham::detail::iqp {

/// Largest |theta| sincos_reduced reduces exactly: its shifter rounds theta * 2/pi to an
/// integer below 2^51 only (|theta| < 3.5e15); 2^51 radians keeps a margin.
inline constexpr double fast_reduction_limit = 2251799813685248.0;  // 2^51

/// Largest |theta| the complex64 per-element phase reduces by 2 pi in one double: the
/// reduction's error, |theta| / 2 pi * 2.4e-16 (2 pi in one double), stays below 1e-8.
inline constexpr double float_reduction_limit = 268435456.0;  // 2^28

/// The high 64 bits of a * b.
__host__ __device__ __forceinline__ std::uint64_t mul_hi(std::uint64_t a, std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}

/// 64 bits of 2/pi from bit i on (-64 < i <= 1215) of the string 0 0 t_1 t_2 ..., where
/// 2/pi = sum_k t_k 2^-k: the two leading zeros make bit i weigh 2^(1 - i); bits before
/// the string are zeros.
__host__ __device__ __forceinline__ std::uint64_t two_over_pi_bits(int i) {
  static constexpr std::uint64_t word[20] = {
      0x28be60db9391054aull, 0x7f09d5f47d4d3770ull, 0x36d8a5664f10e410ull, 0x7f9458eaf7aef158ull,
      0x6dc91b8e909374b8ull, 0x01924bba82746487ull, 0x3f877ac72c4a69cfull, 0xba208d7d4baed121ull,
      0x3a671c09ad17df90ull, 0x4e64758e60d4ce7dull, 0x272117e2ef7e4a0eull, 0xc7fe25fff7816603ull,
      0xfbcbc462d6829b47ull, 0xdb4d9fb3c9f2c26dull, 0xd3d18fd9a797fa8bull, 0x5d49eeb1faf97c5eull,
      0xcf41ce7de294a4baull, 0x9afed7ec47e35742ull, 0x1580cc11bf1edaeaull, 0xfc33ef0826bd0d87ull};
  if (i < 0) return word[0] >> -i;
  const int w = i >> 6, b = i & 63;
  return b == 0 ? word[w] : (word[w] << b) | (word[w + 1] >> (64 - b));
}

/// theta - 2 pi k, k the nearest integer, for any double of magnitude at least 2^-11,
/// within 5e-16 rad: theta = M 2^e with an integer M < 2^53, so theta * 2/pi mod 4 needs
/// only 2/pi's bits from weight 2^(1 - e) on (those above give multiples of 4), and 128 of
/// them leave an error below 2^-70 (Payne and Hanek). The remainder is wanted to an
/// absolute 2^-53 only (it is an angle of at most pi), so the product's top 64 bits
/// suffice. Infinities and NaN give NaN. Inline, with no call: a call's conventions cost
/// the phase kernels up to 47 registers (sm_90 ptxas, bench_iqp's kernels), though the
/// branch is never taken.
__host__ __device__ __forceinline__ double reduce_exact(double theta) {
  std::uint64_t bits;
  memcpy(&bits, &theta, sizeof bits);
  const int exponent = static_cast<int>((bits >> 52) & 0x7ff);
  if (exponent == 0x7ff) return theta - theta;  // NaN for infinities and NaN
  const std::uint64_t m = (bits & ((std::uint64_t(1) << 52) - 1)) | (std::uint64_t(1) << 52);
  const int first = exponent - 1075;  // e: the bit of weight 2 in (2/pi) 2^e (> -64)
  const std::uint64_t w0 = two_over_pi_bits(first);
  const std::uint64_t w1 = two_over_pi_bits(first + 64);
  // theta * 2/pi mod 4 = (m * (w0 w1) mod 2^128) / 2^126: two bits of quadrant, then the
  // fraction of a quadrant.
  const std::uint64_t low = m * w1;
  const std::uint64_t top = m * w0 + mul_hi(m, w1);
  int quadrant = static_cast<int>(top >> 62);
  double fraction = static_cast<double>((top << 2) | (low >> 62)) * 0x1p-64;
  if (fraction >= 0.5) {  // to the nearest quadrant
    fraction -= 1.0;
    ++quadrant;
  }
  // fraction * pi/2 + quadrant * pi/2, quadrant mod 4 taken as -1, 0, 1 or 2: within
  // (-3 pi/4, 5 pi/4].
  constexpr double pio2_hi = 1.5707963267948966;     // pi/2 rounded to double
  constexpr double pio2_lo = 6.123233995736766e-17;  // pi/2 - pio2_hi
  const double q = static_cast<double>(((quadrant + 1) & 3) - 1);
  const double reduced = fma(q, pio2_hi, fma(q + fraction, pio2_lo, fraction * pio2_hi));
  return (bits >> 63) != 0 ? -reduced : reduced;
}

/// theta itself where |theta| <= limit (>= 2^-11) or NaN, else reduce_exact(theta).
__host__ __device__ __forceinline__ double within(double theta, double limit) {
  return fabs(theta) > limit ? reduce_exact(theta) : theta;
}

/// Replaces every angle of `a` above pi by its remainder (reduce_exact), for a thread whose
/// angles, rare, could exceed unit_phase's range (the caller checks). The loop runs over a
/// copy in local memory, once in the code: the registers that hold `a` stay as they were.
template <int N>
__device__ __forceinline__ void reduce_all(double (&a)[N]) {
  double copy[N];
#pragma unroll
  for (int i = 0; i < N; ++i) copy[i] = a[i];
#pragma unroll 1
  for (int i = 0; i < N; ++i) {
    if (fabs(copy[i]) > 3.2) copy[i] = reduce_exact(copy[i]);
  }
#pragma unroll
  for (int i = 0; i < N; ++i) a[i] = copy[i];
}

/// sin and cos of theta in double: reduction by the nearest multiple of pi/2 (two
/// fma steps: pi/2 in two doubles), then Taylor polynomials on [-pi/4, pi/4]
/// (the first omitted terms are below 1e-16 relative): about 22 FP64 operations,
/// cheaper than the general sincos(), whose cost the stores could not hide.
/// Exact for |theta| <= fast_reduction_limit; callers bound their angles (within,
/// reduce_all).
__host__ __device__ __forceinline__ void sincos_reduced(double theta, double* s, double* c) {
  constexpr double two_over_pi = 0.63661977236758134307553505349006;
  constexpr double pio2_hi = 1.5707963267948966;     // pi/2 rounded to double
  constexpr double pio2_lo = 6.123233995736766e-17;  // pi/2 - pio2_hi
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
  const unsigned quadrant = static_cast<unsigned>(bits);
  const double s_abs = (quadrant & 1u) ? cr : sr;
  const double c_abs = (quadrant & 1u) ? sr : cr;
  // Signs by flipping the sign bit (an integer XOR of the high word) instead of a
  // negation on the FP64 pipe and a select of both halves: sin is negative in
  // quadrants 2, 3, cos in 1, 2 (SASS of the complex128 n = 10
  // fused kernel: 32 fewer instructions a thread of 16 amplitudes, of about 1300).
  std::uint64_t s_bits, c_bits;
  memcpy(&s_bits, &s_abs, sizeof s_bits);
  memcpy(&c_bits, &c_abs, sizeof c_bits);
  s_bits ^= std::uint64_t(quadrant & 2u) << 62;
  c_bits ^= std::uint64_t((quadrant + 1u) & 2u) << 62;
  memcpy(s, &s_bits, sizeof s_bits);
  memcpy(c, &c_bits, sizeof c_bits);
}

}  // namespace wham::detail::iqp
