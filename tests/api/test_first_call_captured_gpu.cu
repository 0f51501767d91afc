// The launch conventions at their hardest point: the process's first call of each
// public function made while its stream is being captured (cudaStreamCaptureModeGlobal).
// A first call looks the device up, raises kernels' shared-memory limits and asks
// for occupancies and cluster support; none of that may enqueue work, synchronise or
// allocate, or the capture fails. The other tests' graph cases call each shape once
// before capturing, so they cannot see this; here every call below is the first of
// its function in this process (one test case a binary, its order fixed).
// Each replayed graph must give what the host reference gives (and, for m2l, what the
// same call made directly afterwards gives). The FMM forms' first calls:
// tests/fmm/test_fmm_first_call_captured_gpu.cu.
#include <wham/fwht.cuh>
#include <wham/iqp.cuh>
#include <wham/m2l.cuh>
#include <wham/reference/fwht.hpp>
#include <wham/reference/iqp.hpp>
#include <wham/reference/m2l.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "graph_capture.cuh"
#include "m2l_accuracy.hpp"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <vector>

namespace {

double m2l_tolerance_double(int p) { return wham_test::m2l_tolerance<double>(p); }

using wham_test::capture_and_replay;

}  // namespace

TEST_CASE("the first call of each public function may be captured into a CUDA graph",
          "[api][gpu][graph]") {
  CAPTURE(wham_test::seed());
  auto gen = wham_test::rng(0xF1);
  std::uniform_real_distribution<double> u(-1.0, 1.0);

  // fwht, float rows of 2^20 (the Kronecker split: several kernels, their limits raised
  // on first use), three rows.
  {
    const int log_n = 20;
    const std::int64_t batch = 3;
    const std::size_t n = std::size_t(1) << log_n;
    std::vector<float> host(n * batch);
    for (auto& v : host) v = float(u(gen));
    wham_test::device_buffer<float> d_in(host), d_out(n * batch);
    d_out.poison();
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    const float scale = float(1.0 / std::sqrt(double(n)));
    capture_and_replay(
        [&](cudaStream_t s) { wham::fwht(d_in.data(), d_out.data(), log_n, batch, scale, s); });
    const auto got = d_out.download();
    for (std::int64_t b = 0; b < batch; ++b) {
      std::vector<double> want(host.begin() + b * n, host.begin() + (b + 1) * n);
      wham::reference::fwht_inplace(want.data(), log_n);
      for (auto& w : want) w *= double(scale);
      CAPTURE(b);
      REQUIRE(wham_test::relative_error(got.data() + b * n, want.data(), n) <= 1e-5);
    }
  }

  // iqp_encode, complex128 at n = 13 (one block a sample takes more than 48 KB of
  // shared memory, raised on first use; clusters where the batch is small) and n = 16
  // (the Kronecker split), batch 5.
  for (int n : {13, 16}) {
    CAPTURE(n);
    using Out = cuda::std::complex<double>;
    const std::int64_t batch = 5;
    const auto variant = wham::iqp_variant::iqp;
    std::vector<double> params(std::size_t(wham::iqp_num_params(n, variant) * batch));
    for (auto& v : params) v = u(gen);
    const wham::iqp_size<Out> size(n, batch);
    wham_test::device_buffer<double> d_params(params);
    wham_test::device_buffer<Out> d_states(std::size_t(size.amplitudes));
    d_states.poison();
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    capture_and_replay([&](cudaStream_t s) {
      wham::iqp_encode(d_params.data(), d_states.data(), n, batch, variant, s);
    });
    const auto got = d_states.download();
    const std::size_t dim = std::size_t(1) << n;
    const std::int64_t per = wham::iqp_num_params(n, variant);
    for (std::int64_t b = 0; b < batch; ++b) {
      CAPTURE(b);
      const auto want = wham::reference::iqp_state(params.data() + b * per, n, true);
      REQUIRE(wham_test::relative_error(got.data() + b * dim, want.data(), dim) <= 1e-12);
    }
  }

  // m2l, double at p = 8 (split schedule) and p = 16 (tensor schedule), 1000 pairs: the
  // replay against the host reference and, bit for bit, the same call made directly
  // afterwards.
  for (int p : {8, 16}) {
    CAPTURE(p);
    using Z = cuda::std::complex<double>;
    const std::int64_t pairs = wham_test::reduced() ? 16 : 1000;  // sanitizer runs: few
    const std::size_t C = std::size_t(p + 1) * (p + 1);
    std::vector<Z> M(C * pairs);
    for (auto& v : M) v = Z(u(gen), u(gen));
    std::vector<double> d(3 * pairs);
    for (auto& v : d) v = 2.0 + u(gen);  // |delta| >= sqrt(3): no zero displacement
    wham_test::device_buffer<Z> d_M(M), d_captured(C * pairs), d_direct(C * pairs);
    wham_test::device_buffer<double> d_d(d);
    d_captured.poison();
    d_direct.poison();
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    capture_and_replay(
        [&](cudaStream_t s) { wham::m2l(d_M.data(), d_d.data(), d_captured.data(), p, pairs, s); });
    wham::m2l(d_M.data(), d_d.data(), d_direct.data(), p, pairs);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    const auto a = d_captured.download(), b = d_direct.download();
    for (std::size_t k = 0; k < a.size(); ++k) {
      CAPTURE(k);
      REQUIRE(std::isfinite(a[k].real()));
      REQUIRE(a[k] == b[k]);
    }
    std::vector<std::complex<double>> want;
    want.reserve(a.size());
    for (std::int64_t i = 0; i < pairs; ++i) {
      std::vector<std::complex<double>> Mi(C);
      for (std::size_t c = 0; c < C; ++c) Mi[c] = wham_test::widen(M[std::size_t(i) * C + c]);
      const auto Li = wham::reference::m2l_direct(p, Mi.data(), d.data() + 3 * i);
      want.insert(want.end(), Li.begin(), Li.end());
    }
    const double err = wham_test::relative_error(a.data(), want.data(), a.size());
    CAPTURE(err);
    REQUIRE(err <= m2l_tolerance_double(p));
  }
}
