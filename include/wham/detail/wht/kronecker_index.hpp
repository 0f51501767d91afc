/// \file wham/detail/wht/kronecker_index.hpp
/// \brief The index arithmetic of the Kronecker split H_n = H_hi (x) ... (x) H_lo,
/// shared by the device schedule (kronecker.cuh, strided.cuh, streamed.cuh) and its CPU
/// tests (plain C++17, no CUDA; the tests' host replay of the split:
/// tests/wht/kronecker_replay.hpp).
///
/// A row of 2^n elements is transformed bit group by bit group. Stage 0 covers
/// index bits [0, lo) over contiguous segments (the fused kernel). Every later
/// ("strided") stage covers bits [bit, bit + log_h): one thread block owns a
/// tile of 2^log_h rows (stride 2^bit) by C = 2^log_c adjacent columns, loads it
/// coalesced (C contiguous elements per row, 64 or 128 bytes or more), transforms the
/// 2^log_h direction on chip in rounds of register butterflies separated by
/// shared-memory exchanges, and stores it back in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>

#if defined(__CUDACC__)
#define WHAM_KRON_HD __host__ __device__ __forceinline__
#else
#define WHAM_KRON_HD inline
#endif

namespace wham::detail::wht::kron {

/// One stage: transforms index bits [bit, bit + bits).
struct stage {
  int bit = 0;
  int bits = 0;
};

/// Stages of a split, low bits first. stages[0] is the contiguous (fused) stage.
struct plan {
  int num_stages = 0;
  stage stages[8] = {};
};

/// Splits log_n bits: stage 0 takes `lo` bits, the rest is cut into the fewest
/// groups of at most hi_max bits, balanced (larger groups first).
/// Requires 1 <= lo < log_n <= 30, hi_max >= 3 and at most 8 stages in all.
inline plan make_plan(int log_n, int lo, int hi_max) {
  if (lo < 1 || lo >= log_n || hi_max < 3 || log_n > 30) {
    throw std::invalid_argument("kronecker::make_plan: need 1 <= lo < log_n <= 30, hi_max >= 3");
  }
  plan p;
  p.stages[0] = {0, lo};
  const int rest = log_n - lo;
  const int groups = (rest + hi_max - 1) / hi_max;
  if (groups > 7) throw std::invalid_argument("kronecker::make_plan: more than 8 stages");
  int bit = lo;
  for (int g = 0; g < groups; ++g) {
    const int bits = rest / groups + (g < rest % groups ? 1 : 0);
    p.stages[1 + g] = {bit, bits};
    bit += bits;
  }
  p.num_stages = 1 + groups;
  return p;
}

constexpr int log2_exact(int v) { return v <= 1 ? 0 : 1 + log2_exact(v / 2); }
constexpr int max_int(int a, int b) { return a > b ? a : b; }
constexpr int min_int(int a, int b) { return a < b ? a : b; }

/// Shape of a strided tile for elements of `elem_bytes` bytes and 2^log_h rows.
///   log_e:   log2 of the elements each thread holds (16 at least, more when
///            512 threads cannot cover the tile; never more than a column)
///   log_c:   log2 of the columns per tile: 128 contiguous bytes per row up to
///            2^10 rows, 64 at 2^11 (so that the tile stays within 128 KiB of
///            shared memory); more for short columns, so that a block keeps 256
///            threads. H200: 0.48-0.49 of a copy with 128-byte rows vs 0.41-0.43
///            with 64-byte rows, float two-stage rows, 1 GiB (bench_fwht).
///   threads: 2^(log_h + log_c - log_e)
struct strided_shape_t {
  int log_e;
  int log_c;
  int threads;
};
constexpr strided_shape_t strided_shape(int log_h, int elem_bytes) {
  const int log_c0 = log2_exact((log_h <= 10 ? 128 : 64) / elem_bytes);
  const int log_e = min_int(max_int(4, log_h + log_c0 - 9), log_h);
  const int log_c = max_int(log_c0, 8 + log_e - log_h);
  return {log_e, log_c, 1 << (log_h + log_c - log_e)};
}

/// Flat index of row 0, column 0 of tile `tile` of a strided stage over bits
/// [bit, bit + log_h) with 2^log_c columns per tile (requires log_c <= bit).
WHAM_KRON_HD std::int64_t tile_base(int bit, int log_h, int log_c, std::int64_t tile) {
  const int inner_log = bit - log_c;  // tiles side by side within one stride
  const std::int64_t outer = tile >> inner_log;
  const std::int64_t inner0 = (tile & ((std::int64_t(1) << inner_log) - 1)) << log_c;
  return (outer << (bit + log_h)) | inner0;
}

/// Row index h (in [0, 2^log_h)) held in register slot g of group r by a thread
/// of a round over row bits [b, b + g_bits): o = r * P + p (p: the thread's place
/// in its column), h = low b bits of o | g << b | the rest of o above.
WHAM_KRON_HD unsigned round_row(int b, int g_bits, unsigned o, unsigned g) {
  const unsigned low_mask = (1u << b) - 1u;
  return (o & low_mask) | (g << b) | ((o >> b) << (b + g_bits));
}

/// The middle plan's gathered rows (kronecker_plan.cuh, kronecker_middle_serves):
/// for rows of 2^log_row elements, a gathered row of 2^log_n elements takes flat-index
/// bits [0, log_run) and the top log_n - log_run bits [log_row - log_n + log_run,
/// log_row); gathered row `row` enumerates the sample (row >> mid) and the middle bits
/// (the low mid = log_row - log_n bits of row), which a strided stage over bits
/// [log_run, log_run + mid) takes afterwards. Requires 1 <= log_run < log_n < log_row.
/// Flat index of element 0 of gathered row `row`:
WHAM_KRON_HD std::int64_t gathered_base(int log_row, int log_n, int log_run, std::int64_t row) {
  const int mid = log_row - log_n;
  const std::int64_t sample = row >> mid;
  const std::int64_t middle = row & ((std::int64_t(1) << mid) - 1);
  return (sample << log_row) | (middle << log_run);
}
/// and the offset of its element x from there (below 2^log_row: 32 bits for rows of up
/// to 2^31 elements; 64-bit offsets made the device's complex<float> rows spill).
WHAM_KRON_HD unsigned gathered_offset(int log_row, int log_n, int log_run, unsigned x) {
  const int high_shift = log_row - (log_n - log_run);
  return (x & ((1u << log_run) - 1u)) | ((x >> log_run) << high_shift);
}

}  // namespace wham::detail::wht::kron
