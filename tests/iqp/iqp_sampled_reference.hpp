// Host references for IQP states too large for wham::reference::iqp_state (n up to 30):
// single amplitudes of iqp_z by the product form, and slices of 2^m consecutive amplitudes
// of iqp by the defining sum, O(2^n) a slice (every x visited once, on every core).
// Plain C++17; checked against wham::reference at small n by test_iqp_reference.
#pragma once

#include <wham/reference/iqp.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <thread>
#include <vector>

namespace wham_test {

/// amp[k] of the iqp_z state: prod_i (1 + (-1)^{k_i} e^{i a_i}) / 2.
inline std::complex<double> iqp_z_amplitude(const double* a, int n, std::uint64_t k) {
  std::complex<double> amp = 1.0;
  for (int i = 0; i < n; ++i) {
    const std::complex<double> e = std::polar(1.0, a[i]);
    amp *= ((k >> i) & 1u) ? (1.0 - e) * 0.5 : (1.0 + e) * 0.5;
  }
  return amp;
}

/// Amplitudes k = (k_hi << m) | k_lo, k_lo in [0, 2^m), for each k_hi of `k_his`, of the iqp
/// state of one sample (n + n(n-1)/2 parameters), by the definition
///   amp[k] = 2^-n sum_x exp(i theta(x)) (-1)^popcount(x & k).
/// With x = (h << m) | l: theta(x) = T(h << m) + T(l) + sum_{i in l} c_i(h), c_i(h) = sum_{j in
/// h} J_{i, m + j}, so for each h the 2^m terms exp(i theta) are a table of l times the
/// products of exp(i c_i(h)), and their transform over l gives every k_lo at once. Result:
/// slices[s][k_lo], in double.
inline std::vector<std::vector<std::complex<double>>> iqp_slices(
    const double* params, int n, int m, const std::vector<std::uint64_t>& k_his) {
  using C = std::complex<double>;
  const int hbits = n - m;
  const std::size_t L = std::size_t(1) << m;
  const std::uint64_t H = std::uint64_t(1) << hbits;
  const auto J = [&](int i, int j) { return params[wham::reference::iqp_pair_offset(n, i, j)]; };
  std::vector<C> e_lo(L);
  for (std::size_t l = 0; l < L; ++l) {
    e_lo[l] = std::polar(1.0, wham::reference::iqp_phase(params, n, true, l));
  }
  const unsigned threads = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  const std::size_t S = k_his.size();
  std::vector<std::vector<C>> partial(threads, std::vector<C>(S * L, C(0.0, 0.0)));
  auto work = [&](unsigned t) {
    std::vector<C> w(L), factor(static_cast<std::size_t>(m));
    std::vector<C>& acc = partial[t];
    for (std::uint64_t h = t; h < H; h += threads) {
      const std::uint64_t x_hi = h << m;
      for (int i = 0; i < m; ++i) {
        double c = 0.0;
        for (int j = 0; j < hbits; ++j) {
          if ((h >> j) & 1u) c += J(i, m + j);
        }
        factor[std::size_t(i)] = std::polar(1.0, c);
      }
      w[0] = std::polar(1.0, wham::reference::iqp_phase(params, n, true, x_hi));
      for (int i = 0; i < m; ++i) {
        const std::size_t bit = std::size_t(1) << i;
        for (std::size_t l = 0; l < bit; ++l) w[l | bit] = w[l] * factor[std::size_t(i)];
      }
      for (std::size_t l = 0; l < L; ++l) w[l] *= e_lo[l];
      wham::reference::fwht_inplace(w.data(), m);
      for (std::size_t s = 0; s < S; ++s) {
        C* a = acc.data() + s * L;
        if (wham::reference::parity(h & k_his[s])) {
          for (std::size_t l = 0; l < L; ++l) a[l] -= w[l];
        } else {
          for (std::size_t l = 0; l < L; ++l) a[l] += w[l];
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work, t);
  for (auto& th : pool) th.join();
  const double scale = std::ldexp(1.0, -n);
  std::vector<std::vector<C>> slices(S, std::vector<C>(L, C(0.0, 0.0)));
  for (std::size_t s = 0; s < S; ++s) {
    for (unsigned t = 0; t < threads; ++t) {
      for (std::size_t l = 0; l < L; ++l) slices[s][l] += partial[t][s * L + l];
    }
    for (auto& v : slices[s]) v *= scale;
  }
  return slices;
}

}  // namespace wham_test
