// wham::m2m, l2l and their accumulate forms on the GPU against the host references
// (reference/translations.hpp): every path at the orders it serves, float and double,
// general, on-axis, near-axis and zero displacements, poisoned outputs; the accumulate
// forms with indices out of range mixed in (they add nothing; guard rows around the output
// stay as they were); the first call inside a captured CUDA graph; the sweep of the polar
// angle, poles included, that the documented accuracy comes from ("[sweep]": prints it).
#include <wham/translations.cuh>
#include <wham/reference/translations.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "graph_capture.cuh"
#include "test_translations_accuracy.hpp"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <climits>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace {

namespace ref = wham::reference;
using wham::translation_path;
using wham_test::device_buffer;

template <class T>
using cx = cuda::std::complex<T>;

/// Whether a path serves order p for T.
template <class T>
bool path_serves(translation_path path, int p) {
  switch (path) {
    case translation_path::direct:
      return p <= 4;
    case translation_path::thread:
      return p <= 12;
    case translation_path::split:
      return p >= 7 && p <= 12;
    default:
      return p <= wham::m2l_max_order<T>();
  }
}

/// Displacements: general (|delta| log-uniform in [0.05, 5]), on the z axis (both signs),
/// within 1e-7 of it, in the xy plane, and zero (the identity).
template <class T>
std::vector<T> make_deltas(std::mt19937_64& gen, std::int64_t n) {
  std::uniform_real_distribution<double> u(-1.0, 1.0), e(std::log(0.05), std::log(5.0));
  std::vector<T> d(3 * n);
  for (std::int64_t i = 0; i < n; ++i) {
    double x = u(gen), y = u(gen), z = u(gen);
    const double s = std::exp(e(gen)) / std::sqrt(x * x + y * y + z * z);
    x *= s;
    y *= s;
    z *= s;
    switch (i % 6) {
      case 1: x = y = 0.0; break;
      case 2: x *= 1e-7; y *= 1e-7; break;
      case 3: z = 0.0; break;
      case 4: if (i % 24 == 4) x = y = z = 0.0; break;
      default: break;
    }
    d[3 * i] = T(x);
    d[3 * i + 1] = T(y);
    d[3 * i + 2] = T(z);
  }
  return d;
}

template <class T>
std::vector<cx<T>> random_expansions(std::mt19937_64& gen, std::int64_t rows, int C) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cx<T>> v(std::size_t(rows) * C);
  for (auto& c : v) c = cx<T>(T(u(gen)), T(u(gen)));
  return v;
}

/// The reference translation of one expansion (K: true M2M, false L2L), from the rounded
/// inputs the GPU saw.
template <class T>
std::vector<std::complex<double>> reference(bool m2m, int p, const cx<T>* in, const T* delta) {
  const int C = (p + 1) * (p + 1);
  std::vector<std::complex<double>> a(C);
  for (int i = 0; i < C; ++i) a[i] = {double(in[i].real()), double(in[i].imag())};
  const double d[3] = {double(delta[0]), double(delta[1]), double(delta[2])};
  return m2m ? ref::m2m(p, a.data(), d) : ref::l2l(p, a.data(), d);
}

using translations_test::documented_translation_accuracy;
using translations_test::tolerance;

}  // namespace

TEMPLATE_TEST_CASE("m2m and l2l match the host reference on every path", "[translations]", float,
                   double) {
  using T = TestType;
  const auto path = GENERATE(translation_path::automatic, translation_path::direct,
                             translation_path::thread, translation_path::split,
                             translation_path::warp);
  const int p = GENERATE(0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 16, 20);
  const bool m2m = GENERATE(true, false);
  if (!path_serves<T>(path, p)) return;
  CAPTURE(p, int(path), m2m, wham_test::seed());
  const int C = (p + 1) * (p + 1);
  const std::int64_t n = wham_test::reduced() ? 97 : 1000;  // not a multiple of a block
  auto gen = wham_test::rng(std::uint64_t(p) * 64 + int(path) * 2 + m2m + sizeof(T));
  const auto in = random_expansions<T>(gen, n, C);
  const auto deltas = make_deltas<T>(gen, n);
  device_buffer<cx<T>> d_in(in), d_out(std::size_t(n) * C);
  device_buffer<T> d_delta(deltas);
  d_out.poison();
  if (m2m) {
    wham::m2m(d_in.data(), d_delta.data(), d_out.data(), p, n, 0, path);
  } else {
    wham::l2l(d_in.data(), d_delta.data(), d_out.data(), p, n, 0, path);
  }
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto out = d_out.download();
  double worst = 0.0;
  const std::int64_t stride = n > 200 ? 7 : 1;  // the host reference is O(p^4)
  for (std::int64_t i = 0; i < n; i += stride) {
    const auto want = reference<T>(m2m, p, &in[i * C], &deltas[3 * i]);
    worst = std::max(worst, wham_test::relative_error(&out[i * C], want.data(), C));
  }
  CAPTURE(worst);
  CHECK(worst <= tolerance<T>(p));
}

// The accuracy table's own measurement: the polar angle of delta over [0, pi], both poles
// exactly and within 1e-7 and 1e-4 of them (where the rotations round worst), several
// azimuths and |delta| over [0.05, 5], every order band's edges and every path serving
// each. Prints the worst error of each (op, precision, p): run it alone with
//   test_translations_gpu "[sweep]"
// to read the figures the docs state.
TEMPLATE_TEST_CASE("M2M and L2L meet the documented accuracy at every polar angle, poles included",
                   "[translations][sweep]", float, double) {
  using T = TestType;
  const double pi = 3.14159265358979323846;
  std::vector<double> polar = {0.0, 1e-7, 1e-4, pi - 1e-4, pi - 1e-7, pi};
  for (int k = 1; k < 24; ++k) polar.push_back(pi * k / 24.0);
  const std::vector<double> azimuth = {0.0, 0.3, pi / 2, 2.5, pi, 4.4};
  const std::vector<double> length = {0.05, 0.3, 1.0, 5.0};
  const std::int64_t n = std::int64_t(polar.size() * azimuth.size() * length.size());
  std::vector<T> deltas;
  std::vector<double> polar_of;
  for (const double t : polar) {
    for (const double f : azimuth) {
      for (const double r : length) {
        deltas.push_back(T(r * std::sin(t) * std::cos(f)));
        deltas.push_back(T(r * std::sin(t) * std::sin(f)));
        deltas.push_back(T(r * std::cos(t)));
        polar_of.push_back(t);
      }
    }
  }
  const std::vector<int> orders = std::is_same_v<T, double>
                                      ? std::vector<int>{0, 1, 4, 8, 12, 16, 20}
                                      : std::vector<int>{0, 1, 4, 8, 12, 16};
  const translation_path paths[] = {translation_path::automatic, translation_path::direct,
                                    translation_path::thread, translation_path::split,
                                    translation_path::warp};
  const char* path_names[] = {"automatic", "direct", "thread", "split", "warp"};
  const char* precision = std::is_same_v<T, double> ? "double" : "float";
  device_buffer<T> d_delta(deltas);
  for (const bool m2m : {true, false}) {
    for (const int p : orders) {
      const int C = (p + 1) * (p + 1);
      auto gen = wham_test::rng(0x5eeb + 64 * std::uint64_t(p) + 2 * m2m + sizeof(T));
      const auto in = random_expansions<T>(gen, n, C);
      std::vector<std::vector<std::complex<double>>> want(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) {
        want[std::size_t(i)] = reference<T>(m2m, p, in.data() + i * C, deltas.data() + 3 * i);
      }
      device_buffer<cx<T>> d_in(in), d_out(std::size_t(n) * C);
      double worst = 0.0, worst_polar = 0.0;
      int worst_path = 0;
      for (int k = 0; k < 5; ++k) {
        if (!path_serves<T>(paths[k], p)) continue;
        d_out.poison();
        if (m2m) {
          wham::m2m(d_in.data(), d_delta.data(), d_out.data(), p, n, 0, paths[k]);
        } else {
          wham::l2l(d_in.data(), d_delta.data(), d_out.data(), p, n, 0, paths[k]);
        }
        WHAM_TEST_CUDA(cudaDeviceSynchronize());
        const auto out = d_out.download();
        for (std::int64_t i = 0; i < n; ++i) {
          const double e = wham_test::relative_error(out.data() + i * C,
                                                     want[std::size_t(i)].data(), C);
          if (!(e <= worst)) {
            worst = e;
            worst_polar = polar_of[i];
            worst_path = k;
          }
        }
      }
      std::printf("translation sweep: %s %-6s p = %2d  worst %.2e (path %s, polar angle %.3g)  "
                  "documented %.1e  test bound %.1e\n",
                  m2m ? "M2M" : "L2L", precision, p, worst, path_names[worst_path], worst_polar,
                  documented_translation_accuracy<T>(p), tolerance<T>(p));
      CAPTURE(m2m, p, worst, path_names[worst_path], worst_polar);
      CHECK(worst <= tolerance<T>(p));
    }
  }
}

TEMPLATE_TEST_CASE("m2m_accumulate and l2l_accumulate: bad indices add nothing, guard rows kept",
                   "[translations]", float, double) {
  using T = TestType;
  const auto path = GENERATE(translation_path::automatic, translation_path::direct,
                             translation_path::thread, translation_path::split,
                             translation_path::warp);
  const int p = GENERATE(0, 2, 4, 8, 12, 13);
  const bool m2m = GENERATE(true, false);
  if (!path_serves<T>(path, p)) return;
  CAPTURE(p, int(path), m2m, wham_test::seed());
  const int C = (p + 1) * (p + 1);
  constexpr std::int64_t num_in = 40, num_out = 9, guard = 2;  // 8 children a parent and more
  const std::int64_t n = 301;
  auto gen = wham_test::rng(std::uint64_t(p) * 64 + int(path) * 2 + m2m + 977);
  std::uniform_int_distribution<int> src_d(0, num_in - 1), tgt_d(0, num_out - 1), coin(0, 9);
  const std::int32_t bad[] = {-1, INT_MIN, INT_MAX, 1 << 30, num_in, num_out};
  std::vector<std::int32_t> src(n), tgt(n);
  for (std::int64_t i = 0; i < n; ++i) {
    src[i] = src_d(gen);
    // the first half in runs of one target (a tree's children by parent), the rest random
    tgt[i] = i < n / 2 ? std::int32_t(i * num_out / (n / 2)) : tgt_d(gen);
    if (coin(gen) == 0) src[i] = bad[coin(gen) % 5];
    if (coin(gen) == 0) tgt[i] = coin(gen) < 5 ? bad[5] : bad[coin(gen) % 4];
  }
  const auto in = random_expansions<T>(gen, num_in, C);
  const auto deltas = make_deltas<T>(gen, n);
  // the output with guard rows on both sides, all of it random: the forms add to it
  const auto start = random_expansions<T>(gen, num_out + 2 * guard, C);
  device_buffer<cx<T>> d_in(in), d_out(start);
  device_buffer<T> d_delta(deltas);
  device_buffer<std::int32_t> d_src(src), d_tgt(tgt);
  cx<T>* out = d_out.data() + guard * C;
  if (m2m) {
    wham::m2m_accumulate(d_in.data(), d_delta.data(), d_src.data(), d_tgt.data(), out, p, n,
                         num_in, num_out, 0, path);
  } else {
    wham::l2l_accumulate(d_in.data(), d_delta.data(), d_src.data(), d_tgt.data(), out, p, n,
                         num_in, num_out, 0, path);
  }
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = d_out.download();
  // guard rows: bit for bit
  CHECK(std::memcmp(got.data(), start.data(), sizeof(cx<T>) * guard * C) == 0);
  CHECK(std::memcmp(&got[(guard + num_out) * C], &start[(guard + num_out) * C],
                    sizeof(cx<T>) * guard * C) == 0);
  std::vector<std::complex<double>> want(std::size_t(num_out) * C);
  std::vector<std::int64_t> terms(num_out, 1);
  for (std::int64_t r = 0; r < num_out; ++r) {
    for (int j = 0; j < C; ++j) {
      const auto s = start[(guard + r) * C + j];
      want[r * C + j] = {double(s.real()), double(s.imag())};
    }
  }
  for (std::int64_t i = 0; i < n; ++i) {
    if (src[i] < 0 || src[i] >= num_in || tgt[i] < 0 || tgt[i] >= num_out) continue;
    const auto t = reference<T>(m2m, p, &in[std::size_t(src[i]) * C], &deltas[3 * i]);
    for (int j = 0; j < C; ++j) want[tgt[i] * C + j] += t[j];
    ++terms[tgt[i]];
  }
  for (std::int64_t r = 0; r < num_out; ++r) {
    const double err = wham_test::relative_error(&got[(guard + r) * C], &want[r * C], C);
    CAPTURE(r, err, terms[r]);
    CHECK(err <= tolerance<T>(p, terms[r]));
  }
}

TEST_CASE("m2m and l2l: the first call inside a captured CUDA graph", "[translations]") {
  // direct, thread (its block above 48 KB at p = 6: an attribute set on first use), split,
  // warp
  const int p = GENERATE(3, 6, 9, 14);
  CAPTURE(p);
  const int C = (p + 1) * (p + 1);
  const std::int64_t n = 129;
  auto gen = wham_test::rng(4242 + p);
  const auto in = random_expansions<double>(gen, n, C);
  const auto deltas = make_deltas<double>(gen, n);
  device_buffer<cx<double>> d_in(in), d_m(std::size_t(n) * C), d_l(std::size_t(n) * C);
  device_buffer<double> d_delta(deltas);
  d_m.poison();
  d_l.poison();
  wham_test::capture_and_replay([&](cudaStream_t s) {
    wham::m2m(d_in.data(), d_delta.data(), d_m.data(), p, n, s);
    wham::l2l(d_in.data(), d_delta.data(), d_l.data(), p, n, s);
  });
  const auto m = d_m.download(), l = d_l.download();
  double worst = 0.0;
  for (std::int64_t i = 0; i < n; i += 5) {
    const auto wm = reference<double>(true, p, &in[i * C], &deltas[3 * i]);
    const auto wl = reference<double>(false, p, &in[i * C], &deltas[3 * i]);
    worst = std::max({worst, wham_test::relative_error(&m[i * C], wm.data(), C),
                      wham_test::relative_error(&l[i * C], wl.data(), C)});
  }
  CAPTURE(worst);
  CHECK(worst <= tolerance<double>(p));
}
