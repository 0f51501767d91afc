// The IQP columns-first schedules (wham/detail/iqp/columns.cuh, not taken by any dispatch
// yet): the resident one (a cluster a row, n = 14..17) and the streamed one (a cooperative
// kernel, n = Lo + 4 .. Lo + 8), at every row length they are compiled for, both output
// types, both parameter types, both variants, against the double host reference;
// tolerances as the spec: 1e-12 (complex128), 1e-5 (complex64); outputs poisoned with NaN
// first; row 0 all zeros, row 1 large values (|a|, |J| up to 10).
#include <wham/detail/iqp/columns.cuh>
#include <wham/iqp.cuh>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "iqp_fast_reference.hpp"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

namespace iqp = wham::detail::iqp;

template <class Out>
double tolerance() {
  return std::is_same_v<Out, cuda::std::complex<float>> ? 1e-5 : 1e-12;
}

enum class schedule { resident, streamed };

template <class Out, class P>
void launch(schedule s, int n, std::int64_t batch, const iqp::phase_input<P, Out>& input, Out* out,
            cudaStream_t stream) {
  if (s == schedule::resident) {
    iqp::launch_columns<Out>(n, batch, input, out, stream);
  } else {
    iqp::launch_columns_streamed<Out>(n, batch, input, out, stream);
  }
}

/// Encodes `batch` random rows with schedule s and checks every row against the host.
template <class Out>
void check(schedule s, int n, std::int64_t batch, bool double_params, wham::iqp_variant variant) {
  const bool with_pairs = variant == wham::iqp_variant::iqp;
  CAPTURE(n, batch, double_params, with_pairs, wham_test::seed());
  const std::int64_t per = wham::iqp_num_params(n, variant);
  auto gen = wham_test::rng(0x1D0 + 100 * n + int(batch) + (double_params ? 1 : 0) +
                            (with_pairs ? 2 : 0) + (s == schedule::streamed ? 4 : 0));
  std::uniform_real_distribution<double> u(-3.2, 3.2);
  std::vector<double> pd(std::size_t(per * batch));
  for (auto& v : pd) v = u(gen);
  for (std::int64_t i = 0; i < per; ++i) pd[std::size_t(i)] = 0.0;
  if (batch > 1) {
    std::uniform_real_distribution<double> big(-10.0, 10.0);
    for (std::int64_t i = 0; i < per; ++i) pd[std::size_t(per + i)] = big(gen);
  }
  const std::vector<float> pf = wham_test::float_params(pd, double_params);

  const std::size_t N = std::size_t(1) << n;
  wham_test::device_buffer<Out> d_states(N * batch);
  d_states.poison();
  wham_test::device_buffer<double> d_pd(pd);
  wham_test::device_buffer<float> d_pf(pf);
  if (double_params) {
    launch<Out>(s, n, batch, iqp::phase_input<double, Out>{d_pd.data(), per, n, with_pairs, batch},
                d_states.data(), 0);
  } else {
    launch<Out>(s, n, batch, iqp::phase_input<float, Out>{d_pf.data(), per, n, with_pairs, batch},
                d_states.data(), 0);
  }
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = d_states.download();
  for (std::int64_t b = 0; b < batch; ++b) {
    CAPTURE(b);
    const auto ref = wham_test::fast_iqp_state(pd.data() + b * per, n, with_pairs);
    REQUIRE(wham_test::relative_error(got.data() + b * N, ref.data(), N) <= tolerance<Out>());
  }
}

}  // namespace

TEMPLATE_TEST_CASE("iqp columns-first resident schedule matches the reference",
                   "[iqp][columns][gpu]", cuda::std::complex<float>, cuda::std::complex<double>) {
  using Out = TestType;
  const int n = GENERATE(14, 15, 16, 17);
  const std::int64_t batch = GENERATE(1, 3, 64);
  const bool double_params = GENERATE(true, false);
  const auto variant = GENERATE(wham::iqp_variant::iqp, wham::iqp_variant::iqp_z);
  if (!iqp::columns_serves<Out>(n)) {
    WARN("the resident columns-first schedule is not compiled for n = "
         << n << " with this output type, or the device lacks clusters");
    return;
  }
  if (wham_test::reduced() && batch > 3) return;
  check<Out>(schedule::resident, n, batch, double_params, variant);
}

TEMPLATE_TEST_CASE("iqp columns-first streamed schedule matches the reference",
                   "[iqp][columns][gpu]", cuda::std::complex<float>, cuda::std::complex<double>) {
  using Out = TestType;
  constexpr int lo = iqp::columns_streamed_lo<Out>;
  const int n = GENERATE(range(lo + 4, lo + 9));
  // Batch 64 at the shortest rows: several chunks of rows, the last one partial.
  const std::int64_t batch = GENERATE(1, 3, 64);
  const bool double_params = GENERATE(true, false);
  const auto variant = GENERATE(wham::iqp_variant::iqp, wham::iqp_variant::iqp_z);
  if (!iqp::columns_streamed_serves<Out>(n)) {
    WARN("the streamed columns-first schedule does not serve n = " << n << " here");
    return;
  }
  if (batch == 64 && n > lo + 4) return;  // the host reference's cost
  if (wham_test::reduced() && (batch > 3 || n > lo + 6)) return;
  // Both parameter types at every n, both variants at every other n beyond the first.
  if (n > lo + 4 && (n % 2 == 1) != (variant == wham::iqp_variant::iqp_z)) return;
  check<Out>(schedule::streamed, n, batch, double_params, variant);
}

TEST_CASE("iqp columns-first streamed schedule launches inside a captured CUDA graph",
          "[iqp][columns][gpu][graph]") {
  using Out = cuda::std::complex<double>;
  const int n = iqp::columns_streamed_lo<Out> + 6;
  if (!iqp::columns_streamed_serves<Out>(n)) {
    WARN("the streamed columns-first schedule does not serve n = " << n << " here");
    return;
  }
  const std::int64_t batch = 3;
  const std::int64_t per = wham::iqp_num_params(n, wham::iqp_variant::iqp);
  auto gen = wham_test::rng(0x1D9);
  std::uniform_real_distribution<double> u(-3.2, 3.2);
  std::vector<double> pd(std::size_t(per * batch));
  for (auto& v : pd) v = u(gen);
  wham_test::device_buffer<double> d_params(pd);
  const iqp::phase_input<double, Out> input{d_params.data(), per, n, true, batch};
  const std::size_t N = std::size_t(1) << n;
  wham_test::device_buffer<Out> direct(N * batch), graphed(N * batch);
  direct.poison();
  graphed.poison();
  iqp::launch_columns_streamed<Out>(n, batch, input, direct.data(), 0);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());

  cudaStream_t stream;
  WHAM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  WHAM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  iqp::launch_columns_streamed<Out>(n, batch, input, graphed.data(), stream);
  WHAM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  WHAM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  WHAM_TEST_CUDA(cudaGraphLaunch(exec, stream));
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  WHAM_TEST_CUDA(cudaGraphExecDestroy(exec));
  WHAM_TEST_CUDA(cudaGraphDestroy(graph));
  WHAM_TEST_CUDA(cudaStreamDestroy(stream));

  const auto a = direct.download();
  const auto b = graphed.download();
  REQUIRE(std::memcmp(a.data(), b.data(), a.size() * sizeof(Out)) == 0);
  const auto ref = wham_test::fast_iqp_state(pd.data() + per, n, true);
  REQUIRE(wham_test::relative_error(a.data() + N, ref.data(), N) <= tolerance<Out>());
}

TEST_CASE("iqp columns-first schedules reject rows they are not compiled for",
          "[iqp][columns][gpu]") {
  using Out = cuda::std::complex<double>;
  wham_test::device_buffer<Out> d_states(std::size_t(1) << 18);
  wham_test::device_buffer<double> d_params(std::vector<double>(200, 0.5));
  const iqp::phase_input<double, Out> input{d_params.data(), 18 * 19 / 2, 18, true, 1};
  REQUIRE_THROWS_AS(iqp::launch_columns<Out>(18, 1, input, d_states.data(), 0), wham::error);
  REQUIRE_THROWS_AS(iqp::launch_columns<Out>(13, 1, input, d_states.data(), 0), wham::error);
  REQUIRE_THROWS_AS(iqp::launch_columns<Out>(17, 1, input, d_states.data(), 0), wham::error);
  REQUIRE_THROWS_AS(iqp::launch_columns_streamed<Out>(15, 1, input, d_states.data(), 0),
                    wham::error);
  REQUIRE_THROWS_AS(iqp::launch_columns_streamed<Out>(21, 1, input, d_states.data(), 0),
                    wham::error);
  if (iqp::columns_serves<Out>(16)) {
    REQUIRE_THROWS_AS(iqp::launch_columns<Out>(16, 0, input, d_states.data(), 0), wham::error);
  }
  if (iqp::columns_streamed_serves<Out>(18)) {
    REQUIRE_THROWS_AS(iqp::launch_columns_streamed<Out>(18, 0, input, d_states.data(), 0),
                      wham::error);
  }
}
