// The C interface's FMM operators besides M2L (wham_m2m_*, wham_l2l_*, their accumulate
// forms, wham_p2m_*, wham_l2p_*, wham_p2p_*) on device data, against the double host
// references, in both precisions. Plain C++: everything runs through libwham.so.
#include "catch.hpp"
#include "device_buffer.cuh"
#include "particles_cases.hpp"
#include "test_translations_accuracy.hpp"
#include "test_util.hpp"

#include <wham/reference/translations.hpp>
#include <wham/wham.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using wham_test::device_buffer;
using cd = std::complex<double>;
namespace pt = particles_test;

namespace {

/// Each precision's C functions and complex type.
template <class T>
struct capi;
template <>
struct capi<float> {
  using cplx = wham_complex64;
  static constexpr auto m2m = wham_m2m_f32;
  static constexpr auto l2l = wham_l2l_f32;
  static constexpr auto m2m_accumulate = wham_m2m_accumulate_f32;
  static constexpr auto l2l_accumulate = wham_l2l_accumulate_f32;
  static constexpr auto p2m = wham_p2m_f32;
  static constexpr auto l2p = wham_l2p_f32;
  static constexpr auto p2p = wham_p2p_f32;
  static int max_order() { return wham_m2l_max_order_f32(); }
};
template <>
struct capi<double> {
  using cplx = wham_complex128;
  static constexpr auto m2m = wham_m2m_f64;
  static constexpr auto l2l = wham_l2l_f64;
  static constexpr auto m2m_accumulate = wham_m2m_accumulate_f64;
  static constexpr auto l2l_accumulate = wham_l2l_accumulate_f64;
  static constexpr auto p2m = wham_p2m_f64;
  static constexpr auto l2p = wham_l2p_f64;
  static constexpr auto p2p = wham_p2p_f64;
  static int max_order() { return wham_m2l_max_order_f64(); }
};

#define REQUIRE_OK(call)                  \
  do {                                    \
    const wham_status status_ = (call);   \
    INFO(wham_last_error());              \
    REQUIRE(status_ == WHAM_SUCCESS);     \
  } while (0)

/// The orders wham.h documents for each WHAM_TRANSLATION_* path.
bool path_serves(int path, int p, int max_order) {
  switch (path) {
    case WHAM_TRANSLATION_DIRECT:
      return p <= 4;
    case WHAM_TRANSLATION_THREAD:
      return p <= 12;
    case WHAM_TRANSLATION_SPLIT:
      return p >= 7 && p <= 12;
    default:
      return p <= max_order;
  }
}

/// Random coefficients in [-1, 1]^2, rounded to T (held as the C type).
template <class C>
std::vector<C> random_expansions(std::mt19937_64& gen, std::size_t count) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<C> v(count);
  for (auto& c : v) {
    c.re = decltype(c.re)(u(gen));
    c.im = decltype(c.im)(u(gen));
  }
  return v;
}

/// Displacements of length in [0.05, 1.5] in random directions, rounded to T.
template <class T>
std::vector<T> random_deltas(std::mt19937_64& gen, std::size_t count) {
  std::uniform_real_distribution<double> u(-1.0, 1.0), len(0.05, 1.5);
  std::vector<T> d(3 * count);
  for (std::size_t i = 0; i < count; ++i) {
    double v[3] = {u(gen), u(gen), u(gen)};
    const double s = len(gen) / std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + 1e-300);
    for (int k = 0; k < 3; ++k) d[3 * i + k] = T(v[k] * s);
  }
  return d;
}

/// The double reference translation of row `row` of `in` by delta `pair`.
template <class T, class C>
std::vector<cd> reference(bool m2m, int p, const std::vector<C>& in, std::size_t row,
                          const std::vector<T>& deltas, std::size_t pair) {
  const std::size_t n = std::size_t(p + 1) * (p + 1);
  std::vector<cd> a(n);
  for (std::size_t j = 0; j < n; ++j) a[j] = cd(in[row * n + j].re, in[row * n + j].im);
  const double d[3] = {double(deltas[3 * pair]), double(deltas[3 * pair + 1]),
                       double(deltas[3 * pair + 2])};
  return m2m ? wham::reference::m2m(p, a.data(), d) : wham::reference::l2l(p, a.data(), d);
}

template <class C>
std::vector<C> to_c(const std::vector<cd>& v) {
  std::vector<C> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    out[i].re = decltype(out[i].re)(v[i].real());
    out[i].im = decltype(out[i].im)(v[i].imag());
  }
  return out;
}

}  // namespace

TEMPLATE_TEST_CASE("wham_m2m and wham_l2l match the host reference on every path",
                   "[capi][translations]", float, double) {
  using T = TestType;
  using C = typename capi<T>::cplx;
  const int path = GENERATE(int(WHAM_TRANSLATION_AUTOMATIC), int(WHAM_TRANSLATION_DIRECT),
                            int(WHAM_TRANSLATION_THREAD), int(WHAM_TRANSLATION_SPLIT),
                            int(WHAM_TRANSLATION_WARP));
  const int p = GENERATE(0, 3, 4, 7, 12, 16, 20);
  const bool m2m = GENERATE(true, false);
  if (!path_serves(path, p, capi<T>::max_order())) return;
  CAPTURE(path, p, m2m, wham_test::seed());
  const std::size_t n = std::size_t(p + 1) * (p + 1), pairs = 37;
  auto gen = wham_test::rng(std::uint64_t(p) * 16 + path * 2 + m2m);
  const auto in = random_expansions<C>(gen, pairs * n);
  const auto deltas = random_deltas<T>(gen, pairs);
  device_buffer<C> d_in(in), d_out(std::vector<C>(pairs * n, C{std::numeric_limits<T>::quiet_NaN(),
                                                               std::numeric_limits<T>::quiet_NaN()}));
  device_buffer<T> d_deltas(deltas);
  const auto call = m2m ? capi<T>::m2m : capi<T>::l2l;
  REQUIRE_OK(call(d_in.data(), d_deltas.data(), d_out.data(), p, std::int64_t(pairs), path,
                  nullptr));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto got = d_out.download();
  double worst = 0;
  for (std::size_t i = 0; i < pairs; ++i) {
    const auto want = reference(m2m, p, in, i, deltas, i);
    double num = 0, den = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const cd g(got[i * n + j].re, got[i * n + j].im);
      num += std::norm(g - want[j]);
      den += std::norm(want[j]);
    }
    const double e = std::isfinite(num) ? std::sqrt(num / den) : INFINITY;
    worst = std::max(worst, e);
  }
  CAPTURE(worst);
  CHECK(worst <= translations_test::tolerance<T>(p));
}

TEMPLATE_TEST_CASE("wham_m2m_accumulate and wham_l2l_accumulate add each pair to its target",
                   "[capi][translations]", float, double) {
  using T = TestType;
  using C = typename capi<T>::cplx;
  const int path = GENERATE(int(WHAM_TRANSLATION_AUTOMATIC), int(WHAM_TRANSLATION_WARP));
  const int p = GENERATE(2, 8);
  const bool m2m = GENERATE(true, false);
  CAPTURE(path, p, m2m, wham_test::seed());
  const std::size_t n = std::size_t(p + 1) * (p + 1);
  const std::int64_t rows_in = 10, rows_out = 3, pairs = 25;
  auto gen = wham_test::rng(std::uint64_t(p) * 16 + path * 2 + m2m + 1000);
  const auto in = random_expansions<C>(gen, std::size_t(rows_in) * n);
  const auto start = random_expansions<C>(gen, std::size_t(rows_out) * n);
  const auto deltas = random_deltas<T>(gen, std::size_t(pairs));
  std::vector<std::int32_t> src(pairs), tgt(pairs);
  std::uniform_int_distribution<int> pick_in(0, int(rows_in) - 1), pick_out(0, int(rows_out) - 1);
  for (std::int64_t i = 0; i < pairs; ++i) {
    src[i] = pick_in(gen);
    tgt[i] = pick_out(gen);
  }
  src[7] = std::int32_t(rows_in);  // out of range: adds nothing
  tgt[11] = -1;                    // out of range: adds nothing
  device_buffer<C> d_in(in), d_out(start);
  device_buffer<T> d_deltas(deltas);
  device_buffer<std::int32_t> d_src(src), d_tgt(tgt);
  const auto call = m2m ? capi<T>::m2m_accumulate : capi<T>::l2l_accumulate;
  REQUIRE_OK(call(d_in.data(), d_deltas.data(), d_src.data(), d_tgt.data(), d_out.data(), p,
                  pairs, rows_in, rows_out, path, nullptr));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto got = d_out.download();
  // the sums per target, and the scale the error is held to: the contributions' norms
  std::vector<cd> want(std::size_t(rows_out) * n);
  std::vector<double> scale(std::size_t(rows_out), 0.0);
  std::vector<std::int64_t> terms(std::size_t(rows_out), 0);
  for (std::int64_t i = 0; i < pairs; ++i) {
    if (src[i] < 0 || src[i] >= rows_in || tgt[i] < 0 || tgt[i] >= rows_out) continue;
    const auto t = reference(m2m, p, in, std::size_t(src[i]), deltas, std::size_t(i));
    double norm = 0;
    for (std::size_t j = 0; j < n; ++j) {
      want[std::size_t(tgt[i]) * n + j] += t[j];
      norm += std::norm(t[j]);
    }
    scale[std::size_t(tgt[i])] += std::sqrt(norm);
    ++terms[std::size_t(tgt[i])];
  }
  for (std::int64_t r = 0; r < rows_out; ++r) {
    double num = 0, start_norm = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t k = std::size_t(r) * n + j;
      const cd added = cd(got[k].re, got[k].im) - cd(start[k].re, start[k].im);
      num += std::norm(added - want[k]);
      start_norm += std::norm(cd(start[k].re, start[k].im));
    }
    // the start values round once more in T when the sums are added to them
    const double bound = translations_test::tolerance<T>(p, terms[r] + 1) *
                         (scale[std::size_t(r)] + std::sqrt(start_norm));
    CAPTURE(r, terms[r], std::sqrt(num), bound);
    CHECK(std::sqrt(num) <= bound);
  }
}

TEMPLATE_TEST_CASE("wham_p2m, wham_l2p and wham_p2p match the host references",
                   "[capi][particles]", float, double) {
  using T = TestType;
  using C = typename capi<T>::cplx;
  const int p = GENERATE(0, 5, 16);
  CAPTURE(p, wham_test::seed());
  const std::size_t n = std::size_t(p + 1) * (p + 1);
  auto gen = wham_test::rng(std::uint64_t(p) + 2000);
  const pt::cell_set s = pt::make_cells<T>(gen, {0, 1, 33, 7, 64, 2}, 3);
  const std::int64_t cells = s.num_cells(), points = s.num_points();
  device_buffer<T> x(pt::narrow<T>(s.points)), q(pt::narrow<T>(s.charges)),
      centers(pt::narrow<T>(s.centers));
  device_buffer<std::int64_t> offsets(s.offsets);

  SECTION("p2m overwrites every cell, the empty one with zeros") {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    device_buffer<C> M(std::vector<C>(std::size_t(cells) * n, C{nan, nan}));
    REQUIRE_OK(capi<T>::p2m(x.data(), q.data(), points, offsets.data(), centers.data(), cells,
                            M.data(), p, nullptr));
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    std::vector<std::complex<T>> got(std::size_t(cells) * n);
    const auto raw = M.download();
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = {raw[i].re, raw[i].im};
    const double err = pt::weighted_error(got, pt::p2m_reference(p, s), p, s.radius);
    CAPTURE(err);
    CHECK(err <= pt::expansion_tolerance<T>());
  }

  SECTION("l2p adds the potential, and the gradient where one is given") {
    const bool with_gradient = GENERATE(true, false);
    CAPTURE(with_gradient);
    const auto L = pt::make_locals<T>(gen, p, cells, s.radius);
    std::vector<double> phi_ref, grad_ref;
    pt::l2p_reference(p, L, s, phi_ref, grad_ref);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<T> phi0(static_cast<std::size_t>(points)), grad0(3 * static_cast<std::size_t>(points));
    for (auto& v : phi0) v = T(u(gen));
    for (auto& v : grad0) v = T(u(gen));
    device_buffer<C> d_L(to_c<C>(L));
    device_buffer<T> phi(phi0), grad(grad0);
    REQUIRE_OK(capi<T>::l2p(d_L.data(), centers.data(), offsets.data(), cells, x.data(), points,
                            phi.data(), with_gradient ? grad.data() : nullptr, p, nullptr));
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const double e_phi = pt::added_error(phi.download(), phi0, phi_ref);
    const auto g = grad.download();
    CAPTURE(e_phi);
    CHECK(e_phi <= pt::expansion_tolerance<T>());
    if (with_gradient) {
      const double e_grad = pt::added_error(g, grad0, grad_ref);
      CAPTURE(e_grad);
      CHECK(e_grad <= pt::gradient_tolerance<T>());
    } else {
      CHECK(std::memcmp(g.data(), grad0.data(), g.size() * sizeof(T)) == 0);
    }
  }

  SECTION("p2p adds every near pair but the self pairs") {
    const bool with_gradient = GENERATE(true, false);
    CAPTURE(with_gradient);
    // every cell near every cell, itself included (its self pairs are left out), and one
    // id out of range, skipped
    std::vector<std::int64_t> near_offsets(1, 0);
    std::vector<std::int32_t> near;
    for (std::int64_t t = 0; t < cells; ++t) {
      for (std::int32_t c = 0; c < cells; ++c) near.push_back(c);
      if (t == 2) near.push_back(std::int32_t(cells) + 5);
      near_offsets.push_back(std::int64_t(near.size()));
    }
    std::vector<double> phi_ref, grad_ref;
    pt::p2p_reference(s, near_offsets, near, phi_ref, grad_ref);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<T> phi0(static_cast<std::size_t>(points)), grad0(3 * static_cast<std::size_t>(points));
    for (auto& v : phi0) v = T(u(gen));
    for (auto& v : grad0) v = T(u(gen));
    device_buffer<std::int64_t> d_near_offsets(near_offsets);
    device_buffer<std::int32_t> d_near(near);
    device_buffer<T> phi(phi0), grad(grad0);
    REQUIRE_OK(capi<T>::p2p(x.data(), q.data(), points, offsets.data(), cells,
                            d_near_offsets.data(), d_near.data(), std::int64_t(near.size()),
                            phi.data(), with_gradient ? grad.data() : nullptr, nullptr));
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const double e_phi = pt::added_error(phi.download(), phi0, phi_ref);
    const auto g = grad.download();
    CAPTURE(e_phi);
    CHECK(e_phi <= pt::p2p_tolerance<T>());
    if (with_gradient) {
      const double e_grad = pt::added_error(g, grad0, grad_ref);
      CAPTURE(e_grad);
      CHECK(e_grad <= pt::p2p_tolerance<T>());
    } else {
      CHECK(std::memcmp(g.data(), grad0.data(), g.size() * sizeof(T)) == 0);
    }
  }
}

TEST_CASE("the C FMM operators refuse a host pointer, named, before the device runs") {
  std::vector<double> host(3 * 4);
  device_buffer<double> d(3 * 4);
  device_buffer<wham_complex128> out(4);
  REQUIRE(wham_m2m_f64(reinterpret_cast<const wham_complex128*>(host.data()), d.data(),
                       out.data(), 0, 2, WHAM_TRANSLATION_AUTOMATIC,
                       nullptr) == WHAM_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(wham_last_error()).find("multipoles = a host pointer") != std::string::npos);
  device_buffer<std::int64_t> offsets(std::vector<std::int64_t>{0, 4});
  device_buffer<double> phi(4);
  const std::vector<std::int32_t> host_near(1, 0);
  REQUIRE(wham_p2p_f64(d.data(), d.data(), 4, offsets.data(), 1, offsets.data(), host_near.data(),
                       1, phi.data(), nullptr, nullptr) == WHAM_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(wham_last_error()).find("near_cells = a host pointer") != std::string::npos);
}
