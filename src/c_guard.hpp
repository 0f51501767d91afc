// The C interface's one error model: every exception becomes a status and a message kept
// per thread for wham_last_error(); none crosses the C boundary.
#pragma once

#include <wham/error.hpp>
#include <wham/wham.h>

#include <exception>
#include <new>
#include <string>

namespace wham::c {

/// This thread's last error message (wham_last_error returns its c_str()).
std::string& last_error() noexcept;

inline void set_last_error(const char* message) noexcept {
  try {
    last_error() = message;
  } catch (...) {
    last_error().clear();  // no memory for the message: an empty one beats none
  }
}

/// The status of a wham::error's kind.
inline wham_status status_of(const wham::error& e) noexcept {
  switch (e.kind()) {
    case error_kind::invalid_argument:
      return WHAM_ERROR_INVALID_ARGUMENT;
    case error_kind::not_supported:
      return WHAM_ERROR_NOT_SUPPORTED;
    case error_kind::cuda:
      return WHAM_ERROR_CUDA;
    case error_kind::no_device:
      return WHAM_ERROR_NO_DEVICE;
  }
  return WHAM_ERROR_INTERNAL;
}

/// Runs `body`; returns WHAM_SUCCESS (clearing this thread's last error), or the status
/// of the exception it threw (keeping its message for wham_last_error). `cuda_code`, where
/// given, receives a wham::error's cudaError_t value (0 for other failures and success).
template <class Body>
wham_status guarded(Body&& body, int* cuda_code = nullptr) noexcept {
  if (cuda_code != nullptr) *cuda_code = 0;
  try {
    body();
    last_error().clear();
    return WHAM_SUCCESS;
  } catch (const wham::error& e) {
    set_last_error(e.what());
    if (cuda_code != nullptr) *cuda_code = e.cuda_code();
    return status_of(e);
  } catch (const std::bad_alloc&) {
    set_last_error("wham: out of host memory");
  } catch (const std::exception& e) {
    set_last_error(e.what());
  } catch (...) {
    set_last_error("wham: unknown exception");
  }
  return WHAM_ERROR_INTERNAL;
}

/// Throws wham::error naming a null output pointer of a C query.
inline void check_out(const char* function, const char* argument, const void* p) {
  if (p == nullptr) {
    detail::throw_invalid_argument(function, argument, "NULL", "a host pointer to the result");
  }
}

}  // namespace wham::c
