/// \file wham/detail/wht/fwht_host.hpp
/// \brief The in-place Walsh-Hadamard transform of one row on the host, in any arithmetic
/// type: the host replays of the fused and Kronecker index arithmetic (fused_layout.hpp,
/// kronecker_index.hpp) run it, and wham/reference/fwht.hpp builds on it. Plain C++17.
#pragma once

#include <cstddef>

namespace wham::detail::wht {

/// In-place unnormalised WHT of one row of 2^log_n values, O(n 2^n):
/// v[k] <- sum_x v[x] (-1)^popcount(x & k).
template <class T>
void fwht_inplace(T* v, int log_n) {
  const std::size_t n = std::size_t(1) << log_n;
  for (std::size_t h = 1; h < n; h <<= 1) {
    for (std::size_t i = 0; i < n; i += 2 * h) {
      for (std::size_t j = i; j < i + h; ++j) {
        const T a = v[j];
        const T b = v[j + h];
        v[j] = a + b;
        v[j + h] = a - b;
      }
    }
  }
}

}  // namespace wham::detail::wht
