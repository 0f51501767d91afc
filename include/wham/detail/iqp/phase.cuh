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
/// and by products through per-warp tables (the fused and cluster schedules'
/// rows of 32 threads or more: 1 + L sines/cosines a thread, then complex
/// products). Sines and cosines are formed in double (sincos_reduced) for
/// complex128 and for the product form's factors; the per-element complex64 form
/// reduces modulo 2 pi in double and takes the fast single-precision intrinsic
/// (max abs error ~4e-7 on [-pi, pi]). Both reductions serve bounded angles only
/// (phase_reduction_limit). Beyond it (rare), angles are reduced exactly (reduce_exact): the
/// product form reduces each parameter beyond term_limit as the warp loads its table, so
/// that no sum of them leaves the range; the per-element form reduces each term of its
/// sums, in a branch the other threads never take.
///
/// The product form with warp tables (not block-wide ones), the sums of theta(x0) split
/// into a warp-uniform loop and unrolled lane bits, and fewer instructions a phase (the
/// last block's spare threads make the last segment's phases instead of branching, lane
/// bits as 0.0 / 1.0 in fmas, quadrant signs by a sign-bit XOR, the row's qubit count
/// compiled in) took the fused kernels from about 0.5 of the write floor to 0.6-0.77
/// (H200: complex128 n = 9 0.56 -> 0.77, 512 MiB, bench_iqp). What is left is the
/// transform's own work, not the sines and cosines.
#pragma once

#include <wham/detail/iqp/angle.cuh>
#include <wham/detail/wht/common.cuh>

#include <cuda/std/complex>
#include <cuda/std/type_traits>

#include <cmath>
#include <cstdint>

namespace wham::detail::iqp {

/// The largest angle unit_phase<V, Precise> takes (sincos_reduced, or complex64's
/// single-step reduction).
template <class V, bool Precise = false>
inline constexpr double phase_reduction_limit =
    cuda::std::is_same_v<wht::real_t<V>, double> || Precise ? fast_reduction_limit
                                                            : float_reduction_limit;

/// Largest |parameter| that enters a sum unreduced: every theta is a sum of at most
/// iqp_num_params(30, iqp) = 465 < 2^9 distinct parameters of one sample, each then below
/// this or reduced to below 4, so no sum exceeds phase_reduction_limit<V, Precise>.
template <class V, bool Precise = false>
inline constexpr double term_limit = phase_reduction_limit<V, Precise> / 512.0;

/// A parameter as it enters the product form's table: itself, or its exact remainder
/// modulo 2 pi beyond term_limit (infinities give NaN; NaN stays NaN). Checking the
/// table's parameters once a warp, instead of each thread's sums, kept the fused kernels
/// of n >= 8 at the registers they had before any check (sm_90 ptxas, complex64 from
/// float parameters: 80, against 86 with the sums checked).
template <class V, bool Precise = false>
__device__ __forceinline__ double term(double a) {
  return within(a, term_limit<V, Precise>);
}

/// exp(i theta) as the complex value type V (complex<float> or complex<double>), for
/// |theta| <= phase_reduction_limit<V, Precise>.
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
///   batch       samples in params
///
/// Two ways to make the E = 2^L phases of a thread (x = x0 | l, l < E):
///  - per element (short rows, fewer than 32 threads a sample): theta(x0 | l) by
///    adds, then one sine/cosine per element;
///  - by products (the fused schedules' long rows, through warp tables):
///      exp(i theta(x0 | l)) = exp(i theta(x0)) * prod_{i in l} exp(i f_i(x0))
///                             * W(l),   W(l) = exp(i sum_{k < i in l} J_ki),
///    with f_i(x0) = a_i + sum_{j in x0} J_ij. W depends on the sample only, so each
///    warp makes it once (2^L sines/cosines, one a lane) in shared memory.
///    A thread then does 1 + L sines/cosines and 2^L + (2^L - L - 1) complex
///    products for its 2^L phases: complex128, L = 4: about 15 FP64 operations an
///    amplitude instead of about 26. Each phase is a product of at most
///    L + 2 rounded unit factors: relative error below (L + 2) * 4 eps.
/// FixedN > 0: rows of FixedN qubits, known when the kernel compiles (the fused and
/// cluster schedules, one kernel a row length; `n` must equal it): the table offsets
/// and the shifts by n fold into constants (SASS, complex128 n = 10: 47 fewer
/// instructions a thread of 16 amplitudes, of about 1240). 0: n at run time (the Kronecker split's
/// segments, the baseline).
template <class P, class V, int FixedN = 0>
struct phase_input {
  static_assert(wht::is_complex_v<V>, "IQP amplitudes are complex");
  static constexpr bool warp_tables = true;
  static constexpr bool double_params = cuda::std::is_same_v<P, double>;
  const P* params;
  std::int64_t per_sample;
  int n;
  bool pairs;
  std::int64_t batch;
  /// Multiplies every phase (a power of two: exact, so the state is bitwise the
  /// one scaled at the store): the fused path's 2^-n, paired with an output policy
  /// that does not scale (stored_output<Out, V, false>). The product form pays it
  /// once a thread, on its first phase, instead of once an element.
  wht::real_t<V> prescale = 1;

  /// Qubits a row: FixedN where the kernel was compiled for one row length.
  __host__ __device__ __forceinline__ int qubits() const {
    if constexpr (FixedN > 0) {
      return FixedN;
    } else {
      return n;
    }
  }

  /// The same input for a kernel compiled for rows of N qubits (N == n).
  template <int N>
  phase_input<P, V, N> with_qubits() const {
    static_assert(N > 0, "a row of at least one qubit");
    return {params, per_sample, n, pairs, batch, prescale};
  }

  /// Offset of J(i, j), i < j, is row(i) + j.
  __host__ __device__ __forceinline__ int pair_row(int i) const {
    const int q = qubits();
    return q + i * q - (i * (i + 1)) / 2 - i - 1;
  }

  __device__ __forceinline__ double phase_slow(const P* p, unsigned x) const {
    double theta = 0.0;
    for (int i = 0; i < qubits(); ++i) {
      if (((x >> i) & 1u) == 0) continue;
      theta += double(p[i]);
      if (!pairs) continue;
      const int row = pair_row(i);
      for (int j = i + 1; j < qubits(); ++j) {
        if ((x >> j) & 1u) theta += double(p[row + j]);
      }
    }
    return theta;
  }

  // ---- warp tables (the product form) ------------------------------------------
  // Each warp (every warp lies within one sample) copies its sample's parameters
  // to its own shared memory in double and makes its E phases W beside them, with
  // warp synchronisation only: block-wide tables made every warp of the block wait
  // for the parameter loads and for the few threads computing W, and reading the
  // parameters from global memory (L1) in the loops was slower still.
  // Layout of a warp's table: per_sample doubles (rounded up to 16 bytes), then W.

  /// Whether the schedule's threads of E elements take the product form: every
  /// warp within one sample.
  template <int E>
  __host__ __device__ bool uses_tables() const {
    return qubits() >= wht::ilog2(E) + 5;  // load() relies on this threshold too
  }

  __host__ __device__ std::size_t table_w_offset() const {
    return (std::size_t(per_sample) * sizeof(double) + 15) & ~std::size_t(15);
  }

  template <int E>
  __host__ __device__ std::size_t warp_table_bytes() const {
    return table_w_offset() + E * sizeof(V);
  }

  /// Shared memory for the tables of a block of `elements` contiguous elements
  /// (whole warps of E each): 0 when not used.
  template <int E>
  std::size_t table_bytes(std::int64_t elements) const {
    if (!uses_tables<E>()) return 0;
    const std::int64_t warps = (elements / E + 31) / 32;
    return std::size_t(warps) * warp_table_bytes<E>();
  }

  /// Fills the calling warp's table with its sample's parameters (all 32 lanes
  /// call it, with the first element g0 of their own E): independent loads, one
  /// memory round trip. Synchronises the warp. W follows in load(), where each
  /// lane's sine and cosine for it overlap its own.
  template <int E>
  __device__ __forceinline__ void prepare(unsigned char* warp_table, std::int64_t g0) const {
    static_assert(E <= 32, "one W a lane");
    const int lane = static_cast<int>(threadIdx.x & 31u);
    double* const pd = reinterpret_cast<double*>(warp_table);
    const P* const src = params + (g0 >> qubits()) * per_sample;
    const int count = static_cast<int>(per_sample);
    constexpr int U = 4;
    bool beyond = false;  // a parameter of this lane's beyond term_limit
    for (int first = lane; first < count; first += U * 32) {
      double tmp[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int i = first + u * 32;
        tmp[u] = i < count ? double(src[i]) : 0.0;
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int i = first + u * 32;
        if (i < count) pd[i] = tmp[u];
        beyond |= fabs(tmp[u]) > term_limit<V, true>;
      }
    }
    // Rare: the lane reduces its own parameters again, in a loop of its own, so that every
    // sum load_product forms stays within unit_phase's range.
    if (beyond) {
#pragma unroll 1
      for (int i = lane; i < count; i += 32) pd[i] = term<V, true>(pd[i]);
    }
    __syncwarp();
  }

  /// The product form where the warp made a table, else per element. Rows of FixedN
  /// qubits too short for tables (uses_tables) compile the per-element form alone.
  template <int E>
  __device__ __forceinline__ void load(std::int64_t g0, V (&v)[E],
                                       unsigned char* warp_table) const {
    if constexpr (FixedN > 0 && FixedN < wht::ilog2(E) + 5) {
      (void)warp_table;
      return load<E>(g0, v);
    } else {
      if (warp_table == nullptr) return load<E>(g0, v);
      load_product<E>(g0, v, warp_table);
    }
  }

  /// The product form (see the struct's comment), reading the warp's table
  /// (never null): for schedules where every warp has one (policies.cuh,
  /// product_only_v), so that the per-element form is not compiled in beside it.
  template <int E>
  __device__ __forceinline__ void load_product(std::int64_t g0, V (&v)[E],
                                               unsigned char* warp_table) const {
    constexpr int L = wht::ilog2(E);
    const unsigned x0 = static_cast<unsigned>(g0 & ((std::int64_t(1) << qubits()) - 1));
    const double* p = reinterpret_cast<const double*>(warp_table);
    const V* w = reinterpret_cast<const V*>(warp_table + table_w_offset());

    // theta(x0) and the fields f_i of the L low qubits (x0 is a multiple of E):
    //   theta(x0) = sum_{k in x0} a_k + sum_{k < j in x0} J_kj,  f_i = a_i + sum_{k in x0} J_ik.
    // x0 = lane part | warp part: bits [L, L + 5) are the lane's (t * E, the warp's
    // 32 threads consecutive within one sample), the bits above are the same for
    // the whole warp. The warp part's sums run in a loop over its set bits that
    // every lane takes alike (no divergence); the lane part's five bits in
    // unrolled selects (independent loads, no branches). A loop over every set
    // bit of x0 diverged by lane and cost a third of the kernel's stall samples.
    constexpr int LB = 5;  // lane bits
    const unsigned lane_bits = (x0 >> L) & ((1u << LB) - 1u);
    double base = 0.0;  // theta of the warp part
    double f[L];        // f_i
    double g[LB];       // sum over the warp part of J(L + k, j)
    int row_i[L];
#pragma unroll
    for (int i = 0; i < L; ++i) {
      f[i] = p[i];
      row_i[i] = pair_row(i);
    }
#pragma unroll
    for (int k = 0; k < LB; ++k) g[k] = 0.0;
    for (unsigned rest = x0 >> (L + LB); rest != 0; rest &= rest - 1) {
      const int j = __ffs(static_cast<int>(rest)) - 1 + L + LB;
      base += p[j];
      if (pairs) {
#pragma unroll
        for (int i = 0; i < L; ++i) f[i] += p[row_i[i] + j];
#pragma unroll
        for (int k = 0; k < LB; ++k) g[k] += p[pair_row(L + k) + j];
        const int row_j = pair_row(j);
        for (unsigned above = rest & (rest - 1); above != 0; above &= above - 1) {
          base += p[row_j + L + LB + __ffs(static_cast<int>(above)) - 1];
        }
      }
    }
    // The lane bits as 0.0 / 1.0, so that each conditional sum is one fma (exact:
    // fma(1, x, y) rounds x + y once, fma(0, x, y) = y for finite x) instead of
    // a select of both halves of a double and an add (75 fewer instructions a thread
    // of 16 amplitudes, of about 1380).
    double on[LB];
#pragma unroll
    for (int k = 0; k < LB; ++k) {
      on[k] = __hiloint2double(static_cast<int>(((lane_bits >> k) & 1u) * 0x3ff00000u), 0);
    }
#pragma unroll
    for (int k = 0; k < LB; ++k) {
      const int q = L + k;
      double add = p[q];
      if (pairs) {
        add += g[k];
#pragma unroll
        for (int k2 = 0; k2 < k; ++k2) add = fma(on[k2], p[pair_row(L + k2) + q], add);
#pragma unroll
        for (int i = 0; i < L; ++i) f[i] = fma(on[k], p[row_i[i] + q], f[i]);
      }
      base = fma(on[k], add, base);
    }
    // W(lane) for lane < E: the couplings among the L low qubits set in lane.
    const unsigned lane = threadIdx.x & 31u;
    double theta_w = 0.0;
    if (pairs) {
#pragma unroll
      for (int k = 0; k < L; ++k) {
#pragma unroll
        for (int i = k + 1; i < L; ++i) {
          const double jki = p[row_i[k] + i];
          theta_w += ((lane >> k) & (lane >> i) & 1u) ? jki : 0.0;
        }
      }
    }
    // Every angle is a sum of the table's parameters, reduced by prepare(): within range.
    V fac[L];
#pragma unroll
    for (int i = 0; i < L; ++i) fac[i] = unit_phase<V, true>(f[i]);
    v[0] = unit_phase<V, true>(base) * prescale;
    V* const w_out = reinterpret_cast<V*>(warp_table + table_w_offset());
    if (pairs && lane < unsigned(E)) w_out[lane] = unit_phase<V, true>(theta_w);
#pragma unroll
    for (int l = 1; l < E; ++l) {
      const int top = wht::ilog2(l);  // highest set bit of l: folds at compile time
      v[l] = cmul(v[l - (1 << top)], fac[top]);
    }
    if (pairs) {
      __syncwarp();  // every lane's W written (the whole warp loads: one sample)
#pragma unroll
      for (int l = 3; l < E; ++l) {
        if ((l & (l - 1)) != 0) v[l] = cmul(v[l], w[l]);  // two or more low qubits set
      }
      __syncwarp();  // read before any later load() of this warp writes W again
    }
  }

  // ---- per element (no tables) ----------------------------------------------------
  template <int E>
  __device__ __forceinline__ void load(std::int64_t g0, V (&v)[E]) const {
    constexpr int L = wht::ilog2(E);
    if (L > qubits()) {  // E spans several samples: never on wham's own schedules
      load_exact<E>(g0, v);
      return;
    }
    const std::int64_t sample = g0 >> qubits();
    const unsigned x0 = static_cast<unsigned>(g0 & ((std::int64_t(1) << qubits()) - 1));
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
    // Each theta below is a sum of these terms: where their magnitudes could add up beyond
    // unit_phase's range (rare), each term is first reduced exactly (then |theta| < 70).
    double bound = fabs(base);
#pragma unroll
    for (int i = 0; i < L; ++i) {
      bound += fabs(f[i]);
#pragma unroll
      for (int k = 0; k < i; ++k) bound += fabs(jl[k][i]);
    }
    if (bound > phase_reduction_limit<V>) {
      double a[1 + L + L * (L - 1) / 2];
      int t = 0;
      a[t++] = base;
#pragma unroll
      for (int i = 0; i < L; ++i) {
        a[t++] = f[i];
#pragma unroll
        for (int k = 0; k < i; ++k) a[t++] = jl[k][i];
      }
      reduce_all(a);
      t = 0;
      base = a[t++];
#pragma unroll
      for (int i = 0; i < L; ++i) {
        f[i] = a[t++];
#pragma unroll
        for (int k = 0; k < i; ++k) jl[k][i] = a[t++];
      }
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
      v[l] = unit_phase<V>(th) * prescale;
    }
  }

  /// The E phases of load() from g0 for any angles: theta summed as phase_slow does, then
  /// reduced exactly where it exceeds unit_phase's range (within). A loop, in the code
  /// once, for the rare threads that need it.
  template <int E>
  __device__ __forceinline__ void load_exact(std::int64_t g0, V (&v)[E]) const {
    V exact[E];
#pragma unroll 1
    for (int j = 0; j < E; ++j) {
      const std::int64_t g = g0 + j;
      const P* p = params + (g >> qubits()) * per_sample;
      const double theta =
          phase_slow(p, static_cast<unsigned>(g & ((std::int64_t(1) << qubits()) - 1)));
      exact[j] = unit_phase<V>(within(theta, phase_reduction_limit<V>)) * prescale;
    }
#pragma unroll
    for (int j = 0; j < E; ++j) v[j] = exact[j];
  }
};

}  // namespace wham::detail::iqp
