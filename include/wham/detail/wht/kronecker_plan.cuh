/// \file wham/detail/wht/kronecker_plan.cuh
/// \brief The Kronecker split's plans: which stages run for rows of 2^n (stage 0 over
/// the low bits, then strided stages of at most one block's or one cluster's bits), and
/// where the split serves. Tuning in tuning.cuh; index arithmetic in kronecker_index.hpp.
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/wht/cluster_launch.cuh>
#include <wham/detail/wht/fused.cuh>
#include <wham/detail/wht/kronecker_index.hpp>
#include <wham/detail/wht/streamed.cuh>
#include <wham/detail/wht/strided.cuh>
#include <wham/detail/wht/strided_cluster.cuh>
#include <wham/detail/wht/tuning.cuh>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace wham::detail::wht {

/// Largest stage-0 segment compiled per element size (fused.cuh's one-block maximum).
template <class V>
inline constexpr int kronecker_stage0_compiled_max = block_compiled_max_log_n<V>;

/// Smallest row the split serves: stage 0 takes at least 10 bits, a strided stage at least 1.
inline constexpr int kronecker_min_log_n = 11;

/// What a strided stage may take under `cfg` on this device: at most single_max bits
/// in one block, and (cluster_max > 0) up to cluster_max bits as clusters of blocks of
/// 2^strided_cluster_part_bits rows.
struct strided_limits {
  int single_max = 0;
  int cluster_max = 0;  ///< 0: no clustered stages
};
template <class T>
inline strided_limits strided_stage_limits(const kronecker_config& cfg) {
  strided_limits lim;
  const int dev_max = strided_max_bits();
  lim.single_max = cfg.max_strided_bits > 0 ? std::min(cfg.max_strided_bits, dev_max) : dev_max;
  int log_k = std::min(cfg.cluster_log_k > 0 ? cfg.cluster_log_k : strided_cluster_log_k,
                       strided_cluster_max_log_k);
  const bool fits = (std::size_t(128) << strided_cluster_part_bits) <=
                    current_device_limits().smem_per_block_optin;
  if (cfg.clusters >= 0 && fits && clusters_supported()) {
    // 16 blocks only where the device can hold such a cluster (else 8, portable).
    if (log_k == 4 && !prepare_strided_cluster<T, strided_cluster_part_bits, 4>()) log_k = 3;
    lim.cluster_max = strided_cluster_part_bits + log_k;
  }
  return lim;
}

/// Whether a strided stage of `bits` runs as clusters under `lim`.
inline bool strided_stage_clustered(int bits, const strided_limits& lim) {
  return lim.cluster_max > 0 && bits > lim.single_max && bits > strided_cluster_part_bits;
}

/// The plan launch_kronecker_config runs for rows of 2^log_n elements (stage 0 computed in V):
/// the fewest strided stages of at most hi_max bits after a stage 0 of at most
/// the fused maximum, stage 0 as close to kronecker_preferred_lo as that allows;
/// hi_max is one block's limit, or the clusters' where cfg.clusters asks for them.
template <class V>
inline kron::plan kronecker_plan(int log_n, const kronecker_config& cfg,
                                 const strided_limits& lim) {
  const int lo_max = std::min(fused_max_log_n<V>(), kronecker_stage0_compiled_max<V>);
  const auto plan_for = [&](int hi_max) {
    const int strided = log_n > lo_max ? (log_n - lo_max + hi_max - 1) / hi_max : 1;
    const int pref = cfg.lo_bits > 0 ? cfg.lo_bits : kronecker_preferred_lo;
    int lo = std::max(std::min(pref, log_n - 1), log_n - hi_max * strided);
    lo = std::min(std::max(lo, 10), lo_max);
    return kron::make_plan(log_n, lo, hi_max);
  };
  const kron::plan one_block = plan_for(lim.single_max);
  if (lim.cluster_max <= lim.single_max) return one_block;
  const kron::plan wide = plan_for(lim.cluster_max);
  if (cfg.clusters > 0) return wide;
  return sizeof(V) <= strided_cluster_max_elem_bytes && wide.num_stages < one_block.num_stages
             ? wide
             : one_block;
}

/// The same, under this device's limits for cfg.
template <class V>
inline kron::plan kronecker_plan(int log_n, const kronecker_config& cfg = {}) {
  return kronecker_plan<V>(log_n, cfg, strided_stage_limits<V>(cfg));
}

/// Whether the split serves rows of 2^log_n elements of V on this device.
template <class V>
inline bool kronecker_serves(int log_n) {
  return log_n >= kronecker_min_log_n && log_n <= fwht_max_log_n && fused_max_log_n<V>() >= 10;
}

/// The middle plan for loaded rows of 2^n (float 22 <= n <= 28, double and
/// complex<float> 21 <= n <= 27, complex<double> 20 <= n <= 26), two passes: the streamed
/// schedule over gathered rows of 2^S (S = streamed_log_n_max: 15 for float, 14 for
/// 8-byte elements, 13 for complex<double>), flat-index bits [0, 10) and
/// [n - S + 10, n), runs of 2^10 elements (streamed_gathered_rows); then the strided
/// stage over the middle bits [10, n - S + 10), whose tile rows lie 2^10 elements apart:
/// one block a tile up to 11 middle bits, clusters of 8 or 16 blocks at 12 and 13
/// (launch_strided_stage). The default plan (stage 0 over bits [0, S), then bits [S, n))
/// strides its tile rows 2^S apart, where the strided stage runs further from a copy.
/// H200: double n = 23 0.417 (default plan) vs 0.465 (middle plan) (bench_fwht)
template <class V>
inline bool kronecker_middle_serves(int log_n, const void* in, const void* out,
                                    const kronecker_config& cfg = {}) {
  constexpr int S = streamed_log_n_max<V>;
  if constexpr (S == 0) {
    return false;
  } else {
    const int mid = log_n - S;
    if (mid < streamed_gathered_mid_min || mid > streamed_gathered_mid_max) return false;
    if (reinterpret_cast<std::uintptr_t>(out) % 16 != 0) return false;
    if (!streamed_serves<V>(S, in)) return false;
    // The middle stage: one block a tile, or clusters (launch_strided_stage) under cfg.
    const strided_limits lim = strided_stage_limits<V>(cfg);
    return mid <= std::max(lim.single_max, lim.cluster_max);
  }
}

}  // namespace wham::detail::wht
