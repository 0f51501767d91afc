// Every M2L path at the ends of the documented range of |delta| (docs/specs/m2l.md, "Range
// of |delta|") and just inside them, on the axes, in the xy plane, within 1e-161 (double)
// or 1e-20 (float) of an axis and in random directions, against the double host reference.
#include <wham/m2l.cuh>
#include <wham/reference/m2l.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "m2l_accuracy.hpp"
#include "m2l_range.hpp"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <random>
#include <type_traits>
#include <vector>

namespace ref = wham::reference;

namespace {

const char* name(wham::m2l_path k) {
  switch (k) {
    case wham::m2l_path::automatic:
      return "automatic";
    case wham::m2l_path::thread:
      return "thread";
    case wham::m2l_path::split:
      return "split";
    case wham::m2l_path::warp:
      return "warp";
    case wham::m2l_path::tensor:
      return "tensor";
    default:
      return "direct";
  }
}

/// The bound of the accuracy table of docs/specs/m2l.md for order p.
template <class T>
double table_bound(int p) {
  return wham_test::m2l_tolerance<T>(p);
}

/// The margin over the table at the ends of the range (the table is 4 times the worst its
/// sweep measures near the poles; the blocks' host run of this test stays within it).
constexpr double margin = 2.0;

/// Directions of one |delta| class: the six half-axes, two in the xy plane, four within
/// `tiny` (relative) of an axis, four random.
template <class T>
std::vector<std::array<double, 3>> directions(std::mt19937_64& gen) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double tiny = std::is_same_v<T, double> ? 1e-161 : 1e-20;
  std::vector<std::array<double, 3>> d = {{1, 0, 0},  {-1, 0, 0}, {0, 1, 0},
                                          {0, -1, 0}, {0, 0, 1},  {0, 0, -1}};
  d.push_back({u(gen), u(gen), 0});
  d.push_back({u(gen), u(gen), 0});
  d.push_back({tiny * u(gen), tiny * u(gen), 1});
  d.push_back({tiny * u(gen), 0, -1});
  d.push_back({1, tiny * u(gen), tiny * u(gen)});
  d.push_back({0, -1, tiny * u(gen)});
  for (int i = 0; i < 4; ++i) d.push_back({u(gen), u(gen), u(gen)});
  return d;
}

}  // namespace

TEMPLATE_TEST_CASE("m2l paths at the ends of the documented range of |delta|", "[m2l][gpu][range]",
                   float, double) {
  using T = TestType;
  // 6 | 7 and 8 | 9: where automatic leaves the thread schedule (double | float); 12 | 13:
  // the split and thread schedules' last order, the tensor schedules' first; the maxima
  const int p = GENERATE(0, 1, 2, 6, 7, 8, 9, 12, 13, 16, 20);
  const wham::m2l_path path =
      GENERATE(wham::m2l_path::automatic, wham::m2l_path::thread, wham::m2l_path::split,
               wham::m2l_path::warp, wham::m2l_path::tensor, wham::m2l_path::direct);
  if (p > wham::m2l_max_order<T>()) return;
  const std::size_t C = std::size_t(p + 1) * (p + 1);
  auto gen = wham_test::rng(5200 + 31 * std::uint64_t(p) + sizeof(T));
  std::uniform_real_distribution<double> u(-1.0, 1.0), mag(0.75, 1.0);
  const auto dirs = directions<T>(gen);
  const std::size_t per_class = dirs.size();

  // Multipoles with parts of magnitude 0.75..1: |M_0^0| >= 1, as the range's large end
  // assumes; mu (the largest |M_k^l|) sets its small end.
  const int classes = 5;
  const std::int64_t n = std::int64_t(classes * per_class);
  std::vector<cuda::std::complex<T>> M(C * n);
  double mu = 0.0;
  for (auto& v : M) {
    v = {T(std::copysign(mag(gen), u(gen))), T(std::copysign(mag(gen), u(gen)))};
    mu = std::max(mu, std::hypot(double(v.real()), double(v.imag())));
  }
  const double rmin = wham_test::m2l_min_distance<T>(p, mu);
  const double rmax = wham_test::m2l_max_distance<T>();
  const double radii[classes] = {rmin, 2 * rmin, 1.0, rmax / 2, rmax};
  std::vector<T> d(3 * n);
  for (int c = 0; c < classes; ++c) {
    for (std::size_t j = 0; j < per_class; ++j) {
      const auto& e = dirs[j];
      const double len = std::hypot(e[0], e[1], e[2]);
      const std::size_t i = c * per_class + j;
      for (int a = 0; a < 3; ++a) d[3 * i + a] = T(e[a] / len * radii[c]);
    }
  }

  wham_test::device_buffer<cuda::std::complex<T>> dM(M), dL(C * n);
  wham_test::device_buffer<T> dd(d);
  dL.poison();
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  try {
    wham::m2l(dM.data(), dd.data(), dL.data(), p, n, 0, path);
  } catch (const wham::error&) {
    return;  // the path does not serve (p, T) on this device
  }
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = dL.download();

  // The reference on the same (rounded) inputs; the error over each |delta| class, scaled
  // (its locals reach near the largest and the smallest normal T).
  for (int c = 0; c < classes; ++c) {
    std::vector<std::complex<double>> out, want;
    for (std::size_t j = 0; j < per_class; ++j) {
      const std::size_t i = c * per_class + j;
      std::vector<ref::m2l_complex> Mi(C);
      for (std::size_t k = 0; k < C; ++k) Mi[k] = {M[i * C + k].real(), M[i * C + k].imag()};
      const double di[3] = {double(d[3 * i]), double(d[3 * i + 1]), double(d[3 * i + 2])};
      const auto L = ref::m2l_direct(p, Mi.data(), di);
      for (std::size_t k = 0; k < C; ++k) {
        want.push_back(L[k]);
        out.push_back({double(got[i * C + k].real()), double(got[i * C + k].imag())});
      }
    }
    const double err = wham_test::scaled_relative_error(out.data(), want.data(), out.size());
    const double tol = margin * table_bound<T>(p);
    CAPTURE(p, name(path), c, radii[c], rmin, rmax, mu, err, tol, wham_test::seed());
    CHECK(err <= tol);
    // and per pair, so that no direction hides behind the others
    for (std::size_t j = 0; j < per_class; ++j) {
      const std::size_t off = j * C;
      const double e = wham_test::scaled_relative_error(out.data() + off, want.data() + off, C);
      const std::size_t i = c * per_class + j;
      CAPTURE(j, d[3 * i], d[3 * i + 1], d[3 * i + 2], e);
      CHECK(e <= tol);
    }
  }
}
