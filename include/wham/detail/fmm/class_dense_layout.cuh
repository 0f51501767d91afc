/// \file wham/detail/fmm/class_dense_layout.cuh
/// \brief The dense class schedule's shapes (class_dense.cuh): which tiles of the class
/// operator are kept, the knobs of a launch shape (dense_config, chosen by order in
/// tuning.cuh), and the shared-memory layout they imply.
#pragma once

#include <wham/detail/m2l/blocks.cuh>

#include <cstddef>

namespace wham::detail::fmm {

using m2l::cpx;

/// Pairs a tile (the N of mma.m8n8k4).
inline constexpr int dense_pairs = 8;

/// Degree of complex coefficient index i = n^2 + n + m.
__host__ __device__ constexpr int dense_degree(int i) {
  int d = 0;
  while ((d + 1) * (d + 1) <= i) ++d;
  return d;
}

/// The same at run time without the loop (exact for i < 2^26).
__device__ __forceinline__ int dense_degree_fast(int i) {
  int d = int(sqrtf(float(i)));
  d -= d * d > i;
  d += (d + 1) * (d + 1) <= i;
  return d;
}

/// Kept column tiles of row tile r: c with deg(2c) <= p - deg(4r), a prefix (2c <=
/// (room + 1)^2 - 1), at most the (C + 1) / 2 column tiles.
__host__ __device__ constexpr int dense_cols(int p, int r) {
  const int C = (p + 1) * (p + 1), ct = (C + 1) / 2;
  const int room = p - dense_degree(4 * r);
  const int c = ((room + 1) * (room + 1) + 1) / 2;
  return c < ct ? c : ct;
}

/// First tile of row tile r in the table; dense_offset(p, row tiles) tiles in all.
__host__ __device__ constexpr int dense_offset(int p, int r) {
  int o = 0;
  for (int q = 0; q < r; ++q) o += dense_cols(p, q);
  return o;
}

template <int P>
struct dense_shape {
  static constexpr int C = (P + 1) * (P + 1);
  static constexpr int row_tiles = (C + 3) / 4;
  static constexpr int col_tiles = (C + 1) / 2;
  static constexpr int tiles = dense_offset(P, row_tiles);
  /// A pair's record in doubles: four real columns a column tile, padded so that the
  /// four pairs of a half-warp's B load start 4 doubles apart modulo 16 (no bank
  /// conflicts).
  static constexpr int record =
      (4 * col_tiles) % 16 == 4 || (4 * col_tiles) % 16 == 12 ? 4 * col_tiles : 4 * col_tiles + 4;
};

/// The dense schedule's shape: WARPS warps a block, NP tiles of eight pairs a warp at
/// once (each operator load feeds NP products), G row tiles a group (their column loads
/// shared; 2 G NP accumulators), BUF record buffers a warp (2: the next tiles' copies
/// in flight during the products), M16: pairs of row tiles as one mma.m16n8k4, BULK:
/// the results staged in shared memory and added to each target by one bulk reduction
/// (cp.reduce.async.bulk .add.f64, sm_90; else one atomic a value from the accumulator's
/// lane), SPAN: the most pairs a block takes at once (0: one contiguous stretch a block;
/// else spans of at most SPAN pairs, the blocks taking them in turn, so that the pairs
/// in flight keep to one part of a list grouped by tiles of targets), LOAD_BULK: each
/// pair's record gathered by one bulk copy (cp.async.bulk, completion counted on a
/// per-warp mbarrier; sm_90) instead of one cp.async per coefficient (one buffer only).
template <int WARPS_, int NP_, int G_, int BUF_, bool M16_, bool BULK_ = false, int SPAN_ = 0,
          bool LOAD_BULK_ = false>
struct dense_config {
  static constexpr int warps = WARPS_, np = NP_, g = G_, buf = BUF_, span = SPAN_;
  static constexpr bool m16 = M16_, bulk = BULK_, load_bulk = LOAD_BULK_;
  static_assert(!M16_ || G_ % 2 == 0, "m16n8k4 takes row tiles in pairs");
  static_assert(!LOAD_BULK_ || (BUF_ == 1 && NP_ == 1), "bulk gathers fill one buffer");
  static_assert(NP_ * 8 <= 32, "a lane holds the indices of one pair of the warp's tiles");
};

/// Shared memory (bytes from the dynamic base): the operator tiles, S, then each warp's
/// record buffers.
template <int P, class K>
struct dense_layout {
  using shape = dense_shape<P>;
  static constexpr std::size_t tiles = 0;
  static constexpr std::size_t s = tiles + std::size_t(shape::tiles) * 32 * sizeof(double);
  static constexpr std::size_t buffers = s + std::size_t(shape::C) * sizeof(cpx<double>);
  static constexpr int warp_pairs = K::np * dense_pairs;
  static constexpr std::size_t buffer_doubles = std::size_t(warp_pairs) * shape::record;
  static constexpr std::size_t stage =
      buffers + std::size_t(K::warps) * K::buf * buffer_doubles * sizeof(double);
  /// A pair's staged result in doubles (BULK): 2C, even so that every pair's row starts
  /// 16-byte aligned for the bulk copy, and 2 or 6 modulo 8 so that the accumulator
  /// lanes' stores (eight rows of four pairs two rows apart) meet no bank conflicts.
  /// With every row tile in one group (all results in registers when the products are
  /// done) and one record buffer, the results are staged in the records themselves.
  static constexpr bool stage_in_records =
      K::bulk && K::g >= shape::row_tiles && K::buf == 1 && K::np == 1;
  static constexpr int stage_stride =
      stage_in_records ? shape::record
                       : ((2 * shape::C) % 8 == 0 ? 2 * shape::C + 2 : 2 * shape::C);
  static constexpr std::size_t stage_doubles =
      K::bulk && !stage_in_records ? std::size_t(warp_pairs) * stage_stride : 0;
  /// Each warp's mbarrier (LOAD_BULK).
  static constexpr std::size_t bars =
      stage + std::size_t(K::warps) * stage_doubles * sizeof(double);
  static constexpr std::size_t total =
      bars + (K::load_bulk ? std::size_t(K::warps) * sizeof(unsigned long long) : 0);
};

}  // namespace wham::detail::fmm
