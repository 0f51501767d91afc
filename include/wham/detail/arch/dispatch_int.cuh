/// \file wham/detail/arch/dispatch_int.cuh
/// \brief From a run-time integer to a compile-time one: the single helper every
/// launcher uses to pick its kernel instantiation (orders, log sizes, tile shapes).
#pragma once

#include <type_traits>
#include <utility>

namespace wham::detail::arch {

/// f(std::integral_constant<int, I>{}) for I = Begin .. End - 1, in order (host side).
template <int Begin, int End, class F>
inline void static_for(F&& f) {
  if constexpr (Begin < End) {
    f(std::integral_constant<int, Begin>{});
    static_for<Begin + 1, End>(std::forward<F>(f));
  }
}

/// Calls f(std::integral_constant<int, value>{}) once when Begin <= value < End and
/// returns true; returns false otherwise. Instantiates f for every I in the range.
template <int Begin, int End, class F>
inline bool dispatch_int(int value, F&& f) {
  if constexpr (Begin < End) {
    if (value == Begin) {
      f(std::integral_constant<int, Begin>{});
      return true;
    }
    return dispatch_int<Begin + 1, End>(value, std::forward<F>(f));
  } else {
    (void)value;
    (void)f;
    return false;
  }
}

}  // namespace wham::detail::arch
