/// \file wham/detail/argument_error.hpp
/// \brief `wham::error` and the argument checks that need no CUDA: wham/error.hpp
/// builds on them, and the host-only headers (wham/fmm_lists.hpp) throw through them.
#pragma once

#include <stdexcept>
#include <string>

namespace wham {

/// The one exception type wham throws.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

[[noreturn]] inline void throw_invalid_argument(const char* function, const char* argument,
                                                const std::string& value,
                                                const std::string& valid) {
  throw error(std::string("wham::") + function + ": " + argument + " = " + value +
              " is invalid (valid: " + valid + ")");
}

[[noreturn]] inline void throw_invalid_argument(const char* function, const char* argument,
                                                long long value, const std::string& valid) {
  throw_invalid_argument(function, argument, std::to_string(value), valid);
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
