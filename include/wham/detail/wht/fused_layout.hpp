/// \file wham/detail/wht/fused_layout.hpp
/// \brief The shared-memory index arithmetic of the fused schedule (one thread block
/// transforms whole segments of 2^log_n elements: fused.cuh), shared
/// by the device code and its CPU tests (plain C++17, no CUDA; the tests' host replay of a
/// segment: tests/wht/fused_replay.hpp).
///
/// A segment's TPS = 2^log_n / E threads hold E = 2^log_e elements each. Thread t
/// starts with x = t * E + j (j < E), transforms bits [0, log_e) in registers and
/// writes to shared memory. Each pass over bits [b, b + g), g = min(log_e, log_n - b),
/// gives register j = r * 2^g + q of thread t the element
///   x = low_b(o) | q << b | (o >> b) << (b + g),  o = r * TPS + t,
/// so that neighbouring lanes touch neighbouring elements. Since t < TPS (a power of
/// two), o = (r << log2 TPS) | t and x = pass_thread_part(t) | pass_register_part(j),
/// the two with no bit in common.
///
/// Slots (element x at slot(x) of the segment's shared memory):
///  - swizzled: x ^ ((x >> log_e) mod E), a permutation of [0, 2^log_n);
///  - padded: x + x / E, one empty slot after every E elements (2^log_n + TPS slots).
///    slot(a | b) = slot(a) + slot(b) for a, b with no bit in common, so a pass's
///    every access is the thread's base slot plus a constant.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define WHAM_FUSED_HD __host__ __device__ __forceinline__ constexpr
#else
#define WHAM_FUSED_HD inline constexpr
#endif

namespace wham::detail::wht::fused_layout {

WHAM_FUSED_HD unsigned swizzled_slot(unsigned x, int log_e) {
  return x ^ ((x >> log_e) & ((1u << log_e) - 1u));
}

WHAM_FUSED_HD unsigned padded_slot(unsigned x, int log_e) { return x + (x >> log_e); }

WHAM_FUSED_HD unsigned slot(unsigned x, int log_e, bool padded) {
  return padded ? padded_slot(x, log_e) : swizzled_slot(x, log_e);
}

/// Bits of a pass over [b, b + g): the smaller of log_e and log_n - b.
WHAM_FUSED_HD int pass_bits(int log_n, int log_e, int b) {
  return log_n - b < log_e ? log_n - b : log_e;
}

/// Thread t's part of x in a pass over bits [b, b + g).
WHAM_FUSED_HD unsigned pass_thread_part(unsigned t, int b, int g) {
  return (t & ((1u << b) - 1u)) | ((t >> b) << (b + g));
}

/// Register j's part of x in a pass over bits [b, b + g) (log_t = log2 TPS).
WHAM_FUSED_HD unsigned pass_register_part(int j, int b, int g, int log_t) {
  const unsigned ro = (unsigned(j) >> g) << log_t;
  const unsigned q = unsigned(j) & ((1u << g) - 1u);
  return (ro & ((1u << b) - 1u)) | (q << b) | ((ro >> b) << (b + g));
}

/// Slots a segment takes: 2^log_n, or 2^log_n + TPS padded.
inline std::int64_t segment_slots(int log_n, int log_e, bool padded) {
  return (std::int64_t(1) << log_n) + (padded ? (std::int64_t(1) << (log_n - log_e)) : 0);
}

}  // namespace wham::detail::wht::fused_layout

#undef WHAM_FUSED_HD
