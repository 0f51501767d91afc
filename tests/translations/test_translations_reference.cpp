// The host references of M2M, L2L, P2P and the L2P gradient (wham/reference/translations.hpp):
// the addition theorem they rest on, M2M and L2L exact for the orders kept (P2M then M2M
// equals P2M about the parent; L2L then L2P equals L2P), M2M then M2L against the direct sum
// with an error falling geometrically in p, and P2P's self pairs and gradient.
#include <wham/reference/m2l.hpp>
#include <wham/reference/translations.hpp>

#include "catch.hpp"
#include "test_util.hpp"

#include <cmath>
#include <random>
#include <vector>

namespace ref = wham::reference;
using cd = std::complex<double>;

namespace {

std::vector<double> uniform(std::size_t count, double lo, double hi, std::uint64_t tag) {
  auto gen = wham_test::rng(tag);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(count);
  for (auto& x : v) x = u(gen);
  return v;
}

double max_abs(const std::vector<cd>& v) {
  double m = 0.0;
  for (const auto& x : v) m = std::max(m, std::abs(x));
  return m;
}

}  // namespace

TEST_CASE("regular harmonics: the addition theorem", "[translations][host]") {
  const int p = 12;
  const auto a = uniform(3, -0.7, 0.7, 1), b = uniform(3, -0.7, 0.7, 2);
  CAPTURE(wham_test::seed());
  const auto Ra = ref::regular_harmonics(p, a[0], a[1], a[2]);
  const auto Rb = ref::regular_harmonics(p, b[0], b[1], b[2]);
  const auto Rab = ref::regular_harmonics(p, a[0] + b[0], a[1] + b[1], a[2] + b[2]);
  for (int n = 0; n <= p; ++n) {
    for (int m = -n; m <= n; ++m) {
      cd sum = 0.0;
      for (int k = 0; k <= n; ++k) {
        for (int l = -k; l <= k; ++l) {
          if (std::abs(m - l) <= n - k) sum += Ra[ref::m2l_index(k, l)] * Rb[ref::m2l_index(n - k, m - l)];
        }
      }
      CAPTURE(n, m);
      REQUIRE(std::abs(sum - Rab[ref::m2l_index(n, m)]) <= 1e-13 * (1 + std::abs(Rab[ref::m2l_index(n, m)])));
    }
  }
}

TEST_CASE("M2M is exact: P2M about the child, then M2M, equals P2M about the parent",
          "[translations][host]") {
  const int p = GENERATE(0, 1, 4, 8, 12);
  const double child[3] = {0.3, -0.2, 0.1}, parent[3] = {0.0, 0.0, 0.0};
  const std::size_t count = 20;
  auto pts = uniform(3 * count, -0.15, 0.15, 10 + p);
  for (std::size_t i = 0; i < count; ++i) {
    for (int c = 0; c < 3; ++c) pts[3 * i + c] += child[c];
  }
  const auto q = uniform(count, -1, 1, 20 + p);
  CAPTURE(p, wham_test::seed());
  const auto Mc = ref::p2m(p, child, pts.data(), q.data(), count);
  const double delta[3] = {parent[0] - child[0], parent[1] - child[1], parent[2] - child[2]};
  const auto moved = ref::m2m(p, Mc.data(), delta);
  const auto Mp = ref::p2m(p, parent, pts.data(), q.data(), count);
  for (std::size_t j = 0; j < Mp.size(); ++j) {
    CAPTURE(j);
    REQUIRE(std::abs(moved[j] - Mp[j]) <= 1e-12 * max_abs(Mp));
  }
}

TEST_CASE("L2L is exact: L2P of the moved expansion equals L2P of the original",
          "[translations][host]") {
  const int p = GENERATE(0, 2, 6, 10, 14);
  CAPTURE(p, wham_test::seed());
  const auto parts = uniform(2 * ref::m2l_num_coeffs(p), -1, 1, 30 + p);
  std::vector<cd> L(ref::m2l_num_coeffs(p));
  for (std::size_t j = 0; j < L.size(); ++j) L[j] = cd(parts[2 * j], parts[2 * j + 1]);
  const double parent[3] = {0.0, 0.0, 0.0}, child[3] = {-0.25, 0.25, 0.25};
  const double delta[3] = {child[0] - parent[0], child[1] - parent[1], child[2] - parent[2]};
  const auto moved = ref::l2l(p, L.data(), delta);
  const auto x = uniform(3 * 8, -0.2, 0.2, 40 + p);
  for (int i = 0; i < 8; ++i) {
    double point[3];
    for (int c = 0; c < 3; ++c) point[c] = child[c] + x[3 * i + c];
    const double want = ref::l2p(p, L.data(), parent, point);
    const double got = ref::l2p(p, moved.data(), child, point);
    CAPTURE(i, want, got);
    REQUIRE(std::abs(got - want) <= 1e-12 * (1 + std::abs(want)));
  }
}

TEST_CASE("M2M then M2L against the direct sum: the error falls geometrically in p",
          "[translations][host]") {
  // Sources in a child box of half-width 0.125 at (0.125, 0.125, 0.125) of a parent at the
  // origin; targets in a box of half-width 0.25 at distance 1.5 (well separated).
  const std::size_t count = 30;
  auto pts = uniform(3 * count, -0.125, 0.125, 50);
  for (auto& v : pts) v += 0.125;
  const auto q = uniform(count, 0, 1, 51);
  const double child[3] = {0.125, 0.125, 0.125}, parent[3] = {0.0, 0.0, 0.0};
  const double target_centre[3] = {1.5, 0.0, 0.0};
  const auto tx = uniform(3 * 6, -0.25, 0.25, 52);
  std::vector<double> targets(tx);
  for (int i = 0; i < 6; ++i) targets[3 * i] += 1.5;
  std::vector<double> exact(6);
  ref::p2p(pts.data(), q.data(), count, targets.data(), 6, exact.data(), nullptr);
  double previous = INFINITY;
  for (const int p : {2, 4, 8, 12}) {
    CAPTURE(p);
    const auto Mc = ref::p2m(p, child, pts.data(), q.data(), count);
    const double up[3] = {parent[0] - child[0], parent[1] - child[1], parent[2] - child[2]};
    const auto Mp = ref::m2m(p, Mc.data(), up);
    const double across[3] = {target_centre[0] - parent[0], target_centre[1] - parent[1],
                              target_centre[2] - parent[2]};
    const auto L = ref::m2l_direct(p, Mp.data(), across);
    // The same through the child's own centre: equal up to truncation.
    const double across_child[3] = {target_centre[0] - child[0], target_centre[1] - child[1],
                                    target_centre[2] - child[2]};
    const auto Lc = ref::m2l_direct(p, Mc.data(), across_child);
    double worst = 0.0, scale = 0.0, between = 0.0;
    for (int i = 0; i < 6; ++i) {
      const double phi = ref::l2p(p, L.data(), target_centre, &targets[3 * i]);
      const double phi_c = ref::l2p(p, Lc.data(), target_centre, &targets[3 * i]);
      worst = std::max(worst, std::abs(phi - exact[i]));
      between = std::max(between, std::abs(phi - phi_c));
      scale = std::max(scale, std::abs(exact[i]));
    }
    // Separation ratio (0.43 + 0.43) / 1.5 < 0.6: 0.6^(p+1) bounds the relative error.
    CAPTURE(worst / scale, between / scale);
    REQUIRE(worst / scale <= std::pow(0.6, p + 1));
    REQUIRE(between / scale <= 2 * std::pow(0.6, p + 1));
    REQUIRE(worst < previous);
    previous = worst;
  }
}

TEST_CASE("P2P: self pairs left out, the gradient that of the potential; the L2P gradient",
          "[translations][host]") {
  const std::size_t count = 12;
  const auto pts = uniform(3 * count, -1, 1, 60);
  const auto q = uniform(count, -1, 1, 61);
  std::vector<double> phi(count), grad(3 * count);
  ref::p2p(pts.data(), q.data(), count, pts.data(), count, phi.data(), grad.data());
  for (std::size_t j = 0; j < count; ++j) {
    double want = 0.0;
    for (std::size_t i = 0; i < count; ++i) {
      if (i == j) continue;
      const double dx = pts[3 * j] - pts[3 * i], dy = pts[3 * j + 1] - pts[3 * i + 1],
                   dz = pts[3 * j + 2] - pts[3 * i + 2];
      want += q[i] / std::sqrt(dx * dx + dy * dy + dz * dz);
    }
    CAPTURE(j);
    REQUIRE(std::isfinite(phi[j]));
    REQUIRE(std::abs(phi[j] - want) <= 1e-12 * (1 + std::abs(want)));
    // Central differences of the potential of the other sources.
    const auto others = [&](const double* x) {
      double sum = 0.0;
      for (std::size_t i = 0; i < count; ++i) {
        if (i == j) continue;
        const double dx = x[0] - pts[3 * i], dy = x[1] - pts[3 * i + 1], dz = x[2] - pts[3 * i + 2];
        sum += q[i] / std::sqrt(dx * dx + dy * dy + dz * dz);
      }
      return sum;
    };
    for (int c = 0; c < 3; ++c) {
      const double h = 1e-5;
      double a[3] = {pts[3 * j], pts[3 * j + 1], pts[3 * j + 2]}, b[3] = {a[0], a[1], a[2]};
      a[c] += h;
      b[c] -= h;
      const double fd = (others(a) - others(b)) / (2 * h);
      CAPTURE(c, fd, grad[3 * j + c]);
      REQUIRE(std::abs(grad[3 * j + c] - fd) <= 1e-5 * (1 + std::abs(fd)));
    }
  }
  // The L2P gradient of a far field at p = 12 against P2P's.
  const int p = 12;
  const double src_centre[3] = {0, 0, 0}, tgt_centre[3] = {2, 0.5, 0};
  auto near = uniform(3 * 10, -0.2, 0.2, 62);
  const auto qs = uniform(10, 0, 1, 63);
  const auto M = ref::p2m(p, src_centre, near.data(), qs.data(), 10);
  const double delta[3] = {tgt_centre[0], tgt_centre[1], tgt_centre[2]};
  const auto L = ref::m2l_direct(p, M.data(), delta);
  const double x[3] = {2.1, 0.4, 0.05};
  double g[3], g_direct[3], phi_direct;
  ref::l2p_gradient(p, L.data(), tgt_centre, x, 1e-5, g);
  ref::p2p(near.data(), qs.data(), 10, x, 1, &phi_direct, g_direct);
  for (int c = 0; c < 3; ++c) {
    CAPTURE(c, g[c], g_direct[c]);
    REQUIRE(std::abs(g[c] - g_direct[c]) <= 1e-6 * std::abs(phi_direct));
  }
}
