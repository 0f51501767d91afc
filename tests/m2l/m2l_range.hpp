// The range of |delta| over which docs/specs/m2l.md ("Range of |delta|") promises the
// accuracy table, and a relative error that neither overflows nor underflows at its ends.
// Host-only, plain C++17.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <limits>

namespace wham_test {

/// The smallest |delta| of the rule p! mu (4 / |delta|)^(p+1) <= largest finite T, with mu
/// the largest |M_k^l| of the pair (in logarithms: p! mu / max underflows nothing there).
template <class T>
double m2l_min_distance(int p, double mu) {
  const double lg =
      std::lgamma(double(p) + 1.0) + std::log(mu) - std::log(double(std::numeric_limits<T>::max()));
  return 4.0 * std::exp(lg / double(p + 1));
}

/// The largest |delta|: 1 / |delta| >= smallest normal T (the locals, about |M_0^0| / |delta|,
/// stay normal where |M_0^0| >= 1).
template <class T>
double m2l_max_distance() {
  return 1.0 / double(std::numeric_limits<T>::min());
}

/// ||out - ref|| / ||ref||, both scaled by the largest |ref| component first, so that the
/// squares neither overflow (locals near the largest T) nor vanish (near the smallest);
/// a non-finite out gives +inf.
template <class A, class B>
double scaled_relative_error(const A* out, const B* ref, std::size_t n) {
  double big = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    big = std::max({big, std::abs(double(ref[i].real())), std::abs(double(ref[i].imag()))});
  }
  if (!(big > 0.0) || !std::isfinite(big)) return INFINITY;
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::complex<double> o(double(out[i].real()), double(out[i].imag()));
    const std::complex<double> r(double(ref[i].real()), double(ref[i].imag()));
    const double e = std::norm((o - r) / big);
    if (!std::isfinite(e) || !std::isfinite(std::norm(o / big))) return INFINITY;
    num += e;
    den += std::norm(r / big);
  }
  return std::sqrt(num / den);
}

}  // namespace wham_test
