// The index arithmetic of the Kronecker split (wham/detail/wht/kronecker_index.hpp),
// which the device schedule uses verbatim: plans, tile shapes, and the host
// replay of every tile, thread and round equal the full transform for every
// split of n; likewise the middle plan's gathered rows. Inputs are small
// integers, so every comparison is exact.
#include <wham/detail/wht/kronecker_index.hpp>
#include <wham/reference/fwht.hpp>

#include "catch.hpp"
#include "kronecker_replay.hpp"
#include "test_util.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace kron = wham::detail::wht::kron;

namespace {

bool plan_fits(const kron::plan& p, int elem_bytes) {
  for (int k = 1; k < p.num_stages; ++k) {
    if (kron::strided_shape(p.stages[k].bits, elem_bytes).log_c > p.stages[k].bit) return false;
  }
  return true;
}

// `batch` rows of 2^log_n small random integers, transformed by `replay(data, total)`,
// must equal the full transform exactly.
template <class Replay>
void require_replay_is_transform(int log_n, std::int64_t batch, std::uint64_t tag, Replay replay) {
  const std::int64_t total = batch << log_n;
  auto gen = wham_test::rng(tag);
  std::uniform_int_distribution<int> dist(-8, 8);
  std::vector<double> x(static_cast<std::size_t>(total));
  for (auto& v : x) v = dist(gen);
  auto expected = wham::reference::fwht_batched<double>(x.data(), log_n, batch);
  replay(x.data(), total);
  REQUIRE(x == expected);
}

void check_split(int log_n, int lo, int hi_max, int elem_bytes, std::int64_t batch) {
  CAPTURE(log_n, lo, hi_max, elem_bytes, batch, wham_test::seed());
  const kron::plan p = kron::make_plan(log_n, lo, hi_max);
  if (!plan_fits(p, elem_bytes)) return;  // the device never runs a tile wider than its stride
  require_replay_is_transform(
      log_n, batch, std::uint64_t(log_n) * 1000003u + lo * 1009u + hi_max * 31u + elem_bytes,
      [&](double* data, std::int64_t total) { kron::simulate_split(data, total, p, elem_bytes); });
}

}  // namespace

TEST_CASE("kronecker plans cover the bits with the fewest balanced stages", "[kronecker][cpu]") {
  for (int log_n = 2; log_n <= 30; ++log_n) {
    for (int lo = 1; lo < log_n; ++lo) {
      for (int hi_max = 3; hi_max <= 11; ++hi_max) {
        CAPTURE(log_n, lo, hi_max);
        if ((log_n - lo + hi_max - 1) / hi_max > 7) {
          REQUIRE_THROWS(kron::make_plan(log_n, lo, hi_max));
          continue;
        }
        const kron::plan p = kron::make_plan(log_n, lo, hi_max);
        REQUIRE(p.stages[0].bit == 0);
        REQUIRE(p.stages[0].bits == lo);
        int bit = 0, lo_bits = 64, hi_bits = 0;
        for (int k = 0; k < p.num_stages; ++k) {
          REQUIRE(p.stages[k].bit == bit);
          REQUIRE(p.stages[k].bits >= 1);
          if (k > 0) {
            REQUIRE(p.stages[k].bits <= hi_max);
            lo_bits = std::min(lo_bits, p.stages[k].bits);
            hi_bits = std::max(hi_bits, p.stages[k].bits);
          }
          bit += p.stages[k].bits;
        }
        REQUIRE(bit == log_n);
        REQUIRE(p.num_stages - 1 == (log_n - lo + hi_max - 1) / hi_max);
        REQUIRE(hi_bits - lo_bits <= 1);
      }
    }
  }
  CHECK_THROWS(kron::make_plan(10, 10, 11));
  CHECK_THROWS(kron::make_plan(10, 0, 11));
  CHECK_THROWS(kron::make_plan(31, 15, 11));
}

TEST_CASE("kronecker strided tile shapes", "[kronecker][cpu]") {
  for (int bytes : {4, 8, 16}) {
    for (int log_h = 1; log_h <= 11; ++log_h) {
      CAPTURE(bytes, log_h);
      const auto s = kron::strided_shape(log_h, bytes);
      const int C = 1 << s.log_c;
      REQUIRE(C * bytes >= 64);  // coalesced rows
      REQUIRE(s.threads >= 128);
      REQUIRE(s.threads <= 512);  // launch bounds
      REQUIRE(s.threads % C == 0);
      REQUIRE(s.log_e <= log_h);  // a thread within one column
      REQUIRE((std::int64_t(s.threads) << s.log_e) == (std::int64_t(1) << (log_h + s.log_c)));
      REQUIRE((std::int64_t(1) << (log_h + s.log_c)) * bytes <= 128 * 1024);  // shared memory
      REQUIRE((1 << s.log_e) * bytes <= 256);  // registers: <= 64 words
      REQUIRE(s.log_c <= 8);                   // fits any stride >= 2^8
    }
  }
}

TEST_CASE("kronecker tile bases enumerate every column of every row once", "[kronecker][cpu]") {
  for (int log_n : {9, 12}) {
    for (int bit = 1; bit < log_n; ++bit) {
      for (int log_h = 1; bit + log_h <= log_n; ++log_h) {
        for (int log_c = 0; log_c <= bit; ++log_c) {
          CAPTURE(log_n, bit, log_h, log_c);
          const std::int64_t total = std::int64_t(3) << log_n;
          std::vector<int> seen(static_cast<std::size_t>(total), 0);
          const std::int64_t tiles = total >> (log_h + log_c);
          for (std::int64_t t = 0; t < tiles; ++t) {
            const std::int64_t base = kron::tile_base(bit, log_h, log_c, t);
            for (std::int64_t h = 0; h < (1 << log_h); ++h)
              for (std::int64_t c = 0; c < (1 << log_c); ++c) ++seen[base + (h << bit) + c];
          }
          REQUIRE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
        }
      }
    }
  }
}

TEST_CASE("kronecker split replayed on the host equals the full transform, every split",
          "[kronecker][cpu]") {
  // Every split of n <= 13, every stage size cap, every element size.
  for (int log_n = 2; log_n <= 13; ++log_n)
    for (int lo = 1; lo < log_n; ++lo)
      for (int hi_max = 3; hi_max <= 11; ++hi_max)
        for (int bytes : {4, 8, 16}) check_split(log_n, lo, hi_max, bytes, log_n <= 10 ? 3 : 1);
}

TEST_CASE("kronecker split replayed on the host: the device's plans up to n = 20",
          "[kronecker][cpu]") {
  const int log_n = GENERATE(14, 15, 16, 17, 18, 20);
  const int lo = GENERATE(10, 13, 14, 15);
  const int hi_max = GENERATE(4, 7, 10, 11);
  if (lo >= log_n) return;
  for (int bytes : {4, 8, 16}) check_split(log_n, lo, hi_max, bytes, log_n <= 16 ? 2 : 1);
}

// The middle plan (kronecker_middle_serves): gathered rows of 2^log_n (flat-index bits
// [0, log_run) and the top log_n - log_run bits of rows of 2^log_row), then the strided
// stage over the bits between.
TEST_CASE("kronecker middle plan: gathered rows enumerate every element once", "[kronecker][cpu]") {
  for (int log_row = 3; log_row <= 12; ++log_row)
    for (int log_n = 2; log_n < log_row; ++log_n)
      for (int log_run = 1; log_run < log_n; ++log_run) {
        CAPTURE(log_row, log_n, log_run);
        const std::int64_t total = std::int64_t(3) << log_row;
        std::vector<int> seen(static_cast<std::size_t>(total), 0);
        for (std::int64_t r = 0; r < (total >> log_n); ++r) {
          const std::int64_t base = kron::gathered_base(log_row, log_n, log_run, r);
          for (unsigned x = 0; x < (1u << log_n); ++x) {
            const std::int64_t i = base + kron::gathered_offset(log_row, log_n, log_run, x);
            REQUIRE((i >= 0 && i < total));
            ++seen[static_cast<std::size_t>(i)];
          }
        }
        REQUIRE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
      }
}

namespace {
void check_middle(int log_row, int log_n, int log_run, int elem_bytes, std::int64_t batch) {
  CAPTURE(log_row, log_n, log_run, elem_bytes, batch, wham_test::seed());
  require_replay_is_transform(
      log_row, batch, std::uint64_t(log_row) * 7919u + log_n * 131u + log_run * 17u + elem_bytes,
      [&](double* data, std::int64_t total) {
        kron::simulate_middle(data, total, log_row, log_n, log_run, elem_bytes);
      });
}
}  // namespace

TEST_CASE("kronecker middle plan replayed on the host equals the full transform",
          "[kronecker][cpu]") {
  // Every (gathered row, run) split of rows up to 2^13 whose strided tile fits its stride.
  for (int log_row = 3; log_row <= 13; ++log_row)
    for (int log_n = 2; log_n < log_row; ++log_n)
      for (int log_run = 1; log_run < log_n; ++log_run)
        for (int bytes : {4, 8, 16}) {
          if (kron::strided_shape(log_row - log_n, bytes).log_c > log_run) continue;
          check_middle(log_row, log_n, log_run, bytes, log_row <= 10 ? 3 : 1);
        }
  // The device's shapes at their smallest rows: runs of 2^10, gathered rows of 2^13
  // (complex<double>), 2^14 (8-byte) and 2^15 (float), 7 middle bits.
  check_middle(20, 13, 10, 16, 1);
  check_middle(21, 14, 10, 8, 1);
  check_middle(22, 15, 10, 4, 1);
}
