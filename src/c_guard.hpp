// The C interface's one error model: every exception becomes a status and a message kept
// per thread for wham_last_error(); none crosses the C boundary.
#pragma once

#include <wham/error.hpp>
#include <wham/wham.h>

#include <cstring>
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

/// wham::error's CUDA failures start with this prefix (wham/error.hpp, throw_cuda_error).
inline bool is_cuda_error(const char* message) {
  static constexpr char prefix[] = "wham: CUDA error";
  return std::strncmp(message, prefix, sizeof(prefix) - 1) == 0;
}

/// Runs `body`; returns WHAM_SUCCESS, or the status of the exception it threw.
template <class Body>
wham_status guarded(Body&& body) noexcept {
  try {
    body();
    return WHAM_SUCCESS;
  } catch (const wham::error& e) {
    set_last_error(e.what());
    return is_cuda_error(e.what()) ? WHAM_ERROR_CUDA : WHAM_ERROR_INVALID_ARGUMENT;
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
