// What the M2M / L2L tests share (plain C++17): the accuracy the docs promise
// (docs/specs/translations.md, Accuracy) as the tests hold it, by order and precision.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace translations_test {

/// The documented accuracy of one translation (docs/specs/translations.md, Accuracy; README's
/// "Ranges and precision"): the worst relative error of the coefficient vector over the
/// polar-angle sweep (poles included), rounded up with headroom, by bands of p.
template <class T>
double documented_translation_accuracy(int p) {
  if constexpr (std::is_same_v<T, double>) {
    return p <= 8 ? 1.2e-14 : p <= 12 ? 1.2e-13 : p <= 16 ? 1.5e-12 : 1.2e-11;
  } else {
    return p <= 8 ? 1.2e-5 : p <= 12 ? 8e-5 : 6e-4;
  }
}

/// The tests' margin over the documented accuracy.
inline constexpr double translation_margin = 2.0;

/// The documented accuracy of one translation times the tests' margin, plus the rounding
/// of a sum of `terms` translations.
template <class T>
double tolerance(int p, std::int64_t terms = 1) {
  return translation_margin *
         (documented_translation_accuracy<T>(p) +
          double(std::numeric_limits<T>::epsilon()) * std::sqrt(double(terms)));
}

}  // namespace translations_test
