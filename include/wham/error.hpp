/// \file wham/error.hpp
/// \brief wham's one error model and its launch conventions.
///
/// Every host entry point of wham validates its arguments and throws `wham::error`
/// before anything is enqueued. Its kind() says what went wrong (wham/detail/
/// argument_error.hpp); what() says it in words:
///
///   - invalid_argument: "wham::iqp_encode: num_qubits = 31 is invalid (valid: 1..30)";
///                       a pointer the current device cannot address (plain host memory,
///                       another device's memory without peer access) is one, naming it
///   - not_supported:    valid arguments this device cannot serve: an explicit path
///                       asked for beyond what it serves here (the same message form)
///   - cuda:             "wham: CUDA error cudaErrorInvalidValue (invalid argument)
///                        in cudaLaunchKernel at fused.cuh:123"; cuda_code() (or
///                        wham::cuda_error_of) is the cudaError_t
///   - no_device:        no CUDA device or no driver able to run this build, said plainly
///                       ("wham: no CUDA device is available (...)", "wham: no NVIDIA
///                       driver was found ..."); cuda_code() is the CUDA call's status
///
/// Zero-size calls (batch = 0, num_pairs = 0) check their scalars, then return touching no
/// pointer and no device (check_interaction_list still stores its count, 0).
///
/// Launch conventions shared by every launcher:
///   - work is enqueued on the caller's `cudaStream_t` and nothing else;
///   - no device or pinned memory is allocated: callers own every buffer;
///   - nothing synchronises (no cudaDeviceSynchronize, no blocking copies), so
///     a launcher may be recorded into a CUDA graph by stream capture;
///   - launch errors are reported through `cudaGetLastError()` right after the
///     launch (a non-synchronising call), so asynchronous faults inside a kernel
///     surface at the caller's next synchronisation, as for any CUDA call; an error
///     that an earlier call of the caller's left pending in the runtime is reported
///     (and cleared) by wham's next launch check, under wham's launch name.
#pragma once

#include <wham/detail/argument_error.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace wham {

namespace detail {

/// Throws when a required pointer is null.
inline void check_not_null(const char* function, const char* argument, const void* p) {
  if (p == nullptr) throw_invalid_argument(function, argument, "nullptr", "a device pointer");
}

/// Throws unless `p` is aligned to its element type (cuda::std::complex<double>: 16 bytes).
/// The kernels' vector loads and bulk copies rely on it; a misaligned pointer would
/// otherwise end in a sticky misaligned-address fault that ruins the CUDA context.
template <class T>
inline void check_aligned(const char* function, const char* argument, const T* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  if (address % alignof(T) != 0) {
    throw_invalid_argument(function, argument,
                           "an address " + std::to_string(address % alignof(T)) +
                               " bytes past a multiple of " + std::to_string(alignof(T)),
                           "a pointer aligned to " + std::to_string(alignof(T)) +
                               " bytes, the element type's alignment");
  }
}

/// Throws unless `value` is one of an enumeration's `count` values (0 .. count - 1): a
/// cast integer outside them would otherwise reach a dispatch switch.
template <class Enum>
inline void check_enum(const char* function, const char* argument, Enum value, int count,
                       const char* valid) {
  const long long v = static_cast<long long>(value);
  if (v < 0 || v >= count) throw_invalid_argument(function, argument, v, valid);
}

/// Whether the byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte.
inline bool ranges_overlap(const void* a, std::uint64_t a_bytes, const void* b,
                           std::uint64_t b_bytes) {
  const auto a0 = reinterpret_cast<std::uintptr_t>(a);
  const auto b0 = reinterpret_cast<std::uintptr_t>(b);
  return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

/// Whether `status` means that no device can run this build at all (no GPU, no driver,
/// a driver too old or a stub), as opposed to a failure of one call.
inline bool is_no_device_status(cudaError_t status) noexcept {
  return status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver ||
         status == cudaErrorStubLibrary || status == cudaErrorSystemDriverMismatch ||
         status == cudaErrorDevicesUnavailable || status == cudaErrorCompatNotSupportedOnDevice;
}

/// "13.0" from a CUDA version number (13000).
inline std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

/// The plain message for a no-device status (is_no_device_status); `driver_version` is
/// cudaDriverGetVersion's answer (0: no driver installed), `site` the CUDA call and its
/// place. Pure, so that a host test checks every wording without a GPU.
inline std::string no_device_message(cudaError_t status, int driver_version,
                                     const std::string& site) {
  const std::string detail =
      std::string(" (") + cudaGetErrorName(status) + " in " + site + ")";
  const std::string runtime = "CUDA " + cuda_version_text(CUDART_VERSION);
  if (status == cudaErrorInsufficientDriver || status == cudaErrorStubLibrary) {
    if (driver_version == 0 || status == cudaErrorStubLibrary) {
      return "wham: no NVIDIA driver was found, so no CUDA device is available; wham needs a "
             "GPU and a driver for " + runtime + " or newer" + detail;
    }
    return "wham: the NVIDIA driver (CUDA " + cuda_version_text(driver_version) +
           ") is too old for this build of wham (" + runtime + "); update the driver" + detail;
  }
  if (status == cudaErrorSystemDriverMismatch || status == cudaErrorCompatNotSupportedOnDevice) {
    return "wham: the NVIDIA driver does not match this system's kernel module or device, so "
           "no CUDA device is available; reinstall the driver" + detail;
  }
  return "wham: no CUDA device is available (no GPU is visible to this process, or every GPU "
         "is busy or hidden by CUDA_VISIBLE_DEVICES)" + detail;
}

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* expression,
                                          const char* file, int line) {
  std::string where = file;
  auto slash = where.find_last_of('/');
  if (slash != std::string::npos) where = where.substr(slash + 1);
  const std::string site = std::string(expression) + " at " + where + ":" + std::to_string(line);
  if (is_no_device_status(status)) {
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    throw error(no_device_message(status, driver, site), error_kind::no_device, int(status));
  }
  throw error(std::string("wham: CUDA error ") + cudaGetErrorName(status) + " (" +
                  cudaGetErrorString(status) + ") in " + site,
              error_kind::cuda, int(status));
}

inline void cuda_check(cudaError_t status, const char* expression, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, expression, file, line);
}

/// How the current device may address a pointer: the decision of check_device_accessible.
enum class pointer_access {
  accessible,    ///< its own or managed memory, registered host memory, a peer's with access
  host_memory,   ///< plain (pageable) host memory the device cannot read
  other_device,  ///< another device's memory without peer access from the current device
};

/// What cudaPointerGetAttributes and the device said about a pointer, and the decision.
/// Pure, so that a host test covers every case (two GPUs are rarely at hand):
///   `type`, `pointer_device`: cudaPointerAttributes::type and ::device;
///   `pageable_access`: the current device reads pageable host memory (HMM, ATS);
///   `peer_access`: peer access from the current device to `pointer_device` is enabled.
/// Peer access must be enabled, not merely possible: a kernel touching a peer's memory
/// faults unless cudaDeviceEnablePeerAccess has mapped it into the current context.
constexpr pointer_access classify_pointer(cudaMemoryType type, int pointer_device,
                                          int current_device, bool pageable_access,
                                          bool peer_access) noexcept {
  switch (type) {
    case cudaMemoryTypeUnregistered:
      return pageable_access ? pointer_access::accessible : pointer_access::host_memory;
    case cudaMemoryTypeDevice:
      return pointer_device == current_device || peer_access ? pointer_access::accessible
                                                             : pointer_access::other_device;
    default:  // managed and registered host memory: every device addresses them
      return pointer_access::accessible;
  }
}

/// Throws unless classify_pointer finds `access` accessible, naming the argument.
inline void check_pointer_access(const char* function, const char* argument,
                                 pointer_access access, int pointer_device, int current_device) {
  switch (access) {
    case pointer_access::accessible:
      return;
    case pointer_access::host_memory:
      throw_invalid_argument(function, argument, "a host pointer (not device-accessible)",
                             "device, managed or registered host memory");
    case pointer_access::other_device:
      throw_invalid_argument(
          function, argument,
          "memory of device " + std::to_string(pointer_device) + " (the current device is " +
              std::to_string(current_device) + ", without peer access to it)",
          "memory of the current device, managed or registered host memory, or a peer's "
          "memory after cudaDeviceEnablePeerAccess");
  }
}

/// Throws unless the current device can address `p` (classify_pointer): device, managed
/// and registered (pinned) host memory pass; plain host memory throws unless the device
/// reads pageable host memory (HMM, ATS); another device's memory throws unless peer
/// access to it is enabled (the runtime then gives the pointer a device alias on the
/// current device, and cudaDeviceCanAccessPeer agrees). A device query (it needs the
/// driver), so it follows every pure argument check; a kernel given such a pointer would
/// otherwise die of a sticky illegal-address fault that ruins the CUDA context.
inline void check_device_accessible(const char* function, const char* argument, const void* p) {
  cudaPointerAttributes a{};
  cuda_check(cudaPointerGetAttributes(&a, p), "cudaPointerGetAttributes", __FILE__, __LINE__);
  if (a.type == cudaMemoryTypeManaged || a.type == cudaMemoryTypeHost) return;
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice", __FILE__, __LINE__);
  int pageable = 0;
  if (a.type == cudaMemoryTypeUnregistered &&
      cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device) != cudaSuccess) {
    pageable = 0;
  }
  int peer = 0;
  if (a.type == cudaMemoryTypeDevice && a.device != device &&
      (cudaDeviceCanAccessPeer(&peer, device, a.device) != cudaSuccess ||
       a.devicePointer == nullptr)) {
    peer = 0;
  }
  check_pointer_access(function, argument,
                       classify_pointer(a.type, a.device, device, pageable != 0, peer != 0),
                       a.device, device);
}

}  // namespace detail

/// The cudaError_t of a wham::error of kind cuda or no_device (cudaSuccess otherwise).
inline cudaError_t cuda_error_of(const error& e) noexcept {
  return static_cast<cudaError_t>(e.cuda_code());
}

}  // namespace wham

/// Checks a CUDA runtime call; throws wham::error with the call and its site.
#define WHAM_CUDA_TRY(call) ::wham::detail::cuda_check((call), #call, __FILE__, __LINE__)

/// After a kernel launch: reports a bad launch configuration without synchronising.
#define WHAM_CHECK_LAUNCH(name) \
  ::wham::detail::cuda_check(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)
