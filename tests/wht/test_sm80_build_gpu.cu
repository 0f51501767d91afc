// Built for sm_80 alone (tests/wht/CMakeLists.txt): a program whose kernels carry no
// sm_90 code, run on any GPU. On an H100 or H200 the device has clusters but this
// program's cluster kernels are empty (their bodies need __CUDA_ARCH__ >= 900), so
// dispatch must see that (wham::detail::wht::clusters_supported) and every path must still
// write the right states: each result is checked against the baseline path, which
// uses no clusters. Before the check, these rows came back unwritten (NaN poison) on
// an H200.
#include <wham/fwht.cuh>
#include <wham/iqp.cuh>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <random>
#include <vector>

TEST_CASE("a build without sm_90 code takes no cluster schedule", "[gpu][arch]") {
  REQUIRE_FALSE(wham::detail::wht::clusters_supported());
  using Z = cuda::std::complex<double>;
  REQUIRE(wham::iqp_fused_max_qubits<Z>() == wham::detail::iqp::block_max_qubits<Z>());
  REQUIRE_FALSE(wham::detail::wht::kronecker_resident_serves<Z, Z>(16));
}

TEMPLATE_TEST_CASE("a build without sm_90 code encodes right on every automatic path",
                   "[gpu][arch]", cuda::std::complex<float>, cuda::std::complex<double>) {
  using Out = TestType;
  // n = 12..17: on an H200 with sm_90 code these rows run as clusters (rows of 2^M and
  // beyond one block) or the resident Kronecker schedule at batch 64.
  const int n = GENERATE(12, 13, 14, 15, 16, 17);
  const std::int64_t batch = GENERATE(8, 64);
  if (wham_test::reduced() && n > 14) return;
  CAPTURE(n, batch, wham_test::seed());
  const auto variant = wham::iqp_variant::iqp;
  const std::int64_t per = wham::iqp_num_params(n, variant);
  auto gen = wham_test::rng(0x1D0 + 100 * n + int(batch));
  std::uniform_real_distribution<double> u(-3.2, 3.2);
  std::vector<double> p(std::size_t(per * batch));
  for (auto& v : p) v = u(gen);
  const std::size_t total = (std::size_t(1) << n) * std::size_t(batch);
  wham_test::device_buffer<double> d_params(p);
  wham_test::device_buffer<Out> d_auto(total), d_base(total);
  d_auto.poison();
  d_base.poison();
  wham::iqp_encode(d_params.data(), d_auto.data(), n, batch, variant, 0);
  wham::iqp_encode(d_params.data(), d_base.data(), n, batch, variant, 0, wham::iqp_path::baseline);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = d_auto.download();
  const auto ref = d_base.download();
  const double tol = std::is_same_v<Out, cuda::std::complex<float>> ? 1e-5 : 1e-12;
  REQUIRE(wham_test::relative_error(got.data(), ref.data(), total) <= tol);
}

TEST_CASE("a build without sm_90 code transforms right on the automatic FWHT path", "[gpu][arch]") {
  // float rows of 2^16 and 2^17 are cluster rows on an H200 with sm_90 code.
  const int log_n = GENERATE(15, 16, 17);
  const std::int64_t batch = 64;
  CAPTURE(log_n, wham_test::seed());
  const std::size_t total = (std::size_t(1) << log_n) * std::size_t(batch);
  auto gen = wham_test::rng(0x1E0 + log_n);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(total);
  for (auto& v : x) v = u(gen);
  wham_test::device_buffer<float> d_in(x), d_auto(total), d_base(total);
  d_auto.poison();
  d_base.poison();
  wham::fwht(d_in.data(), d_auto.data(), log_n, batch, 1.0f, 0);
  wham::fwht(d_in.data(), d_base.data(), log_n, batch, 1.0f, 0, wham::fwht_path::baseline);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = d_auto.download();
  const auto ref = d_base.download();
  REQUIRE(wham_test::relative_error(got.data(), ref.data(), total) <= 1e-5);
}
