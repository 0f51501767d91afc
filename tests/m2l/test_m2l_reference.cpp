// The host references of the complex M2L: the factorised form against the
// direct O(p^4) form, the swap matrices, and P2M -> M2L -> L2P against the
// direct sum of q / r.
#include <wham/reference/m2l.hpp>

#include "catch.hpp"
#include "m2l_range.hpp"
#include "test_util.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <limits>
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

namespace {

/// The direct M2L by the spec's recurrences in r^2 (unscaled), in long double: where its
/// exponent range is wider than double's (x86 extended, IEEE quad), nothing in it over- or
/// underflows for a double delta, so it checks the reference's scaled geometry
/// independently.
std::vector<std::complex<long double>> m2l_direct_long(int p, const ref::m2l_complex* M,
                                                       const double d[3]) {
  using LD = long double;
  using CL = std::complex<LD>;
  const LD x = d[0], y = d[1], z = d[2];
  const LD r2 = x * x + y * y + z * z;
  const CL xy(x, y);
  std::vector<CL> S(ref::m2l_num_coeffs(p)), L(ref::m2l_num_coeffs(p));
  auto at = [](int n, int m) { return ref::m2l_index(n, m); };
  S[0] = 1.0L / std::sqrt(r2);
  for (int m = 0; m <= p; ++m) {
    if (m > 0) S[at(m, m)] = S[at(m - 1, m - 1)] * LD(2 * m - 1) * xy / r2;
    if (m + 1 <= p) S[at(m + 1, m)] = LD(2 * m + 1) * z * S[at(m, m)] / r2;
    for (int n = m + 2; n <= p; ++n) {
      S[at(n, m)] =
          (LD(2 * n - 1) * z * S[at(n - 1, m)] - LD((n + m - 1) * (n - m - 1)) * S[at(n - 2, m)]) /
          r2;
    }
  }
  for (int n = 1; n <= p; ++n) {
    for (int m = 1; m <= n; ++m) S[at(n, -m)] = LD((m & 1) ? -1 : 1) * std::conj(S[at(n, m)]);
  }
  for (int n = 0; n <= p; ++n) {
    for (int m = -n; m <= n; ++m) {
      CL acc = 0.0L;
      for (int k = 0; k <= p - n; ++k) {
        for (int l = -k; l <= k; ++l) {
          const CL Mk(M[at(k, l)].real(), M[at(k, l)].imag());
          acc += LD((l & 1) ? -1 : 1) * Mk * S[at(n + k, m - l)];
        }
      }
      L[at(n, m)] = acc;
    }
  }
  return L;
}

}  // namespace

// docs/specs/m2l.md, "Range of |delta|": the reference (the GPU tests' truth) is right at
// both ends of the documented range, on and within 1e-161 of the axes, in the xy plane and
// in random directions. Two checks of its scaled geometry: against the unscaled long double
// form, and against itself at |delta| ~ 1 by homogeneity, L_n(M, 2^j d) = 2^(-j(n+1))
// L_n(M', d) with M'_k = 2^(-jk) M_k (exact scalings; portable).
TEST_CASE("reference M2L at extreme |delta| and near the axes", "[m2l][reference][range]") {
  const int p = GENERATE(0, 1, 2, 8, 12, 20);
  auto gen = wham_test::rng(4100 + p);
  std::uniform_real_distribution<double> u(-1.0, 1.0), mag(0.75, 1.0);
  const int C = ref::m2l_num_coeffs(p);
  std::vector<ref::m2l_complex> M(C);
  double mu = 0.0;
  for (auto& v : M) {
    v = {std::copysign(mag(gen), u(gen)), std::copysign(mag(gen), u(gen))};
    mu = std::max(mu, std::abs(v));
  }
  const bool wide_long = std::numeric_limits<long double>::max_exponent >= 16384;
  const double tol = p <= 12 ? 1e-13 : 1e-11;
  const double rmin = wham_test::m2l_min_distance<double>(p, mu);
  const double rmax = wham_test::m2l_max_distance<double>();
  const double tiny = 1e-161;
  const std::vector<std::array<double, 3>> dirs = {{0, 0, 1},
                                                   {0, 0, -1},
                                                   {1, 0, 0},
                                                   {0, -1, 0},
                                                   {u(gen), u(gen), 0},  // xy plane
                                                   {tiny * u(gen), tiny * u(gen), 1},
                                                   {-1, tiny * u(gen), tiny * u(gen)},
                                                   {tiny, 0, -1},
                                                   {u(gen), u(gen), u(gen)},
                                                   {u(gen), u(gen), u(gen)}};
  for (const double r : {rmin, 2 * rmin, 1e-3, 1.0, 1e3, rmax / 2, rmax}) {
    for (const auto& dir : dirs) {
      const double len = std::hypot(dir[0], dir[1], dir[2]);
      const double d[3] = {dir[0] / len * r, dir[1] / len * r, dir[2] / len * r};
      CAPTURE(p, r, d[0], d[1], d[2], mu, wham_test::seed());
      const auto direct = ref::m2l_direct(p, M.data(), d);
      const auto fact = ref::m2l_factorised(p, M.data(), d);
      if (wide_long) {
        const auto truth = m2l_direct_long(p, M.data(), d);
        const double e_direct = wham_test::scaled_relative_error(direct.data(), truth.data(), C);
        const double e_fact = wham_test::scaled_relative_error(fact.data(), truth.data(), C);
        CAPTURE(e_direct, e_fact);
        CHECK(e_direct <= tol);
        CHECK(e_fact <= tol);
      }
      const int j = std::ilogb(r);
      const double d1[3] = {std::ldexp(d[0], -j), std::ldexp(d[1], -j), std::ldexp(d[2], -j)};
      std::vector<ref::m2l_complex> M1(C);
      for (int k = 0; k <= p; ++k) {
        for (int l = -k; l <= k; ++l) {
          const auto v = M[ref::m2l_index(k, l)];
          M1[ref::m2l_index(k, l)] = {std::ldexp(v.real(), -j * k), std::ldexp(v.imag(), -j * k)};
        }
      }
      auto scaled = ref::m2l_direct(p, M1.data(), d1);
      for (int n = 0; n <= p; ++n) {
        for (int m = -n; m <= n; ++m) {
          const auto v = scaled[ref::m2l_index(n, m)];
          scaled[ref::m2l_index(n, m)] = {std::ldexp(v.real(), -j * (n + 1)),
                                          std::ldexp(v.imag(), -j * (n + 1))};
        }
      }
      const double e_hom = wham_test::scaled_relative_error(direct.data(), scaled.data(), C);
      CAPTURE(j, e_hom);
      CHECK(e_hom <= tol);
    }
  }
}
