/// \file wham/detail/iqp/phase.cuh
/// \brief The IQP input policy of the Walsh-Hadamard family: generates
/// exp(i theta(x)) on chip for E contiguous basis states of one sample.
///
/// Works for any segment split of a row (fused rows, Kronecker segments, the
/// baseline's fill): from the flat index g0 it takes sample = g0 >> n and
/// x0 = g0 & (2^n - 1). The phases are formed in double, whatever the parameter
/// and output types, so complex64 keeps its tolerance at |theta| of thousands.
///
/// Two forms (see phase_input): per element (short rows: theta by adds, one
/// sine/cosine an element; cost per thread of E = 2^L elements: O(n popcount(x0))
/// adds once, then popcount(l) + pairs(l) adds and one sine/cosine an element),
/// and by products through per-block tables (the fused and cluster schedules'
/// rows of 32 threads or more: 1 + L sines/cosines a thread, then complex
/// products). Sines and cosines are formed in double (sincos_reduced) for
/// complex128 and for the product form's factors; the per-element complex64 form
/// reduces modulo 2 pi in double and takes the fast single-precision intrinsic
/// (max abs error ~4e-7 on [-pi, pi]).
///
/// Measured (H200, 512 MiB of output, fraction of the write floor, 2026-11-30),
/// per element -> products with the block's parameters read once: complex128
/// n = 10, 12, 13: 0.47, 0.44, 0.32 -> 0.49, 0.47, 0.36; complex64 n = 10, 12, 13:
/// 0.51, 0.42, 0.41 -> 0.49, 0.42, 0.42. The sines and cosines were not the main
/// cost of these schedules (ncu, complex128 n = 12: 16 warps an SM, stalls on
/// block barriers and shared-memory loads ahead of the FP64 pipe).
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
/// Precise (complex64 only): formed in double and rounded, for factors that are
/// multiplied together afterwards (the fast intrinsic's 4e-7 would add up; the
/// accurate sincosf carries a slow path for large arguments, with a stack frame).
template <class V, bool Precise = false>
__device__ __forceinline__ V unit_phase(double theta) {
  using R = wht::real_t<V>;
  if constexpr (cuda::std::is_same_v<R, double> || Precise) {
    double s, c;
    sincos_reduced(theta, &s, &c);
    return V(static_cast<R>(c), static_cast<R>(s));
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

/// a * b with fused multiply-adds (the operator of cuda::std::complex also guards
/// infinities and NaNs, which unit phases never are).
template <class V>
__device__ __forceinline__ V cmul(const V& a, const V& b) {
  using R = wht::real_t<V>;
  if constexpr (cuda::std::is_same_v<R, double>) {
    return V(fma(a.real(), b.real(), -(a.imag() * b.imag())),
             fma(a.real(), b.imag(), a.imag() * b.real()));
  } else {
    return V(fmaf(a.real(), b.real(), -(a.imag() * b.imag())),
             fmaf(a.real(), b.imag(), a.imag() * b.real()));
  }
}

/// Input policy: E contiguous amplitudes exp(i theta(x)) of one sample.
///   params      row-major [batch][per_sample], float or double
///   n           qubits (row length 2^n)
///   per_sample  n (iqp_z) or n + n(n-1)/2 (iqp)
///   batch       samples in params (the block tables never read past them)
///
/// Two ways to make the E = 2^L phases of a thread (x = x0 | l, l < E):
///  - per element (short rows, fewer than 32 threads a sample): theta(x0 | l) by
///    adds, then one sine/cosine per element;
///  - by products (the fused schedules' long rows, through block tables):
///      exp(i theta(x0 | l)) = exp(i theta(x0)) * prod_{i in l} exp(i f_i(x0))
///                             * W(l),   W(l) = exp(i sum_{k < i in l} J_ki),
///    with f_i(x0) = a_i + sum_{j in x0} J_ij. W depends on the sample only, so the
///    block makes it once (2^L sines/cosines a sample) in shared memory, beside
///    the sample's parameters in double (read from memory once, by the block).
///    A thread then does 1 + L sines/cosines and 2^L + (2^L - L - 1) complex
///    products for its 2^L phases: complex128, L = 4: about 15 FP64 operations an
///    amplitude instead of about 26. Each phase is a product of at most
///    L + 2 rounded unit factors: relative error below (L + 2) * 4 eps.
template <class P, class V>
struct phase_input {
  static_assert(wht::is_complex_v<V>, "IQP amplitudes are complex");
  static constexpr bool block_tables = true;
  const P* params;
  std::int64_t per_sample;
  int n;
  bool pairs;
  std::int64_t batch;

  /// Offset of J(i, j), i < j, is row(i) + j.
  __host__ __device__ __forceinline__ int pair_row(int i) const {
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

  // ---- block tables (the product form) -----------------------------------------
  // Layout: a 16-byte header (the block's first sample, the offset of W), the parameters of the
  // block's samples in double (contiguous, per_sample each), then E phases W per
  // sample.
  static constexpr std::size_t table_header = 16;

  /// Whether the schedule's threads of E elements take the product form: every
  /// warp within one sample, so a block holds few samples' tables.
  template <int E>
  __host__ __device__ bool uses_tables() const {
    return n >= wht::ilog2(E) + 5;
  }

  __host__ __device__ std::size_t table_w_offset(std::int64_t samples) const {
    return table_header +
           ((std::size_t(samples) * std::size_t(per_sample) * sizeof(double) + 15) & ~std::size_t(15));
  }

  /// Shared memory for the tables of a block of `elements` contiguous elements
  /// (whole segments, aligned to their length): 0 when not used.
  template <int E>
  std::size_t table_bytes(std::int64_t elements) const {
    if (!uses_tables<E>()) return 0;
    const std::int64_t samples = (elements + (std::int64_t(1) << n) - 1) >> n;
    return table_w_offset(samples) + std::size_t(samples) * E * sizeof(V);
  }

  /// Builds the tables of the samples that elements [g_block, g_block + elements)
  /// touch, with all the block's threads (it synchronises the block inside; the
  /// caller synchronises again before load()). The parameters are read from
  /// global memory once, with independent loads: one memory round trip.
  template <int E>
  __device__ void prepare(unsigned char* tables, std::int64_t g_block, std::int64_t elements,
                          int tid, int threads) const {
    constexpr int L = wht::ilog2(E);
    const std::int64_t s0 = g_block >> n;
    std::int64_t s_end = ((g_block + elements - 1) >> n) + 1;
    if (s_end > batch) s_end = batch;
    const int samples = static_cast<int>(s_end - s0);
    if (tid == 0) {
      reinterpret_cast<std::int64_t*>(tables)[0] = s0;
      reinterpret_cast<std::int64_t*>(tables)[1] = static_cast<std::int64_t>(table_w_offset(samples));
    }
    double* const pd = reinterpret_cast<double*>(tables + table_header);
    const P* const src = params + s0 * per_sample;
    const int count = samples * static_cast<int>(per_sample);
    constexpr int U = 4;
    for (int first = tid; first < count; first += U * threads) {
      double tmp[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int i = first + u * threads;
        tmp[u] = i < count ? double(src[i]) : 0.0;
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int i = first + u * threads;
        if (i < count) pd[i] = tmp[u];
      }
    }
    __syncthreads();
    V* const w = reinterpret_cast<V*>(tables + table_w_offset(samples));
    for (int idx = tid; idx < samples * E; idx += threads) {
      const int s = idx >> L;
      const unsigned l = static_cast<unsigned>(idx & (E - 1));
      const double* p = pd + s * per_sample;
      double theta = 0.0;
      if (pairs) {
#pragma unroll
        for (int k = 0; k < L; ++k) {
          if (((l >> k) & 1u) == 0) continue;
          const int row = pair_row(k);
#pragma unroll
          for (int i = k + 1; i < L; ++i) {
            if ((l >> i) & 1u) theta += p[row + i];
          }
        }
      }
      w[idx] = unit_phase<V, true>(theta);
    }
  }

  /// The product form (see the struct's comment), reading the block tables.
  template <int E>
  __device__ __forceinline__ void load(std::int64_t g0, V (&v)[E],
                                       const unsigned char* tables) const {
    if (tables == nullptr) return load<E>(g0, v);
    constexpr int L = wht::ilog2(E);
    const std::int64_t sample = g0 >> n;
    const unsigned x0 = static_cast<unsigned>(g0 & ((std::int64_t(1) << n) - 1));
    const std::int64_t* header = reinterpret_cast<const std::int64_t*>(tables);
    const int s = static_cast<int>(sample - header[0]);
    const double* p = reinterpret_cast<const double*>(tables + table_header) + s * per_sample;
    const V* w = reinterpret_cast<const V*>(tables + header[1]) + s * E;

    // theta(x0) and the fields f_i of the L low qubits, over the set bits k of x0
    // (all at or above L: x0 is a multiple of E):
    //   theta(x0) = sum_k a_k + sum_{k < j} J_kj,  f_i = a_i + sum_k J_ik.
    double base = 0.0;
    double f[L];
    int row_i[L];
#pragma unroll
    for (int i = 0; i < L; ++i) {
      f[i] = p[i];
      row_i[i] = pair_row(i);
    }
    for (unsigned rest = x0; rest != 0; rest &= rest - 1) {
      const int k = __ffs(static_cast<int>(rest)) - 1;
      base += p[k];
      if (pairs) {
#pragma unroll
        for (int i = 0; i < L; ++i) f[i] += p[row_i[i] + k];
        const int row_k = pair_row(k);
        for (unsigned above = rest & (rest - 1); above != 0; above &= above - 1) {
          base += p[row_k + __ffs(static_cast<int>(above)) - 1];
        }
      }
    }
    V fac[L];
#pragma unroll
    for (int i = 0; i < L; ++i) fac[i] = unit_phase<V, true>(f[i]);
    v[0] = unit_phase<V, true>(base);
#pragma unroll
    for (int l = 1; l < E; ++l) {
      const int top = wht::ilog2(l);  // highest set bit of l: folds at compile time
      v[l] = cmul(v[l - (1 << top)], fac[top]);
    }
    if (pairs) {
#pragma unroll
      for (int l = 3; l < E; ++l) {
        if ((l & (l - 1)) != 0) v[l] = cmul(v[l], w[l]);  // two or more low qubits set
      }
    }
  }

  // ---- per element (no tables) ----------------------------------------------------
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
