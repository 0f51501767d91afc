/// \file wham/detail/wht/packed.cuh
/// \brief The packed schedule of the Walsh-Hadamard family: rows shorter than one
/// 16-byte vector (float rows of 1 or 2 elements; double and complex<float> rows of
/// 1), so that every vector holds whole rows. Each thread loads U vectors a step
/// (neighbouring lanes, neighbouring vectors), transforms the rows in registers and
/// stores the vectors back: a copy with the butterflies inside it.
///
/// Why: the fused kernel gives such a row one thread, loads narrower than 16 bytes
/// and its results out through shared memory (H200: float rows of 1 0.59 of a copy,
/// packed 1.00, 1 GiB, bench_fwht).
/// Loaded input and stored output of one type V (the FWHT's); in place works (each
/// thread reads its vectors before it writes them).
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/detail/wht/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>

namespace wham::detail::wht {

/// Elements of V in one 16-byte vector.
template <class V>
inline constexpr int packed_vector_items = 16 / static_cast<int>(sizeof(V));

/// Whether rows of 2^log_n elements of V are short enough for the packed schedule.
template <class V>
constexpr bool packed_defined(int log_n) {
  return log_n >= 0 && (sizeof(V) << log_n) < 16;
}

/// `vectors` whole 16-byte vectors of rows, then `tail_rows` rows that fill no whole
/// vector (fewer than one vector's worth), which block 0 transforms one a thread.
template <class V, int LogN, int U>
__global__ void __launch_bounds__(packed_threads)
    packed_kernel(const V* in, V* out, std::int64_t vectors, int tail_rows, real_t<V> scale) {
  constexpr int K = packed_vector_items<V>;
  static_assert(K % (1 << LogN) == 0, "a vector holds whole rows");
  const std::int64_t threads = std::int64_t(gridDim.x) * packed_threads;
  for (std::int64_t first = std::int64_t(blockIdx.x) * packed_threads * U + threadIdx.x;
       first < vectors; first += threads * U) {
    V v[U][K];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t i = first + std::int64_t(u) * packed_threads;
      if (i < vectors) load_contiguous<V, K>(in + i * K, v[u]);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t i = first + std::int64_t(u) * packed_threads;
      if (i < vectors) {
        register_butterflies<LogN>(v[u]);  // each group of 2^LogN registers is one row
#pragma unroll
        for (int j = 0; j < K; ++j) v[u][j] = v[u][j] * scale;
        store_contiguous<V, K>(out + i * K, v[u]);
      }
    }
  }
  if (blockIdx.x == 0 && static_cast<int>(threadIdx.x) < tail_rows) {
    constexpr int N = 1 << LogN;
    const std::int64_t g = vectors * K + std::int64_t(threadIdx.x) * N;
    V r[N];
#pragma unroll
    for (int j = 0; j < N; ++j) r[j] = in[g + j];
    register_butterflies<LogN>(r);
#pragma unroll
    for (int j = 0; j < N; ++j) out[g + j] = r[j] * scale;
  }
}

/// Whether the packed schedule serves rows of 2^log_n elements of V between these
/// buffers: rows shorter than a vector, both buffers 16-byte aligned.
template <class V>
inline bool packed_serves(int log_n, const void* in, const void* out) {
  return packed_defined<V>(log_n) && reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
}

template <class V, int LogN>
inline void launch_packed_n(const V* in, V* out, std::int64_t rows, real_t<V> scale,
                            cudaStream_t stream) {
  constexpr int K = packed_vector_items<V>;
  constexpr int U = packed_vectors_per_thread;
  const std::int64_t elements = rows << LogN;
  const std::int64_t vectors = elements / K;
  const int tail_rows = static_cast<int>((elements % K) >> LogN);
  const std::int64_t per_block = std::int64_t(packed_threads) * U;
  std::int64_t blocks = (vectors + per_block - 1) / per_block;
  blocks = blocks < 1 ? 1 : (blocks > 0x7fffffff ? 0x7fffffff : blocks);  // the loop strides on
  packed_kernel<V, LogN, U><<<static_cast<unsigned>(blocks), packed_threads, 0, stream>>>(
      in, out, vectors, tail_rows, scale);
  WHAM_CHECK_LAUNCH("wham::detail::wht::packed_kernel");
}

/// Transforms `rows` rows of 2^log_n elements of V (packed_serves must hold).
template <class V>
inline void launch_packed(int log_n, const V* in, V* out, std::int64_t rows, real_t<V> scale,
                          cudaStream_t stream) {
  if constexpr (packed_defined<V>(0)) {
    if (log_n == 0) return launch_packed_n<V, 0>(in, out, rows, scale, stream);
  }
  if constexpr (packed_defined<V>(1)) {
    if (log_n == 1) return launch_packed_n<V, 1>(in, out, rows, scale, stream);
  }
  throw_invalid_argument("fwht (packed schedule)", "log_n", log_n,
                         "rows shorter than 16 bytes: 0..1 for float, 0 for 8-byte elements");
}

}  // namespace wham::detail::wht
