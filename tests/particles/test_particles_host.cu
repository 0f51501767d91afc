// The particle operators without a GPU: the ladder identities of the regular harmonics (the
// L2P gradient rests on them), the per-thread arithmetic of the kernels
// (detail/particles/harmonics.cuh) run on the host against the double references at every
// order, and the argument checks that throw before anything touches the device (the
// pointers are host addresses no check dereferences).
#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/particles/harmonics.cuh>
#include <wham/particles.cuh>
#include <wham/reference/translations.hpp>

#include "api_checks.cuh"
#include "catch.hpp"
#include "particles_cases.hpp"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <climits>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

namespace ref = wham::reference;
namespace pd = wham::detail::particles;
namespace pt = particles_test;
using wham_test::message_of;
using wham_test::offset_bytes;

}  // namespace

TEST_CASE("the ladder identities of the regular harmonics", "[particles][reference]") {
  // dR_n^m/dz = R_{n-1}^m, (d/dx - i d/dy) R_n^m = R_{n-1}^{m-1},
  // (d/dx + i d/dy) R_n^m = -R_{n-1}^{m+1}, by central differences (step 1e-5: errors near
  // 1e-11 for values of size 1 and below).
  constexpr int p = 14;
  auto gen = wham_test::rng(0x1add);
  std::uniform_real_distribution<double> u(-1.2, 1.2);
  const std::complex<double> I(0.0, 1.0);
  const double h = 1e-5;
  auto at = [&](const std::vector<ref::m2l_complex>& R, int n, int m) -> std::complex<double> {
    return std::abs(m) > n ? 0.0 : R[std::size_t(ref::m2l_index(n, m))];
  };
  double worst[3] = {0.0, 0.0, 0.0};
  for (int trial = 0; trial < 40; ++trial) {
    double x[3] = {u(gen), u(gen), u(gen)};
    if (trial % 8 == 0) x[0] = x[1] = 0.0;  // on the z axis
    if (trial % 8 == 1) x[2] = 0.0;         // in the xy plane
    const auto R = ref::regular_harmonics(p, x[0], x[1], x[2]);
    std::vector<ref::m2l_complex> D[3];
    for (int d = 0; d < 3; ++d) {
      double a[3] = {x[0], x[1], x[2]}, b[3] = {x[0], x[1], x[2]};
      a[d] += h;
      b[d] -= h;
      const auto Ra = ref::regular_harmonics(p, a[0], a[1], a[2]);
      const auto Rb = ref::regular_harmonics(p, b[0], b[1], b[2]);
      D[d].resize(Ra.size());
      for (std::size_t i = 0; i < Ra.size(); ++i) D[d][i] = (Ra[i] - Rb[i]) / (2.0 * h);
    }
    for (int n = 1; n <= p; ++n) {
      for (int m = -n; m <= n; ++m) {
        const std::size_t i = std::size_t(ref::m2l_index(n, m));
        const auto dx = D[0][i], dy = D[1][i], dz = D[2][i];
        worst[0] = std::max(worst[0], std::abs(dz - at(R, n - 1, m)));
        worst[1] = std::max(worst[1], std::abs(dx - I * dy - at(R, n - 1, m - 1)));
        worst[2] = std::max(worst[2], std::abs(dx + I * dy + at(R, n - 1, m + 1)));
      }
    }
  }
  CAPTURE(worst[0], worst[1], worst[2]);
  CHECK(worst[0] < 1e-8);
  CHECK(worst[1] < 1e-8);
  CHECK(worst[2] < 1e-8);
}

namespace {

/// add_column and evaluate_local at order P in T, on the host, against reference::p2m,
/// reference::l2p and the Richardson gradient, over 40 points about one centre.
template <int P, class T>
void check_blocks(std::mt19937_64& gen) {
  constexpr int C = (P + 1) * (P + 1);
  T inv[pd::inverse_entries<P>];
  pd::fill_inverses<P>(inv, 0, 1);
  const pt::cell_set s = pt::make_cells<T>(gen, {40});
  const double* c = s.centers.data();
  // P2M: one thread per column, as the kernel's slices do
  pd::cpx<T> cols[P + 1][P + 1] = {};
  for (int i = 0; i < 40; ++i) {
    const T d[3] = {T(s.points[3 * i]) - T(c[0]), T(s.points[3 * i + 1]) - T(c[1]),
                    T(s.points[3 * i + 2]) - T(c[2])};
    for (int m = 0; m <= P; ++m)
      pd::add_column<P>(d[0], d[1], d[2], T(s.charges[i]), m, inv, cols[m]);
  }
  std::vector<std::complex<double>> got(C);
  for (int n = 0; n <= P; ++n) {
    for (int m = 0; m <= n; ++m) {
      const pd::cpx<T> v = cols[m][n - m];
      got[ref::m2l_index(n, m)] = {double(v.re), double(v.im)};
      got[ref::m2l_index(n, -m)] = (m % 2 ? -1.0 : 1.0) * std::conj(got[ref::m2l_index(n, m)]);
    }
  }
  const double e_p2m = pt::weighted_error(got, pt::p2m_reference(P, s), P, s.radius);
  // L2P with the gradient
  const auto L = pt::make_locals<T>(gen, P, 1, s.radius);
  std::vector<pd::cpx<T>> Lt(C);
  for (int i = 0; i < C; ++i) Lt[i] = {T(L[i].real()), T(L[i].imag())};
  std::vector<double> phi_ref, grad_ref;
  pt::l2p_reference(P, L, s, phi_ref, grad_ref);
  std::vector<T> phi(40), grad(120), zero(120, T(0));
  for (int i = 0; i < 40; ++i) {
    T g[3];
    pd::evaluate_local<P, T, true>(Lt.data(), inv, T(c[0]) - T(s.points[3 * i]),
                                   T(c[1]) - T(s.points[3 * i + 1]),
                                   T(c[2]) - T(s.points[3 * i + 2]), phi[i], g);
    for (int k = 0; k < 3; ++k) grad[3 * i + k] = g[k];
  }
  const double e_phi = pt::added_error(phi, zero, phi_ref);
  const double e_grad = pt::added_error(grad, zero, grad_ref);
  CAPTURE(P, e_p2m, e_phi, e_grad);
  CHECK(e_p2m <= pt::expansion_tolerance<T>() / 10);
  CHECK(e_phi <= pt::expansion_tolerance<T>() / 10);
  CHECK(e_grad <= pt::gradient_tolerance<T>() / 10);
}

}  // namespace

TEMPLATE_TEST_CASE("the kernels' per-thread arithmetic matches the references on the host",
                   "[particles][blocks]", float, double) {
  using T = TestType;
  auto gen = wham_test::rng(0xb10c + sizeof(T));
  wham::detail::arch::static_for<0, wham::m2l_max_order<T>() + 1>(
      [&](auto Pc) { check_blocks<decltype(Pc)::value, T>(gen); });
}

TEMPLATE_TEST_CASE("the P2P interaction matches reference::p2p on the host", "[particles][blocks]",
                   float, double) {
  using T = TestType;
  auto gen = wham_test::rng(0x929 + sizeof(T));
  pt::cell_set s = pt::make_cells<T>(gen, {100, 100, 33, 1}, 2);
  s.points[3 * 150 + 0] = s.points[0];  // a point of cell 2 on one of cell 0: left out too
  s.points[3 * 150 + 1] = s.points[1];
  s.points[3 * 150 + 2] = s.points[2];
  const std::int64_t n = s.num_points();
  const std::vector<std::int64_t> near_offsets = {0, 4, 8, 12, 16};
  const std::vector<std::int32_t> near_cells = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
  std::vector<double> phi_ref, grad_ref;
  pt::p2p_reference(s, near_offsets, near_cells, phi_ref, grad_ref);
  std::vector<T> phi(n, T(0)), grad(3 * n, T(0)), zero(3 * n, T(0));
  for (std::int64_t j = 0; j < n; ++j) {
    T g[3] = {T(0), T(0), T(0)};
    for (std::int64_t i = 0; i < n; ++i) {
      pd::add_interaction<T, true>(T(s.points[3 * j]), T(s.points[3 * j + 1]),
                                   T(s.points[3 * j + 2]), T(s.points[3 * i]),
                                   T(s.points[3 * i + 1]), T(s.points[3 * i + 2]), T(s.charges[i]),
                                   phi[j], g[0], g[1], g[2]);
    }
    for (int k = 0; k < 3; ++k) grad[3 * j + k] = g[k];
  }
  const double e_phi = pt::added_error(phi, zero, phi_ref);
  const double e_grad = pt::added_error(grad, zero, grad_ref);
  CAPTURE(e_phi, e_grad);
  CHECK(e_phi <= pt::p2p_tolerance<T>() / 10);
  CHECK(e_grad <= pt::p2p_tolerance<T>() / 10);
}

TEMPLATE_TEST_CASE("a P2P self pair adds nothing whatever its charge", "[particles][blocks]",
                   float, double) {
  using T = TestType;
  const T charge = GENERATE(T(0.75), std::numeric_limits<T>::quiet_NaN(),
                            std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity());
  const T x = GENERATE(T(0), T(0.3), T(-1e30), std::numeric_limits<T>::denorm_min());
  CAPTURE(charge, x);
  T phi = T(0.5), g[3] = {T(1), T(-2), T(3)};
  pd::add_interaction<T, true>(x, T(0.25), x, x, T(0.25), x, charge, phi, g[0], g[1], g[2]);
  CHECK(phi == T(0.5));
  CHECK((g[0] == T(1) && g[1] == T(-2) && g[2] == T(3)));
  pd::add_interaction<T, false>(x, T(0.25), x, x, T(0.25), x, charge, phi, g[0], g[1], g[2]);
  CHECK(phi == T(0.5));
}

TEMPLATE_TEST_CASE("a P2P source with a non-finite coordinate is staged as one that adds zeros",
                   "[particles][blocks]", float, double) {
  using T = TestType;
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const T big = std::numeric_limits<T>::max(), tiny = std::numeric_limits<T>::denorm_min();
  CHECK(pd::finite_point(T(0), T(-1), big));
  CHECK(pd::finite_point(tiny, -big, T(3)));
  for (int axis = 0; axis < 3; ++axis) {
    for (const T bad : {inf, -inf, nan}) {
      T v[3] = {T(1), T(2), T(3)};
      v[axis] = bad;
      CAPTURE(axis, bad);
      CHECK_FALSE(pd::finite_point(v[0], v[1], v[2]));
    }
  }
  // The kernel stages such a source with its bad coordinates 0 and no charge: exact zeros
  // at any finite target, the origin itself and far-off points included.
  for (const T t : {T(0), T(0.5), T(-3e18), big, tiny}) {
    for (const T y : {T(0), T(1.5)}) {
      CAPTURE(t, y);
      T phi = T(0.5), g[3] = {T(1), T(-2), T(3)};
      pd::add_interaction<T, true>(t, t, -t, T(0), y, T(0), T(0), phi, g[0], g[1], g[2]);
      CHECK(phi == T(0.5));
      CHECK((g[0] == T(1) && g[1] == T(-2) && g[2] == T(3)));
    }
  }
}

TEST_CASE("reference::p2p leaves out a source with a non-finite coordinate",
          "[particles][reference]") {
  auto gen = wham_test::rng(0x7ef);
  pt::cell_set s = pt::make_cells<double>(gen, {30});
  const std::size_t n = std::size_t(s.num_points());
  std::vector<double> phi0(n), g0(3 * n), phi(n), g(3 * n);
  pt::cell_set without = s;
  without.charges[7] = 0.0;
  ref::p2p(without.points.data(), without.charges.data(), n, s.points.data(), n, phi0.data(),
           g0.data());
  for (const double bad : {double(NAN), double(INFINITY), -double(INFINITY)}) {
    for (int axis = 0; axis < 3; ++axis) {
      std::vector<double> sources = s.points;
      sources[3 * 7 + std::size_t(axis)] = bad;
      ref::p2p(sources.data(), s.charges.data(), n, s.points.data(), n, phi.data(), g.data());
      CAPTURE(bad, axis);
      CHECK(phi == phi0);
      CHECK(g == g0);
    }
  }
}

// ---- argument checks -----------------------------------------------------------------------

namespace {

using c128 = cuda::std::complex<double>;

// Buffers for order-2 calls: 4 cells of 9 coefficients, 8 points, 6 near entries; one pool
// so that outputs can be placed over inputs.
struct host_args {
  alignas(16) double pts[24] = {}, q[8] = {}, ctr[12] = {}, phi[8] = {}, grad[24] = {};
  alignas(16) c128 mp[36] = {};
  alignas(16) std::int64_t off[5] = {}, noff[5] = {};
  alignas(16) std::int32_t ids[6] = {};
};

/// The message of a call that passes every pure check: it reaches the device query (a
/// no-device or CUDA error without a driver, a host-pointer error with one), never a pure
/// check's message.
bool reached_device(const std::string& m) {
  return m.find("wham: CUDA error") == 0 || m.find("wham: no ") == 0 ||
         m.find("not device-accessible") != std::string::npos;
}

}  // namespace

TEST_CASE("p2m, l2p and p2p check p and the counts first", "[particles][errors]") {
  host_args a;
  CHECK(message_of([&] { wham::p2m(a.pts, a.q, 8, a.off, a.ctr, 4, a.mp, 21); }) ==
        "wham::p2m: p = 21 is invalid (valid: 0..20)");
  const float* no_f = nullptr;
  float* out_f = nullptr;
  CHECK(message_of([&] {
          wham::l2p(static_cast<const cuda::std::complex<float>*>(nullptr), no_f, a.off, 4, no_f, 8,
                    out_f, out_f, 17);
        }) == "wham::l2p: p = 17 is invalid (valid: 0..16)");
  CHECK(message_of([&] { wham::l2p(a.mp, a.ctr, a.off, 4, a.pts, 8, a.phi, a.grad, -1); }) ==
        "wham::l2p: p = -1 is invalid (valid: 0..20)");
  CHECK(message_of([&] { wham::p2m(a.pts, a.q, -1, a.off, a.ctr, 4, a.mp, 2); }) ==
        "wham::p2m: num_points = -1 is invalid (valid: 0..384307168202282325)");
  CHECK(message_of([&] {
          wham::p2p(no_f, no_f, INT64_MAX / 12 + 1, a.off, 4, a.noff, a.ids, 6, out_f, out_f);
        }) ==
        "wham::p2p: num_points = 768614336404564651 is invalid (valid: "
        "0..768614336404564650)");
  CHECK(message_of([&] { wham::p2m(a.pts, a.q, 8, a.off, a.ctr, -4, a.mp, 2); }) ==
        "wham::p2m: num_cells = -4 is invalid (valid: 0..2147483647)");
  CHECK(message_of([&] {
          wham::l2p(a.mp, a.ctr, a.off, std::int64_t(1) << 31, a.pts, 8, a.phi, a.grad, 2);
        }) == "wham::l2p: num_cells = 2147483648 is invalid (valid: 0..2147483647)");
  CHECK(message_of([&] { wham::p2p(a.pts, a.q, 8, a.off, 4, a.noff, a.ids, -6, a.phi, a.grad); }) ==
        "wham::p2p: num_near = -6 is invalid (valid: 0..2305843009213693951)");
}

TEST_CASE("calls with nothing to do enqueue nothing and take null pointers",
          "[particles][errors]") {
  const double* no = nullptr;
  double* out = nullptr;
  const std::int64_t* no_off = nullptr;
  const std::int32_t* no_ids = nullptr;
  const c128* no_c = nullptr;
  CHECK(message_of([&] {
          wham::p2m(no, no, 100, no_off, no, 0, static_cast<c128*>(nullptr), 20);
        }) == "(no throw)");
  CHECK(message_of([&] { wham::l2p(no_c, no, no_off, 0, no, 100, out, out, 20); }) == "(no throw)");
  CHECK(message_of([&] { wham::l2p(no_c, no, no_off, 7, no, 0, out, out, 3); }) == "(no throw)");
  CHECK(message_of([&] { wham::p2p(no, no, 100, no_off, 0, no_off, no_ids, 5, out, out); }) ==
        "(no throw)");
  CHECK(message_of([&] { wham::p2p(no, no, 0, no_off, 3, no_off, no_ids, 5, out, out); }) ==
        "(no throw)");
  CHECK(message_of([&] { wham::p2p(no, no, 100, no_off, 3, no_off, no_ids, 0, out, out); }) ==
        "(no throw)");
  // p2m without points writes zeros: the cells' pointers are needed, the points' are not
  host_args a;
  CHECK(message_of([&] { wham::p2m(no, no, 0, no_off, a.ctr, 4, a.mp, 2); }) ==
        "wham::p2m: cell_offsets = nullptr is invalid (valid: a device pointer)");
  CHECK(reached_device(message_of([&] { wham::p2m(no, no, 0, a.off, a.ctr, 4, a.mp, 2); })));
}

TEST_CASE("p2m, l2p and p2p name a null or misaligned pointer", "[particles][errors]") {
  host_args a;
  const double* no = nullptr;
  CHECK(message_of([&] { wham::p2m(no, a.q, 8, a.off, a.ctr, 4, a.mp, 2); }) ==
        "wham::p2m: points = nullptr is invalid (valid: a device pointer)");
  CHECK(message_of([&] {
          wham::p2m(a.pts, a.q, 8, a.off, a.ctr, 4, static_cast<c128*>(nullptr), 2);
        }) == "wham::p2m: multipoles = nullptr is invalid (valid: a device pointer)");
  double* const null_out = nullptr;
  CHECK(message_of([&] { wham::l2p(a.mp, a.ctr, a.off, 4, a.pts, 8, null_out, a.grad, 2); }) ==
        "wham::l2p: potential = nullptr is invalid (valid: a device pointer)");
  CHECK(message_of([&] {
          wham::p2p(a.pts, a.q, 8, a.off, 4, a.noff, nullptr, 6, a.phi, a.grad);
        }) == "wham::p2p: near_cells = nullptr is invalid (valid: a device pointer)");
  // a null gradient is no error: it is not computed
  CHECK(reached_device(
      message_of([&] { wham::l2p(a.mp, a.ctr, a.off, 4, a.pts, 8, a.phi, null_out, 2); })));
  CHECK(reached_device(
      message_of([&] { wham::p2p(a.pts, a.q, 8, a.off, 4, a.noff, a.ids, 6, a.phi, null_out); })));

  const std::string tail8 =
      " = an address 4 bytes past a multiple of 8 is invalid (valid: a "
      "pointer aligned to 8 bytes, the element type's alignment)";
  CHECK(message_of([&] { wham::p2m(a.pts, a.q, 8, a.off, a.ctr, 4, offset_bytes(a.mp, 8), 2); }) ==
        "wham::p2m: multipoles = an address 8 bytes past a multiple of 16 is invalid (valid: a "
        "pointer aligned to 16 bytes, the element type's alignment)");
  CHECK(message_of([&] { wham::p2m(a.pts, a.q, 8, offset_bytes(a.off, 4), a.ctr, 4, a.mp, 2); }) ==
        "wham::p2m: cell_offsets" + tail8);
  CHECK(message_of([&] {
          wham::l2p(a.mp, offset_bytes(a.ctr, 4), a.off, 4, a.pts, 8, a.phi, a.grad, 2);
        }) == "wham::l2p: centers" + tail8);
  CHECK(message_of([&] {
          wham::l2p(a.mp, a.ctr, a.off, 4, a.pts, 8, a.phi, offset_bytes(a.grad, 4), 2);
        }) == "wham::l2p: gradient" + tail8);
  CHECK(message_of([&] {
          wham::p2p(a.pts, a.q, 8, a.off, 4, offset_bytes(a.noff, 4), a.ids, 6, a.phi, a.grad);
        }) == "wham::p2p: near_offsets" + tail8);
  CHECK(message_of([&] {
          wham::p2p(a.pts, a.q, 8, a.off, 4, a.noff, offset_bytes(a.ids, 2), 6, a.phi, a.grad);
        }) ==
        "wham::p2p: near_cells = an address 2 bytes past a multiple of 4 is invalid "
        "(valid: a pointer aligned to 4 bytes, the element type's alignment)");
  float fp[4] = {};
  CHECK(message_of([&] {
          wham::p2p(offset_bytes(fp, 2), fp, 1, a.off, 4, a.noff, a.ids, 6, fp + 1, fp + 2);
        }) ==
        "wham::p2p: points = an address 2 bytes past a multiple of 4 is invalid (valid: "
        "a pointer aligned to 4 bytes, the element type's alignment)");
}

TEST_CASE("an output sharing a byte with any other argument throws", "[particles][errors]") {
  // One pool carved up: inputs at fixed places, an output moved over each in turn.
  alignas(16) static unsigned char pool[1 << 14];
  unsigned char* base = pool;
  const auto* pts = reinterpret_cast<const double*>(base);               // 8 points: 192 bytes
  const auto* q = reinterpret_cast<const double*>(base + 1024);          // 64 bytes
  const auto* off = reinterpret_cast<const std::int64_t*>(base + 2048);  // 5: 40 bytes
  const auto* ctr = reinterpret_cast<const double*>(base + 3072);        // 4 cells: 96 bytes
  const auto* noff = reinterpret_cast<const std::int64_t*>(base + 4096);
  const auto* ids = reinterpret_cast<const std::int32_t*>(base + 5120);  // 6: 24 bytes
  const auto* L = reinterpret_cast<const c128*>(base + 6144);            // 4 x 9: 576 bytes
  auto dbl = [&](std::size_t at) { return reinterpret_cast<double*>(base + at); };
  auto cplx = [&](std::size_t at) { return reinterpret_cast<c128*>(base + at); };
  const std::string tail = " is invalid (valid: a buffer apart from every other argument)";
  // multipoles (576 bytes) apart, then over each input
  CHECK(reached_device(message_of([&] { wham::p2m(pts, q, 8, off, ctr, 4, cplx(8192), 2); })));
  CHECK(message_of([&] { wham::p2m(pts, q, 8, off, ctr, 4, cplx(1024 - 560), 2); }) ==
        "wham::p2m: multipoles = a range overlapping charges" + tail);
  CHECK(message_of([&] { wham::p2m(pts, q, 8, off, ctr, 4, cplx(192 - 16), 2); }) ==
        "wham::p2m: multipoles = a range overlapping points" + tail);
  CHECK(message_of([&] { wham::p2m(pts, q, 8, off, ctr, 4, cplx(2048 + 32), 2); }) ==
        "wham::p2m: multipoles = a range overlapping cell_offsets" + tail);
  CHECK(message_of([&] { wham::p2m(pts, q, 8, off, ctr, 4, cplx(3072 - 576 + 16), 2); }) ==
        "wham::p2m: multipoles = a range overlapping centers" + tail);
  // l2p: potential over locals, gradient over points, the two outputs over each other
  CHECK(message_of([&] { wham::l2p(L, ctr, off, 4, pts, 8, dbl(6144 + 568), dbl(8192), 2); }) ==
        "wham::l2p: potential = a range overlapping locals" + tail);
  CHECK(message_of([&] { wham::l2p(L, ctr, off, 4, pts, 8, dbl(8192), dbl(184), 2); }) ==
        "wham::l2p: gradient = a range overlapping points" + tail);
  CHECK(message_of([&] { wham::l2p(L, ctr, off, 4, pts, 8, dbl(8192), dbl(8192 + 56), 2); }) ==
        "wham::l2p: potential = a range overlapping gradient" + tail);
  CHECK(message_of([&] {
          wham::l2p(L, ctr, off, 4, pts, 8, dbl(8192), dbl(8192 + 64), 2);
        }).find("overlapping") == std::string::npos);
  // p2p: each input in turn
  double* const no_grad = nullptr;
  CHECK(message_of([&] { wham::p2p(pts, q, 8, off, 4, noff, ids, 6, dbl(4096 + 32), no_grad); }) ==
        "wham::p2p: potential = a range overlapping near_offsets" + tail);
  CHECK(message_of([&] { wham::p2p(pts, q, 8, off, 4, noff, ids, 6, dbl(8192), dbl(5120 - 8)); }) ==
        "wham::p2p: gradient = a range overlapping near_cells" + tail);
  CHECK(message_of([&] {
          wham::p2p(pts, q, 8, off, 4, noff, ids, 6, dbl(1024 + 56), dbl(8192));
        }) == "wham::p2p: potential = a range overlapping charges" + tail);
  CHECK(message_of([&] { wham::p2p(pts, q, 8, off, 4, noff, ids, 6, dbl(8192), dbl(2048 - 8)); }) ==
        "wham::p2p: gradient = a range overlapping cell_offsets" + tail);
  CHECK(message_of([&] {
          wham::p2p(pts, q, 8, off, 4, noff, ids, 6, dbl(8192), dbl(8192 + 32));
        }) == "wham::p2p: potential = a range overlapping gradient" + tail);
  // inputs may overlap each other (they are only read)
  CHECK(reached_device(
      message_of([&] { wham::p2p(pts, pts, 8, off, 4, off, ids, 6, dbl(8192), dbl(8192 + 64)); })));
}
