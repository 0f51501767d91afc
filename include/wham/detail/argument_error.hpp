/// \file wham/detail/argument_error.hpp
/// \brief `wham::error` and the argument checks that need no CUDA: wham/error.hpp
/// builds on them, and the host-only headers (wham/fmm_lists.hpp) throw through them.
#pragma once

#include <stdexcept>
#include <string>

namespace wham {

/// What went wrong, for callers that act on it (the C interface maps it to a status).
enum class error_kind {
  invalid_argument,  ///< an argument outside its documented range: nothing was enqueued
  not_supported,     ///< valid arguments this device or build cannot serve (an explicit path)
  cuda,              ///< a CUDA call failed: error::cuda_code() holds its cudaError_t
  no_device,         ///< no CUDA device, or no driver able to run this build
};

/// The one exception type wham throws. what() is the full message; kind() classifies it,
/// so that no caller has to parse the text.
class error : public std::runtime_error {
 public:
  explicit error(const std::string& message, error_kind kind = error_kind::invalid_argument,
                 int cuda_code = 0)
      : std::runtime_error(message), kind_(kind), cuda_code_(cuda_code) {}
  explicit error(const char* message, error_kind kind = error_kind::invalid_argument,
                 int cuda_code = 0)
      : std::runtime_error(message), kind_(kind), cuda_code_(cuda_code) {}

  error_kind kind() const noexcept { return kind_; }

  /// The failed call's cudaError_t value for kinds cuda and no_device, else 0
  /// (cudaSuccess). An int here, so that this header needs no CUDA; wham/error.hpp's
  /// wham::cuda_error_of returns it as cudaError_t.
  int cuda_code() const noexcept { return cuda_code_; }

 private:
  error_kind kind_;
  int cuda_code_;
};

namespace detail {

inline std::string argument_message(const char* function, const char* argument,
                                    const std::string& value, const std::string& valid) {
  return std::string("wham::") + function + ": " + argument + " = " + value +
         " is invalid (valid: " + valid + ")";
}

[[noreturn]] inline void throw_invalid_argument(const char* function, const char* argument,
                                                const std::string& value,
                                                const std::string& valid) {
  throw error(argument_message(function, argument, value, valid), error_kind::invalid_argument);
}

[[noreturn]] inline void throw_invalid_argument(const char* function, const char* argument,
                                                long long value, const std::string& valid) {
  throw_invalid_argument(function, argument, std::to_string(value), valid);
}

/// The same message as throw_invalid_argument, of kind not_supported: the value is valid
/// in general but not on this device or build (an explicit path that cannot serve it).
[[noreturn]] inline void throw_not_supported(const char* function, const char* argument,
                                             long long value, const std::string& valid) {
  throw error(argument_message(function, argument, std::to_string(value), valid),
              error_kind::not_supported);
}

/// Throws unless `lo <= value <= hi`.
inline void check_range(const char* function, const char* argument, long long value, long long lo,
                        long long hi) {
  if (value < lo || value > hi) {
    throw_invalid_argument(function, argument, value,
                           std::to_string(lo) + ".." + std::to_string(hi));
  }
}

}  // namespace detail
}  // namespace wham
