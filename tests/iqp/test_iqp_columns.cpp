// The phase arithmetic of the IQP columns-first schedule (wham/reference/iqp_columns.hpp,
// which the device kernel calls): theta(x0) + sum_{i in l} f_i + w(l) equals theta of the
// element x0 + (l << S) for random parameters, columns and splits; and the schedule
// replayed on the host (phases by those sums, the high bits transformed first, then every
// contiguous segment) equals the IQP state.
#include <wham/reference/fwht.hpp>
#include <wham/reference/iqp.hpp>
#include <wham/reference/iqp_columns.hpp>

#include "catch.hpp"
#include "test_util.hpp"

#include <cmath>
#include <complex>
#include <random>
#include <vector>

namespace cols = wham::reference::iqp_columns;

namespace {

/// Replays the schedule on the host: column x0's 2^L phases from angles() and
/// row_couplings(), scaled by 2^-n, transformed over l; then the FWHT of each segment.
template <int L, int LaneBits>
std::vector<std::complex<double>> columns_state(const std::vector<double>& p, int n, bool pairs) {
  const int S = n - L;
  std::vector<std::complex<double>> s(std::size_t(1) << n);
  const double scale = std::ldexp(1.0, -n);
  for (unsigned x0 = 0; x0 < (1u << S); ++x0) {
    double base, f[L];
    cols::angles<L, LaneBits>(p.data(), n, pairs, S, x0, base, f);
    std::vector<std::complex<double>> v(std::size_t(1) << L);
    for (unsigned l = 0; l < (1u << L); ++l) {
      double th = base + cols::row_couplings<L>(p.data(), n, pairs, S, l);
      for (int i = 0; i < L; ++i) {
        if ((l >> i) & 1u) th += f[i];
      }
      v[l] = std::polar(scale, th);
    }
    wham::reference::fwht_inplace(v.data(), L);
    for (unsigned l = 0; l < (1u << L); ++l) s[x0 + (std::size_t(l) << S)] = v[l];
  }
  for (std::size_t seg = 0; seg < (std::size_t(1) << L); ++seg) {
    wham::reference::fwht_inplace(s.data() + (seg << S), S);
  }
  return s;
}

/// Replays the streamed schedule's stage A with T threads a block and M mid bits (n = Lo +
/// M + 4), through the reference's tile layout (a_column, exchange_slot, b_mid, b_top,
/// element), then stage B (the FWHT of each contiguous segment of 2^Lo).
std::vector<std::complex<double>> streamed_state(const std::vector<double>& p, int Lo, int M,
                                                 int T, bool pairs) {
  const int S = Lo + M;
  const int n = S + 4;
  const unsigned C = unsigned(cols::tile_columns(M, T));
  const unsigned tiles = (1u << Lo) / C;
  std::vector<std::complex<double>> row(std::size_t(1) << n,
                                        std::complex<double>(std::nan(""), std::nan("")));
  const double scale = std::ldexp(1.0, -n);
  for (unsigned tile = 0; tile < tiles; ++tile) {
    std::vector<std::complex<double>> exchange(std::size_t(16) * T,
                                               std::complex<double>(std::nan(""), 0.0));
    for (unsigned t = 0; t < unsigned(T); ++t) {
      const unsigned x0 = cols::a_column(Lo, M, tile, t, T);
      double base, f[4];
      cols::angles<4, 5>(p.data(), n, pairs, S, x0, base, f);
      std::complex<double> v[16];
      for (unsigned l = 0; l < 16; ++l) {
        double th = base + cols::row_couplings<4>(p.data(), n, pairs, S, l);
        for (int i = 0; i < 4; ++i) {
          if ((l >> i) & 1u) th += f[i];
        }
        v[l] = std::polar(scale, th);
      }
      wham::reference::fwht_inplace(v, 4);
      for (unsigned l = 0; l < 16; ++l) exchange[cols::exchange_slot(M, t / C, l, t % C, T)] = v[l];
    }
    for (unsigned t = 0; t < unsigned(T); ++t) {
      std::complex<double> v[16];
      for (unsigned j = 0; j < 16; ++j) {
        v[j] = exchange[cols::exchange_slot(M, cols::b_mid(M, j), cols::b_top(M, t, j, T), t % C, T)];
      }
      for (int g = 0; g < 16; g += 1 << M) wham::reference::fwht_inplace(v + g, M);
      for (unsigned j = 0; j < 16; ++j) {
        row[cols::element(Lo, M, tile, t % C, cols::b_mid(M, j), cols::b_top(M, t, j, T), T)] = v[j];
      }
    }
  }
  for (std::size_t seg = 0; seg < (std::size_t(1) << (M + 4)); ++seg) {
    wham::reference::fwht_inplace(row.data() + (seg << Lo), Lo);
  }
  return row;
}

template <int L, int LaneBits>
void check_angles(int n, bool pairs, std::mt19937_64& gen) {
  const int S = n - L;
  std::uniform_real_distribution<double> u(-10.0, 10.0);
  std::vector<double> p(std::size_t(wham::reference::iqp_params_per_sample(n, pairs)));
  for (auto& v : p) v = u(gen);
  std::uniform_int_distribution<unsigned> col(0, (1u << S) - 1);
  for (int trial = 0; trial < 64; ++trial) {
    const unsigned x0 = trial == 0 ? 0u : trial == 1 ? (1u << S) - 1 : col(gen);
    double base, f[L];
    cols::angles<L, LaneBits>(p.data(), n, pairs, S, x0, base, f);
    for (unsigned l = 0; l < (1u << L); ++l) {
      double th = base + cols::row_couplings<L>(p.data(), n, pairs, S, l);
      for (int i = 0; i < L; ++i) {
        if ((l >> i) & 1u) th += f[i];
      }
      const std::uint64_t x = x0 + (std::uint64_t(l) << S);
      const double ref = wham::reference::iqp_phase(p.data(), n, pairs, x);
      CAPTURE(n, S, pairs, x0, l);
      // Sums of at most n(n+1)/2 terms of |v| <= 10, in different orders.
      REQUIRE(std::abs(th - ref) <= 1e-12 * (1.0 + std::abs(ref)));
    }
  }
}

}  // namespace

TEST_CASE("iqp columns: the factored phases equal theta, every split the device uses",
          "[iqp][columns][cpu]") {
  const bool pairs = GENERATE(false, true);
  CAPTURE(pairs, wham_test::seed());
  auto gen = wham_test::rng(0xC01 + (pairs ? 1 : 0));
  for (int n = 14; n <= 17; ++n) check_angles<4, 5>(n, pairs, gen);  // the device's rows
  // Other shapes of the same arithmetic: lane bits beyond the columns, no lane bits,
  // fewer row qubits.
  check_angles<4, 5>(7, pairs, gen);
  check_angles<4, 5>(6, pairs, gen);
  check_angles<4, 0>(9, pairs, gen);
  check_angles<2, 3>(8, pairs, gen);
  check_angles<1, 5>(5, pairs, gen);
}

TEST_CASE("iqp columns: the schedule replayed on the host equals the IQP state",
          "[iqp][columns][cpu]") {
  const int n = GENERATE(5, 8, 11);
  const bool pairs = GENERATE(false, true);
  CAPTURE(n, pairs, wham_test::seed());
  auto gen = wham_test::rng(0xC02 + 10 * n + (pairs ? 1 : 0));
  std::uniform_real_distribution<double> u(-3.2, 3.2);
  std::vector<double> p(std::size_t(wham::reference::iqp_params_per_sample(n, pairs)));
  for (auto& v : p) v = u(gen);
  const auto ref = wham::reference::iqp_state(p.data(), n, pairs);
  const auto got = columns_state<4, 5>(p, n, pairs);
  REQUIRE(wham_test::relative_error(got.data(), ref.data(), ref.size()) <= 1e-13);
  // A wrong split fails: the high bits' phases attached to the wrong columns.
  auto bad = got;
  std::swap(bad[1], bad[std::size_t(1) << (n - 4)]);
  REQUIRE(wham_test::relative_error(bad.data(), ref.data(), ref.size()) > 1e-6);
}

TEST_CASE("iqp columns: the streamed schedule's tiles replayed on the host equal the IQP state",
          "[iqp][columns][cpu]") {
  // The device's 256 threads a block at Lo = 8 (the layout at its smallest), and 64 threads.
  const int T = GENERATE(256, 64);
  const int M = GENERATE(0, 1, 2, 3, 4);
  const int Lo = T == 256 ? 8 : 6;
  const bool pairs = GENERATE(false, true);
  const int n = Lo + M + 4;
  CAPTURE(T, Lo, M, n, pairs, wham_test::seed());
  auto gen = wham_test::rng(0xC03 + 10 * n + T + (pairs ? 1 : 0));
  std::uniform_real_distribution<double> u(-3.2, 3.2);
  std::vector<double> p(std::size_t(wham::reference::iqp_params_per_sample(n, pairs)));
  for (auto& v : p) v = u(gen);
  const auto ref = wham::reference::iqp_state(p.data(), n, pairs);
  const auto got = streamed_state(p, Lo, M, T, pairs);
  REQUIRE(wham_test::relative_error(got.data(), ref.data(), ref.size()) <= 1e-13);
}
