/// \file wham/detail/translations/tuning.cuh
/// \brief Where M2M / L2L change path, by order (sm_90; the thread path's block shapes are
/// M2L's thread schedule's, detail/m2l/tuning.cuh, its per-thread work being about the
/// same), and the orders each path serves.
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/m2l/tuning.cuh>

#include <type_traits>

namespace wham::detail::translations {

/// Highest order the direct form is compiled for (its registers: (p+1)^2 harmonics,
/// input and output; beyond 4 it spills and loses to the rotations by work alone).
inline constexpr int direct_max_order = 4;

/// automatic: the direct form up to this order. H100, 1e5 pairs, M2M us direct / thread:
/// double p = 3, 4: 24.9 / 26.4, 38.3 / 39.3; float p = 3, 4: 12.5 / 14.4, 21.2 / 19.6.
template <class T>
constexpr int automatic_direct_max_order() {
  return std::is_same_v<T, double> ? 4 : 3;
}

/// Highest order of the thread path (its slot in shared memory, as M2L's).
inline constexpr int thread_max_order = m2l::thread_max_order;

/// automatic: the thread path up to this order, the split path above (to
/// m2l::split_max_order), the warp path beyond. H100, 1e5 pairs, M2M us thread / split:
/// double p = 7, 8: 125 / 107, 481 / 140 (the thread path spills from p = 7 in double);
/// float p = 7, 8, 9: 65.1 / 64.5, 86.0 / 83.5, 289 / 137. Split / warp at p = 12: double
/// 782 / 1045, float 410 / 844.
template <class T>
constexpr int automatic_thread_max_order() {
  return 6;
}

/// Warps a block in the warp path (M2L's warp schedule: the same passes).
inline constexpr int warp_path_warps = m2l::warp_schedule_warps;

/// The lowest order a path (not `automatic`) serves.
constexpr int path_min_order(translation_path path) {
  return path == translation_path::split ? m2l::split_min_order : 0;
}

/// The highest order a path (not `automatic`) serves for T.
template <class T>
constexpr int path_max_order(translation_path path) {
  switch (path) {
    case translation_path::direct:
      return direct_max_order;
    case translation_path::thread:
      return thread_max_order;
    case translation_path::split:
      return m2l::split_max_order;
    default:
      return m2l_max_order<T>();
  }
}

}  // namespace wham::detail::translations
