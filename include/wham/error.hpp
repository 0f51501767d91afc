/// \file wham/error.hpp
/// \brief wham's one error model and its launch conventions.
///
/// Every host entry point of wham validates its arguments and throws
/// `wham::error` before anything is enqueued:
///
///   - invalid argument:  "wham::iqp_encode: num_qubits = 31 is out of range (valid: 1..30)"
///   - CUDA failure:      "wham: CUDA error cudaErrorInvalidValue (invalid argument)
///                         in cudaLaunchKernel at fused.cuh:123"
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

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* expression,
                                          const char* file, int line) {
  std::string where = file;
  auto slash = where.find_last_of('/');
  if (slash != std::string::npos) where = where.substr(slash + 1);
  throw error(std::string("wham: CUDA error ") + cudaGetErrorName(status) + " (" +
              cudaGetErrorString(status) + ") in " + expression + " at " + where + ":" +
              std::to_string(line));
}

inline void cuda_check(cudaError_t status, const char* expression, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, expression, file, line);
}

/// Throws unless the device can address `p`: device, managed and registered (pinned) host
/// memory pass; plain host memory (cudaMemoryTypeUnregistered) throws, naming the argument,
/// unless the device reads pageable host memory (HMM, ATS). A device query (it needs the
/// driver), so it follows every pure argument check; a kernel given a host pointer would
/// otherwise die of a sticky illegal-address fault that ruins the CUDA context.
inline void check_device_accessible(const char* function, const char* argument, const void* p) {
  cudaPointerAttributes a{};
  cuda_check(cudaPointerGetAttributes(&a, p), "cudaPointerGetAttributes", __FILE__, __LINE__);
  if (a.type != cudaMemoryTypeUnregistered) return;
  int device = 0, pageable = 0;
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device) == cudaSuccess &&
      pageable != 0) {
    return;
  }
  throw_invalid_argument(function, argument, "a host pointer (not device-accessible)",
                         "device, managed or registered host memory");
}

}  // namespace detail
}  // namespace wham

/// Checks a CUDA runtime call; throws wham::error with the call and its site.
#define WHAM_CUDA_TRY(call) ::wham::detail::cuda_check((call), #call, __FILE__, __LINE__)

/// After a kernel launch: reports a bad launch configuration without synchronising.
#define WHAM_CHECK_LAUNCH(name) \
  ::wham::detail::cuda_check(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)
