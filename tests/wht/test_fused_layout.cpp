// The fused schedule's shared-memory index arithmetic (wham/detail/wht/fused_layout.hpp),
// which the device kernels use verbatim: the host replay of every thread and pass
// equals the full transform in both layouts, and the padded layout's accesses are
// free of bank conflicts for the element sizes and register tiles that use it.
// Inputs are small integers, so every comparison is exact.
#include <wham/detail/wht/fused_layout.hpp>
#include <wham/reference/fwht.hpp>

#include "catch.hpp"
#include "fused_replay.hpp"
#include "test_util.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <random>
#include <set>
#include <vector>

namespace layout = wham::detail::wht::fused_layout;

TEST_CASE("fused layout: the replayed schedule equals the full transform", "[wht][cpu]") {
  const bool padded = GENERATE(false, true);
  const int log_n = GENERATE(range(1, 15));
  const int log_e = GENERATE(range(1, 7));
  if (log_e > log_n) return;
  CAPTURE(padded, log_n, log_e);
  auto gen = wham_test::rng(std::uint64_t(log_n * 16 + log_e) * 2 + (padded ? 1 : 0));
  std::uniform_int_distribution<int> dist(-8, 8);
  std::vector<double> x(std::size_t(1) << log_n);
  for (auto& v : x) v = dist(gen);
  std::vector<double> expected = x;
  wham::reference::fwht_inplace(expected.data(), log_n);
  REQUIRE(layout::simulate_fused(x, log_n, log_e, padded) == expected);
}

TEST_CASE("fused layout: the replay's checks catch wrong layouts", "[wht][cpu]") {
  std::vector<double> x(std::size_t(1) << 10);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = double(int(i % 17) - 8);
  // Two elements in one slot (padding by x / 2E instead of x / E).
  REQUIRE_THROWS_AS(layout::simulate_fused_with(
                        x, 10, 4, true, [](unsigned v, int le) { return v + (v >> (le + 1)); }),
                    std::logic_error);
  // A padded pass whose slots are not the sums of the thread's and register's.
  REQUIRE_THROWS_AS(layout::simulate_fused_with(x, 10, 4, true, [](unsigned v, int) { return v; }),
                    std::logic_error);
  // A permutation that is a valid layout passes: the replay does not depend on where.
  const auto reversed = [](unsigned v, int) { return 1023u - v; };
  std::vector<double> expected = x;
  wham::reference::fwht_inplace(expected.data(), 10);
  REQUIRE(layout::simulate_fused_with(x, 10, 4, false, reversed) == expected);
}

namespace {

// Slots of one warp's access to register j, lane by lane: threads of `tps` a segment,
// 32 / tps segments a warp when tps < 32 (`stride` slots apart), warp `w` otherwise.
std::vector<std::int64_t> warp_slots(int log_n, int log_e, int b, int j, int w) {
  const int tps = 1 << (log_n - log_e);
  const int log_t = log_n - log_e;
  const std::int64_t stride = layout::segment_slots(log_n, log_e, true);
  std::vector<std::int64_t> slots;
  for (int lane = 0; lane < 32; ++lane) {
    const int thread = w * 32 + lane;
    const int segment = tps < 32 ? lane / tps : 0;
    const int t = tps < 32 ? lane % tps : thread;
    if (t >= tps) break;
    unsigned x;
    if (b == 0) {  // the contiguous write after the first register butterflies
      x = unsigned(t * (1 << log_e) + j);
    } else {
      const int g = layout::pass_bits(log_n, log_e, b);
      x = layout::pass_thread_part(unsigned(t), b, g) | layout::pass_register_part(j, b, g, log_t);
    }
    slots.push_back(segment * stride + layout::padded_slot(x, log_e));
  }
  return slots;
}

}  // namespace

TEST_CASE("fused layout: padded accesses are free of bank conflicts", "[wht][cpu]") {
  // The shapes that take the padded layout (fused.cuh: inputs with warp tables, the
  // IQP phases): complex<double> (16 bytes) with 8 or 16 elements a thread,
  // complex<float> (8 bytes) with 32. A warp's access of 16-byte (8-byte) elements
  // is served 8 (16) lanes at a time, 128 bytes: conflict-free when those lanes'
  // slots differ modulo 8 (16). Rows of one thread (linear_store) are left out.
  struct shape {
    int bytes;
    int log_e;
  };
  const shape s = GENERATE(shape{16, 3}, shape{16, 4}, shape{8, 5});
  const int log_n = GENERATE(range(1, 16));
  if (log_n <= s.log_e) return;
  const int lanes_per_phase = 128 / s.bytes;
  const int tps = 1 << (log_n - s.log_e);
  const int warps = tps >= 32 ? tps / 32 : 1;
  CAPTURE(s.bytes, s.log_e, log_n);
  for (int b = 0; b < log_n;) {
    CAPTURE(b);
    for (int w = 0; w < warps; ++w) {
      for (int j = 0; j < (1 << s.log_e); ++j) {
        const auto slots = warp_slots(log_n, s.log_e, b, j, w);
        for (std::size_t p = 0; p < slots.size(); p += lanes_per_phase) {
          std::set<std::int64_t> banks;
          for (std::size_t l = p; l < slots.size() && l < p + lanes_per_phase; ++l) {
            banks.insert(slots[l] % lanes_per_phase);
          }
          const std::size_t lanes = std::min<std::size_t>(lanes_per_phase, slots.size() - p);
          CAPTURE(w, j, p);
          REQUIRE(banks.size() == lanes);
        }
      }
    }
    b = b == 0 ? s.log_e : b + layout::pass_bits(log_n, s.log_e, b);
  }
}
