/// \file wham/detail/wht/cluster_launch.cuh
/// \brief Where thread block clusters run, and the one place the Walsh-Hadamard
/// family launches them (the cluster schedule, clustered strided stages, the resident
/// schedule).
#pragma once

#include <wham/detail/arch/probe.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace wham::detail::wht {

/// Whether the sm_90 schedules (clusters, bulk copies) can run here: the device has
/// compute capability 9.0+ and the program's kernels were compiled for it (their bodies
/// are empty below `__CUDA_ARCH__` 900).
inline bool clusters_supported() { return arch::compiled_for_sm90(); }

/// The launch configuration of `blocks` blocks (a multiple of `cluster`) of `threads`
/// threads and `smem` bytes of dynamic shared memory as clusters of `cluster` blocks
/// along x; `attribute` (the caller's) holds the cluster dimension and must outlive it.
inline cudaLaunchConfig_t cluster_config(std::int64_t blocks, int threads, int cluster,
                                         std::size_t smem, cudaStream_t stream,
                                         cudaLaunchAttribute& attribute) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(static_cast<unsigned>(threads));
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = static_cast<unsigned>(cluster);
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}

/// Launches `kernel` on `stream` as clusters of `cluster` blocks along x (cluster_config).
/// The one place wham launches clusters.
template <class Kernel, class... Args>
inline void launch_clusters(Kernel kernel, std::int64_t blocks, int threads, int cluster,
                            std::size_t smem, cudaStream_t stream, Args... args) {
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config =
      cluster_config(blocks, threads, cluster, smem, stream, attribute);
  WHAM_CUDA_TRY(cudaLaunchKernelEx(&config, kernel, args...));
}

}  // namespace wham::detail::wht
