// The fused batched FWHT against the double host reference.
#include <wham/fwht.cuh>
#include <wham/reference/fwht.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <complex>
#include <random>
#include <vector>

namespace {

template <class T>
struct host_of {
  using type = T;
};
template <class T>
struct host_of<cuda::std::complex<T>> {
  using type = std::complex<T>;
};

template <class T>
T random_value(std::mt19937_64& gen) {
  std::normal_distribution<double> normal;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return T(normal(gen));
  } else {
    using R = typename T::value_type;
    return T(R(normal(gen)), R(normal(gen)));
  }
}

template <class T>
double tolerance() {
  // Each output is a +-1 sum of 2^n inputs, formed in n rounding stages:
  // relative error grows like sqrt(n) * eps; 1e-5 / 1e-12 leave room to n = 30.
  using R = wham::fwht_scale_t<T>;
  return std::is_same_v<R, float> ? 1e-5 : 1e-12;
}

/// Requires every row of `got` (batch rows of 2^log_n) within tolerance of the double
/// host reference transform of `host`, times `scale`.
template <class T>
void require_matches_reference(const std::vector<T>& got, const std::vector<T>& host, int log_n,
                               std::int64_t batch, double scale) {
  const std::size_t n = std::size_t(1) << log_n;
  std::vector<typename host_of<T>::type> as_host(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      as_host[i] = host[i];
    } else {
      as_host[i] = {host[i].real(), host[i].imag()};
    }
  }
  using D = std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, double>, double,
                               std::complex<double>>;
  const auto ref = wham::reference::fwht_batched<D>(as_host.data(), log_n, batch, scale);
  for (std::int64_t b = 0; b < batch; ++b) {
    CAPTURE(b);
    REQUIRE(wham_test::relative_error(got.data() + b * n, ref.data() + b * n, n) <= tolerance<T>());
  }
}

/// `batch` random rows of 2^log_n through the fused path (orthonormal scale), in place
/// or into a poisoned buffer, against the reference.
template <class T>
void check_fused(int log_n, std::int64_t batch, bool in_place, std::uint64_t tag) {
  const std::size_t n = std::size_t(1) << log_n;
  auto gen = wham_test::rng(tag);
  std::vector<T> host(n * batch);
  for (auto& v : host) v = random_value<T>(gen);
  const double scale = 1.0 / std::sqrt(double(n));

  wham_test::device_buffer<T> d_in(host);
  wham_test::device_buffer<T> d_out(in_place ? 0 : host.size());
  T* out = in_place ? d_in.data() : d_out.data();
  if (!in_place) d_out.poison();

  wham::fwht(d_in.data(), out, log_n, batch, wham::fwht_scale_t<T>(scale), 0,
             wham::fwht_path::fused);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = in_place ? d_in.download() : d_out.download();
  require_matches_reference(got, host, log_n, batch, scale);
}

}  // namespace

TEMPLATE_TEST_CASE("fwht fused path matches the reference", "[fwht][gpu]", float, double,
                   cuda::std::complex<float>, cuda::std::complex<double>) {
  using T = TestType;
  const int max_log_n = wham::fwht_fused_max_log_n<T>();
  const int log_n = GENERATE(0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17);
  const std::int64_t batch = GENERATE(1, 3, 64, 257);
  const bool in_place = GENERATE(false, true);
  if (log_n > max_log_n) return;
  // Reduced (sanitizer) runs: short rows, and one row of each cluster size.
  const bool cluster_row = log_n > wham::detail::wht::fused_max_log_n<T>() && batch == 1;
  if (wham_test::reduced() && (log_n > 10 || batch > 64) && !cluster_row) return;
  CAPTURE(log_n, batch, in_place, wham_test::seed());

  check_fused<T>(log_n, batch, in_place, 1000 * log_n + batch);
}

// Short rows at large batch: the fused kernel packs up to 256 rows into a block and,
// where a row's threads would write runs narrower than 64 bytes, stores the block's
// rows through shared memory in linear order. The test above never fills such a block
// (257 rows leave one row a block on 132 SMs): 256 * SMs + 37 rows fill every block but
// the last, which holds a remainder.
TEMPLATE_TEST_CASE("fwht fused path packs short rows into full blocks", "[fwht][gpu]", float,
                   double, cuda::std::complex<float>, cuda::std::complex<double>) {
  using T = TestType;
  int sms = 0;
  WHAM_TEST_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int log_n = GENERATE(range(0, 10));
  const bool in_place = GENERATE(false, true);
  if (wham_test::reduced() && (log_n != 3 || in_place)) return;
  const std::int64_t batch = 256 * std::int64_t(sms) + 37;
  CAPTURE(log_n, batch, in_place, wham_test::seed());

  check_fused<T>(log_n, batch, in_place, 7000 + log_n);
}

// Float rows of 2^13 to 2^15, double and complex<float> rows of 2^13 and 2^14, and
// complex<double> rows of 2^13 take the streamed schedule (detail/wht/streamed.cuh) on
// compute capability 9.0+: persistent blocks (one an SM, three for float 2^13) walk rows
// a grid apart, so batches of one,
// two and three rows a block (each row flips the copy barriers' phase), in place and
// out of place, and an input that is not 16-byte aligned (no bulk copies: the fused
// kernel instead).
TEMPLATE_TEST_CASE("fwht streamed schedule: several rows a block, in place, unaligned input",
                   "[fwht][gpu][streamed]", float, double, cuda::std::complex<float>,
                   cuda::std::complex<double>) {
  using T = TestType;
  const int log_n = GENERATE(13, 14, 15);
  if (log_n < wham::detail::wht::streamed_log_n_min<T> ||
      log_n > wham::detail::wht::streamed_log_n_max<T>) {
    return;
  }
  // The grid launch_streamed runs when rows outnumber its blocks.
  const std::int64_t grid = wham::detail::wht::streamed_grid<T>(log_n, INT64_MAX);
  REQUIRE(grid >= wham::detail::current_device_limits().sm_count);
  const std::int64_t batch = GENERATE_COPY(std::int64_t(1), grid + 5, 2 * grid + 7);
  const bool in_place = GENERATE(false, true);
  // Elements: 1 leaves `in` aligned to the element only, off 16 bytes but for
  // complex<double>, whose every element is 16-byte aligned (and streams).
  const int offset = GENERATE(0, 1);
  if (wham_test::reduced() && (batch > grid + 5 || in_place)) return;
  CAPTURE(log_n, batch, in_place, offset, wham_test::seed());

  const std::size_t n = std::size_t(1) << log_n;
  wham_test::device_buffer<T> d_in(n * batch + offset);
  T* const in = d_in.data() + offset;
  // The schedule under test must be the one taken where the device and build allow it.
  REQUIRE(wham::detail::wht::streamed_serves<T>(log_n, in) ==
          (wham::detail::wht::clusters_supported() && offset * sizeof(T) % 16 == 0));

  auto gen = wham_test::rng(5000 + 100 * log_n + batch + offset);
  std::vector<T> host(n * batch);
  for (auto& v : host) v = random_value<T>(gen);
  WHAM_TEST_CUDA(cudaMemcpy(in, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  wham_test::device_buffer<T> d_out(in_place ? 0 : host.size());
  T* const out = in_place ? in : d_out.data();
  if (!in_place) d_out.poison();
  const double scale = 1.0 / std::sqrt(double(n));

  wham::fwht(in, out, log_n, batch, wham::fwht_scale_t<T>(scale), 0);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  std::vector<T> got(host.size());
  WHAM_TEST_CUDA(cudaMemcpy(got.data(), out, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
  require_matches_reference(got, host, log_n, batch, scale);
}

// Rows shorter than 16 bytes (float log_n <= 1, double and complex<float> log_n = 0)
// take the packed schedule (detail/wht/packed.cuh) between 16-byte aligned buffers:
// whole vectors over a grid-stride loop, then the rows left after the last whole
// vector (block 0). Batches: one row (only a tail where a vector holds several rows),
// five (a tail after whole vectors), and three blocks' steps and a row, which also run
// as a single block so that the loop takes three steps; complex<double> rows (16 bytes)
// never take it. An offset of one element leaves a buffer unaligned (the fused kernel
// instead), in place and out of place.
TEMPLATE_TEST_CASE("fwht packed schedule: several rows a vector, tails, unaligned buffers",
                   "[fwht][gpu][packed]", float, double, cuda::std::complex<float>,
                   cuda::std::complex<double>) {
  using T = TestType;
  const int log_n = GENERATE(0, 1);
  // Elements one block takes a step.
  const std::int64_t per_step = std::int64_t(wham::detail::wht::packed_threads) *
                                wham::detail::wht::packed_vectors_per_thread *
                                wham::detail::wht::packed_vector_items<T>;
  const std::int64_t batch =
      GENERATE_COPY(std::int64_t(1), std::int64_t(5), (3 * per_step >> log_n) + 1);
  const bool in_place = GENERATE(false, true);
  const int in_offset = GENERATE(0, 1);
  const int out_offset_generated = GENERATE(0, 1);
  if (in_place && out_offset_generated != 0) return;  // in place: out is in
  const int out_offset = in_place ? in_offset : out_offset_generated;
  CAPTURE(log_n, batch, in_place, in_offset, out_offset, wham_test::seed());

  const std::size_t n = std::size_t(1) << log_n;
  wham_test::device_buffer<T> d_in(n * batch + in_offset);
  T* const in = d_in.data() + in_offset;
  wham_test::device_buffer<T> d_out(in_place ? 0 : n * batch + out_offset);
  T* const out = in_place ? in : d_out.data() + out_offset;
  REQUIRE(wham::detail::wht::packed_serves<T>(log_n, in, out) ==
          (wham::detail::wht::packed_defined<T>(log_n) && in_offset == 0 && out_offset == 0));

  auto gen = wham_test::rng(7000 + 100 * log_n + batch + 10 * in_offset + out_offset);
  std::vector<T> host(n * batch);
  for (auto& v : host) v = random_value<T>(gen);
  WHAM_TEST_CUDA(cudaMemcpy(in, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  if (!in_place) d_out.poison();
  const double scale = log_n == 0 ? 0.75 : 1.0 / std::sqrt(2.0);

  wham::fwht(in, out, log_n, batch, wham::fwht_scale_t<T>(scale), 0);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  std::vector<T> got(host.size());
  WHAM_TEST_CUDA(cudaMemcpy(got.data(), out, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
  require_matches_reference(got, host, log_n, batch, scale);

  // The grid-stride loop: the launcher's grid covers these batches in one step, so the
  // kernel runs again as a single block, which walks three steps and the tail.
  if (wham::detail::wht::packed_serves<T>(log_n, in, out) && !in_place) {
    d_out.poison();
    constexpr int K = wham::detail::wht::packed_vector_items<T>;
    const std::int64_t elements = batch << log_n;
    const int tail_rows = static_cast<int>((elements % K) >> log_n);
    const auto one_block = [&](auto size) {
      constexpr int L = decltype(size)::value;
      if constexpr (wham::detail::wht::packed_defined<T>(L)) {
        wham::detail::wht::packed_kernel<T, L, wham::detail::wht::packed_vectors_per_thread>
            <<<1, wham::detail::wht::packed_threads>>>(in, out, elements / K, tail_rows,
                                                       wham::detail::wht::real_t<T>(scale));
      }
    };
    if (log_n == 0) one_block(std::integral_constant<int, 0>{});
    if (log_n == 1) one_block(std::integral_constant<int, 1>{});
    WHAM_TEST_CUDA(cudaGetLastError());
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    WHAM_TEST_CUDA(cudaMemcpy(got.data(), out, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
    require_matches_reference(got, host, log_n, batch, scale);
  }
}

TEST_CASE("fwht launches inside a captured CUDA graph", "[fwht][gpu][graph]") {
  const int log_n = 10;
  const std::int64_t batch = 33;
  const std::size_t n = std::size_t(1) << log_n;
  auto gen = wham_test::rng(7);
  std::vector<float> host(n * batch);
  for (auto& v : host) v = random_value<float>(gen);
  wham_test::device_buffer<float> d_in(host), d_out(host.size()), d_direct(host.size());

  cudaStream_t stream;
  WHAM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  wham::fwht(d_in.data(), d_direct.data(), log_n, batch, 1.0f, stream);
  d_out.poison();

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  WHAM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  wham::fwht(d_in.data(), d_out.data(), log_n, batch, 1.0f, stream);
  WHAM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  WHAM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 3; ++replay) WHAM_TEST_CUDA(cudaGraphLaunch(exec, stream));
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  REQUIRE(d_out.download() == d_direct.download());
  WHAM_TEST_CUDA(cudaGraphExecDestroy(exec));
  WHAM_TEST_CUDA(cudaGraphDestroy(graph));
  WHAM_TEST_CUDA(cudaStreamDestroy(stream));
}

TEST_CASE("fwht rejects bad arguments with wham::error", "[fwht][gpu][errors]") {
  wham_test::device_buffer<float> d(16);
  CHECK_THROWS_AS(wham::fwht<float>(nullptr, d.data(), 4, 1), wham::error);
  CHECK_THROWS_AS(wham::fwht<float>(d.data(), nullptr, 4, 1), wham::error);
  CHECK_THROWS_AS(wham::fwht<float>(d.data(), d.data(), -1, 1), wham::error);
  CHECK_THROWS_AS(wham::fwht<float>(d.data(), d.data(), 31, 1), wham::error);
  CHECK_THROWS_AS(wham::fwht<float>(d.data(), d.data(), 4, 0), wham::error);
  CHECK_THROWS_AS(wham::fwht<float>(d.data(), d.data(), 20, std::int64_t(1) << 60), wham::error);
  try {
    wham::fwht<float>(d.data(), d.data(), 4, -5);
    FAIL("no throw");
  } catch (const wham::error& e) {
    CHECK(std::string(e.what()).find("batch = -5") != std::string::npos);
  }
}
