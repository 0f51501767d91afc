/// \file wham/detail/fmm/dispatch.cuh
/// \brief The single place an FMM form's path is chosen and launched: the accumulate forms take
/// the pair-streaming M2L's choice (detail/m2l/dispatch.cuh) with their own kernels;
/// m2l_accumulate_class_groups chooses among its grouped schedules (thresholds in
/// tuning.cuh).
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/check.hpp>
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

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace wham::detail::fmm {

// ---- the accumulate forms --------------------------------------------------------------

/// Shared memory a block of the accumulate form's path `s` needs at order p: the M2L
/// path's, plus for the tile schedules their pairs' indices and, in the class form, the
/// class table of `num_classes` classes.
template <class T>
std::size_t accumulate_smem_bytes(m2l_path s, int p, geometry mode, int num_classes) {
  std::size_t bytes = 0;
  switch (s) {
    case m2l_path::tensor:
      return m2l::wide_supported() ? m2l::tensor_wide_smem_bytes(p)
                                   : m2l::tensor_smem_bytes<m2l::tensor_warps>(p);
    case m2l_path::warp:
      return m2l::warp_smem_bytes<T>(p, warp_schedule_warps);
    case m2l_path::split:
      arch::dispatch_int<m2l::split_min_order, m2l::split_max_order + 1>(p, [&](auto Pc) {
        constexpr int P = decltype(Pc)::value;
        bytes = tile_smem_bytes<P, T, 32, translator::split>(mode, num_classes);
      });
      return bytes;
    default:
      arch::dispatch_int<0, m2l::thread_max_order + 1>(p, [&](auto Pc) {
        constexpr int P = decltype(Pc)::value;
        constexpr m2l::thread_config cfg = m2l::thread_schedule_config<T>(P);
        bytes = tile_smem_bytes < P, T, cfg.threads,
        cfg.registers ? translator::thread_registers
                      : translator::thread_shared > (mode, num_classes);
      });
      return bytes;
  }
}

/// Whether path s serves order p for the accumulate form at all.
template <class T>
constexpr bool accumulate_serves(m2l_path s, int p, bool deterministic) {
  switch (s) {
    case m2l_path::tensor:
      return std::is_same_v<T, double> && !deterministic;
    case m2l_path::split:
      return p >= m2l::split_min_order && p <= m2l::split_max_order;
    case m2l_path::thread:
      return p <= m2l::thread_max_order;
    case m2l_path::warp:
      return true;
    default:
      return false;
  }
}

/// The accumulate form's path: the pair-streaming choice, whose tile kernels do the
/// same translation between the same gather and flush (the tensor schedule has an
/// accumulate form in double with atomics only; elsewhere the scalar choice stands); where
/// that choice's block, with its indices and class table, outgrows the device's shared
/// memory (sm_86/89: 99 KB), the next scalar path that fits: split, then warp.
template <class T>
m2l_path accumulate_path(int p, bool deterministic, geometry mode = geometry::pair_deltas,
                         int num_classes = 0) {
  const std::size_t have = current_device_limits().smem_per_block_optin;
  auto fits = [&](m2l_path s) {
    return accumulate_serves<T>(s, p, deterministic) &&
           accumulate_smem_bytes<T>(s, p, mode, num_classes) <= have;
  };
  const m2l_path first = std::is_same_v<T, double> && !deterministic
                             ? m2l::automatic_path<T>(p)
                             : m2l::automatic_scalar_path<T>(p);
  if (fits(first)) return first;
  for (const m2l_path s : {m2l_path::split, m2l_path::warp}) {
    if (fits(s)) return s;
  }
  return first;  // nothing fits: the launch's own check throws, naming the sizes
}

/// Launches the accumulate form `f` (arguments checked by the caller).
template <class T>
void launch_accumulate(const char* f, const pair_list<T>& l, int p, bool deterministic,
                       cudaStream_t stream) {
  if (l.num_pairs == 0) return;
  const m2l_path s = accumulate_path<T>(p, deterministic, l.mode, l.num_classes);
  const std::size_t need = accumulate_smem_bytes<T>(s, p, l.mode, l.num_classes);
  if (need > current_device_limits().smem_per_block_optin) {
    throw_invalid_argument(f, l.mode == geometry::classes ? "num_classes" : "p",
                           l.mode == geometry::classes ? l.num_classes : p,
                           "a shape whose block fits shared memory at p = " + std::to_string(p) +
                               ": it needs " + std::to_string(need) + " bytes, the device allows " +
                               std::to_string(current_device_limits().smem_per_block_optin));
  }
  switch (s) {
    case m2l_path::tensor:
      if constexpr (std::is_same_v<T, double>) {
        const tensor_list pairs{l, l.num_pairs};
        m2l::launch_tensor_any(p, wide_list{pairs}, pairs, stream);
      }
      return;
    case m2l_path::warp:
      launch_warp<T>(l, p, deterministic, stream);
      return;
    case m2l_path::split:
      arch::dispatch_int<m2l::split_min_order, m2l::split_max_order + 1>(p, [&](auto Pc) {
        launch_split_order<decltype(Pc)::value, T>(l, deterministic, stream);
      });
      return;
    default:  // thread
      arch::dispatch_int<0, m2l::thread_max_order + 1>(p, [&](auto Pc) {
        launch_thread_order<decltype(Pc)::value, T>(l, deterministic, stream);
      });
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
/// else the scalar one; false (nothing launched) where the chosen shape outgrows the
/// device's shared memory. span_max as launch_class_group_schedule.
template <int P, class T>
bool launch_class_group_order(const pair_list<T>& l, cudaStream_t stream,
                              std::int64_t span_max = -1) {
  if constexpr (class_dense_serves<T>(P)) {
    if (launch_class_dense_order<P>(l, stream)) return true;
  }
  constexpr bool tensor = class_group_tensor_serves<T>(P);
  constexpr int W = tensor ? class_tensor_warps : class_group_warps<T>(P);
  if (group_layout<T>(P, W, tensor).total > current_device_limits().smem_per_block_optin) {
    return false;
  }
  launch_class_group_schedule<P, T, W, tensor>(l, stream, span_max);
  return true;
}

/// The grouped schedule itself at order p, wherever it has a kernel (the benchmark's
/// entry: automatic takes it only where class_groups_serve); false (nothing launched)
/// where p has none or its shape does not fit the device.
template <class T>
bool launch_class_groups(const pair_list<T>& l, int p, cudaStream_t stream) {
  bool done = false;
  arch::dispatch_int<class_group_min_order, class_group_max_order<T>() + 1>(
      p, [&](auto Pc) { done = launch_class_group_order<decltype(Pc)::value, T>(l, stream); });
  return done;
}

/// m2l_accumulate_class_groups: a grouped schedule where one serves p and fits the device,
/// else the class form's atomic schedules (the same sum).
template <class T>
void launch_grouped(const char* f, const pair_list<T>& l, int p, cudaStream_t stream) {
  if (!(class_groups_serve<T>(p) && launch_class_groups<T>(l, p, stream))) {
    launch_accumulate<T>(f, l, p, false, stream);
  }
}

// ---- the forms' one call ---------------------------------------------------------------

/// Whether the device can address each pointer of the list at order p (a device query),
/// in the order of the forms' arguments.
template <class T>
void check_list_accessible(const char* f, const pair_list<T>& l, int p) {
  const auto C = std::uint64_t(m2l_num_coeffs(p)), n = std::uint64_t(l.num_pairs);
  const std::uint64_t geo_count = l.mode == geometry::pair_deltas ? 3 * n
                                  : l.mode == geometry::centers
                                      ? 3 * std::uint64_t(std::max(l.num_multipoles, l.num_locals))
                                      : 3 * std::uint64_t(l.num_classes);
  const char* geo_name = l.mode == geometry::pair_deltas ? "deltas"
                         : l.mode == geometry::centers   ? "centers"
                                                         : "class_deltas";
  check_accessible(
      f, {span_of("multipoles", l.multipoles, std::uint64_t(l.num_multipoles) * C),
          span_of(geo_name, l.geo, geo_count), span_of("cls", l.cls, n), span_of("src", l.src, n),
          span_of("tgt", l.tgt, n), span_of("locals", l.locals, std::uint64_t(l.num_locals) * C)});
}

/// An accumulate form's one call once its checks that need no device have passed
/// (num_pairs >= 1): whether the device can address each pointer, then the path chosen,
/// checked against the device's shared memory and launched.
template <class T>
void run_accumulate(const char* f, const pair_list<T>& l, int p, bool deterministic,
                    cudaStream_t stream) {
  check_list_accessible(f, l, p);
  launch_accumulate<T>(f, l, p, deterministic, stream);
}

/// m2l_accumulate_class_groups' one call, as run_accumulate.
template <class T>
void run_grouped(const char* f, const pair_list<T>& l, int p, cudaStream_t stream) {
  check_list_accessible(f, l, p);
  launch_grouped<T>(f, l, p, stream);
}

}  // namespace wham::detail::fmm
