/// \file wham/detail/iqp/product.cuh
/// \brief The `iqp_z` encoder as the product state it is.
///
/// Without pair couplings theta is linear, exp(i theta(x)) = prod_i exp(i a_i x_i),
/// and the Walsh-Hadamard transform of a product is the product of the one-qubit
/// transforms:
///
///   amp[k] = prod_i (1 + (-1)^{k_i} e^{i a_i}) / 2
///          = e^{i sum_i h_i} (-i)^{popcount(k)} prod_i (k_i ? sin h_i : cos h_i),   h_i = a_i / 2.
///
/// So no butterflies and no shared-memory round trips: every amplitude is a few
/// multiplications from per-block tables, written once, at any n (1..30). The
/// 2^-n of the transform is inside the factors (|cos|, |sin| <= 1, one per qubit).
///
/// A block writes a tile of 2^LogTile consecutive amplitudes (16-byte stores,
/// neighbouring lanes on neighbouring addresses). It first makes, for the
/// samples the tile touches, cos h_i and sin h_i (double sine/cosine, rounded to
/// the output's real type) and each sample's phase e^{i sum h}; for rows longer
/// than 2^8, one complex entry per run of 256 amplitudes (they share their high
/// bits): the phase times the high bits' factors and quarter turns. A thread's
/// stores are 256 amplitudes apart, so its product of the 8 low factors is made
/// once per sample and multiplied into each run's entry; rows shorter than 2^8
/// take a kernel per n, their products folded at compile time.
///
/// Precision: each amplitude is a product of at most n + 1 rounded factors:
/// relative error below (n + 3) eps of the output type (complex64, n = 30: ~2e-6).
#pragma once

#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/device.cuh>
#include <wham/detail/iqp/phase.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/error.hpp>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace wham::detail::iqp {

template <class Out>
struct product_shape {
  static constexpr int threads = 256;
  static constexpr int width = 16 / static_cast<int>(sizeof(Out));  ///< amplitudes a 16-byte store
  static constexpr int stores = 8;                                  ///< 16-byte stores a thread
  static constexpr int log_tile = wht::ilog2(threads * width * stores);
  static constexpr int tile = 1 << log_tile;
  /// Low bits each amplitude multiplies itself; runs of 2^lo_bits share the rest.
  static constexpr int lo_bits = 8;
  static constexpr int runs = tile >> lo_bits;
  /// Factors of a tile: (tile >> n) samples x n, at most tile / 2 (n = 1, 2), and
  /// n <= 30 <= tile / 2 for rows of a tile or longer.
  static constexpr int max_factors = tile / 2;
  static constexpr int max_samples = tile / 2;
};

/// z * (-i)^q, branch-free (q differs from lane to lane).
template <class V>
__device__ __forceinline__ V quarter_turns(const V& z, unsigned q) {
  using R = wht::real_t<V>;
  const bool odd = (q & 1u) != 0;
  const R sign = (q & 2u) ? R(-1) : R(1);
  const R re = odd ? z.imag() : z.real();
  const R im = odd ? -z.real() : z.imag();
  return V(sign * re, sign * im);
}

/// The low factors of a store's amplitudes, k being the first one's low bits:
/// m[w] = prod_{i < Bits} (bit i of k + w ? s_i : c_i). With two amplitudes a store
/// (complex64) k is even and they differ in bit 0 only: one shared product.
template <int Bits, int W, class R>
__device__ __forceinline__ void low_factors(unsigned k, const R* c, const R* s, R (&m)[W]) {
  static_assert(W == 1 || W == 2, "one or two amplitudes a 16-byte store");
  R common = R(1);
#pragma unroll
  for (int i = 1; i < Bits; ++i) common *= ((k >> i) & 1u) ? s[i] : c[i];
  if constexpr (W == 1) {
    m[0] = common * ((k & 1u) ? s[0] : c[0]);
  } else {
    m[0] = common * c[0];
    m[1] = common * s[0];
  }
}

/// ShortN: 0 for rows of 2^8 or longer (n at run time), else n itself (1..7), so
/// that the per-amplitude loop over the bits and the index arithmetic fold at
/// compile time (complex64 at n = 4 was bound by instruction issue, ~65 a pair of
/// amplitudes, at 0.49 of the write floor).
template <class P, class Out, int ShortN>
__global__ void __launch_bounds__(product_shape<Out>::threads)
    product_kernel(const P* __restrict__ params, Out* __restrict__ states, int n_arg,
                   std::int64_t batch) {
  using S = product_shape<Out>;
  static_assert(ShortN >= 0 && ShortN < S::lo_bits, "short rows are those below 2^lo_bits");
  const int n = ShortN > 0 ? ShortN : n_arg;
  using R = wht::real_t<Out>;
  __shared__ R cos_h[S::max_factors];
  __shared__ R sin_h[S::max_factors];
  __shared__ Out phase[S::max_samples];
  __shared__ Out run_factor[S::runs];

  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t total = batch << n;
  const std::int64_t base = std::int64_t(blockIdx.x) << S::log_tile;
  const std::int64_t s0 = base >> n;
  std::int64_t here = n >= S::log_tile ? 1 : (std::int64_t(S::tile) >> n);
  if (here > batch - s0) here = batch - s0;
  const int samples = static_cast<int>(here);
  const std::uint64_t mask = (std::uint64_t(1) << n) - 1u;

  // The tile's parameters are contiguous: coalesced reads, one sine/cosine each.
  const P* const p = params + s0 * n;
  for (int idx = t; idx < samples * n; idx += S::threads) {
    double s, c;
    sincos_reduced(within(0.5 * double(p[idx]), fast_reduction_limit), &s, &c);
    cos_h[idx] = static_cast<R>(c);
    sin_h[idx] = static_cast<R>(s);
  }
  for (int sl = t; sl < samples; sl += S::threads) {
    double h = 0.0;
    for (int i = 0; i < n; ++i) h += double(p[sl * n + i]);
    phase[sl] = unit_phase<Out, true>(within(0.5 * h, fast_reduction_limit));
  }
  __syncthreads();
  if constexpr (ShortN == 0) {  // n >= lo_bits: one entry a run (n = 8: the phase)
    for (int r = t; r < S::runs; r += S::threads) {
      const std::int64_t g = base + (std::int64_t(r) << S::lo_bits);
      if (g >= total) continue;
      const int sl = static_cast<int>((g >> n) - s0);
      const unsigned k = static_cast<unsigned>(std::uint64_t(g) & mask);
      R m = R(1);
      for (int i = S::lo_bits; i < n; ++i) {
        m *= ((k >> i) & 1u) ? sin_h[sl * n + i] : cos_h[sl * n + i];
      }
      run_factor[r] = quarter_turns(phase[sl] * m, static_cast<unsigned>(__popc(k >> S::lo_bits)));
    }
    __syncthreads();
  }

  // Rows of 2^8 or longer: the low bits of a thread's amplitudes are the same at
  // every store (stores are 256 * width apart), so their factors are multiplied
  // once per sample, not once per amplitude (which bound complex64 by instruction
  // issue). A warp's amplitudes share a sample, so the refresh is warp-uniform.
  R m[S::width] = {};
  unsigned q0 = 0;
  int cached = -1;
#pragma unroll
  for (int j = 0; j < S::stores; ++j) {
    const int e0 = (j * S::threads + t) * S::width;
    const std::int64_t g0 = base + e0;
    if (g0 >= total) break;  // total is even and e0 a multiple of width (<= 2)
    alignas(16) Out amp[S::width];
    if constexpr (ShortN == 0) {
      const int sl = static_cast<int>((g0 >> n) - s0);
      if (sl != cached) {
        cached = sl;
        const unsigned k = static_cast<unsigned>(e0) & ((1u << S::lo_bits) - 1u);
        low_factors<S::lo_bits>(k, cos_h + sl * n, sin_h + sl * n, m);
        q0 = static_cast<unsigned>(__popc(k));
      }
#pragma unroll
      for (int w = 0; w < S::width; ++w) {
        amp[w] = quarter_turns(run_factor[(e0 + w) >> S::lo_bits] * m[w], q0 + unsigned(w));
      }
    } else {
      // Short rows: the tile starts on a sample, and a store's amplitudes share one.
      const int sl = e0 >> ShortN;
      const unsigned k = static_cast<unsigned>(e0) & ((1u << ShortN) - 1u);
      low_factors<ShortN>(k, cos_h + sl * n, sin_h + sl * n, m);
      const unsigned q = static_cast<unsigned>(__popc(k));
#pragma unroll
      for (int w = 0; w < S::width; ++w) amp[w] = quarter_turns(phase[sl] * m[w], q + unsigned(w));
    }
    wht::store_contiguous<Out, S::width>(states + g0, amp);
  }
}

/// Writes batch iqp_z states of n qubits (1 <= n <= 30) to `states`.
template <class P, class Out>
inline void launch_product(const P* params, Out* states, int n, std::int64_t batch,
                           cudaStream_t stream) {
  using S = product_shape<Out>;
  const std::int64_t total = batch << n;
  const std::int64_t blocks = (total + S::tile - 1) >> S::log_tile;
  if (blocks > 0x7fffffff) {
    throw_invalid_argument("iqp_encode", "batch (product path)", batch,
                           "at most 2^31 - 1 tiles of " + std::to_string(S::tile) + " amplitudes");
  }
  const dim3 grid(static_cast<unsigned>(blocks));
  const bool short_row = arch::dispatch_int<1, S::lo_bits>(n, [&](auto size) {
    product_kernel<P, Out, decltype(size)::value>
        <<<grid, S::threads, 0, stream>>>(params, states, n, batch);
  });
  if (!short_row) {
    product_kernel<P, Out, 0><<<grid, S::threads, 0, stream>>>(params, states, n, batch);
  }
  WHAM_CHECK_LAUNCH("wham::detail::iqp::product_kernel");
}

}  // namespace wham::detail::iqp
