/// \file wham/reference/fwht.hpp
/// \brief Host references of the Walsh-Hadamard transform and of the Hadamard transform of
/// rows of m * 2^k (wham::hadamard), in double (compiles without nvcc: plain C++17).
#pragma once

#include <wham/detail/wht/fwht_host.hpp>
#include <wham/detail/wht/hadamard_matrices.hpp>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace wham::reference {

using wham::hadamard_matrices;

/// In-place unnormalised WHT of one row of 2^log_n values (detail/wht/fwht_host.hpp).
using wham::detail::wht::fwht_inplace;

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

/// Entry (a, j) of H_m (m in 12, 20, 28, 40) of the set `matrices`: +1 or -1
/// (detail/wht/hadamard_matrices.hpp).
using wham::detail::wht::hadamard_entry;

/// wham::hadamard's definition, batched: each row of m * 2^log_k values of `in` becomes
/// scale * (H_m (x) H_(2^log_k)) row (H_m^T with `transpose`; m = 1: the WHT), computed
/// in D (double or std::complex<double>): the WHT of each segment of 2^log_k, then H_m
/// over each column.
template <class D, class T>
std::vector<D> hadamard_batched(
    const T* in, int m, int log_k, std::int64_t batch, double scale = 1.0,
    hadamard_matrices matrices = hadamard_matrices::fast_hadamard_transform,
    bool transpose = false) {
  const std::size_t seg = std::size_t(1) << log_k;
  const std::size_t row = seg * static_cast<std::size_t>(m);
  std::vector<D> out(row * static_cast<std::size_t>(batch));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = D(in[i]);
  std::vector<D> column(static_cast<std::size_t>(m));
  std::vector<int> h(static_cast<std::size_t>(m) * static_cast<std::size_t>(m), 1);
  for (int a = 0; a < m && m > 1; ++a) {
    for (int j = 0; j < m; ++j) {
      h[static_cast<std::size_t>(a * m + j)] =
          transpose ? hadamard_entry(m, matrices, j, a) : hadamard_entry(m, matrices, a, j);
    }
  }
  for (std::int64_t b = 0; b < batch; ++b) {
    D* r = out.data() + static_cast<std::size_t>(b) * row;
    for (int a = 0; a < m; ++a) fwht_inplace(r + static_cast<std::size_t>(a) * seg, log_k);
    for (std::size_t c = 0; c < seg && m > 1; ++c) {
      for (int a = 0; a < m; ++a) {
        D acc(0);
        for (int j = 0; j < m; ++j) {
          const D& x = r[static_cast<std::size_t>(j) * seg + c];
          acc = h[static_cast<std::size_t>(a * m + j)] > 0 ? acc + x : acc - x;
        }
        column[static_cast<std::size_t>(a)] = acc;
      }
      for (int a = 0; a < m; ++a) r[static_cast<std::size_t>(a) * seg + c] = column[a];
    }
    for (std::size_t k = 0; k < row; ++k) r[k] *= scale;
  }
  return out;
}

}  // namespace wham::reference
