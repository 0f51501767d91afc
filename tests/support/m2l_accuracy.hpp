// The M2L accuracy the docs promise (docs/specs/m2l.md, Accuracy; docs/specs/fmm.md), as
// the tests hold it: one table for every M2L and FMM test.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace wham_test {

/// The worst relative error ||out - ref||_F / ||ref||_F measured for one translation at
/// order p (the figure of the band's top order, over a sweep of the polar angle near the
/// axis, where the rotations round worst).
template <class T>
double documented_accuracy(int p) {
  if constexpr (std::is_same_v<T, double>) {
    return p <= 8 ? 7e-15 : p <= 12 ? 3e-14 : p <= 16 ? 3e-13 : 4e-12;
  } else {
    return p <= 8 ? 2.4e-6 : p <= 12 ? 1.4e-5 : 1.2e-4;
  }
}

/// The tests' margin over the documented figure.
inline constexpr double accuracy_margin = 4.0;

/// The bound a test holds a result to: the margin times (the documented accuracy + eps
/// sqrt(terms)), `terms` the most translations one target sums (the rounding of a sum of
/// independent terms grows like its square root; 1 for wham::m2l).
template <class T>
double m2l_tolerance(int p, std::int64_t terms = 1) {
  return accuracy_margin * (documented_accuracy<T>(p) +
                            double(std::numeric_limits<T>::epsilon()) * std::sqrt(double(terms)));
}

}  // namespace wham_test
