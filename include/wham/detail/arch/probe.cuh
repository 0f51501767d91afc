/// \file wham/detail/arch/probe.cuh
/// \brief Whether the program carries sm_90 code for the current device.
///
/// A build for sm_80 alone also runs on an H100 or H200 (its sm_80 code, or its PTX
/// compiled by the driver), but kernels that need Hopper (clusters, bulk copies, the
/// m16n8k4 FP64 product) have empty or trapping bodies below `__CUDA_ARCH__` 900. The
/// device's capability alone would pick them; the PTX version the program's kernels
/// were compiled from decides.
#pragma once

#include <wham/detail/device.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <array>
#include <mutex>

namespace wham::detail::arch {

/// An empty kernel: its attributes tell which code the program carries for the device.
template <int = 0>
__global__ void probe_kernel() {}

/// True where the current device has compute capability 9.0+ and this program's
/// kernels were compiled for it. Looked up once per device.
inline bool compiled_for_sm90() {
  const device_limits& l = current_device_limits();
  if (l.cc_major < 9) return false;
  constexpr int max_devices = 64;
  static std::array<int, max_devices> ptx_version{};
  static std::array<std::once_flag, max_devices> once{};
  std::call_once(once[l.device], [&l] {
    cudaFuncAttributes a{};
    WHAM_CUDA_TRY(cudaFuncGetAttributes(&a, probe_kernel<0>));
    ptx_version[l.device] = a.ptxVersion;
  });
  return ptx_version[l.device] >= 90;
}

}  // namespace wham::detail::arch
