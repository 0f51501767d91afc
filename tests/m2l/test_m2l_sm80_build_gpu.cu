// Built for sm_80 alone (tests/m2l/CMakeLists.txt): a program whose M2L kernels carry no
// sm_90 code, run on any GPU. On an H100 or H200 the device has compute capability 9.0,
// but this program's wide tensor kernel traps (its body needs __CUDA_ARCH__ >= 900), so
// dispatch must see that (wham::detail::m2l::wide_supported) and `automatic` must take
// the schedules that run here at the orders where an sm_90 build takes the wide one
// (double from p = 11, float from p = 13): each result against the double host reference.
#include <wham/m2l.cuh>
#include <wham/reference/m2l.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

TEST_CASE("an M2L build without sm_90 code takes no wide tensor schedule", "[m2l][gpu][arch]") {
  REQUIRE_FALSE(wham::detail::m2l::wide_supported());
  // Float runs on tensor cores through the wide schedule alone: asked for by name, it throws.
  wham_test::device_buffer<cuda::std::complex<float>> M(289), L(289);
  wham_test::device_buffer<float> d(3);
  CHECK_THROWS_AS(wham::m2l(M.data(), d.data(), L.data(), 16, 1, 0, wham::m2l_path::tensor),
                  wham::error);
}

TEMPLATE_TEST_CASE("an M2L build without sm_90 code: automatic matches the host reference",
                   "[m2l][gpu][arch]", float, double) {
  using T = TestType;
  using C = cuda::std::complex<T>;
  const int p =
      std::is_same_v<T, double> ? GENERATE(9, 11, 12, 13, 16, 20) : GENERATE(9, 12, 13, 16);
  const std::int64_t pairs = 37;  // odd: a partial last tile on every schedule
  CAPTURE(p, pairs, wham_test::seed());
  const std::size_t nc = std::size_t(p + 1) * (p + 1);
  auto gen = wham_test::rng(0x80 + std::uint64_t(p) * 7 + sizeof(T));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<C> M(nc * pairs);
  for (auto& v : M) v = C(T(u(gen)), T(u(gen)));
  std::vector<T> d(3 * pairs);
  for (std::int64_t i = 0; i < pairs; ++i) {
    // |delta| in [1, 2]; pair 0 on the +z axis, pair 1 on -z.
    double x = u(gen), y = u(gen), z = u(gen);
    if (i < 2) {
      x = 0.0;
      y = 0.0;
      z = i == 0 ? 1.0 : -1.0;
    }
    const double len = std::sqrt(x * x + y * y + z * z);
    const double r = 1.5 + 0.5 * u(gen);
    d[3 * i] = T(x * r / len);
    d[3 * i + 1] = T(y * r / len);
    d[3 * i + 2] = T(z * r / len);
  }
  wham_test::device_buffer<C> dM(M), dL(M.size());
  wham_test::device_buffer<T> dd(d);
  dL.poison();
  wham::m2l(dM.data(), dd.data(), dL.data(), p, pairs);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const std::vector<C> got = dL.download();

  std::vector<std::complex<double>> out, want;
  std::vector<wham::reference::m2l_complex> Mi(nc);
  for (std::int64_t i = 0; i < pairs; ++i) {
    for (std::size_t c = 0; c < nc; ++c) {
      Mi[c] = {double(M[i * nc + c].real()), double(M[i * nc + c].imag())};
    }
    const double di[3] = {double(d[3 * i]), double(d[3 * i + 1]), double(d[3 * i + 2])};
    const auto Li = wham::reference::m2l_direct(p, Mi.data(), di);
    for (std::size_t c = 0; c < nc; ++c) {
      want.push_back(Li[c]);
      out.push_back({double(got[i * nc + c].real()), double(got[i * nc + c].imag())});
    }
  }
  // The spec's bounds (test_m2l_gpu.cu's tolerance): double 1e-12 to p = 12, 1e-10 above;
  // float 1e-3 above p = 8. NaN poison left anywhere fails the comparison.
  const double tol = std::is_same_v<T, double> ? (p <= 12 ? 1e-12 : 1e-10) : 1e-3;
  const double err = wham_test::relative_error(out.data(), want.data(), out.size());
  CAPTURE(err, tol);
  CHECK(err <= tol);
}
