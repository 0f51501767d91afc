// The device building blocks of M2M and L2L (detail/translations/blocks.cuh), run on the
// host: the rotated and the direct forms against the host references, double and float,
// general, on-axis and near-axis displacements.
#include <wham/detail/translations/blocks.cuh>
#include <wham/reference/translations.hpp>

#include "catch.hpp"
#include "test_util.hpp"

#include <algorithm>
#include <complex>
#include <cstdio>
#include <random>
#include <vector>

namespace ref = wham::reference;
namespace m2l = wham::detail::m2l;
namespace tr = wham::detail::translations;

namespace {

/// Worst relative error over 12 random displacements (a third on the z axis, a third
/// within 1e-6 of it) of the rotated (Direct = false) or direct translation.
template <tr::kind K, bool Direct, int P, class T>
double translation_error(std::mt19937_64& gen) {
  constexpr int C = (P + 1) * (P + 1);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double worst = 0.0;
  for (int trial = 0; trial < 12; ++trial) {
    std::vector<ref::m2l_complex> in(C);
    m2l::cpx<T> a[C], out[C];
    for (int i = 0; i < C; ++i) {
      a[i] = {T(u(gen)), T(u(gen))};
      in[i] = {double(a[i].re), double(a[i].im)};
    }
    // a child-to-parent step of an octree: |delta| about sqrt(3) / 4 of the parent's edge
    T d[3] = {T(0.25 * u(gen)), T(0.25 * u(gen)), T(0.25 * u(gen))};
    if (trial % 3 == 0) d[0] = d[1] = T(0);
    if (trial % 3 == 1) {
      d[0] = T(1e-6 * u(gen));
      d[1] = T(1e-6 * u(gen));
    }
    if (d[2] == T(0)) d[2] = T(0.125);
    const double dd[3] = {double(d[0]), double(d[1]), double(d[2])};
    const auto want = K == tr::kind::m2m ? ref::m2m(P, in.data(), dd) : ref::l2l(P, in.data(), dd);
    if constexpr (Direct) {
      tr::translate_direct<K, P>(a, d[0], d[1], d[2], out);
    } else {
      const auto dir = m2l::make_direction<P>(d[0], d[1], d[2]);
      tr::translate_inplace<K, P>(a, dir, m2l::inverse_distance(d[0], d[1], d[2]));
      std::copy(a, a + C, out);
    }
    std::vector<std::complex<double>> got(C);
    for (int i = 0; i < C; ++i) got[i] = {double(out[i].re), double(out[i].im)};
    worst = std::max(worst, wham_test::relative_error(got.data(), want.data(), C));
  }
  return worst;
}

template <class T, tr::kind K, bool Direct, int... Ps>
void check_orders(double (*tol)(int)) {
  auto gen = wham_test::rng(sizeof(T) + 2 * int(K) + 8 * Direct);
  (
      [&] {
        const double err = translation_error<K, Direct, Ps, T>(gen);
        std::printf("%s %s %s p=%d worst err=%.3e\n", K == tr::kind::m2m ? "m2m" : "l2l",
                    Direct ? "direct" : "rotated", sizeof(T) == 8 ? "double" : "float", Ps, err);
        CAPTURE(Ps, err, wham_test::seed());
        CHECK(err <= tol(Ps));
      }(),
      ...);
}

}  // namespace

TEST_CASE("m2m and l2l building blocks on the host: double", "[translations][blocks]") {
  // measured worst: 3.4e-15 at p = 8, 3.4e-14 at 12, 6.1e-13 at 16, 5.1e-12 at 20
  constexpr auto rotated = [](int p) { return p <= 8 ? 2e-14 : p <= 12 ? 2e-13 : p <= 16 ? 3e-12 : 2e-11; };
  constexpr auto direct = [](int) { return 1e-15; };
  check_orders<double, tr::kind::m2m, false, 0, 1, 2, 3, 4, 5, 8, 12, 16, 20>(rotated);
  check_orders<double, tr::kind::l2l, false, 0, 1, 2, 3, 4, 5, 8, 12, 16, 20>(rotated);
  check_orders<double, tr::kind::m2m, true, 0, 1, 2, 3, 4, 6>(direct);
  check_orders<double, tr::kind::l2l, true, 0, 1, 2, 3, 4, 6>(direct);
}

TEST_CASE("m2m and l2l building blocks on the host: float", "[translations][blocks]") {
  // measured worst: 3.3e-6 at p = 8, 1.7e-5 at 12, 2.8e-4 at 16
  constexpr auto rotated = [](int p) { return p <= 8 ? 1.5e-5 : p <= 12 ? 7e-5 : 1.2e-3; };
  constexpr auto direct = [](int) { return 3e-7; };
  check_orders<float, tr::kind::m2m, false, 0, 1, 2, 4, 8, 12, 16>(rotated);
  check_orders<float, tr::kind::l2l, false, 0, 1, 2, 4, 8, 12, 16>(rotated);
  check_orders<float, tr::kind::m2m, true, 0, 1, 2, 4>(direct);
  check_orders<float, tr::kind::l2l, true, 0, 1, 2, 4>(direct);
}
