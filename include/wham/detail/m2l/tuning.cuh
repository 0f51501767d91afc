/// \file wham/detail/m2l/tuning.cuh
/// \brief The pair-streaming M2L's tuning table: the orders each schedule is compiled for,
/// where `automatic` switches (dispatch.cuh reads these), and each schedule's shape.
/// Schedules: thread (thread.cuh), split (split.cuh), warp (warp.cuh), four-pair tensor
/// (tensor.cuh, sm_80+) and wide tensor (tensor_wide.cuh, sm_90). Figures are medians at
/// 1e5 pairs of bench_m2l's rows for that path, unless a line says otherwise.
#pragma once

#include <type_traits>

namespace wham::detail::m2l {

// ---- orders each schedule is compiled for ----------------------------------------------

/// Thread schedule: double p = 12 takes 199,680 bytes of shared memory a block, near sm_90's
/// 227 KB; beyond, the split, warp and tensor schedules serve.
inline constexpr int thread_max_order = 12;
/// Split schedule: below 7 the thread schedule wins (automatic_thread_max_order); above 12
/// its fully unrolled degrees grow to tens of thousands of instructions a warp.
inline constexpr int split_min_order = 7;
inline constexpr int split_max_order = 12;

// ---- where automatic switches (dispatch.cuh) -------------------------------------------

/// The thread schedule up to this order, then split (to split_max_order) or tensor.
/// H200, thread vs split: double p = 6 57-60 vs 73-100 us, p = 7 111-131 vs 95-103;
/// float p = 8 75-82 vs 73-74, p = 9 266-296 vs 103-128.
template <class T>
constexpr int automatic_thread_max_order() {
  return std::is_same_v<T, double> ? 6 : 8;
}

/// Double, sm_80 (the four-pair tensor schedule): H200 p = 13 751 us vs warp 1194; p = 12
/// 646 vs split 687, inside split's run-to-run range (619-677): left to split.
inline constexpr int tensor_min_order = 13;

/// Double, sm_90 (the wide tensor schedule): H200 p = 11 364 us vs split 497; p = 9, 10
/// within 2% (270 vs 276, 333 vs 339). The accumulate forms take the same threshold.
inline constexpr int wide_min_order = 11;
static_assert(wide_min_order < tensor_min_order, "the wide schedule starts lower");

/// Float, sm_90 (the wide schedule, computed in double): H100 p = 13-16 456-783 us vs warp
/// 959-1430; p = 12 split 355 vs wide 439.
inline constexpr int wide_float_min_order = split_max_order + 1;

// ---- thread schedule -------------------------------------------------------------------

/// Threads (= pairs) per block and where a thread keeps its record.
struct thread_config {
  int threads;     ///< threads (= pairs) per block
  bool registers;  ///< whole record in registers (else worked on in shared memory)
};
/// H200, us (fraction of the copy floor):
template <class T>
constexpr thread_config thread_schedule_config(int p) {
  if constexpr (std::is_same_v<T, double>) {
    if (p <= 4) return {128, true};  // p = 2, 3, 4: 11.2, 19.1, 30.4 (0.80-0.89); 140 registers
    if (p <= 6) return {64, true};   // p = 5, 6: 43.9, 59.6 (0.86, 0.85); 254 registers, no spill
    return {64, false};              // p = 7, 8: 131, 380; in registers p = 8 spills 1.7 KB
  } else {
    if (p <= 6) return {128, true};  // p = 2, 4, 6: 8.8, 15.0, 37.8 (0.84, 0.73, 0.72)
    return {128, false};             // p = 7, 8: 63, 83 (0.54, 0.52); registers spill at p = 8
  }
}

// ---- split schedule --------------------------------------------------------------------

/// Warps per block (degree groups) and the blocks an SM its registers must allow
/// (__launch_bounds__' second argument; 0: no cap).
struct split_config {
  int warps;
  int min_blocks;
};
/// H200, us by warps G. Register caps lose (double p = 8 G = 4 capped 158 vs 125-156
/// uncapped; float p = 8 76 vs 75-78), so min_blocks is 0.
template <class T>
constexpr split_config split_schedule_config(int p) {
  if constexpr (std::is_same_v<T, double>) {
    if (p <= 8) return {2, 0};  // p = 8 G = 1, 2, 3, 4: 142, 115-128, 147-172, 125-168
    return {4, 0};              // p = 12 G = 1, 2, 4, 6: 1801, 986, 619-677, 660-780
  } else {
    return {p <= 8 ? 2 : 4, 0};  // p = 8 G = 2, 4: 73-74, 75-78; p = 12: 401, 290-362
  }
}

// ---- warp schedule ---------------------------------------------------------------------

/// Warps per block: not tuned (the only value measured).
inline constexpr int warp_schedule_warps = 4;

// ---- four-pair tensor schedule (tensor.cuh) --------------------------------------------

/// Warps a block: H200 p = 20 one 2215 us vs two 2781, four 2814.
inline constexpr int tensor_warps = 1;
/// Registers capped for tensor_capped_min_blocks blocks an SM up to this order, uncapped
/// above. H200 capped vs uncapped: p = 12, 14 643, 864 us vs 813, 973; p = 16, 18, 20
/// 1277, 2080, 2981 vs 1167, 1695, 2181.
inline constexpr int tensor_capped_max_order = 15;
inline constexpr int tensor_capped_min_blocks = 20;  // 96 registers, 612 bytes of spills

// ---- wide tensor schedule (tensor_wide.cuh) --------------------------------------------

/// Its shape up to an order: W warps a tile of eight pairs, registers for MinBlocks blocks
/// an SM, compiled for orders with wide_tiles(p) <= MaxNT.
struct wide_shape {
  int max_order, warps, min_blocks, max_nt;
};
/// H200, us (the fastest shape tried, or within 1-4% of it with one shape fewer):
inline constexpr wide_shape wide_shapes[] = {
    {13, 2, 6, 4},  // p = 11-13: 364, 456, 485; (4, 4, 4) 350, 469, 516 (248 B spilled)
    {15, 4, 4, 4},  // p = 14, 15: 573, 620; (2, 6, 4) 680 at p = 15
    {17, 3, 4, 5},  // p = 16, 17: 789, 903; (4, 3, 5) 835, 911
    {19, 4, 3, 5},  // p = 18, 19: 981, 1039; (3, 4, 5) 1117, 1229
    {20, 4, 3, 6},  // p = 20: 1462; one warp a tile (255 registers): 2932
};
inline constexpr int wide_shape_count = int(sizeof(wide_shapes) / sizeof(wide_shapes[0]));

/// The entry of wide_shapes that serves order p (the last one past its orders).
constexpr int wide_shape_index(int p) {
  int i = 0;
  while (i + 1 < wide_shape_count && p > wide_shapes[i].max_order) ++i;
  return i;
}

// wide_fold_min_degree (tensor_wide_tables.cuh): the degree from which a swap takes the
// folded blocks; below it the whole matrix is one n tile and two k tiles, fewer products.

// ---- direct path -----------------------------------------------------------------------

/// Threads a block of the direct O(p^4) kernel: not tuned (a baseline and a cross-check).
inline constexpr int direct_block_threads = 128;

}  // namespace wham::detail::m2l
