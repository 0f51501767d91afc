/// \file wham/detail/wht/strided_cluster.cuh
/// \brief The Kronecker split's strided stages beyond one block's tile (sm_90 and later).
///
/// A stage of LogH + LogK row bits as clusters of K = 2^LogK blocks. Block r of a cluster
/// holds the rows whose top LogK bits are r: a tile of the one-block stage's shape
/// (strided.cuh: 2^LogH rows x 128 contiguous bytes), transformed over its low LogH bits
/// into its shared memory. After a cluster barrier, block r takes its K-th share of the
/// tile's (row, column) places, reads each place from the K blocks (distributed shared
/// memory), applies the K-point transform in registers and stores the K results. Rows
/// stay 128 bytes wide however many bits the stage takes (the one-block stage narrows
/// them to 64 bytes at 11 bits and cannot take 12), so long rows need no third pass.
#pragma once

#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/device.cuh>
#include <wham/detail/wht/cluster_launch.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/detail/wht/kronecker_index.hpp>
#include <wham/detail/wht/strided.cuh>
#include <wham/detail/wht/tuning.cuh>
#include <wham/error.hpp>

#include <cooperative_groups.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <string>

namespace wham::detail::wht {

/// Clusters of up to 8 blocks are portable; 16 needs the non-portable opt-in.
inline constexpr int strided_cluster_max_log_k = 4;

// Two blocks an SM (strided_cluster_min_blocks, tuning.cuh) bound its registers.
template <class T, int LogH, int LogK>
__global__ void __launch_bounds__(strided_kernel_shape<T, LogH>::threads,
                                  strided_cluster_min_blocks)
    strided_cluster_kernel(T* data, int bit, real_t<T> scale) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using shape = strided_kernel_shape<T, LogH>;
  constexpr int K = 1 << LogK;
  constexpr int C = shape::C;
  constexpr int threads = shape::threads;
  constexpr int share = ((1 << LogH) * C) / K;  // (row, column) places a block combines
  static_assert(share % threads == 0, "every thread combines the same number of places");
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const unsigned rank = cluster.block_rank();
  const std::int64_t stride = std::int64_t(1) << bit;
  T* const base =
      data + kron::tile_base(bit, LogH + LogK, shape::log_c, std::int64_t(blockIdx.x) >> LogK);
  strided_tile_at<T, LogH, true>(base + (std::int64_t(rank) << LogH) * stride, stride, real_t<T>(1),
                                 smem_raw);
  cluster.sync();  // release / acquire: every block's tile is complete and visible

  T* const tile = reinterpret_cast<T*>(smem_raw);
  const T* parts[K];
#pragma unroll
  for (int j = 0; j < K; ++j) parts[j] = cluster.map_shared_rank(tile, j);
  const unsigned t = threadIdx.x;
#pragma unroll
  for (int k = 0; k < share / threads; ++k) {
    const unsigned place = rank * unsigned(share) + unsigned(k * threads) + t;
    T a[K];
#pragma unroll
    for (int j = 0; j < K; ++j) a[j] = parts[j][place];
    register_butterflies<LogK>(a);
    T* const g = base + std::int64_t(place / C) * stride + (place % C);
#pragma unroll
    for (int j = 0; j < K; ++j) g[(std::int64_t(j) << LogH) * stride] = a[j] * scale;
  }
  cluster.sync();  // no tile may go while another block still reads it
#endif
}

/// Sets up a clustered stage's kernel in the current context (its shared memory and, for
/// 16 blocks, the non-portable cluster size: function attributes, so legal during stream
/// capture, and context state, so set where missing every call: ensure_function_attribute)
/// and returns whether the device can hold one of its clusters at all
/// (cudaOccupancyMaxActiveClusters: clusters of 16 are not promised on every sm_90 part), a
/// property of the device and the kernel, looked up once per device.
template <class T, int LogH, int LogK>
inline bool prepare_strided_cluster() {
  using shape = strided_kernel_shape<T, LogH>;
  constexpr int K = 1 << LogK;
  const auto kernel = strided_cluster_kernel<T, LogH, LogK>;
  ensure_dynamic_smem(kernel, shape::smem_bytes);
  if constexpr (K > 8) {
    ensure_function_attribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  }
  static std::array<bool, 64> runs{};
  static std::array<std::once_flag, 64> once{};
  const int dev = current_device_limits().device;
  std::call_once(once[dev], [dev, kernel] {
    cudaLaunchAttribute attribute;
    const cudaLaunchConfig_t config =
        cluster_config(K, shape::threads, K, shape::smem_bytes, nullptr, attribute);
    int clusters = 0;
    WHAM_CUDA_TRY(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    runs[dev] = clusters > 0;
  });
  return runs[dev];
}

template <class T, int LogH, int LogK>
inline void launch_strided_cluster_n(T* data, std::int64_t total, int bit, real_t<T> scale,
                                     cudaStream_t stream) {
  using shape = strided_kernel_shape<T, LogH>;
  constexpr int K = 1 << LogK;
  if (!clusters_supported()) {
    throw error(
        "wham: clustered strided stages need thread block clusters "
        "(compute capability 9.0 or later, code compiled for it)");
  }
  if (!prepare_strided_cluster<T, LogH, LogK>()) {
    throw error("wham: this device cannot run clusters of " + std::to_string(K) +
                " blocks of the strided stage (kronecker_config::cluster_log_k)");
  }
  const std::int64_t blocks = (total >> LogK) / std::int64_t(shape::tile_elems) * K;
  if (blocks > 0x7fffffff) {
    throw_invalid_argument("kronecker path", "blocks of a clustered strided stage", blocks,
                           "at most 2^31 - 1");
  }
  launch_clusters(strided_cluster_kernel<T, LogH, LogK>, blocks, shape::threads, K,
                  shape::smem_bytes, stream, data, bit, scale);
}

/// A strided stage of `log_h` bits as clusters of 2^(log_h - PartBits) blocks of
/// 2^PartBits rows (1 <= log_h - PartBits <= strided_cluster_max_log_k).
template <class T, int PartBits>
inline void launch_strided_cluster(int log_h, T* data, std::int64_t total, int bit, real_t<T> scale,
                                   cudaStream_t stream) {
  const bool built =
      arch::dispatch_int<1, strided_cluster_max_log_k + 1>(log_h - PartBits, [&](auto log_k) {
        launch_strided_cluster_n<T, PartBits, decltype(log_k)::value>(data, total, bit, scale,
                                                                      stream);
      });
  if (!built) {
    throw_invalid_argument(
        "kronecker path", "clustered strided stage bits", log_h,
        std::to_string(PartBits + 1) + ".." + std::to_string(PartBits + strided_cluster_max_log_k));
  }
}

}  // namespace wham::detail::wht
