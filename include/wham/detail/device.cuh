/// \file wham/detail/device.cuh
/// \brief Per-device limits, looked up once per device and cached.
#pragma once

#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace wham::detail {

struct device_limits {
  int device = -1;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::size_t smem_per_block_optin = 0;  ///< bytes a block may opt in to
  std::size_t l2_bytes = 0;
};

/// The limits pinned by the innermost device_scope of the calling thread (null
/// outside one).
inline const device_limits*& scoped_device_limits() {
  static thread_local const device_limits* scoped = nullptr;
  return scoped;
}

/// Limits of the calling thread's current device (cudaGetDevice), cached per device;
/// inside a device_scope, the scope's, without asking the runtime again.
inline const device_limits& current_device_limits() {
  if (const device_limits* scoped = scoped_device_limits()) return *scoped;
  constexpr int max_devices = 64;
  static std::array<device_limits, max_devices> cache{};
  static std::array<std::once_flag, max_devices> once{};
  int device = 0;
  WHAM_CUDA_TRY(cudaGetDevice(&device));
  if (device < 0 || device >= max_devices) {
    throw error("wham: device ordinal " + std::to_string(device) + " beyond the 64 wham caches");
  }
  std::call_once(once[device], [device] {
    device_limits l;
    l.device = device;
    int v = 0;
    WHAM_CUDA_TRY(cudaDeviceGetAttribute(&l.cc_major, cudaDevAttrComputeCapabilityMajor, device));
    WHAM_CUDA_TRY(cudaDeviceGetAttribute(&l.cc_minor, cudaDevAttrComputeCapabilityMinor, device));
    WHAM_CUDA_TRY(cudaDeviceGetAttribute(&l.sm_count, cudaDevAttrMultiProcessorCount, device));
    WHAM_CUDA_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    l.smem_per_block_optin = static_cast<std::size_t>(v);
    WHAM_CUDA_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, device));
    l.l2_bytes = static_cast<std::size_t>(v);
    cache[device] = l;
  });
  return cache[device];
}

/// Pins the current device's limits for one public call (RAII; nests): its dispatch
/// asks for them a dozen times, and each lookup outside a scope costs a cudaGetDevice
/// (H200 host: iqp_encode's decisions at n = 10 take 347 ns unscoped, 61 ns scoped).
/// wham never changes the device inside a call, so one lookup serves the whole call.
class device_scope {
 public:
  device_scope() : previous_(scoped_device_limits()) {
    scoped_device_limits() = &current_device_limits();
  }
  ~device_scope() { scoped_device_limits() = previous_; }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;

 private:
  const device_limits* previous_;
};

/// Throws wham::error, before anything is enqueued, when a block of `what` needs more
/// shared memory than the current device lets a block opt in to (an H200 or H100 allows
/// 227 KB, an A100 163 KB, compute capability 8.6 and 8.9 99 KB): a clear message in
/// place of the launch's cudaErrorInvalidValue.
inline void check_smem_fits(const char* what, std::size_t bytes) {
  const device_limits& l = current_device_limits();
  if (bytes > l.smem_per_block_optin) {
    throw error(std::string("wham: ") + what + " needs " + std::to_string(bytes) +
                " bytes of shared memory a block; device " + std::to_string(l.device) +
                " (compute capability " + std::to_string(l.cc_major) + "." +
                std::to_string(l.cc_minor) + ") allows " +
                std::to_string(l.smem_per_block_optin));
  }
}

/// Raises a kernel's dynamic shared-memory limit once per (kernel, device); throws
/// wham::error (check_smem_fits) where the device cannot give a block that much.
/// Not a stream operation, so it is legal while a stream is being captured.
template <class Kernel>
inline void ensure_dynamic_smem(Kernel kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return;
  static std::map<std::pair<const void*, int>, std::size_t> granted;
  static std::mutex m;
  const auto key =
      std::make_pair(reinterpret_cast<const void*>(kernel), current_device_limits().device);
  std::lock_guard<std::mutex> lock(m);
  auto it = granted.find(key);
  if (it != granted.end() && it->second >= bytes) return;
  check_smem_fits("a kernel", bytes);  // only before a new grant: a granted size fits
  WHAM_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(bytes)));
  granted[key] = bytes;
}

}  // namespace wham::detail
