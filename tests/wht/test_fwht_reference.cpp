// The host FWHT reference against the O(4^n) definition.
#include <wham/error.hpp>
#include <wham/reference/fwht.hpp>

#include "catch.hpp"
#include "test_util.hpp"

#include <complex>
#include <random>
#include <vector>

TEST_CASE("reference FWHT equals the Walsh matrix product", "[fwht][reference]") {
  const int log_n = GENERATE(0, 1, 2, 3, 5, 7, 10);
  CAPTURE(log_n, wham_test::seed());
  auto gen = wham_test::rng(100 + log_n);
  std::normal_distribution<double> normal;
  const std::size_t n = std::size_t(1) << log_n;

  std::vector<double> x(n);
  for (auto& v : x) v = normal(gen);
  const auto expected = wham::reference::walsh_matrix_product(x, log_n, 0.5);
  const auto got = wham::reference::fwht_batched<double>(x.data(), log_n, 1, 0.5);
  CHECK(wham_test::relative_error(got.data(), expected.data(), n) <= 1e-14);

  std::vector<std::complex<double>> z(n);
  for (auto& v : z) v = {normal(gen), normal(gen)};
  const auto zexp = wham::reference::walsh_matrix_product(z, log_n);
  auto zgot = z;
  wham::reference::fwht_inplace(zgot.data(), log_n);
  CHECK(wham_test::relative_error(zgot.data(), zexp.data(), n) <= 1e-14);
}

TEST_CASE("reference FWHT: a delta at x gives the row (-1)^popcount(x & k)", "[fwht][reference]") {
  const int log_n = 6;
  const std::size_t n = std::size_t(1) << log_n;
  for (std::size_t x : {std::size_t(0), std::size_t(1), std::size_t(37), n - 1}) {
    std::vector<double> v(n, 0.0);
    v[x] = 1.0;
    wham::reference::fwht_inplace(v.data(), log_n);
    for (std::size_t k = 0; k < n; ++k) {
      const double sign = __builtin_parityll(x & k) ? -1.0 : 1.0;
      REQUIRE(v[k] == sign);
    }
  }
}

TEST_CASE("wham::error messages name the argument, its value and the valid range", "[error]") {
  try {
    wham::detail::check_range("fwht", "log_n", 31, 0, 30);
    FAIL("no throw");
  } catch (const wham::error& e) {
    CHECK(std::string(e.what()) == "wham::fwht: log_n = 31 is invalid (valid: 0..30)");
  }
  try {
    wham::detail::check_not_null("fwht", "in", nullptr);
    FAIL("no throw");
  } catch (const wham::error& e) {
    CHECK(std::string(e.what()).find("in = nullptr") != std::string::npos);
  }
  try {
    WHAM_CUDA_TRY(cudaErrorInvalidValue);
    FAIL("no throw");
  } catch (const wham::error& e) {
    const std::string what = e.what();
    CHECK(what.find("cudaErrorInvalidValue") != std::string::npos);
    CHECK(what.find("test_fwht_reference.cpp") != std::string::npos);
  }
}
