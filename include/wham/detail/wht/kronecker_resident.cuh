/// \file wham/detail/wht/kronecker_resident.cuh
/// \brief The Kronecker split's resident schedule (sm_90 and later): two stages in one
/// kernel. A cluster of K blocks per row runs stage 0 over the row's segments, waits at
/// a cluster barrier, then runs the strided stage over the row's tiles, so that the
/// second stage reads what the first wrote from L2, and the launch boundary between the
/// stages (the last wave of one, the first of the next) disappears. Both stages run in
/// blocks of resident_threads threads, so only (Lo, Hi) pairs whose two shapes have that
/// many threads are compiled. It loses at small batch, where K blocks a row leave most
/// SMs idle (the IQP encoder's resident_pays decides).
#pragma once

#include <wham/detail/wht/cluster_launch.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/detail/wht/fused.cuh>
#include <wham/detail/wht/policies.cuh>
#include <wham/detail/wht/strided.cuh>
#include <wham/detail/wht/tuning.cuh>
#include <wham/error.hpp>

#include <cooperative_groups.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace wham::detail::wht {

/// Threads of a resident block: both stages' shapes must have this many.
inline constexpr int resident_threads = 256;

/// Whether stage 0 over segments of 2^Lo (computed in V, from an input with warp tables:
/// the IQP phases, the only input the schedule serves) and a strided stage of Hi bits
/// over Out share the resident block shape.
template <class V, class Out, int Lo, int Hi>
inline constexpr bool resident_shapes_match =
    fused_shape<V, Lo, true>::threads ==
    resident_threads&& strided_kernel_shape<Out, Hi>::threads == resident_threads;

template <class V, int Lo, int Hi, int K, class Input, class Output>
__global__ void __launch_bounds__(resident_threads, 2)
    kronecker_resident_kernel(Input input, Output output, real_t<V> scale, unsigned tables_offset,
                              std::int64_t rows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Out = std::remove_cv_t<std::remove_pointer_t<decltype(output.out)>>;
  using stage0 = fused_shape_for<V, Lo, Input>;
  using stage1 = strided_kernel_shape<Out, Hi>;
  static_assert(resident_shapes_match<V, Out, Lo, Hi>, "one block shape for both stages");
  constexpr std::int64_t stage0_blocks = (std::int64_t(1) << Hi) / stage0::segments_per_block;
  constexpr std::int64_t tiles = (std::int64_t(1) << (Lo + Hi)) / std::int64_t(stage1::tile_elems);
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int rank = static_cast<int>(cluster.block_rank());
  const std::int64_t row = std::int64_t(blockIdx.x) / K;
  for (std::int64_t b = rank; b < stage0_blocks; b += K) {
    fused_block<V, Lo>(input, output, row * stage0_blocks + b, rows << Hi, real_t<V>(1),
                       tables_offset, smem_raw);
    __syncthreads();  // the next segment reuses the shared memory
  }
  // Release / acquire at cluster scope: the row's stage-0 stores are visible below.
  cluster.sync();
  for (std::int64_t t = rank; t < tiles; t += K) {
    strided_tile<Out, Hi>(output.out, Lo, static_cast<real_t<Out>>(scale), row * tiles + t,
                          smem_raw);
    __syncthreads();
  }
#endif
}

template <class V, int Lo, int Hi, int K, class Input, class Output>
inline void launch_kronecker_resident_n(std::int64_t rows, Input input, Output output,
                                        real_t<V> scale, cudaStream_t stream) {
  using Out = std::remove_cv_t<std::remove_pointer_t<decltype(output.out)>>;
  using stage0 = fused_shape_for<V, Lo, Input>;
  using stage1 = strided_kernel_shape<Out, Hi>;
  if (rows > 0x7fffffff / K) {
    throw_invalid_argument("kronecker path (resident schedule)", "rows", rows,
                           "at most (2^31 - 1) / " + std::to_string(K));
  }
  auto kernel = kronecker_resident_kernel<V, Lo, Hi, K, Input, Output>;
  std::size_t smem = stage0::smem_bytes;
  unsigned tables_offset = no_tables;
  if constexpr (has_warp_tables_v<Input>) {
    const std::size_t tables =
        input.template table_bytes<stage0::items>(stage0::segments_per_block * stage0::n);
    if (tables != 0) {
      tables_offset = static_cast<unsigned>((smem + 15) & ~std::size_t(15));
      smem = tables_offset + tables;
    }
  }
  smem = std::max(smem, stage1::smem_bytes);
  ensure_dynamic_smem(kernel, smem);
  launch_clusters(kernel, rows * K, resident_threads, K, smem, stream, input, output, scale,
                  tables_offset, rows);
}

/// Whether the resident schedule serves rows of 2^log_n (stage 0 in V, stored as Out)
/// on this device; compiled for log_n = 16, 17 (complex128) and 17 (complex64) only,
/// the rows where it was measured to pay.
template <class V, class Out>
inline bool kronecker_resident_serves(int log_n) {
  if (!clusters_supported() || fused_max_log_n<V>() < resident_lo) return false;
  const int hi = log_n - resident_lo;
  return (hi == 4 && sizeof(Out) >= 16 && resident_shapes_match<V, Out, resident_lo, 4>) ||
         (hi == 5 && resident_shapes_match<V, Out, resident_lo, 5>);
}

/// Transforms `rows` rows of 2^log_n elements with the resident schedule (see
/// kronecker_resident_serves): input from the policy, result times `scale` written
/// through `output`, whose buffer is also the stage-0 intermediate (no allocation).
template <class V, class Input, class Output>
inline void launch_kronecker_resident(int log_n, std::int64_t rows, Input input, Output output,
                                      real_t<V> scale, cudaStream_t stream) {
  using Out = std::remove_cv_t<std::remove_pointer_t<decltype(output.out)>>;
  if (!kronecker_resident_serves<V, Out>(log_n)) {
    throw_invalid_argument("kronecker path (resident schedule)", "log_n", log_n,
                           "a row the resident schedule is compiled for on this device");
  }
  check_range("kronecker path (resident schedule)", "rows", rows, 1, INT64_MAX >> log_n);
  constexpr int Lo = resident_lo;
  constexpr int K = resident_cluster;
  if constexpr (resident_shapes_match<V, Out, Lo, 4> && sizeof(Out) >= 16) {
    if (log_n == Lo + 4) {
      return launch_kronecker_resident_n<V, Lo, 4, K>(rows, input, output, scale, stream);
    }
  }
  if constexpr (resident_shapes_match<V, Out, Lo, 5>) {
    if (log_n == Lo + 5) {
      return launch_kronecker_resident_n<V, Lo, 5, K>(rows, input, output, scale, stream);
    }
  }
  throw_invalid_argument("kronecker path (resident schedule)", "log_n", log_n,
                         "a row the resident schedule is compiled for");
}

}  // namespace wham::detail::wht
