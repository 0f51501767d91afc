/// \file wham/detail/fmm/count_out_of_range.cuh
/// \brief wham::check_interaction_list's kernel and its one call: counts the pairs whose
/// indices fall outside their buffers (the pairs the accumulate forms skip).
#pragma once

#include <wham/detail/check.hpp>
#include <wham/detail/device.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

namespace wham::detail::fmm {

inline constexpr int count_threads = 256;

/// One count per block (a block-wide sum, then one atomicAdd), grid-stride over pairs.
template <int Threads>
__global__ void __launch_bounds__(Threads)
    count_out_of_range_kernel(const std::int32_t* src, const std::int32_t* tgt,
                              const std::int32_t* cls, std::int64_t num_pairs,
                              std::int64_t num_multipoles, std::int64_t num_locals, int num_classes,
                              unsigned long long* count) {
  unsigned n = 0;
  for (std::int64_t i = std::int64_t(blockIdx.x) * Threads + threadIdx.x; i < num_pairs;
       i += std::int64_t(gridDim.x) * Threads) {
    const bool bad = std::uint64_t(std::int64_t(src[i])) >= std::uint64_t(num_multipoles) ||
                     std::uint64_t(std::int64_t(tgt[i])) >= std::uint64_t(num_locals) ||
                     (cls != nullptr && unsigned(cls[i]) >= unsigned(num_classes));
    n += bad ? 1u : 0u;
  }
#pragma unroll
  for (int s = 16; s > 0; s >>= 1) n += __shfl_xor_sync(0xffffffffu, n, s);
  __shared__ unsigned warp_sums[Threads / 32];
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = n;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long total = 0;
    for (int w = 0; w < Threads / 32; ++w) total += warp_sums[w];
    if (total != 0) atomicAdd(count, total);
  }
}

/// Zeroes *count and enqueues the count (arguments checked by the caller).
inline void launch_count_out_of_range(const std::int32_t* src, const std::int32_t* tgt,
                                      const std::int32_t* cls, std::int64_t num_pairs,
                                      std::int64_t num_multipoles, std::int64_t num_locals,
                                      int num_classes, unsigned long long* count,
                                      cudaStream_t stream) {
  WHAM_CUDA_TRY(cudaMemsetAsync(count, 0, sizeof(*count), stream));
  if (num_pairs == 0) return;
  // A few waves of blocks: each thread counts many pairs, each block adds once.
  const std::int64_t blocks =
      std::min<std::int64_t>((num_pairs + count_threads - 1) / count_threads,
                             std::int64_t(current_device_limits().sm_count) * 8);
  count_out_of_range_kernel<count_threads><<<dim3(unsigned(blocks)), count_threads, 0, stream>>>(
      src, tgt, cls, num_pairs, num_multipoles, num_locals, num_classes, count);
  WHAM_CHECK_LAUNCH("fmm count_out_of_range_kernel");
}

/// wham::check_interaction_list's one call once its checks that need no device have passed:
/// whether the device can address each pointer (a device query), then the count.
inline void run_count_out_of_range(const char* f, const std::int32_t* src, const std::int32_t* tgt,
                                   const std::int32_t* cls, std::int64_t num_pairs,
                                   std::int64_t num_multipoles, std::int64_t num_locals,
                                   int num_classes, unsigned long long* count,
                                   cudaStream_t stream) {
  const auto n = std::uint64_t(num_pairs);
  check_accessible(f, {span_of("out_of_range", count, 1), span_of("src", src, n),
                       span_of("tgt", tgt, n), span_of("cls", cls, n)});
  launch_count_out_of_range(src, tgt, cls, num_pairs, num_multipoles, num_locals, num_classes,
                            count, stream);
}

}  // namespace wham::detail::fmm
