/// \file wham/detail/fmm/tuning.cuh
/// \brief The FMM forms' tuning table: the accumulate forms' shapes, where
/// m2l_accumulate_class_groups switches among its schedules (dispatch.cuh reads these),
/// and each grouped schedule's shape. The accumulate forms choose among the pair-streaming
/// schedules at the M2L's thresholds (detail/m2l/tuning.cuh). Figures are medians of
/// bench_fmm on a uniform 16^3 level (584,136 pairs) or 32^3 level (5,398,920 pairs),
/// double, unless a line says otherwise.
#pragma once

#include <wham/detail/fmm/class_dense_layout.cuh>
#include <wham/detail/m2l/tuning.cuh>

#include <cstdint>
#include <type_traits>

namespace wham::detail::fmm {

// ---- accumulate forms (accumulate.cuh, accumulate_warp.cuh) -----------------------------

/// Warps a block of the split tile schedule. H200, centres, atomic, BM_fmm_split_variant:
/// p = 9 G = 1, 2, 4: 1678, 1102-1108, 1555 us; p = 12 G = 2, 4: 4430, 3155-3171.
constexpr int accumulate_split_warps(int p) { return p <= 10 ? 2 : 4; }

/// Blocks an SM the split tile schedule's registers must allow (0: no cap). H200, centres,
/// atomic, BM_fmm_split_variant, capped vs not: p = 7 1600-1609 vs 1401-1406 Mpairs/s,
/// p = 8 946-948 vs 860-861. The class form keeps the uncapped kernel (its class table
/// already holds it to 4 blocks an SM): H200 class_atomic p = 8 567 vs 695 us capped.
constexpr int accumulate_split_min_blocks(int p) { return p <= 8 ? 5 : 0; }

/// Warps a block of the warp schedule: not tuned (the only value measured).
inline constexpr int warp_schedule_warps = 4;

// m2l_accumulate_method::automatic is atomic. H200, 16^3 centres, accumulate_atomic vs
// accumulate_deterministic: p = 4 118 vs 190 us, p = 8 1.64 vs 1.87 ms, p = 12 6.3 vs 20.6.

// ---- m2l_accumulate_class_groups: which schedule (dispatch.cuh) ------------------------

/// The grouped schedules serve these orders (32 records and the d table in shared memory).
inline constexpr int class_group_min_order = 1;
template <class T>
constexpr int class_group_max_order() {
  return 16;
}

/// The grouped schedules from this order (below, the class form's list-order schedules).
/// H200, 16^3, grouped vs class_atomic: double p = 8 788 vs 545 us, p = 9 1034 vs 1270;
/// float p = 9 704 vs 641, p = 10 873-930 vs 907 (32^3: 7503 vs 8379).
template <class T>
constexpr int class_group_from_order() {
  return std::is_same_v<T, double> ? 9 : 10;
}

/// Double from p = 1 to this order: the dense schedule (class_dense.cuh), the fastest there
/// (H200, 16^3 p = 10 702 us vs the scalar grouped 1310); p = 11 would not fit its shared
/// memory (p = 10 takes 224 KB with eight warps).
inline constexpr int class_dense_max_order = 10;

/// Double from this order: the tensor schedule (class_tensor.cuh) instead of the scalar
/// one. H200, 16^3 grouped, BM_class_groups_tensor, tensor vs scalar: p = 12 2384 vs 2069
/// us, p = 13 2685 vs 3603, p = 16 4073 vs 5141.
inline constexpr int class_group_tensor_min_order = 13;

// ---- the scalar and tensor grouped schedules (class_groups.cuh) -------------------------

/// Cost of degree L at order p, in products a lane: the folded rotation both ways,
/// 2 (2L^2 + 2L + 1), and its z sums, sum over |m| <= L of (p - L - |m| + 1)^+. The
/// scalar schedule balances degrees over warps by it; its time follows it from p = 8 to 16.
constexpr int degree_cost(int p, int L) {
  int z = 0;
  for (int m = -L; m <= L; ++m) {
    const int k = p - L - (m < 0 ? -m : m) + 1;
    z += k > 0 ? k : 0;
  }
  return 2 * (2 * L * L + 2 * L + 1) + z;
}

/// Warps a block of the scalar schedule: the total cost over the largest degree's, rounded
/// (shared memory holds one or two blocks an SM from p = 10, so a block's warps are the
/// SM's). H200, 16^3 grouped, BM_class_groups_warps, us by warps:
template <class T>
constexpr int class_group_warps(int p) {
  if (std::is_same_v<T, double> && p == 10) return 6;  // W = 5, 6: 1414-1419, 1387-1394
  int total = 0, top = 1;
  for (int L = 0; L <= p; ++L) {
    total += degree_cost(p, L);
    top = degree_cost(p, L) > top ? degree_cost(p, L) : top;
  }
  int w = (2 * total + top) / (2 * top);         // double p = 13 W = 5, 6, 7: 3821, 3764, 3874
  if (std::is_same_v<T, float> && w > 6) w = 6;  // float p = 16 W = 6, 7, 8: 4472, 6080, 7100
  return w < 2 ? 2 : w;
}

/// Blocks an SM in __launch_bounds__: the tensor schedule capped for 2 where shared memory
/// holds two (H200, BM_class_groups_tensor, p = 10, 11: 1432-1446, 1621-1634 us vs 1851,
/// 2140 uncapped), else 1; the scalar one unspecified (0: an explicit 1 cost it a block an
/// SM at p = 10, 1580 vs 1302 us).
template <int P, bool Tensor>
constexpr int class_group_min_blocks() {
  return Tensor ? (P <= 11 ? 2 : 1) : 0;
}

/// The scalar and tensor schedules' spans (class_groups.cuh) at most this many chunks.
/// H200, 32^3 class-major, BM_class_groups_span, one stretch / spans of 32 / 64: p = 12
/// 21977 / 20652 / 21002 us, p = 16 53908 / 51150 / 51760.
inline constexpr std::int64_t class_group_span_max = 64;
/// Spans only where each block takes at least this many (16^3, 1-2 a block: p = 16 5480
/// vs 5493 us), and in double (float 32^3 p = 16: one stretch 23515 vs spans 26610).
inline constexpr std::int64_t class_group_span_min_visits = 4;

// ---- the dense grouped schedule (class_dense.cuh) --------------------------------------

/// Spans of at most this many pairs a block. H200, 32^3 by tiles of four z-planes, none vs
/// spans of 4096: p = 8 4976 vs 3800 us, p = 10 8724 vs 6520 (class_groups_tiled).
inline constexpr int class_dense_span = 4096;

/// A shape with every row tile of order P in one group (bulk reductions staged in the
/// record buffer): WARPS warps a block; LOAD_BULK as dense_config.
template <int P, int WARPS, bool LOAD_BULK = false>
using dense_all_rows = dense_config<WARPS, 1, (dense_shape<P>::row_tiles + 1) / 2 * 2, 1, true,
                                    true, class_dense_span, LOAD_BULK>;

/// The shape by order. H200, BM_class_groups_dense<P> (16^3 by class) / class_groups_tiled
/// (32^3), us, against the next best shape:
///   p = 1, 5: atomics, 4 warps          p = 5 174 / 1334 (all rows 176 / 1352)
///   p = 2-4, 6, 7: all rows, 4 warps    p = 6 238 / 1945 (8 warps, 2 row tiles: 276 / 2302)
///   p = 8: all rows, 6 warps            399 / 3325 (4 warps 426 / 3733, 8 warps 474 / 4159)
///   p = 9: all rows, 12 warps           520 / 4111 (2 row tiles: 525 / 4347)
///   p = 10: all rows, 8 warps, bulk     702 / 5376 (cp.async a coefficient: 721 / 5601)
template <int P>
struct class_dense_tuning {
  using type = std::conditional_t<
      (P == 1 || P == 5), dense_config<4, 1, 4, 2, true, false, class_dense_span>,
      std::conditional_t<(P <= 7), dense_all_rows<P, 4>,
                         std::conditional_t<(P == 8), dense_all_rows<P, 6>,
                                            std::conditional_t<(P == 9), dense_all_rows<P, 12>,
                                                               dense_all_rows<P, 8, true>>>>>;
};

}  // namespace wham::detail::fmm
