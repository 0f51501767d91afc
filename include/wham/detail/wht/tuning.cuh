/// \file wham/detail/wht/tuning.cuh
/// \brief The Walsh-Hadamard family's tuning: every measured constant and rule of its
/// schedules, each with the measurement that chose it (card, figure, the benchmark that
/// reproduces it). Figures are fractions of a floor: bench_fwht's floor_frac (a copy of
/// the same bytes, 1 GiB of rows unless said) and bench_iqp's (a write of the output,
/// 512 MiB). The IQP encoder's own choices are in wham/detail/iqp/tuning.cuh.
#pragma once

#include <wham/detail/device.cuh>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace wham::detail::wht {

// ---- fused schedule (fused.cuh): elements a thread, E ------------------------------
// Each thread holds E contiguous elements: log2(E) stages in registers, and every
// shared-memory round trip does another log2(E). `tables`: the input makes warp tables
// (the IQP phases), whose product form wants long register tiles.

/// float rows by length.
/// H200: log_n = 7 0.73 (E = 64) vs 1.08 (8), 13 0.82 vs 0.86 (32) (bench_fwht float)
constexpr int float_items(int log_n) {
  return log_n <= 5 ? 64 : log_n <= 7 ? 8 : log_n <= 12 ? 16 : log_n == 13 ? 32 : 64;
}

/// double rows by length.
/// H200: log_n = 5-9 0.92-0.95 (E = 32) vs 1.06-1.07 (8); 14 0.83 vs 0.78 (bench_fwht double)
constexpr int double_items(int log_n) { return log_n >= 5 && log_n <= 12 ? 8 : 32; }

/// complex<double> rows: 8 at n = 8 with tables (16 leaves a row 16 threads, below the
/// warp the product form needs), fewer for loaded rows.
/// H200: IQP n = 8 198 (E = 16) vs 182 us (8) (bench_iqp); FWHT log_n = 4-7 0.86 / 0.90 /
/// 0.98 (E = 16 / 8 / 4) (bench_fwht complex<double>)
constexpr int complex128_items(int log_n, bool tables) {
  if (tables) return log_n == 8 ? 8 : 16;
  return log_n <= 8 ? 4 : log_n <= 11 ? 8 : 16;
}

/// complex<float> rows: 32 with tables, else 8 up to 2^11.
/// H200: FWHT log_n = 8-9 0.85 (E = 32) vs 0.98 (8) (bench_fwht); IQP n = 10 0.58 vs 0.32
/// (bench_iqp)
constexpr int complex64_items(int log_n, bool tables) { return !tables && log_n <= 11 ? 8 : 32; }

/// Threads a fused kernel keeps resident an SM (its register cap: 128 a thread).
/// H200: IQP complex128 n = 12 0.56 (this cap) vs 0.44 (80 registers) (bench_iqp)
inline constexpr int fused_threads_per_sm = 512;

/// The same for complex64 IQP rows whose phases are made per element (n < log2(E) + 5):
/// 768 holds their registers at 80 with no spills (sm_90 ptxas), where 512 let n = 5 take
/// 84 and n = 6, 7 92, two blocks of 256 an SM instead of three.
inline constexpr int fused_phase_rows_threads_per_sm = 768;

/// The same from double parameters, whose loads take more registers: H100 bench_iqp, 512 MiB,
/// n = 5, 7: 303 / 281 us held at 80 registers, 279 / 239 us at 84 / 92 (two blocks an SM).
inline constexpr int fused_phase_rows_double_threads_per_sm = 512;

/// Segments whose threads would write runs narrower than this many bytes go out through
/// shared memory in the block's linear order.
/// H200: IQP complex128 n = 4 527 us (stored from registers) against a 129 us floor (bench_iqp)
inline constexpr std::size_t fused_linear_store_below_bytes = 64;

// ---- packed schedule (packed.cuh) --------------------------------------------------
/// Threads a block, and 16-byte vectors a thread takes each step.
/// H200: float rows of 2 1.00 at 1 vector a thread vs 0.96-0.98 at 2-16 (bench_fwht)
inline constexpr int packed_threads = 256;
inline constexpr int packed_vectors_per_thread = 1;

// ---- streamed schedule (streamed.cuh) ----------------------------------------------
/// log2 of the longest row the streamed schedule takes (128 KiB of float, 8-byte
/// elements and complex<double>; shorter rows from 2^13 on).
/// H200: float 2^15 0.66 (fused) vs 0.85, complex<double> 2^13 0.72 vs 0.915 (bench_fwht)
template <class V>
inline constexpr int streamed_log_n_max = sizeof(V) == 4    ? 15
                                          : sizeof(V) == 8  ? 14
                                          : sizeof(V) == 16 ? 13
                                                            : 0;
/// H200: float 2^13 0.79 (fused) vs 0.88 (three streamed blocks an SM) (bench_fwht)
template <class V>
inline constexpr int streamed_log_n_min = streamed_log_n_max<V> > 0 ? 13 : 0;

/// Elements a thread of the streamed schedule (up to streamed_max_threads a block).
/// H200: float 2^15 0.85 (512 threads of 64) vs 0.89 (1024 of 32) (bench_fwht)
inline constexpr int streamed_items = 32;
inline constexpr int streamed_max_threads = 1024;

// ---- cluster schedule (cluster.cuh) ------------------------------------------------
/// Whether `rows` rows as clusters of C blocks beat the Kronecker split (rows beyond one
/// block): once the clusters fill the GPU.
/// H200: float batch 64, log_n = 16 (C = 2) 0.50 (cluster) vs 0.41 (kronecker), 17 (C = 4)
/// 0.40 vs 0.46 (bench_fwht)
inline bool cluster_pays(int C, std::int64_t rows) {
  const std::int64_t sms = current_device_limits().sm_count;
  // rows * C >= blocks, without the product (which overflows at huge rows).
  const std::int64_t blocks = C <= 2 ? sms / 2 : 4 * sms;
  return rows >= (blocks + C - 1) / C;
}

// ---- Kronecker split (kronecker_plan.cuh, kronecker.cuh) ---------------------------
/// Stage-0 bits the plan prefers (more only where fewer strided stages need them).
/// H200: fused float 0.93 at 2^12 vs 0.71 at 2^15; complex<double> 0.95 vs 0.73 at 2^13
/// (bench_fwht)
inline constexpr int kronecker_preferred_lo = 12;

/// Stage-0 bits for loaded float rows of 2^22..2^25 whose stage 0 streams (0: the
/// default plan): a longer stage 0 leaves a narrower strided stage.
/// H200: float n = 24 0.38 (13+11) vs 0.44 (15+9) (bench_fwht)
constexpr int kronecker_streamed_lo_bits(int log_n) {
  return log_n < 22 || log_n > 25 ? 0 : log_n <= 23 ? 14 : 15;
}

/// Strided stages wider than one block's tile run as clusters of blocks of 2^9 rows.
/// H200: float n = 24 (12+12) 0.41 (parts of 2^9 rows) vs 0.38 (2^10) (bench_fwht)
inline constexpr int strided_cluster_part_bits = 9;
/// log2 of the largest cluster a strided stage uses (16 blocks where the device holds them).
/// H200: float n = 27 0.358 (14+13, clusters of 16) vs 0.324 (12+8+7) (bench_fwht)
inline constexpr int strided_cluster_log_k = 4;
/// Clustered stages only for elements of at most this many bytes (and where they save a pass).
/// H200: complex<double> n = 26 0.31 (13+13, clusters) vs 0.34 (12+7+7) (bench_fwht)
inline constexpr std::size_t strided_cluster_max_elem_bytes = 8;
/// Blocks an SM the clustered stage's registers must allow (two 64-KiB parts an SM).
/// H200: 13-bit stage unbounded: complex<float> 0.35 (72 registers), double 0.52 (bench_fwht)
inline constexpr int strided_cluster_min_blocks = 2;

/// Row bits of the one strided stage that streams its tiles (float only).
/// H200: float n = 25, 10-bit stage 0.785 (one block) vs 0.854; 9 bits 0.897 vs 0.854
/// (bench_fwht)
inline constexpr int strided_streamed_log_h = 10;

/// Tuning of the split, per device (the H200's defaults).
struct kronecker_config {
  /// Most row bits one strided stage takes in one block (0: the most the device's
  /// shared memory holds: 11).
  int max_strided_bits = 0;
  /// Bytes of intermediate per chunk of rows (all stages of a chunk before the next, for
  /// L2 reuse); <= 0: no chunks.
  /// H200: float n = 16 1.33 ms (no chunks) vs 1.65 (30 MiB chunks) (bench_fwht BM_kron_tune)
  std::int64_t chunk_bytes = 0;
  /// Stage-0 bits (0: kronecker_preferred_lo, moved as the stage count requires).
  int lo_bits = 0;
  /// Strided stages wider than max_strided_bits as clusters of blocks: 0: where that
  /// saves a pass (strided_cluster_max_elem_bytes); 1: whenever a stage is wider; -1: never.
  int clusters = 0;
  /// log2 of the largest cluster a strided stage may use (0: strided_cluster_log_k).
  int cluster_log_k = 0;
  /// Run the middle plan (kronecker_middle_serves must hold) instead of the stages above.
  bool middle = false;
};

// ---- m * 2^k rows (hadamard_m.cuh) ---------------------------------------------------
/// Elements the fused schedule puts in a block (whole rows, at least one): 40 KiB of float
/// shared memory with its padding, five blocks an SM of 227 KiB, so that one block's loads
/// overlap another's shared-memory passes (a model: the schedule's phases do not overlap
/// within a block).
inline constexpr std::int64_t hadamard_m_block_elements = 8192;

/// Whether the fused H_m kernel's rare path (a column whose sum is not finite) is inline
/// rather than an out-of-line call. Float m = 28, 1 GiB, H100, k = 2 / 6 / 10: inline 772 /
/// 795 / 1139 us (74 registers), the call 971 / 1270 / 1526 (92), no check 770 / 797 / 1145.
/// Elsewhere the call: inline spills at m = 40 in 8- and 16-byte types and in float m = 20.
template <class T, int M>
inline constexpr bool hadamard_m_rare_inline = std::is_same_v<T, float> && M == 28;

// ---- resident schedule (kronecker_resident.cuh) ------------------------------------
/// Stage-0 bits and blocks a row (a cluster: the portable maximum) of the resident schedule.
/// H200: IQP complex128 n = 16 0.30 (K = 8) vs 0.27 (16) vs 0.24 (two launches) (bench_iqp)
inline constexpr int resident_lo = kronecker_preferred_lo;
inline constexpr int resident_cluster = 8;

}  // namespace wham::detail::wht
