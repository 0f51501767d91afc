// wham::error's kinds, the plain no-device messages, the cross-device pointer decision and
// zero-size calls: all host logic, checked without a GPU (and the same with one).
#include <wham/error.hpp>
#include <wham/fwht.cuh>
#include <wham/hadamard.cuh>
#include <wham/iqp.cuh>

#include "../../src/c_guard.hpp"
#include "api_checks.cuh"
#include "catch.hpp"

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace {

using wham::error_kind;
using wham_test::message_of;
using c64 = cuda::std::complex<float>;
using c128 = cuda::std::complex<double>;

/// The wham::error that f throws (its kind, code and message), or fails the test.
template <class F>
wham::error error_of(F&& f) {
  try {
    f();
  } catch (const wham::error& e) {
    return e;
  }
  FAIL("no wham::error thrown");
  return wham::error("unreachable");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("wham::error is a runtime_error whose kind defaults to invalid argument",
          "[errors]") {
  static_assert(std::is_base_of_v<std::runtime_error, wham::error>);
  const wham::error plain("wham: something");
  CHECK(plain.kind() == error_kind::invalid_argument);
  CHECK(plain.cuda_code() == 0);
  CHECK(wham::cuda_error_of(plain) == cudaSuccess);
  CHECK(std::string(plain.what()) == "wham: something");

  const auto e = error_of([] { wham::detail::check_range("fwht", "log_n", 31, 0, 30); });
  CHECK(e.kind() == error_kind::invalid_argument);
  CHECK(std::string(e.what()) == "wham::fwht: log_n = 31 is invalid (valid: 0..30)");

  const auto n = error_of([] {
    wham::detail::throw_not_supported("fwht", "log_n", 13, "0..12 on this device (fused path)");
  });
  CHECK(n.kind() == error_kind::not_supported);
  CHECK(std::string(n.what()) ==
        "wham::fwht: log_n = 13 is invalid (valid: 0..12 on this device (fused path))");
}

TEST_CASE("the C interface's status follows the kind, never the text", "[errors][capi]") {
  using wham::c::status_of;
  using wham::detail::argument_message;
  CHECK(status_of(wham::error("x", error_kind::invalid_argument)) == WHAM_ERROR_INVALID_ARGUMENT);
  CHECK(status_of(wham::error("x", error_kind::not_supported)) == WHAM_ERROR_NOT_SUPPORTED);
  CHECK(status_of(wham::error("x", error_kind::cuda, 700)) == WHAM_ERROR_CUDA);
  CHECK(status_of(wham::error("x", error_kind::no_device, 100)) == WHAM_ERROR_NO_DEVICE);
  // A message that looks like a CUDA failure is still what its kind says.
  CHECK(status_of(wham::error("wham: CUDA error cudaErrorInvalidValue")) ==
        WHAM_ERROR_INVALID_ARGUMENT);
  CHECK(argument_message("f", "a", "3", "0..2") == "wham::f: a = 3 is invalid (valid: 0..2)");
}

TEST_CASE("a CUDA failure carries its cudaError_t and keeps its message", "[errors]") {
  const auto e = error_of([] { WHAM_CUDA_TRY(cudaErrorInvalidValue); });
  CHECK(e.kind() == error_kind::cuda);
  CHECK(wham::cuda_error_of(e) == cudaErrorInvalidValue);
  const std::string what = e.what();
  CAPTURE(what);
  CHECK(what.rfind("wham: CUDA error cudaErrorInvalidValue (invalid argument) in "
                   "cudaErrorInvalidValue at test_error_model_host.cu:",
                   0) == 0);
  // Codes above 100 too: nothing is recovered from the text.
  const auto f = error_of([] { WHAM_CUDA_TRY(cudaErrorIllegalAddress); });
  CHECK(f.kind() == error_kind::cuda);
  CHECK(f.cuda_code() == int(cudaErrorIllegalAddress));
}

TEST_CASE("no GPU or no driver is said in plain words, never as a driver upgrade",
          "[errors][no_device]") {
  for (const cudaError_t s :
       {cudaErrorNoDevice, cudaErrorInsufficientDriver, cudaErrorStubLibrary,
        cudaErrorSystemDriverMismatch, cudaErrorDevicesUnavailable,
        cudaErrorCompatNotSupportedOnDevice}) {
    CAPTURE(cudaGetErrorName(s));
    CHECK(wham::detail::is_no_device_status(s));
    const auto e = error_of([&] { WHAM_CUDA_TRY(s); });
    CHECK(e.kind() == error_kind::no_device);
    CHECK(wham::cuda_error_of(e) == s);
    CHECK(contains(e.what(), cudaGetErrorName(s)));  // the name stays, for a bug report
  }
  for (const cudaError_t s : {cudaErrorInvalidValue, cudaErrorIllegalAddress,
                              cudaErrorMemoryAllocation, cudaErrorInvalidDevice}) {
    CAPTURE(cudaGetErrorName(s));
    CHECK_FALSE(wham::detail::is_no_device_status(s));
  }

  using wham::detail::no_device_message;
  const std::string site = "cudaGetDevice at device.cuh:40";
  CHECK(no_device_message(cudaErrorNoDevice, 13000, site) ==
        "wham: no CUDA device is available (no GPU is visible to this process, or every GPU "
        "is busy or hidden by CUDA_VISIBLE_DEVICES) (cudaErrorNoDevice in " + site + ")");
  // No driver at all: cudaDriverGetVersion answers 0, and the runtime says "insufficient
  // driver"; wham says that no driver was found.
  const std::string none = no_device_message(cudaErrorInsufficientDriver, 0, site);
  CAPTURE(none);
  CHECK(none.rfind("wham: no NVIDIA driver was found, so no CUDA device is available", 0) == 0);
  CHECK_FALSE(contains(none, "too old"));
  CHECK(contains(none, "(cudaErrorInsufficientDriver in " + site + ")"));
  CHECK(no_device_message(cudaErrorStubLibrary, 13000, site).rfind(
            "wham: no NVIDIA driver was found", 0) == 0);
  // An installed driver older than the runtime: both versions named.
  const std::string old = no_device_message(cudaErrorInsufficientDriver, 12040, site);
  CAPTURE(old);
  CHECK(old.rfind("wham: the NVIDIA driver (CUDA 12.4) is too old for this build of wham (CUDA " +
                      wham::detail::cuda_version_text(CUDART_VERSION) + "); update the driver",
                  0) == 0);
  CHECK(wham::detail::cuda_version_text(13000) == "13.0");
  CHECK(wham::detail::cuda_version_text(12090) == "12.9");
  CHECK(contains(no_device_message(cudaErrorSystemDriverMismatch, 13000, site),
                 "does not match this system's kernel module"));
}

TEST_CASE("a call that needs the device, on a machine without one, says so plainly",
          "[errors][no_device]") {
  int count = 0;
  const cudaError_t s = cudaGetDeviceCount(&count);
  if (s == cudaSuccess && count > 0) {
    WARN("a CUDA device is present: the pure checks above cover the no-device messages");
    return;
  }
  alignas(16) float data[16] = {};
  const auto e = error_of([&] { wham::fwht(data, data, 4, 1); });
  CAPTURE(e.what());
  CHECK(e.kind() == error_kind::no_device);
  CHECK(wham::detail::is_no_device_status(wham::cuda_error_of(e)));
  CHECK(std::string(e.what()).rfind("wham: no ", 0) == 0);
}

TEST_CASE("another device's memory is refused unless peer access is enabled",
          "[errors][pointers]") {
  using wham::detail::classify_pointer;
  using wham::detail::pointer_access;
  // (type, pointer's device, current device, pageable host access, peer access enabled)
  CHECK(classify_pointer(cudaMemoryTypeDevice, 0, 0, false, false) ==
        pointer_access::accessible);
  CHECK(classify_pointer(cudaMemoryTypeDevice, 1, 0, false, false) ==
        pointer_access::other_device);
  CHECK(classify_pointer(cudaMemoryTypeDevice, 1, 0, true, false) ==
        pointer_access::other_device);
  CHECK(classify_pointer(cudaMemoryTypeDevice, 1, 0, false, true) ==
        pointer_access::accessible);
  CHECK(classify_pointer(cudaMemoryTypeDevice, 0, 3, false, false) ==
        pointer_access::other_device);
  // Managed and registered host memory: every device addresses them, whichever was current.
  CHECK(classify_pointer(cudaMemoryTypeManaged, 1, 0, false, false) ==
        pointer_access::accessible);
  CHECK(classify_pointer(cudaMemoryTypeHost, 1, 0, false, false) == pointer_access::accessible);
  // Plain host memory: only where the device reads pageable memory (HMM, ATS).
  CHECK(classify_pointer(cudaMemoryTypeUnregistered, 0, 0, false, false) ==
        pointer_access::host_memory);
  CHECK(classify_pointer(cudaMemoryTypeUnregistered, 0, 0, true, false) ==
        pointer_access::accessible);

  using wham::detail::check_pointer_access;
  CHECK(message_of([] {
          check_pointer_access("fwht", "out", pointer_access::other_device, 1, 0);
        }) == "wham::fwht: out = memory of device 1 (the current device is 0, without peer "
              "access to it) is invalid (valid: memory of the current device, managed or "
              "registered host memory, or a peer's memory after cudaDeviceEnablePeerAccess)");
  CHECK(error_of([] {
          check_pointer_access("iqp_encode", "states", pointer_access::other_device, 2, 1);
        }).kind() == error_kind::invalid_argument);
  CHECK(message_of([] {
          check_pointer_access("fwht", "in", pointer_access::host_memory, 0, 0);
        }) == "wham::fwht: in = a host pointer (not device-accessible) is invalid (valid: "
              "device, managed or registered host memory)");
  CHECK(message_of([] {
          check_pointer_access("fwht", "in", pointer_access::accessible, 0, 0);
        }) == "(no throw)");
}

TEST_CASE("zero-size calls succeed without pointers or a device", "[errors][zero_size]") {
  // batch = 0 returns after the scalar checks: null pointers, no driver needed.
  float* const f = nullptr;
  double* const d = nullptr;
  __half* const h = nullptr;
  c64* const s64 = nullptr;
  c128* const s128 = nullptr;
  const std::string ok = "(no throw)";
  CHECK(message_of([&] { wham::fwht(f, f, 10, 0); }) == ok);
  CHECK(message_of([&] { wham::fwht(s128, s128, 0, 0); }) == ok);
  CHECK(message_of([&] {
          wham::hadamard(h, h, 12, 3, 0, 1.0f, 0, wham::hadamard_matrices::quarot, true);
        }) == ok);
  CHECK(message_of([&] { wham::iqp_encode(d, s64, 7, 0, wham::iqp_variant::iqp); }) == ok);
  // The other scalars are still checked, and a negative batch is still refused.
  CHECK(message_of([&] { wham::fwht(f, f, 31, 0); }) ==
        "wham::fwht: log_n = 31 is invalid (valid: 0..30)");
  CHECK(message_of([&] { wham::fwht(f, f, 3, 0, 1.0f, 0, wham::fwht_path(9)); }) ==
        "wham::fwht: path = 9 is invalid (valid: automatic, fused, kronecker or baseline)");
  CHECK(message_of([&] { wham::hadamard(f, f, 24, 3, 0); }) ==
        "wham::hadamard: m = 24 is invalid (valid: 1, 12, 20, 28 or 40)");
  CHECK(message_of([&] { wham::iqp_encode(f, s128, 31, 0, wham::iqp_variant::iqp_z); }) ==
        "wham::iqp_encode: num_qubits = 31 is invalid (valid: 1..30)");
  CHECK(message_of([&] { wham::fwht(f, f, 3, -1); })
            .rfind("wham::fwht: batch = -1 is invalid (valid: 0..", 0) == 0);
  CHECK(message_of([&] { wham::hadamard(f, f, 20, 3, -1); })
            .rfind("wham::hadamard: batch = -1 is invalid (valid: 0..", 0) == 0);
  CHECK(message_of([&] { wham::iqp_encode(d, s128, 3, -1, wham::iqp_variant::iqp); })
            .rfind("wham::iqp_encode: batch = -1 is invalid (valid: 0..", 0) == 0);
}
