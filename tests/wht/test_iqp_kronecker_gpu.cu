// The IQP encoder through the Kronecker-split path (explicit path), n = 14..24,
// both output types, both parameter types, both variants, against a double host
// reference; tolerances as the spec: 1e-12 (complex128), 1e-5 (complex64).
//
// The host reference builds theta for every x incrementally (O(2^n) additions per
// qubit instead of O(n^2) per amplitude) and transforms with the reference FWHT;
// it is checked against wham::reference::iqp_states where that is fast (n <= 14).
#include <wham/iqp.cuh>
#include <wham/reference/fwht.hpp>
#include <wham/reference/iqp.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <cmath>
#include <complex>
#include <random>
#include <vector>

namespace {

/// IQP state of one sample in double: theta(x) built bit by bit, then the FWHT.
template <class P>
std::vector<std::complex<double>> fast_iqp_state(const P* params, int n, bool with_pairs) {
  const std::size_t N = std::size_t(1) << n;
  std::vector<double> theta(N, 0.0), cross(N, 0.0);
  for (int i = 0; i < n; ++i) {
    const std::size_t h = std::size_t(1) << i;
    // cross[x] = sum_{j < i, bit j of x} J_ji for x < 2^i.
    cross[0] = 0.0;
    for (std::size_t x = 1; x < h; ++x) {
      const int j = __builtin_ctzll(x);
      const double J = with_pairs ? double(params[wham::reference::iqp_pair_offset(n, j, i)]) : 0.0;
      cross[x] = cross[x & (x - 1)] + J;
    }
    for (std::size_t x = 0; x < h; ++x) theta[x | h] = theta[x] + double(params[i]) + cross[x];
  }
  std::vector<std::complex<double>> s(N);
  for (std::size_t x = 0; x < N; ++x) s[x] = std::polar(1.0, theta[x]);
  wham::reference::fwht_inplace(s.data(), n);
  const double scale = std::ldexp(1.0, -n);
  for (auto& v : s) v *= scale;
  return s;
}

template <class Out>
double tolerance() {
  return std::is_same_v<Out, cuda::std::complex<float>> ? 1e-5 : 1e-12;
}

}  // namespace

TEST_CASE("iqp fast host reference equals the library reference", "[iqp][kronecker][cpu]") {
  const int n = GENERATE(1, 2, 5, 9, 12);
  const bool with_pairs = GENERATE(false, true);
  CAPTURE(n, with_pairs, wham_test::seed());
  auto gen = wham_test::rng(0x1A0 + n);
  std::uniform_real_distribution<double> u(-3.2, 3.2);
  std::vector<double> p(std::size_t(wham::reference::iqp_params_per_sample(n, with_pairs)));
  for (auto& v : p) v = u(gen);
  const auto a = fast_iqp_state(p.data(), n, with_pairs);
  const auto b = wham::reference::iqp_state(p.data(), n, with_pairs);
  REQUIRE(wham_test::relative_error(a.data(), b.data(), a.size()) <= 1e-13);
}

TEMPLATE_TEST_CASE("iqp through the kronecker path matches the reference, n = 14..24",
                   "[iqp][kronecker][gpu]", cuda::std::complex<float>, cuda::std::complex<double>) {
  using Out = TestType;
  const int n = GENERATE(range(14, 25));
  const bool double_params = GENERATE(true, false);
  const auto variant = GENERATE(wham::iqp_variant::iqp, wham::iqp_variant::iqp_z);
  if (!wham::iqp_path_serves<Out>(wham::iqp_path::kronecker, n)) {
    WARN("kronecker path does not serve n = " << n << " on this device");
    return;
  }
  if (wham_test::reduced() && n > 15) return;
  // Host reference cost: batch 3 up to n = 18, then one sample; float parameters and
  // the iqp_z variant at every other n beyond 20.
  const std::int64_t batch = n <= 18 ? 3 : 1;
  if (n > 20 && (n % 2 == 1) != (!double_params || variant == wham::iqp_variant::iqp_z)) return;
  const bool with_pairs = variant == wham::iqp_variant::iqp;
  CAPTURE(n, batch, double_params, with_pairs, wham_test::seed());

  const std::int64_t per = wham::iqp_num_params(n, variant);
  auto gen = wham_test::rng(0x1B0 + 100 * n + (double_params ? 1 : 0) + (with_pairs ? 2 : 0));
  std::uniform_real_distribution<double> u(-3.2, 3.2);
  std::vector<double> pd(std::size_t(per * batch));
  for (auto& v : pd) v = u(gen);
  std::vector<float> pf(pd.begin(), pd.end());
  if (!double_params) {
    for (std::size_t i = 0; i < pd.size(); ++i) pd[i] = double(pf[i]);  // what the device sees
  }

  const std::size_t N = std::size_t(1) << n;
  wham_test::device_buffer<Out> d_states(N * batch);
  d_states.poison();
  if (double_params) {
    wham_test::device_buffer<double> d_params(pd);
    wham::iqp_encode(d_params.data(), d_states.data(), n, batch, variant, 0,
                     wham::iqp_path::kronecker);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
  } else {
    wham_test::device_buffer<float> d_params(pf);
    wham::iqp_encode(d_params.data(), d_states.data(), n, batch, variant, 0,
                     wham::iqp_path::kronecker);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
  }
  const auto got = d_states.download();
  for (std::int64_t b = 0; b < batch; ++b) {
    CAPTURE(b);
    const auto ref = fast_iqp_state(pd.data() + b * per, n, with_pairs);
    REQUIRE(wham_test::relative_error(got.data() + b * N, ref.data(), N) <= tolerance<Out>());
  }
}

TEMPLATE_TEST_CASE("iqp through the kronecker resident schedule matches the reference",
                   "[iqp][kronecker][gpu]", cuda::std::complex<float>, cuda::std::complex<double>) {
  using Out = TestType;
  namespace wht = wham::detail::wht;
  const int n = GENERATE(16, 17);
  const std::int64_t batch = GENERATE(1, 3, 64);
  const bool double_params = GENERATE(true, false);
  if (!wht::kronecker_resident_serves<Out, Out>(n)) {
    WARN("the resident schedule is not compiled for n = " << n
                                                          << " with this output type, "
                                                             "or the device lacks clusters");
    return;
  }
  if (wham_test::reduced() && batch > 3) return;
  // Both variants, alternating with the parameter type (the host reference's cost).
  const bool with_pairs = double_params;
  const auto variant = with_pairs ? wham::iqp_variant::iqp : wham::iqp_variant::iqp_z;
  CAPTURE(n, batch, double_params, with_pairs, wham_test::seed());

  const std::int64_t per = wham::iqp_num_params(n, variant);
  auto gen = wham_test::rng(0x1C0 + 100 * n + int(batch) + (double_params ? 1 : 0));
  std::uniform_real_distribution<double> u(-3.2, 3.2);
  std::vector<double> pd(std::size_t(per * batch));
  for (auto& v : pd) v = u(gen);
  std::vector<float> pf(pd.begin(), pd.end());
  if (!double_params) {
    for (std::size_t i = 0; i < pd.size(); ++i) pd[i] = double(pf[i]);
  }

  const std::size_t N = std::size_t(1) << n;
  const auto scale = wht::real_t<Out>(std::ldexp(1.0, -n));
  wham_test::device_buffer<Out> d_states(N * batch);
  d_states.poison();
  const wht::stored_output<Out, Out> output{d_states.data()};
  if (double_params) {
    wham_test::device_buffer<double> d_params(pd);
    const wham::detail::iqp::phase_input<double, Out> input{d_params.data(), per, n, with_pairs,
                                                            batch};
    wht::launch_kronecker_resident<Out>(n, batch, input, output, scale, 0);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
  } else {
    wham_test::device_buffer<float> d_params(pf);
    const wham::detail::iqp::phase_input<float, Out> input{d_params.data(), per, n, with_pairs,
                                                           batch};
    wht::launch_kronecker_resident<Out>(n, batch, input, output, scale, 0);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
  }
  const auto got = d_states.download();
  for (std::int64_t b = 0; b < batch; ++b) {
    CAPTURE(b);
    const auto ref = fast_iqp_state(pd.data() + b * per, n, with_pairs);
    REQUIRE(wham_test::relative_error(got.data() + b * N, ref.data(), N) <= tolerance<Out>());
  }
}

TEST_CASE("the kronecker resident schedule rejects rows it is not compiled for",
          "[iqp][kronecker][gpu]") {
  using Out = cuda::std::complex<double>;
  namespace wht = wham::detail::wht;
  wham_test::device_buffer<Out> d_states(std::size_t(1) << 18);
  const wht::stored_output<Out, Out> output{d_states.data()};
  wham_test::device_buffer<double> d_params(std::vector<double>(200, 0.5));
  const wham::detail::iqp::phase_input<double, Out> input{d_params.data(), 18 * 19 / 2, 18, true,
                                                          1};
  REQUIRE_THROWS_AS(wht::launch_kronecker_resident<Out>(18, 1, input, output, 1.0, 0), wham::error);
  if (wht::kronecker_resident_serves<Out, Out>(16)) {
    REQUIRE_THROWS_AS(wht::launch_kronecker_resident<Out>(16, 0, input, output, 1.0, 0),
                      wham::error);
  }
}
