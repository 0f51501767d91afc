// The host references of the IQP encoder: the FWHT against the Walsh matrix,
// the FWHT-based state against an independent gate-by-gate simulation, and
// small cases worked by hand.
#include <wham/reference/fwht.hpp>
#include <wham/reference/iqp.hpp>

#include "catch.hpp"
#include "iqp_sampled_reference.hpp"
#include "test_util.hpp"

#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using C = std::complex<double>;

std::vector<double> random_params(std::mt19937_64& gen, int n, bool pairs, double range) {
  std::uniform_real_distribution<double> u(-range, range);
  std::vector<double> p(static_cast<std::size_t>(wham::reference::iqp_params_per_sample(n, pairs)));
  for (auto& v : p) v = u(gen);
  return p;
}

double norm2(const std::vector<C>& v) {
  double s = 0.0;
  for (const auto& a : v) s += std::norm(a);
  return s;
}

}  // namespace

TEST_CASE("reference fwht equals the Walsh matrix product", "[iqp][reference]") {
  const int log_n = GENERATE(0, 1, 2, 3, 5, 8, 10);
  CAPTURE(log_n, wham_test::seed());
  auto gen = wham_test::rng(100 + log_n);
  std::normal_distribution<double> normal;
  const std::size_t n = std::size_t(1) << log_n;
  std::vector<C> in(n);
  for (auto& v : in) v = C(normal(gen), normal(gen));
  auto fast = in;
  wham::reference::fwht_inplace(fast.data(), log_n);
  const auto slow = wham::reference::walsh_matrix_product(in, log_n);
  REQUIRE(wham_test::relative_error(fast.data(), slow.data(), n) <= 1e-13);
}

TEST_CASE("reference IQP state equals the gate-by-gate simulation", "[iqp][reference]") {
  const int n = GENERATE(1, 2, 3, 4, 5, 7, 9, 10);
  const bool pairs = GENERATE(false, true);
  const double range = GENERATE(1.0, 10.0);
  CAPTURE(n, pairs, range, wham_test::seed());
  auto gen = wham_test::rng(200 + 10 * n + pairs);
  const auto p = random_params(gen, n, pairs, range);
  const auto fast = wham::reference::iqp_state(p.data(), n, pairs);
  const auto gates = wham::reference::iqp_state_gates(p.data(), n, pairs);
  REQUIRE(fast.size() == gates.size());
  REQUIRE(wham_test::relative_error(fast.data(), gates.data(), fast.size()) <= 1e-12);
  REQUIRE(std::abs(norm2(fast) - 1.0) <= 1e-12);
}

TEST_CASE("reference IQP: all-zero parameters give |0>", "[iqp][reference]") {
  const int n = GENERATE(1, 2, 6, 12);
  const bool pairs = GENERATE(false, true);
  CAPTURE(n, pairs);
  std::vector<float> p(static_cast<std::size_t>(wham::reference::iqp_params_per_sample(n, pairs)),
                       0.0f);
  const auto s = wham::reference::iqp_state(p.data(), n, pairs);
  CHECK(s[0] == C(1.0, 0.0));
  for (std::size_t k = 1; k < s.size(); ++k) REQUIRE(s[k] == C(0.0, 0.0));
}

TEST_CASE("reference IQP by hand: n = 1 and n = 2", "[iqp][reference]") {
  const double a = 0.7, b = -1.3, j = 2.1;
  SECTION("n = 1: amp = ((1 + e^{ia}) / 2, (1 - e^{ia}) / 2)") {
    const double p[] = {a};
    const auto s = wham::reference::iqp_state(p, 1, false);
    const C e = std::polar(1.0, a);
    CHECK(std::abs(s[0] - (1.0 + e) / 2.0) < 1e-15);
    CHECK(std::abs(s[1] - (1.0 - e) / 2.0) < 1e-15);
  }
  SECTION("n = 2 with the coupling: phases (0, a, b, a + b + J) over x = 00, 01, 10, 11") {
    const double p[] = {a, b, j};
    const auto s = wham::reference::iqp_state(p, 2, true);
    const C u0 = 1.0, u1 = std::polar(1.0, a), u2 = std::polar(1.0, b),
            u3 = std::polar(1.0, a + b + j);
    CHECK(std::abs(s[0] - (u0 + u1 + u2 + u3) / 4.0) < 1e-15);
    CHECK(std::abs(s[1] - (u0 - u1 + u2 - u3) / 4.0) < 1e-15);
    CHECK(std::abs(s[2] - (u0 + u1 - u2 - u3) / 4.0) < 1e-15);
    CHECK(std::abs(s[3] - (u0 - u1 - u2 + u3) / 4.0) < 1e-15);
  }
  SECTION("pair order (0,1), (0,2), (1,2) at n = 3") {
    CHECK(wham::reference::iqp_pair_offset(3, 0, 1) == 3);
    CHECK(wham::reference::iqp_pair_offset(3, 0, 2) == 4);
    CHECK(wham::reference::iqp_pair_offset(3, 1, 2) == 5);
    CHECK(wham::reference::iqp_params_per_sample(3, true) == 6);
    const double p[] = {0.0, 0.0, 0.0, 0.0, 0.0, 1.5};  // only J_12
    CHECK(wham::reference::iqp_phase(p, 3, true, 0b110) == 1.5);
    CHECK(wham::reference::iqp_phase(p, 3, true, 0b011) == 0.0);
  }
}

TEST_CASE("reference IQP batch is row by row", "[iqp][reference]") {
  const int n = 5;
  const std::int64_t batch = 3;
  auto gen = wham_test::rng(300);
  std::vector<double> p;
  for (int b = 0; b < batch; ++b) {
    const auto row = random_params(gen, n, true, 3.0);
    p.insert(p.end(), row.begin(), row.end());
  }
  const auto all = wham::reference::iqp_states(p.data(), n, batch, true);
  const std::size_t per = static_cast<std::size_t>(wham::reference::iqp_params_per_sample(n, true));
  for (int b = 0; b < batch; ++b) {
    const auto one = wham::reference::iqp_state(p.data() + b * per, n, true);
    REQUIRE(wham_test::relative_error(all.data() + b * 32, one.data(), 32) == 0.0);
  }
}

TEST_CASE("sampled references of large states agree with the full reference", "[iqp][reference]") {
  // iqp_slices and iqp_z_amplitude check the GPU at n = 25..30 (test_iqp_large_gpu), where
  // the full reference would not fit; here they meet it where it does.
  for (const int n : {11, 12, 14}) {
    CAPTURE(n);
    auto gen = wham_test::rng(400 + n);
    const auto p = random_params(gen, n, true, 3.0);
    const auto full = wham::reference::iqp_state(p.data(), n, true);
    const int m = 6;
    const std::uint64_t top = (std::uint64_t(1) << (n - m)) - 1;
    const std::vector<std::uint64_t> k_his = {0, top, 5 % (top + 1)};
    const auto slices = wham_test::iqp_slices(p.data(), n, m, k_his);
    REQUIRE(slices.size() == k_his.size());
    for (std::size_t s = 0; s < k_his.size(); ++s) {
      CAPTURE(s);
      const std::size_t first = std::size_t(k_his[s]) << m;
      CHECK(wham_test::relative_error(slices[s].data(), full.data() + first, std::size_t(1) << m) <
            1e-12);
    }
    const auto pz = random_params(gen, n, false, 3.0);
    const auto zfull = wham::reference::iqp_state(pz.data(), n, false);
    for (std::uint64_t k = 0; k < (std::uint64_t(1) << n); k += 97) {
      CAPTURE(k);
      CHECK(std::abs(wham_test::iqp_z_amplitude(pz.data(), n, k) - zfull[k]) < 1e-13);
    }
  }
}
