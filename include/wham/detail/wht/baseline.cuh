/// \file wham/detail/wht/baseline.cuh
/// \brief The baseline schedule of the Walsh-Hadamard family (the structure of
/// Apache Mahout QDP's main branch): one launch writes the input policy's rows,
/// scaled, into the output buffer; then one global-memory butterfly launch per
/// stage transforms them in place. Every log_n in 0..30, 64-bit indices, no
/// workspace beyond the output buffer. Kept as the reference point every
/// benchmark reports its speed-up against, and as a path tests can select.
///
/// The output policy must be `stored_output<Out, V>` (the butterfly launches
/// read the buffer back through its `out` pointer).
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/detail/wht/policies.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

namespace wham::detail::wht {

inline constexpr int baseline_threads = 256;

/// Writes every element of the rows through the output policy, E per thread
/// (grid-stride over the batch * 2^log_n elements).
template <class V, int E, class Input, class Output>
__global__ void __launch_bounds__(baseline_threads)
    baseline_fill_kernel(Input input, Output output, std::int64_t total, real_t<V> scale) {
  const std::int64_t chunks = total / E;
  for (std::int64_t c = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; c < chunks;
       c += std::int64_t(gridDim.x) * blockDim.x) {
    V v[E];
    input.template load<E>(c * E, v);
    output.template store<E>(c * E, v, scale);
  }
}

/// One butterfly stage over index bit `stage` of every row, in place, in V's precision.
template <class V, class Out>
__global__ void __launch_bounds__(baseline_threads)
    baseline_stage_kernel(Out* data, std::int64_t pairs, int stage) {
  const std::int64_t h = std::int64_t(1) << stage;
  for (std::int64_t p = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; p < pairs;
       p += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = ((p >> stage) << (stage + 1)) | (p & (h - 1));
    const V a = convert<V>(data[i]);
    const V b = convert<V>(data[i + h]);
    data[i] = convert<Out>(a + b);
    data[i + h] = convert<Out>(a - b);
  }
}

inline unsigned baseline_grid(std::int64_t work_items) {
  const std::int64_t per_block = baseline_threads;
  const std::int64_t cap = std::int64_t(current_device_limits().sm_count) * 32;
  const std::int64_t blocks = std::min(cap, (work_items + per_block - 1) / per_block);
  return static_cast<unsigned>(std::max<std::int64_t>(blocks, 1));
}

/// Transforms `batch` rows of 2^log_n elements (0 <= log_n <= 30): input from the
/// policy, result (times scale) in the output policy's buffer, log_n + 1 launches.
/// The caller checks that batch * 2^log_n fits in int64.
template <class V, class Input, class Out>
inline void launch_baseline(int log_n, std::int64_t batch, Input input,
                            stored_output<Out, V> output, real_t<V> scale, cudaStream_t stream) {
  check_range("baseline path", "log_n", log_n, 0, fwht_max_log_n);
  check_range("baseline path", "batch", batch, 1, INT64_MAX >> log_n);
  const std::int64_t total = batch << log_n;
  if (log_n >= 2) {
    constexpr int E = 4;
    baseline_fill_kernel<V, E>
        <<<baseline_grid(total / E), baseline_threads, 0, stream>>>(input, output, total, scale);
  } else {
    baseline_fill_kernel<V, 1>
        <<<baseline_grid(total), baseline_threads, 0, stream>>>(input, output, total, scale);
  }
  WHAM_CHECK_LAUNCH("wham::detail::wht::baseline_fill_kernel");
  const std::int64_t pairs = total / 2;
  for (int stage = 0; stage < log_n; ++stage) {
    baseline_stage_kernel<V, Out>
        <<<baseline_grid(pairs), baseline_threads, 0, stream>>>(output.out, pairs, stage);
    WHAM_CHECK_LAUNCH("wham::detail::wht::baseline_stage_kernel");
  }
}

}  // namespace wham::detail::wht
