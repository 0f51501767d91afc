// A fast host reference of one IQP state for large n, shared by the GPU tests of the
// Kronecker and columns-first schedules: theta(x) built bit by bit (O(2^n) additions a
// qubit instead of O(n^2) an amplitude), then the reference FWHT in double. Checked
// against wham::reference::iqp_state where that is fast (test_iqp_kronecker_gpu).
#pragma once

#include <wham/reference/fwht.hpp>
#include <wham/reference/iqp.hpp>

#include <cmath>
#include <complex>
#include <cstddef>
#include <vector>

namespace wham_test {

template <class P>
std::vector<std::complex<double>> fast_iqp_state(const P* params, int n, bool with_pairs) {
  const std::size_t N = std::size_t(1) << n;
  std::vector<double> theta(N, 0.0), cross(N, 0.0);
  for (int i = 0; i < n; ++i) {
    const std::size_t h = std::size_t(1) << i;
    // cross[x] = sum_{j < i, bit j of x} J_ji for x < 2^i.
    cross[0] = 0.0;
    for (std::size_t x = 1; x < h; ++x) {
      const int j = __builtin_ctzll(x);
      const double J =
          with_pairs ? double(params[wham::reference::iqp_pair_offset(n, j, i)]) : 0.0;
      cross[x] = cross[x & (x - 1)] + J;
    }
    for (std::size_t x = 0; x < h; ++x) theta[x | h] = theta[x] + double(params[i]) + cross[x];
  }
  std::vector<std::complex<double>> s(N);
  for (std::size_t x = 0; x < N; ++x) s[x] = std::polar(1.0, theta[x]);
  wham::reference::fwht_inplace(s.data(), n);
  const double scale = std::ldexp(1.0, -n);
  for (auto& v : s) v *= scale;
  return s;
}

/// The float copy of the parameters `pd` that a test with float parameters uploads; with
/// float parameters (`!double_params`) pd is rounded to those floats too, so that the host
/// reference sees what the device sees.
inline std::vector<float> float_params(std::vector<double>& pd, bool double_params) {
  std::vector<float> pf(pd.begin(), pd.end());
  if (!double_params) {
    for (std::size_t i = 0; i < pd.size(); ++i) pd[i] = double(pf[i]);
  }
  return pf;
}

}  // namespace wham_test
