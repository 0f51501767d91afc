/// \file wham/detail/translations/dispatch.cuh
/// \brief The one place an M2M / L2L schedule is chosen and launched.
#pragma once

#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/translations/kernels.cuh>
#include <wham/detail/translations/split.cuh>
#include <wham/detail/translations/tuning.cuh>
#include <wham/error.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace wham::detail::translations {

enum class schedule { direct, thread, split, warp };

/// The highest order a schedule serves for T (its lowest is 0).
template <class T>
constexpr int schedule_max_order(schedule s) {
  switch (s) {
    case schedule::direct:
      return direct_max_order;
    case schedule::thread:
      return thread_max_order;
    case schedule::split:
      return m2l::split_max_order;
    default:
      return std::is_same_v<T, double> ? 20 : 16;
  }
}

/// The lowest order a schedule serves.
inline constexpr int schedule_min_order(schedule s) {
  return s == schedule::split ? m2l::split_min_order : 0;
}

template <class T>
constexpr schedule automatic_schedule(int p) {
  if (p <= automatic_direct_max_order<T>()) return schedule::direct;
  if (p <= automatic_thread_max_order<T>()) return schedule::thread;
  if (p <= m2l::split_max_order) return schedule::split;
  return schedule::warp;
}

/// Dynamic shared memory a block of schedule s takes at order p (within its orders).
template <class T>
std::size_t schedule_smem_bytes(schedule s, int p) {
  std::size_t bytes = m2l::warp_smem_bytes<T>(p, warp_schedule_warps);
  if (s == schedule::warp) return bytes;
  if (s == schedule::split) {
    arch::dispatch_int<m2l::split_min_order, m2l::split_max_order + 1>(p, [&](auto Pc) {
      bytes = m2l::split_smem_bytes<decltype(Pc)::value, T>();
    });
    return bytes;
  }
  arch::dispatch_int<0, thread_max_order + 1>(p, [&](auto Pc) {
    constexpr int P = decltype(Pc)::value;
    constexpr m2l::thread_config cfg = m2l::thread_schedule_config<T>(P);
    bytes = s == schedule::direct ? m2l::thread_smem_bytes<P, T, cfg.threads, true>()
                                  : m2l::thread_smem_bytes<P, T, cfg.threads, cfg.registers>();
  });
  return bytes;
}

/// The schedule that runs: s where its block fits the current device's shared memory;
/// otherwise, for `automatic`, the split schedule (86.5 KB at double p = 12) or the warp
/// schedule (87 KB at double p = 20), which fit every supported device, and for a caller's
/// explicit path an error. A device query.
template <class T>
schedule fitting_schedule(const char* f, schedule s, bool chosen_by_caller, int p) {
  const std::size_t need = schedule_smem_bytes<T>(s, p);
  const std::size_t have = current_device_limits().smem_per_block_optin;
  if (need <= have) return s;
  if (chosen_by_caller) {
    throw error(std::string("wham::") + f + ": path needs " + std::to_string(need) +
                " bytes of shared memory a block at p = " + std::to_string(p) + "; this device gives " +
                std::to_string(have) + " (the warp path fits)");
  }
  return p >= m2l::split_min_order && p <= m2l::split_max_order ? schedule::split : schedule::warp;
}

template <kind K, class T>
void launch(schedule s, int p, const cpx<T>* in, const T* deltas, pair_rows<T> pr, cpx<T>* out,
            std::int64_t num_pairs, cudaStream_t stream) {
  bool done = true;
  if (s == schedule::direct) {
    done = arch::dispatch_int<0, direct_max_order + 1>(p, [&](auto Pc) {
      constexpr int P = decltype(Pc)::value;
      constexpr m2l::thread_config cfg = m2l::thread_schedule_config<T>(P);
      launch_thread_variant<K, true, P, T, cfg.threads, true>(in, deltas, pr, out, num_pairs,
                                                              stream);
    });
  } else if (s == schedule::thread) {
    done = arch::dispatch_int<0, thread_max_order + 1>(p, [&](auto Pc) {
      constexpr int P = decltype(Pc)::value;
      constexpr m2l::thread_config cfg = m2l::thread_schedule_config<T>(P);
      launch_thread_variant<K, false, P, T, cfg.threads, cfg.registers>(in, deltas, pr, out,
                                                                        num_pairs, stream);
    });
  } else if (s == schedule::split) {
    done = arch::dispatch_int<m2l::split_min_order, m2l::split_max_order + 1>(p, [&](auto Pc) {
      constexpr int P = decltype(Pc)::value;
      constexpr m2l::split_config cfg = m2l::split_schedule_config<T>(P);
      launch_split_variant<K, P, T, cfg.warps, cfg.min_blocks>(in, deltas, pr, out, num_pairs,
                                                               stream);
    });
  } else {
    launch_warp<K, T, warp_schedule_warps>(p, in, deltas, pr, out, num_pairs, stream);
  }
  if (!done) throw error("wham: translation order " + std::to_string(p) + " beyond its schedule");
}

}  // namespace wham::detail::translations
