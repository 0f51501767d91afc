/// \file wham/detail/m2l/dispatch.cuh
/// \brief The single place an M2L path is chosen: `automatic`'s choice by order, type and
/// device (also the accumulate forms', detail/fmm/dispatch.cuh), the tensor path's choice of
/// kernel by device, the checks of a path against p and the device, and the launch.
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/arch/probe.cuh>
#include <wham/detail/check.hpp>
#include <wham/detail/device.cuh>
#include <wham/detail/m2l/direct.cuh>
#include <wham/detail/m2l/split.cuh>
#include <wham/detail/m2l/tensor.cuh>
#include <wham/detail/m2l/tensor_wide.cuh>
#include <wham/detail/m2l/thread.cuh>
#include <wham/detail/m2l/tuning.cuh>
#include <wham/detail/m2l/warp.cuh>
#include <wham/error.hpp>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace wham::detail::m2l {

/// Whether the wide tensor schedule runs on the current device: its body traps below
/// __CUDA_ARCH__ 900, so a build for sm_80 alone, running on an H100, keeps the four-pair one.
inline bool wide_supported() { return arch::compiled_for_sm90(); }

/// Whether `automatic` takes the tensor path at order p (the device is asked only at
/// the orders where the answer depends on it).
template <class T>
bool automatic_takes_tensor(int p) {
  if constexpr (std::is_same_v<T, double>) {
    return p >= tensor_min_order || (p >= wide_min_order && wide_supported());
  } else {
    return p >= wide_float_min_order && wide_supported();
  }
}

/// `automatic` among the scalar paths: thread, then split, then warp.
template <class T>
m2l_path automatic_scalar_path(int p) {
  if (p <= automatic_thread_max_order<T>()) return m2l_path::thread;
  return p <= split_max_order ? m2l_path::split : m2l_path::warp;
}

/// `automatic`: the scalar choice, or the tensor path from where it is faster.
template <class T>
m2l_path automatic_path(int p) {
  if (p <= automatic_thread_max_order<T>()) return m2l_path::thread;
  if (automatic_takes_tensor<T>(p)) return m2l_path::tensor;
  return automatic_scalar_path<T>(p);
}

/// The tensor schedule over the caller's pairs: the wide one (policy `wide`) where it runs,
/// else the four-pair one (policy `four`, sm_80+).
template <class Wide, class Four>
void launch_tensor_any(int p, const Wide& wide, const Four& four, cudaStream_t stream) {
  if (wide_supported()) {
    launch_tensor_wide_tuned(p, wide, stream);
  } else {
    launch_tensor(p, four, stream);
  }
}

/// Throws wham::error, naming the path, where `path` (not `automatic`; p within its orders,
/// wham::m2l checked) cannot serve p and T on this device or build (a path the caller
/// chose; `automatic`'s choices always serve). Asks the device only for its limits (no
/// driver call inside a device_scope or a fake one).
template <class T>
void check_path(m2l_path path, bool chosen_by_caller, int p) {
  switch (path) {
    case m2l_path::thread:
      if (chosen_by_caller) {
        // Before the launch's own check, so the message names the path and the way out
        // (automatic's thread orders fit every device: test_arguments_host).
        const std::size_t need = thread_schedule_smem_bytes<T>(p);
        const std::size_t have = current_device_limits().smem_per_block_optin;
        if (need > have) {
          throw_invalid_argument("m2l", "path", "m2l_path::thread",
                                 "automatic, split or warp at p = " + std::to_string(p) +
                                     " on this device: the "
                                     "thread schedule needs " +
                                     std::to_string(need) +
                                     " bytes of shared memory a "
                                     "block, the device allows " +
                                     std::to_string(have));
        }
      }
      return;
    case m2l_path::tensor:
      // Float runs the wide schedule only (sm_90), computing in double.
      if (std::is_same_v<T, float> && !wide_supported()) {
        throw_invalid_argument(
            "m2l", "path", "m2l_path::tensor",
            "a path other than tensor for float below compute capability 9.0 (float runs "
            "the sm_90 wide tensor schedule only)");
      }
      return;
    default:  // split, warp and direct serve every device
      return;
  }
}

/// Launches `path` (not `automatic`) for wham::m2l (arguments and check_path checked by
/// the caller).
template <class T>
void launch(m2l_path path, int p, const cpx<T>* M, const T* deltas, cpx<T>* L,
            std::int64_t num_pairs, cudaStream_t stream) {
  switch (path) {
    case m2l_path::thread:
      launch_thread<T>(p, M, deltas, L, num_pairs, stream);
      break;
    case m2l_path::split:
      launch_split<T>(p, M, deltas, L, num_pairs, stream);
      break;
    case m2l_path::warp:
      launch_warp<T>(p, M, deltas, L, num_pairs, stream);
      break;
    case m2l_path::tensor:
      if constexpr (std::is_same_v<T, double>) {
        launch_tensor_any(p, wide_stream<double>{M, deltas, L, num_pairs},
                          tensor_stream{M, deltas, L, num_pairs}, stream);
      } else {
        launch_tensor_wide_tuned(p, wide_stream<float>{M, deltas, L, num_pairs}, stream);
      }
      break;
    case m2l_path::direct:
      launch_direct<T>(p, M, deltas, L, num_pairs, stream);
      break;
    case m2l_path::automatic:  // resolved by the caller
      break;
  }
}

/// wham::m2l's one call once its checks that need no device have passed (num_pairs >= 1):
/// `automatic` resolved, the path checked against this device, whether the device can
/// address each pointer (a device query), the launch.
template <class T>
void run(m2l_path path, int p, const cuda::std::complex<T>* multipoles, const T* deltas,
         cuda::std::complex<T>* locals, std::int64_t num_pairs, cudaStream_t stream) {
  const bool chosen_by_caller = path != m2l_path::automatic;
  if (!chosen_by_caller) path = automatic_path<T>(p);
  check_path<T>(path, chosen_by_caller, p);
  const auto n = std::uint64_t(num_pairs), C = std::uint64_t(m2l_num_coeffs(p));
  check_accessible("m2l", {span_of("multipoles", multipoles, n * C),
                           span_of("deltas", deltas, 3 * n), span_of("locals", locals, n * C)});
  launch<T>(path, p, reinterpret_cast<const cpx<T>*>(multipoles), deltas,
            reinterpret_cast<cpx<T>*>(locals), num_pairs, stream);
}

}  // namespace wham::detail::m2l
