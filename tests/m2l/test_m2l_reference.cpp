// The host references of the complex M2L: the factorised form against the
// direct O(p^4) form, the swap matrices, and P2M -> M2L -> L2P against the
// direct sum of q / r.
#include <wham/reference/m2l.hpp>

#include "catch.hpp"
#include "test_util.hpp"

#include <cmath>
#include <complex>
#include <random>
#include <vector>

namespace ref = wham::reference;

namespace {

std::vector<ref::m2l_complex> random_multipole(int p, std::mt19937_64& gen) {
  std::normal_distribution<double> normal;
  std::vector<ref::m2l_complex> M(ref::m2l_num_coeffs(p));
  for (auto& v : M) v = {normal(gen), normal(gen)};  // general complex, not conjugate-symmetric
  return M;
}

}  // namespace

TEST_CASE("swap matrices: involution and parities", "[m2l][reference]") {
  const int l = GENERATE(range(0, 21));
  CAPTURE(l);
  const auto B = ref::swap_matrix(l);
  const int w = 2 * l + 1;
  auto at = [&](int m, int k) { return B[(m + l) * w + (k + l)]; };
  double scale = 0.0;
  for (double v : B) scale = std::max(scale, std::abs(v));
  for (int m = -l; m <= l; ++m) {
    for (int k = -l; k <= l; ++k) {
      double acc = 0.0;
      for (int j = -l; j <= l; ++j) acc += at(m, j) * at(j, k);
      CAPTURE(m, k);
      REQUIRE(std::abs(acc - (m == k ? 1.0 : 0.0)) <= 1e-12 * scale * scale);
      REQUIRE(at(-m, k) == (((l + k) & 1) ? -at(m, k) : at(m, k)));
      REQUIRE(at(m, -k) == (((l + m) & 1) ? -at(m, k) : at(m, k)));
    }
  }
}

TEST_CASE("solid harmonics: negative orders and the addition of R", "[m2l][reference]") {
  // R_n^m(a + b) = sum_{k,l} R_k^l(a) R_{n-k}^{m-l}(b): checks the recurrences' normalisation.
  auto gen = wham_test::rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int p = 8;
  const double a[3] = {u(gen), u(gen), u(gen)}, b[3] = {u(gen), u(gen), u(gen)};
  const auto Ra = ref::regular_harmonics(p, a[0], a[1], a[2]);
  const auto Rb = ref::regular_harmonics(p, b[0], b[1], b[2]);
  const auto Rab = ref::regular_harmonics(p, a[0] + b[0], a[1] + b[1], a[2] + b[2]);
  CAPTURE(wham_test::seed());
  for (int n = 0; n <= p; ++n) {
    for (int m = -n; m <= n; ++m) {
      ref::m2l_complex acc = 0.0;
      for (int k = 0; k <= n; ++k) {
        for (int l = -k; l <= k; ++l) {
          if (std::abs(m - l) > n - k) continue;
          acc += Ra[ref::m2l_index(k, l)] * Rb[ref::m2l_index(n - k, m - l)];
        }
      }
      CAPTURE(n, m);
      REQUIRE(std::abs(acc - Rab[ref::m2l_index(n, m)]) <= 1e-13 * (1.0 + std::abs(acc)));
    }
  }
}

TEST_CASE("factorised M2L equals the direct form", "[m2l][reference]") {
  const int p = GENERATE(range(0, 13));
  // 0: random; 1: +z axis; 2: -z axis; 3, 4: tiny x, y above / below; 5: in the xy plane;
  // 6: x, y at 1e-300 (rho^2 underflows)
  const int kind = GENERATE(range(0, 7));
  auto gen = wham_test::rng(100 * p + kind);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  double d[3] = {u(gen), u(gen), u(gen)};
  const double s = 1.0 + std::abs(u(gen));
  switch (kind) {
    case 1:
      d[0] = d[1] = 0.0;
      d[2] = s;
      break;
    case 2:
      d[0] = d[1] = 0.0;
      d[2] = -s;
      break;
    case 3:
      d[0] = 1e-9 * u(gen);
      d[1] = 1e-9 * u(gen);
      d[2] = s;
      break;
    case 4:
      d[0] = 1e-12 * u(gen);
      d[1] = 1e-12 * u(gen);
      d[2] = -s;
      break;
    case 5:
      d[2] = 0.0;
      break;
    case 6:
      d[0] = 1e-300;
      d[1] = -1e-300;
      d[2] = -s;
      break;
    default:
      break;
  }
  if (kind == 0 || kind == 5) {  // keep |d| away from 0
    const double r = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    for (double& c : d) c *= s / r;
  }
  const auto M = random_multipole(p, gen);
  const auto direct = ref::m2l_direct(p, M.data(), d);
  const auto fact = ref::m2l_factorised(p, M.data(), d);
  const double err = wham_test::relative_error(fact.data(), direct.data(), direct.size());
  CAPTURE(p, kind, d[0], d[1], d[2], err, wham_test::seed());
  REQUIRE(err <= 1e-13);
}

TEST_CASE("P2M -> M2L -> L2P converges to the direct sum", "[m2l][reference]") {
  // Sources in a ball of radius a about cA, targets in a ball of radius a about cB,
  // |cB - cA| = D. The truncation n + k <= p keeps the total degree <= p of the
  // expansion of 1/|D + s| in |s| <= 2a, so
  //   |phi_p(x) - phi(x)| <= sum|q| / (D - 2a) * (2a / D)^(p+1)      (checked, x1.01 + 1e-13)
  // and the error falls with p.
  auto gen = wham_test::rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double a = 0.5, D = 3.0;
  const double cA[3] = {0.0, 0.0, 0.0};
  const double dir[3] = {0.48, -0.6, 0.64};  // unit vector
  const double cB[3] = {D * dir[0], D * dir[1], D * dir[2]};
  auto in_ball = [&](const double* c, double* x) {
    do {
      for (int i = 0; i < 3; ++i) x[i] = a * u(gen);
    } while (x[0] * x[0] + x[1] * x[1] + x[2] * x[2] > a * a);
    for (int i = 0; i < 3; ++i) x[i] += c[i];
  };
  const int ns = 40, nt = 20;
  std::vector<double> src(3 * ns), q(ns), tgt(3 * nt);
  double qsum = 0.0;
  for (int i = 0; i < ns; ++i) {
    in_ball(cA, &src[3 * i]);
    q[i] = u(gen);
    qsum += std::abs(q[i]);
  }
  for (int j = 0; j < nt; ++j) in_ball(cB, &tgt[3 * j]);
  const double delta[3] = {cB[0] - cA[0], cB[1] - cA[1], cB[2] - cA[2]};
  std::vector<double> errors;
  for (int p = 0; p <= 16; ++p) {
    const auto M = ref::p2m(p, cA, src.data(), q.data(), ns);
    const auto L = ref::m2l_factorised(p, M.data(), delta);
    double worst = 0.0;
    for (int j = 0; j < nt; ++j) {
      double exact = 0.0;
      for (int i = 0; i < ns; ++i) {
        const double dx = tgt[3 * j] - src[3 * i], dy = tgt[3 * j + 1] - src[3 * i + 1],
                     dz = tgt[3 * j + 2] - src[3 * i + 2];
        exact += q[i] / std::sqrt(dx * dx + dy * dy + dz * dz);
      }
      worst = std::max(worst, std::abs(ref::l2p(p, L.data(), cB, &tgt[3 * j]) - exact));
    }
    const double bound = qsum / (D - 2 * a) * std::pow(2 * a / D, p + 1);
    errors.push_back(worst);
    CAPTURE(p, worst, bound, wham_test::seed());
    REQUIRE(worst <= 1.01 * bound + 1e-13);
    // the error falls with p (compared over two orders, to step over parity effects)
    if (p >= 2 && errors[p - 2] > 1e-12) REQUIRE(worst < errors[p - 2]);
  }
}
