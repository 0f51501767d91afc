/// \file wham/detail/fmm/dispatch.cuh
/// \brief The single place an FMM form's schedule is chosen: the accumulate forms take
/// the pair-streaming M2L's choice (detail/m2l/dispatch.cuh) with their own kernels;
/// m2l_accumulate_class_groups chooses among its grouped schedules (thresholds in
/// tuning.cuh).
#pragma once

#include <wham/detail/arch/dispatch.cuh>
#include <wham/detail/device.cuh>
#include <wham/detail/fmm/accumulate.cuh>
#include <wham/detail/fmm/accumulate_tensor.cuh>
#include <wham/detail/fmm/accumulate_warp.cuh>
#include <wham/detail/fmm/class_dense.cuh>
#include <wham/detail/fmm/class_groups.cuh>
#include <wham/detail/fmm/pair_list.cuh>
#include <wham/detail/fmm/tuning.cuh>
#include <wham/detail/m2l/dispatch.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace wham::detail::fmm {

// ---- the accumulate forms --------------------------------------------------------------

/// The accumulate form's schedule: the pair-streaming choice, whose tile kernels do the
/// same translation between the same gather and flush. The tensor schedule has an
/// accumulate form in double with atomics only; elsewhere the scalar choice stands.
template <class T>
m2l::schedule accumulate_schedule(int p, bool deterministic) {
  if (std::is_same_v<T, double> && !deterministic) return m2l::automatic_schedule<T>(p);
  return m2l::automatic_scalar_schedule<T>(p);
}

/// Launches the accumulate form (arguments checked by the caller).
template <class T>
void launch_accumulate(const pair_list<T>& l, int p, bool deterministic, cudaStream_t stream) {
  if (l.num_pairs == 0) return;
  switch (accumulate_schedule<T>(p, deterministic)) {
    case m2l::schedule::tensor:
      if constexpr (std::is_same_v<T, double>) {
        const tensor_list pairs{l, l.num_pairs};
        m2l::launch_tensor_any(p, wide_list{pairs}, pairs, stream);
      }
      return;
    case m2l::schedule::warp:
      launch_warp<T>(l, p, deterministic, stream);
      return;
    case m2l::schedule::split:
      if (!arch::dispatch_int<m2l::split_min_order, m2l::split_max_order + 1>(p, [&](auto Pc) {
            launch_split_order<decltype(Pc)::value, T>(l, deterministic, stream);
          })) {
        throw_invalid_argument("m2l_accumulate", "p", p,
                               std::to_string(m2l::split_min_order) + ".." +
                                   std::to_string(m2l::split_max_order) +
                                   " for the split schedule");
      }
      return;
    default:  // thread (the pair-streaming choices above are the only others)
      if (!arch::dispatch_int<0, m2l::thread_max_order + 1>(p, [&](auto Pc) {
            launch_thread_order<decltype(Pc)::value, T>(l, deterministic, stream);
          })) {
        throw_invalid_argument(
            "m2l_accumulate", "p", p,
            "0.." + std::to_string(m2l::thread_max_order) + " for the thread schedule");
      }
      return;
  }
}

// ---- m2l_accumulate_class_groups -------------------------------------------------------

template <class T>
constexpr bool class_dense_serves(int p) {
  return std::is_same_v<T, double> && p >= 1 && p <= class_dense_max_order;
}

template <class T>
constexpr bool class_group_tensor_serves(int p) {
  return std::is_same_v<T, double> && p >= class_group_tensor_min_order;
}

/// Whether m2l_accumulate_class_groups runs a grouped schedule at order p (else the class
/// form's list-order schedules, which win at low order).
template <class T>
constexpr bool class_groups_serve(int p) {
  return class_dense_serves<T>(p) ||
         (p >= class_group_from_order<T>() && p <= class_group_max_order<T>());
}

/// The dense schedule at order P if the device's shared memory per block holds its
/// shape (an H100 or H200 does at every order; an A100 not from p = 9); false otherwise.
template <int P>
bool launch_class_dense_order(const pair_list<double>& l, cudaStream_t stream) {
  using K = typename class_dense_tuning<P>::type;
  if (dense_layout<P, K>::total > current_device_limits().smem_per_block_optin) return false;
  launch_class_dense<P, K>(l, stream);
  return true;
}

/// The grouped schedule at order P: in double to class_dense_max_order the dense operator
/// where the device's shared memory holds it, else the tensor schedule where it serves,
/// else the scalar one. span_max as launch_class_group_schedule.
template <int P, class T>
void launch_class_group_order(const pair_list<T>& l, cudaStream_t stream,
                              std::int64_t span_max = -1) {
  if constexpr (class_dense_serves<T>(P)) {
    if (launch_class_dense_order<P>(l, stream)) return;
  }
  if constexpr (class_group_tensor_serves<T>(P)) {
    launch_class_group_schedule<P, T, class_tensor_warps, true>(l, stream, span_max);
  } else {
    launch_class_group_schedule<P, T>(l, stream, span_max);
  }
}

/// Launches the grouped class form at order p (the caller checked p's range).
template <class T>
void launch_class_groups(const pair_list<T>& l, int p, cudaStream_t stream) {
  const bool done = arch::dispatch_int<class_group_min_order, class_group_max_order<T>() + 1>(
      p, [&](auto Pc) { launch_class_group_order<decltype(Pc)::value, T>(l, stream); });
  if (!done) {
    throw_invalid_argument("m2l_accumulate_class_groups", "p", p,
                           std::to_string(class_group_min_order) + ".." +
                               std::to_string(class_group_max_order<T>()) +
                               " for the grouped class schedule");
  }
}

/// m2l_accumulate_class_groups: a grouped schedule where one serves, else the class form's
/// atomic schedules.
template <class T>
void launch_grouped(const pair_list<T>& l, int p, cudaStream_t stream) {
  if (class_groups_serve<T>(p)) {
    launch_class_groups<T>(l, p, stream);
  } else {
    launch_accumulate<T>(l, p, false, stream);
  }
}

}  // namespace wham::detail::fmm
