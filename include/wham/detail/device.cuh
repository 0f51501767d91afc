/// \file wham/detail/device.cuh
/// \brief Per-device limits, looked up once per device and cached (immutable properties:
/// they hold across cudaDeviceReset); kernels' attributes, which do not, per context.
#pragma once

#include <wham/error.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <mutex>
#include <string>

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
                std::to_string(l.cc_minor) + ") allows " + std::to_string(l.smem_per_block_optin));
  }
}

/// cuFuncGetAttribute, through the runtime's driver entry point (no link to libcuda).
inline auto driver_func_get_attribute() {
  using fn = CUresult (*)(int*, CUfunction_attribute, CUfunction);
  static const fn f = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    WHAM_CUDA_TRY(cudaGetDriverEntryPointByVersion("cuFuncGetAttribute", &p, 12000,
                                                   cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || p == nullptr) {
      throw error("wham: the driver has no cuFuncGetAttribute");
    }
    return reinterpret_cast<fn>(p);
  }();
  return f;
}

/// A kernel's function attribute in the current context: one attribute of the context's
/// function (cudaFuncGetAttributes would read a dozen).
template <class Kernel>
inline int function_attribute(Kernel kernel, cudaFuncAttribute attribute) {
  static_assert(int(cudaFuncAttributeMaxDynamicSharedMemorySize) ==
                        int(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) &&
                    int(cudaFuncAttributeNonPortableClusterSizeAllowed) ==
                        int(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED),
                "the runtime's and the driver's numbers of the attributes wham sets agree");
  cudaFunction_t function = nullptr;
  WHAM_CUDA_TRY(cudaGetFuncBySymbol(&function, reinterpret_cast<const void*>(kernel)));
  int value = 0;
  const CUresult status =
      driver_func_get_attribute()(&value, static_cast<CUfunction_attribute>(attribute), function);
  if (status != CUDA_SUCCESS) {
    throw error("wham: cuFuncGetAttribute failed (CUresult " + std::to_string(int(status)) + ")");
  }
  return value;
}

/// Raises a kernel's attribute to at least `value` in the current context. The attribute
/// is context state (cudaDeviceReset, another device: back to the default), so it is read
/// back each call instead of remembered per device number; cudaFuncSetAttribute, which
/// can wait for copies in flight, runs only where the value must rise. A lock keeps two
/// threads from lowering each other's grant. Not a stream operation: legal under capture.
template <class Kernel>
inline void ensure_function_attribute(Kernel kernel, cudaFuncAttribute attribute, int value) {
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  if (function_attribute(kernel, attribute) >= value) return;
  WHAM_CUDA_TRY(cudaFuncSetAttribute(kernel, attribute, value));
}

/// Raises a kernel's dynamic shared-memory limit to `bytes` in the current context where
/// it is lower (ensure_function_attribute); throws wham::error (check_smem_fits) where the
/// device cannot give a block that much.
template <class Kernel>
inline void ensure_dynamic_smem(Kernel kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return;
  check_smem_fits("a kernel", bytes);
  ensure_function_attribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            static_cast<int>(bytes));
}

}  // namespace wham::detail
