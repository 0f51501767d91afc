/// \file wham/reference/fwht.hpp
/// \brief Host reference of the Walsh-Hadamard transform, in double
/// (compiles without nvcc: plain C++17).
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace wham::reference {

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

/// Parity of the set bits of v (plain C++17: no compiler builtin, so any host compiler).
inline bool parity(std::uint64_t v) {
  for (int shift = 32; shift > 0; shift >>= 1) v ^= v >> shift;
  return (v & 1) != 0;
}

/// The definition, O(4^n): out[k] = scale * sum_x in[x] (-1)^popcount(x & k).
template <class T>
std::vector<T> walsh_matrix_product(const std::vector<T>& in, int log_n, double scale = 1.0) {
  const std::size_t n = std::size_t(1) << log_n;
  if (in.size() != n) throw std::invalid_argument("walsh_matrix_product: size is not 2^log_n");
  std::vector<T> out(n, T(0));
  for (std::size_t k = 0; k < n; ++k) {
    T acc(0);
    for (std::size_t x = 0; x < n; ++x) {
      const bool odd = parity(static_cast<std::uint64_t>(x & k));
      acc = odd ? acc - in[x] : acc + in[x];
    }
    out[k] = acc * scale;
  }
  return out;
}

/// Batched reference: rows of 2^log_n, batch-major, computed in double (or
/// std::complex<double>) whatever T is, returned in that double type.
template <class D, class T>
std::vector<D> fwht_batched(const T* in, int log_n, std::int64_t batch, double scale = 1.0) {
  const std::size_t n = std::size_t(1) << log_n;
  std::vector<D> out(n * static_cast<std::size_t>(batch));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = D(in[i]);
  for (std::int64_t b = 0; b < batch; ++b) {
    D* row = out.data() + static_cast<std::size_t>(b) * n;
    fwht_inplace(row, log_n);
    for (std::size_t k = 0; k < n; ++k) row[k] *= scale;
  }
  return out;
}

}  // namespace wham::reference
