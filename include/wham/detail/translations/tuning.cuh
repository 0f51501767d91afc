/// \file wham/detail/translations/tuning.cuh
/// \brief Where M2M / L2L change schedule, by order (sm_90; the thread schedule's block
/// shapes are M2L's, detail/m2l/tuning.cuh, its per-thread work being about the same).
#pragma once

#include <wham/detail/m2l/tuning.cuh>

#include <type_traits>

namespace wham::detail::translations {

/// Highest order the direct form is compiled for (its registers: (p+1)^2 harmonics,
/// input and output; beyond 4 it spills and loses to the rotations by work alone).
inline constexpr int direct_max_order = 4;

/// automatic: the direct form up to this order (real flops a pair, direct / rotated:
/// 1390 / 1560 at p = 4, 2624 / 2516 at p = 5; docs/specs/translations.md).
template <class T>
constexpr int automatic_direct_max_order() {
  return 4;
}

/// Highest order of the thread schedule (its slot in shared memory, as M2L's).
inline constexpr int thread_max_order = m2l::thread_max_order;

/// automatic: the thread schedule up to this order, the warp schedule above. ptxas (sm_90):
/// double spills from p = 7 (0.6 KB a thread, 15 KB at p = 12), float none to p = 12.
template <class T>
constexpr int automatic_thread_max_order() {
  return std::is_same_v<T, double> ? 6 : thread_max_order;
}

/// Warps a block in the warp schedule (M2L's: the same passes).
inline constexpr int warp_schedule_warps = m2l::warp_schedule_warps;

}  // namespace wham::detail::translations
