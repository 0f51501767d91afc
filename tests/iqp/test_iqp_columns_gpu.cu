// The IQP columns-first schedule (wham/detail/iqp/columns.cuh, not taken by any dispatch
// yet): every row length it is compiled for, both output types, both parameter types,
// both variants, batch 1, 3 and 64, against the double host reference; tolerances as the
// spec: 1e-12 (complex128), 1e-5 (complex64); outputs poisoned with NaN first.
#include <wham/detail/iqp/columns.cuh>
#include <wham/iqp.cuh>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "iqp_fast_reference.hpp"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <cmath>
#include <random>
#include <vector>

namespace {

template <class Out>
double tolerance() {
  return std::is_same_v<Out, cuda::std::complex<float>> ? 1e-5 : 1e-12;
}

}  // namespace

TEMPLATE_TEST_CASE("iqp columns-first schedule matches the reference", "[iqp][columns][gpu]",
                   cuda::std::complex<float>, cuda::std::complex<double>) {
  using Out = TestType;
  namespace iqp = wham::detail::iqp;
  const int n = GENERATE(14, 15, 16, 17);
  const std::int64_t batch = GENERATE(1, 3, 64);
  const bool double_params = GENERATE(true, false);
  const auto variant = GENERATE(wham::iqp_variant::iqp, wham::iqp_variant::iqp_z);
  if (!iqp::columns_serves<Out>(n)) {
    WARN("the columns-first schedule is not compiled for n = " << n
                                                               << " with this output type, or the "
                                                                  "device lacks clusters");
    return;
  }
  if (wham_test::reduced() && batch > 3) return;
  const bool with_pairs = variant == wham::iqp_variant::iqp;
  CAPTURE(n, batch, double_params, with_pairs, wham_test::seed());

  const std::int64_t per = wham::iqp_num_params(n, variant);
  auto gen = wham_test::rng(0x1D0 + 100 * n + int(batch) + (double_params ? 1 : 0) +
                            (with_pairs ? 2 : 0));
  std::uniform_real_distribution<double> u(-3.2, 3.2);
  std::vector<double> pd(std::size_t(per * batch));
  for (auto& v : pd) v = u(gen);
  // Row 0 all zeros (the state |0>), row 1 large values (|a|, |J| up to 10).
  for (std::int64_t i = 0; i < per; ++i) pd[std::size_t(i)] = 0.0;
  if (batch > 1) {
    std::uniform_real_distribution<double> big(-10.0, 10.0);
    for (std::int64_t i = 0; i < per; ++i) pd[std::size_t(per + i)] = big(gen);
  }
  const std::vector<float> pf = wham_test::float_params(pd, double_params);

  const std::size_t N = std::size_t(1) << n;
  wham_test::device_buffer<Out> d_states(N * batch);
  d_states.poison();
  if (double_params) {
    wham_test::device_buffer<double> d_params(pd);
    const iqp::phase_input<double, Out> input{d_params.data(), per, n, with_pairs, batch};
    iqp::launch_columns<Out>(n, batch, input, d_states.data(), 0);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
  } else {
    wham_test::device_buffer<float> d_params(pf);
    const iqp::phase_input<float, Out> input{d_params.data(), per, n, with_pairs, batch};
    iqp::launch_columns<Out>(n, batch, input, d_states.data(), 0);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
  }
  const auto got = d_states.download();
  for (std::int64_t b = 0; b < batch; ++b) {
    CAPTURE(b);
    const auto ref = wham_test::fast_iqp_state(pd.data() + b * per, n, with_pairs);
    REQUIRE(wham_test::relative_error(got.data() + b * N, ref.data(), N) <= tolerance<Out>());
  }
}

TEST_CASE("iqp columns-first schedule rejects rows it is not compiled for", "[iqp][columns][gpu]") {
  using Out = cuda::std::complex<double>;
  namespace iqp = wham::detail::iqp;
  wham_test::device_buffer<Out> d_states(std::size_t(1) << 18);
  wham_test::device_buffer<double> d_params(std::vector<double>(200, 0.5));
  const iqp::phase_input<double, Out> input{d_params.data(), 18 * 19 / 2, 18, true, 1};
  REQUIRE_THROWS_AS(iqp::launch_columns<Out>(18, 1, input, d_states.data(), 0), wham::error);
  REQUIRE_THROWS_AS(iqp::launch_columns<Out>(13, 1, input, d_states.data(), 0), wham::error);
  REQUIRE_THROWS_AS(iqp::launch_columns<Out>(17, 1, input, d_states.data(), 0), wham::error);
  if (iqp::columns_serves<Out>(16)) {
    REQUIRE_THROWS_AS(iqp::launch_columns<Out>(16, 0, input, d_states.data(), 0), wham::error);
  }
}
