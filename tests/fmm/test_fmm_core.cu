// The per-thread M2L building block of the accumulate and class forms, run on the host
// (its functions are __host__ __device__) against the direct O(p^4) reference.
#include <wham/detail/fmm/core.cuh>
#include <wham/reference/m2l.hpp>

#include "catch.hpp"
#include "test_util.hpp"

#include <complex>
#include <random>
#include <utility>
#include <vector>

namespace {

template <int P, class T>
double core_error(const double delta[3], std::mt19937_64& gen) {
  constexpr int C = (P + 1) * (P + 1);
  std::normal_distribution<double> normal;
  std::vector<std::complex<double>> M(C);
  for (auto& v : M) v = {normal(gen), normal(gen)};
  T re[C], im[C];
  std::vector<std::complex<double>> Mt(C);
  for (int c = 0; c < C; ++c) {
    re[c] = T(M[c].real());
    im[c] = T(M[c].imag());
    Mt[c] = {double(re[c]), double(im[c])};  // the reference sees the rounded input
  }
  const auto rd = wham::detail::fmm::make_rotation<T>(T(delta[0]), T(delta[1]), T(delta[2]));
  wham::detail::fmm::m2l_pair<P, T>(rd, re, im);
  const auto ref = wham::reference::m2l_direct(P, Mt.data(), delta);
  std::vector<std::complex<double>> got(C);
  for (int c = 0; c < C; ++c) got[c] = {double(re[c]), double(im[c])};
  return wham_test::relative_error(got.data(), ref.data(), C);
}

template <class T, int... Ps>
void check_orders(std::integer_sequence<int, Ps...>, const double delta[3], double tol,
                  std::mt19937_64& gen) {
  auto one = [&](auto pc) {
    constexpr int P = decltype(pc)::value;
    const double e = core_error<P, T>(delta, gen);
    CAPTURE(P, e);
    CHECK(e <= tol);
  };
  (one(std::integral_constant<int, Ps>{}), ...);
}

}  // namespace

TEST_CASE("fmm per-thread M2L core equals the direct reference", "[fmm][core]") {
  const int kind = GENERATE(0, 1, 2, 3, 4, 5);
  auto gen = wham_test::rng(600 + kind);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  double delta[3];
  switch (kind) {
    case 0: delta[0] = 0; delta[1] = 0; delta[2] = 2.5; break;       // +z axis
    case 1: delta[0] = 0; delta[1] = 0; delta[2] = -1.75; break;     // -z axis
    case 2: delta[0] = 1e-9; delta[1] = -2e-9; delta[2] = 2.0; break;  // tiny x, y
    case 3: delta[0] = 2; delta[1] = -3; delta[2] = 1; break;        // a uniform-tree class
    default:
      do {
        delta[0] = u(gen);
        delta[1] = u(gen);
        delta[2] = u(gen);
      } while (delta[0] * delta[0] + delta[1] * delta[1] + delta[2] * delta[2] < 1.0);
  }
  CAPTURE(kind, delta[0], delta[1], delta[2], wham_test::seed());
  check_orders<double>(std::integer_sequence<int, 0, 1, 2, 3, 4, 5, 6, 7, 8>{}, delta, 1e-13, gen);
  check_orders<float>(std::integer_sequence<int, 0, 1, 2, 3, 4, 5, 6, 7, 8>{}, delta, 1e-4, gen);
}
