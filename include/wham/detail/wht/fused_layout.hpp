/// \file wham/detail/wht/fused_layout.hpp
/// \brief The shared-memory index arithmetic of the fused schedule (one thread block
/// transforms whole segments of 2^log_n elements: fused.cuh), shared
/// by the device code and its CPU tests, plus a host replay of one segment (plain
/// C++17, no CUDA).
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

#include <wham/detail/wht/fwht_host.hpp>

#include <cstdint>
#include <stdexcept>
#include <vector>

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

/// Replays the fused schedule on one segment of 2^log_n elements (unnormalised
/// transform), thread by thread and pass by pass, through shared memory laid out
/// as `padded` says. Each pass first reads every thread's registers, then writes
/// them back; the device does both without a barrier between threads, which is
/// sound because each thread writes back exactly the slots it read, and this
/// replay checks that (and that every slot lies within segment_slots) and throws
/// std::logic_error otherwise. Requires 1 <= log_e <= log_n <= 20.
/// `slot_of(x, log_e)` places the elements (slot(.., padded) in simulate_fused; the
/// tests pass wrong ones to see the checks fail).
template <class T, class SlotOf>
std::vector<T> simulate_fused_with(const std::vector<T>& in, int log_n, int log_e, bool padded,
                                   SlotOf slot_of) {
  if (log_e < 1 || log_e > log_n || log_n > 20 || in.size() != (std::size_t(1) << log_n)) {
    throw std::invalid_argument("fused_layout::simulate_fused: need 1 <= log_e <= log_n <= 20");
  }
  const int e = 1 << log_e;
  const int tps = 1 << (log_n - log_e);
  const int log_t = log_n - log_e;
  const std::int64_t slots = segment_slots(log_n, log_e, padded);
  std::vector<T> smem(static_cast<std::size_t>(slots), T(0));
  std::vector<int> owner(static_cast<std::size_t>(slots), -1);
  std::vector<T> regs(std::size_t(tps) * e);
  // Registers: E contiguous elements a thread, bits [0, log_e) transformed.
  for (int t = 0; t < tps; ++t) {
    T* v = &regs[std::size_t(t) * e];
    for (int j = 0; j < e; ++j) v[j] = in[std::size_t(t) * e + j];
    fwht_inplace(v, log_e);
  }
  const auto check_slot = [&](unsigned s) {
    if (std::int64_t(s) >= slots) throw std::logic_error("fused_layout: slot beyond the segment");
  };
  for (int t = 0; t < tps; ++t) {
    for (int j = 0; j < e; ++j) {
      const unsigned s = slot_of(unsigned(t * e + j), log_e);
      check_slot(s);
      if (owner[s] != -1) throw std::logic_error("fused_layout: two elements in one slot");
      owner[s] = t;
      smem[s] = regs[std::size_t(t) * e + j];
    }
  }
  std::vector<T> out(in.size(), T(0));
  for (int b = log_e; b < log_n;) {
    const int g = pass_bits(log_n, log_e, b);
    std::vector<int> reader(static_cast<std::size_t>(slots), -1);
    for (int t = 0; t < tps; ++t) {
      const unsigned tp = pass_thread_part(unsigned(t), b, g);
      T* v = &regs[std::size_t(t) * e];
      for (int j = 0; j < e; ++j) {
        const unsigned jp = pass_register_part(j, b, g, log_t);
        if ((tp & jp) != 0)
          throw std::logic_error("fused_layout: thread and register parts overlap");
        const unsigned x = tp | jp;
        const unsigned s = slot_of(x, log_e);
        check_slot(s);
        if (padded && s != padded_slot(tp, log_e) + padded_slot(jp, log_e)) {
          throw std::logic_error("fused_layout: padded slot not the sum of its parts");
        }
        if (reader[s] != -1) throw std::logic_error("fused_layout: a slot read twice in a pass");
        reader[s] = t;
        v[j] = smem[s];
      }
      // Bits [0, g) of the register index, in each of the E / 2^g groups.
      for (int r = 0; r < (e >> g); ++r) fwht_inplace(v + (r << g), g);
    }
    const bool last = b + g >= log_n;
    for (int t = 0; t < tps; ++t) {
      const unsigned tp = pass_thread_part(unsigned(t), b, g);
      for (int j = 0; j < e; ++j) {
        const unsigned x = tp | pass_register_part(j, b, g, log_t);
        const T value = regs[std::size_t(t) * e + j];
        if (last) {
          out[x] = value;
        } else {
          const unsigned s = slot_of(x, log_e);
          if (reader[s] != t)
            throw std::logic_error("fused_layout: a thread writes a slot it did not read");
          smem[s] = value;
        }
      }
    }
    b += g;
  }
  if (log_e == log_n) {  // no pass: the registers hold the transform
    for (int t = 0; t < tps; ++t) {
      for (int j = 0; j < e; ++j) out[std::size_t(t) * e + j] = regs[std::size_t(t) * e + j];
    }
  }
  return out;
}

template <class T>
std::vector<T> simulate_fused(const std::vector<T>& in, int log_n, int log_e, bool padded) {
  return simulate_fused_with(in, log_n, log_e, padded,
                             [padded](unsigned x, int le) { return slot(x, le, padded); });
}

}  // namespace wham::detail::wht::fused_layout

#undef WHAM_FUSED_HD
