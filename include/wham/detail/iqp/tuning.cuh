/// \file wham/detail/iqp/tuning.cuh
/// \brief The IQP encoder's tuning: how its rows are split over clusters, when clusters
/// and the resident schedule pay, and its Kronecker plan, each with the measurement that
/// chose it (card, figure, the benchmark that reproduces it). "Of the write floor" is
/// bench_iqp's floor_frac. M is the compiled one-block maximum (wht::block_compiled_max_log_n:
/// 13 for complex128, 14 for complex64). The transform's own constants (elements a
/// thread and the like) are in wham/detail/wht/tuning.cuh.
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/wht/fused.cuh>
#include <wham/detail/wht/tuning.cuh>

#include <cstdint>

namespace wham::detail::iqp {

/// Blocks a row of n <= M qubits is split over where the device has clusters: 1 (one
/// block a row), or a cluster of 2 or 4 parts. Rows of 2^M fill an SM, which idles while
/// its one block loads and stores: two half-rows overlap; at small batch (rows <= SMs /
/// 8) four parts shorten each row's chain of dependent work (also n = M - 1 in complex128).
/// H200: complex128 n = 13 0.41 (2 parts) vs 0.36 (one block) of the write floor, 512 MiB;
/// batch 1 9.8 us (4 parts) vs 11.8 (2 parts) (bench_iqp)
template <class V>
inline int cluster_parts(int n, std::int64_t batch) {
  constexpr int M = wht::block_compiled_max_log_n<V>;
  const bool small = batch <= std::int64_t(current_device_limits().sm_count) / 8;
  if (n == M) return small ? 4 : 2;
  if (n == M - 1 && sizeof(V) >= 16 && small) return 4;
  return 1;
}

/// Rows of 2^(M + 1) as four parts of 2^(M - 1) (two share an SM) rather than two of
/// 2^M, from 2 * SMs rows on; rows of 2^(M + 2) always take eight parts of 2^(M - 1).
/// H200: complex128 n = 14 0.43 (4 parts) vs 0.31 (2 parts) of the write floor, 512 MiB;
/// batch 64 19.2 vs 15.9 us (bench_iqp)
template <class V>
inline bool quarter_parts(std::int64_t batch) {
  return batch >= 2 * std::int64_t(current_device_limits().sm_count);
}

/// Whether rows beyond one block (n = M + 1, M + 2) pay as clusters against the
/// Kronecker split: n = M + 1 by the FWHT's rule (wht::cluster_pays, two parts of 2^M);
/// n = M + 2 (eight parts) from 2 * SMs / 8 rows on.
/// H200: complex128 n = 15 batch 64 32.0 us (8 parts) vs 37.8 (kronecker); 512 MiB 0.36 vs
/// 0.26 of the write floor (bench_iqp)
template <class V>
inline bool clusters_pay(int n, std::int64_t batch) {
  if (n == wht::block_compiled_max_log_n<V> + 2) {
    // batch * 8 >= 2 * SMs, without the product (iqp_automatic_path takes any batch).
    return batch >= (std::int64_t(current_device_limits().sm_count) + 3) / 4;
  }
  return wht::cluster_pays(2, batch);
}

/// Whether the Kronecker path runs `batch` rows of 2^n as the resident schedule (one
/// kernel, a cluster of 8 blocks a row) rather than one launch a stage, where that
/// schedule serves n: rows of 1 MiB from batch 64 on, longer rows from 256.
/// H200: complex128 n = 16 batch 64 62.5 us (resident) vs 73 (two launches); batch 8 17.1
/// vs 12.9 (bench_iqp)
template <class V>
inline bool resident_pays(int n, std::int64_t batch) {
  const bool one_mib_rows = (std::int64_t(sizeof(V)) << n) == (std::int64_t(1) << 20);
  return batch >= (one_mib_rows ? 64 : 256);
}

/// The Kronecker split's plan for the IQP phases: strided stages in one block only (a
/// clustered stage would need a stage 0 of 13 or 14 bits, and the phase-generating stage
/// 0 costs more there than the pass it saves).
/// H200: complex64 n = 26 0.121 (13+13, clusters) vs 0.152 (12+7+7) of the write floor,
/// 512 MiB (bench_iqp_large)
inline constexpr wht::kronecker_config kronecker_tuning = [] {
  wht::kronecker_config c;
  c.clusters = -1;
  return c;
}();

}  // namespace wham::detail::iqp
