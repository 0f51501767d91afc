/// \file wham/detail/translations/dispatch.cuh
/// \brief The one place an M2M / L2L path is chosen and launched: `automatic`'s choice by
/// order and type, the fall-back where a block outgrows the device's shared memory, the
/// pointers' device check, and the launch (run, the one call of wham/translations.cuh).
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/check.hpp>
#include <wham/detail/translations/kernels.cuh>
#include <wham/detail/translations/split.cuh>
#include <wham/detail/translations/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace wham::detail::translations {

/// `automatic`'s path at order p.
template <class T>
constexpr translation_path automatic_path(int p) {
  if (p <= automatic_direct_max_order<T>()) return translation_path::direct;
  if (p <= automatic_thread_max_order<T>()) return translation_path::thread;
  if (p <= m2l::split_max_order) return translation_path::split;
  return translation_path::warp;
}

/// Dynamic shared memory a block of `path` (not `automatic`) takes at order p (within its
/// orders).
template <class T>
std::size_t path_smem_bytes(translation_path path, int p) {
  std::size_t bytes = m2l::warp_smem_bytes<T>(p, warp_path_warps);
  if (path == translation_path::warp) return bytes;
  if (path == translation_path::split) {
    arch::dispatch_int<m2l::split_min_order, m2l::split_max_order + 1>(p, [&](auto Pc) {
      bytes = m2l::split_smem_bytes<decltype(Pc)::value, T>();
    });
    return bytes;
  }
  arch::dispatch_int<0, thread_max_order + 1>(p, [&](auto Pc) {
    constexpr int P = decltype(Pc)::value;
    constexpr m2l::thread_config cfg = m2l::thread_schedule_config<T>(P);
    bytes = path == translation_path::direct
                ? m2l::thread_smem_bytes<P, T, cfg.threads, true>()
                : m2l::thread_smem_bytes<P, T, cfg.threads, cfg.registers>();
  });
  return bytes;
}

/// The path that runs: `path` (automatic_path for `automatic`) where its block fits the
/// current device's shared memory; otherwise, for `automatic`, the split path (86.5 KB at
/// double p = 12) or the warp path (87 KB at double p = 20), which fit every supported
/// device, and for a caller's explicit path wham::error of kind not_supported. A device
/// query.
template <class T>
translation_path fitting_path(const char* f, translation_path path, int p) {
  const bool chosen_by_caller = path != translation_path::automatic;
  const translation_path chosen = chosen_by_caller ? path : automatic_path<T>(p);
  const std::size_t need = path_smem_bytes<T>(chosen, p);
  const std::size_t have = current_device_limits().smem_per_block_optin;
  if (need <= have) return chosen;
  if (chosen_by_caller) {
    throw_not_supported(f, "path", static_cast<long long>(path),
                        "automatic or warp at p = " + std::to_string(p) +
                            " on this device: that path needs " + std::to_string(need) +
                            " bytes of shared memory a block, the device allows " +
                            std::to_string(have));
  }
  return p >= m2l::split_min_order && p <= m2l::split_max_order ? translation_path::split
                                                                 : translation_path::warp;
}

/// Launches `path` (not `automatic`; p within its orders).
template <kind K, class T>
void launch(const char* f, translation_path path, int p, const cpx<T>* in, const T* deltas, pair_rows<T> pr,
            cpx<T>* out, std::int64_t num_pairs, cudaStream_t stream) {
  bool done = true;
  if (path == translation_path::direct) {
    done = arch::dispatch_int<0, direct_max_order + 1>(p, [&](auto Pc) {
      constexpr int P = decltype(Pc)::value;
      constexpr m2l::thread_config cfg = m2l::thread_schedule_config<T>(P);
      launch_thread_variant<K, true, P, T, cfg.threads, true>(in, deltas, pr, out, num_pairs,
                                                              stream);
    });
  } else if (path == translation_path::thread) {
    done = arch::dispatch_int<0, thread_max_order + 1>(p, [&](auto Pc) {
      constexpr int P = decltype(Pc)::value;
      constexpr m2l::thread_config cfg = m2l::thread_schedule_config<T>(P);
      launch_thread_variant<K, false, P, T, cfg.threads, cfg.registers>(in, deltas, pr, out,
                                                                        num_pairs, stream);
    });
  } else if (path == translation_path::split) {
    done = arch::dispatch_int<m2l::split_min_order, m2l::split_max_order + 1>(p, [&](auto Pc) {
      constexpr int P = decltype(Pc)::value;
      constexpr m2l::split_config cfg = m2l::split_schedule_config<T>(P);
      launch_split_variant<K, P, T, cfg.warps, cfg.min_blocks>(in, deltas, pr, out, num_pairs,
                                                               stream);
    });
  } else {
    launch_warp<K, T, warp_path_warps>(p, in, deltas, pr, out, num_pairs, stream);
  }
  if (!done) {
    throw_invalid_argument(f, "p", p,
                           range_text(path_min_order(path), path_max_order<T>(path)) +
                               " for that path");
  }
}

/// The public functions' one call once their pure checks have passed (num_pairs >= 1):
/// the path that runs, whether the device can address each pointer, the launch.
/// indexed = false: the pair-streaming form (src, tgt null; num_in, num_out unused).
template <kind K, class T>
void run(const char* f, const char* in_name, const char* out_name, const cpx<T>* in,
         const T* deltas, const std::int32_t* src, const std::int32_t* tgt, cpx<T>* out, int p,
         std::int64_t num_pairs, std::int64_t num_in, std::int64_t num_out,
         translation_path path, cudaStream_t stream) {
  const bool indexed = tgt != nullptr;
  const translation_path runs = fitting_path<T>(f, path, p);
  const auto C = std::uint64_t(m2l_num_coeffs(p));
  const auto n = std::uint64_t(num_pairs);
  check_accessible(f, {span_of(in_name, in, C * (indexed ? std::uint64_t(num_in) : n)),
                       span_of("deltas", deltas, 3 * n), span_of("src", src, n),
                       span_of("tgt", tgt, n),
                       span_of(out_name, out, C * (indexed ? std::uint64_t(num_out) : n))});
  launch<K, T>(f, runs, p, in, deltas, pair_rows<T>{src, tgt, num_in, num_out}, out, num_pairs,
               stream);
}

}  // namespace wham::detail::translations
