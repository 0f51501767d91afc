// The fused schedule replayed on the host, one segment thread by thread and pass by pass,
// with the device's own index arithmetic (wham/detail/wht/fused_layout.hpp): what
// test_fused_layout checks the layout with.
#pragma once

#include <wham/detail/wht/fused_layout.hpp>
#include <wham/detail/wht/fwht_host.hpp>

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace wham::detail::wht::fused_layout {

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
