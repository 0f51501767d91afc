// The IQP encoder on the GPU against the double host reference: every path
// that serves n, both output types, both parameter types, both variants.
#include <wham/iqp.cuh>
#include <wham/reference/iqp.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <complex>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

template <class Out>
double tolerance() {
  return std::is_same_v<Out, cuda::std::complex<float>> ? 1e-5 : 1e-12;
}

const char* path_name(wham::iqp_path p) {
  switch (p) {
    case wham::iqp_path::automatic:
      return "automatic";
    case wham::iqp_path::fused:
      return "fused";
    case wham::iqp_path::kronecker:
      return "kronecker";
    case wham::iqp_path::baseline:
      return "baseline";
    case wham::iqp_path::product:
      return "product";
  }
  return "?";
}

/// Row kinds: 0 random in [-1, 1], 1 all zeros, 2 large (|a|, |J| up to 10).
template <class P>
std::vector<P> random_params(std::mt19937_64& gen, int n, std::int64_t batch,
                             wham::iqp_variant variant) {
  const std::int64_t per = wham::iqp_num_params(n, variant);
  std::vector<P> p(static_cast<std::size_t>(per * batch));
  std::uniform_real_distribution<double> small(-1.0, 1.0), large(-10.0, 10.0);
  for (std::int64_t b = 0; b < batch; ++b) {
    const int kind = batch == 1 ? 2 : static_cast<int>(b % 3);
    for (std::int64_t i = 0; i < per; ++i) {
      p[static_cast<std::size_t>(b * per + i)] =
          kind == 1 ? P(0) : P(kind == 0 ? small(gen) : large(gen));
    }
  }
  return p;
}

template <class P, class Out>
void check_against_reference(int n, std::int64_t batch, wham::iqp_variant variant,
                             wham::iqp_path path) {
  CAPTURE(n, batch, path_name(path), variant == wham::iqp_variant::iqp, wham_test::seed());
  auto gen = wham_test::rng(std::uint64_t(n) * 100000 + std::uint64_t(batch) * 10 +
                            std::uint64_t(path) * 3 + std::uint64_t(variant));
  const auto params = random_params<P>(gen, n, batch, variant);
  wham_test::device_buffer<P> d_params(params);
  const wham::iqp_size<Out> size(n, batch);
  wham_test::device_buffer<Out> d_states(static_cast<std::size_t>(size.amplitudes));
  d_states.poison();
  wham::iqp_encode(d_params.data(), d_states.data(), n, batch, variant, 0, path);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = d_states.download();

  const bool pairs = variant == wham::iqp_variant::iqp;
  const std::size_t dim = std::size_t(1) << n;
  const std::int64_t per = wham::iqp_num_params(n, variant);
  for (std::int64_t b = 0; b < batch; ++b) {
    CAPTURE(b);
    const auto ref = wham::reference::iqp_state(params.data() + b * per, n, pairs);
    REQUIRE(wham_test::relative_error(got.data() + b * dim, ref.data(), dim) <= tolerance<Out>());
  }
}

}  // namespace

TEMPLATE_TEST_CASE("iqp_encode matches the reference on every path", "[iqp][gpu]",
                   (std::tuple<float, cuda::std::complex<float>>),
                   (std::tuple<double, cuda::std::complex<float>>),
                   (std::tuple<float, cuda::std::complex<double>>),
                   (std::tuple<double, cuda::std::complex<double>>)) {
  using P = std::tuple_element_t<0, TestType>;
  using Out = std::tuple_element_t<1, TestType>;
  const wham::iqp_path path =
      GENERATE(wham::iqp_path::automatic, wham::iqp_path::fused, wham::iqp_path::kronecker,
               wham::iqp_path::baseline, wham::iqp_path::product);
  const int n = GENERATE(range(1, 21));
  const std::int64_t batch = GENERATE(1, 3, 64, 257);
  const wham::iqp_variant variant = GENERATE(wham::iqp_variant::iqp, wham::iqp_variant::iqp_z);
  if (!wham::iqp_path_serves<Out>(path, n, variant)) return;
  // iqp_z under automatic is the product path: its long rows are cheap.
  const bool product = path == wham::iqp_path::product ||
                       (path == wham::iqp_path::automatic && variant == wham::iqp_variant::iqp_z);
  const int max_n = (path == wham::iqp_path::baseline || product) ? 20 : 16;
  if (n > max_n) return;
  // Keep the host reference affordable: the large batches at the small n only,
  // but at n = 13 and 14 one large batch on the paths where batch size and type pick
  // the schedule (M the one-block maximum: rows of 2^M run as clusters of four parts
  // at small batch and of two at large; complex128 rows of 2^(M-1) as four parts at
  // small batch and one block a row at large; iqp.cuh, cluster_parts).
  const bool large_rows = batch == 257 && n <= 14 &&
                          (path == wham::iqp_path::fused || path == wham::iqp_path::automatic);
  // The Kronecker split at QDP's batch through the public call (batch 64 takes the
  // resident schedule where it pays, iqp.cuh resident_pays), for the iqp variant.
  const bool kronecker_rows = batch == 64 && n <= 16 && path == wham::iqp_path::kronecker &&
                              variant == wham::iqp_variant::iqp;
  if (n > 12 && batch > 3 && !large_rows && !kronecker_rows) return;
  if (n > 16 && batch > 1) return;
  // Reduced (sanitizer) runs: short rows, one sample of every cluster schedule, and
  // product rows of several tiles with their run factors (n > 8).
  const bool cluster_rows = batch == 1 && n >= 12 && n <= 16 && path == wham::iqp_path::fused;
  const bool product_rows = product && n == 12 && batch == 3;
  if (wham_test::reduced() && (n > 8 || batch > 64) && !cluster_rows && !product_rows) return;
  check_against_reference<P, Out>(n, batch, variant, path);
}

// At large batch the fused kernel packs several rows of 2^9..2^11 into a block,
// each at its own named barrier, with per-warp phase tables; a batch of
// 8 * SMs + 1 rows fills every block but the last, which holds one row. Rows
// beyond one block take clusters of four quarter-rows from 2 * SMs rows on (and
// eight eighth-rows at every batch): 2 * SMs + 1 rows.
TEMPLATE_TEST_CASE("iqp_encode: the fused path at large batch", "[iqp][gpu]",
                   (std::tuple<float, cuda::std::complex<float>>),
                   (std::tuple<double, cuda::std::complex<float>>),
                   (std::tuple<float, cuda::std::complex<double>>),
                   (std::tuple<double, cuda::std::complex<double>>)) {
  using P = std::tuple_element_t<0, TestType>;
  using Out = std::tuple_element_t<1, TestType>;
  int sms = 0;
  WHAM_TEST_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int n = GENERATE(9, 10, 11, 12, 14, 15, 16);
  const std::int64_t batch = (n <= 12 ? 8 : 2) * std::int64_t(sms) + 1;
  const wham::iqp_variant variant = GENERATE(wham::iqp_variant::iqp, wham::iqp_variant::iqp_z);
  if (!wham::iqp_path_serves<Out>(wham::iqp_path::fused, n, variant)) return;
  if (n > 14 && variant == wham::iqp_variant::iqp_z) return;  // the host reference's time
  if (wham_test::reduced() && (n != 10 || variant != wham::iqp_variant::iqp)) return;
  check_against_reference<P, Out>(n, batch, variant, wham::iqp_path::fused);
}

// Short rows at large batch: the fused kernel packs up to 256 rows into a block (one
// row a thread at n <= 4) and, where a row's threads would write runs narrower than 64
// bytes, stores the block's rows through shared memory in linear order. The tests
// above never fill such a block (257 rows leave one row a block on 132 SMs): a batch
// of 256 * SMs + 37 rows fills every block but the last, which holds a remainder.
TEMPLATE_TEST_CASE("iqp_encode: the fused path packs short rows into full blocks", "[iqp][gpu]",
                   (std::tuple<double, cuda::std::complex<float>>),
                   (std::tuple<float, cuda::std::complex<double>>)) {
  using P = std::tuple_element_t<0, TestType>;
  using Out = std::tuple_element_t<1, TestType>;
  int sms = 0;
  WHAM_TEST_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int n = GENERATE(range(1, 9));
  const wham::iqp_variant variant = GENERATE(wham::iqp_variant::iqp, wham::iqp_variant::iqp_z);
  const std::int64_t batch = 256 * std::int64_t(sms) + 37;
  if (wham_test::reduced() && (n != 4 || variant != wham::iqp_variant::iqp)) return;
  check_against_reference<P, Out>(n, batch, variant, wham::iqp_path::fused);
}

TEMPLATE_TEST_CASE("iqp_encode: the iqp_z product path at large n", "[iqp][gpu]",
                   cuda::std::complex<float>, cuda::std::complex<double>) {
  using Out = TestType;
  // Rows of many tiles, several samples (rows beyond 2^20 take seconds on the host reference).
  const int n = GENERATE(22, 24);
  const std::int64_t batch = n == 22 ? 3 : 1;
  if (wham_test::reduced()) return;
  check_against_reference<float, Out>(n, batch, wham::iqp_variant::iqp_z, wham::iqp_path::product);
}

// Row b of a batch against the same row encoded alone: the row offsets of every path,
// for both variants and output types. Fused rows that fit one block (whatever cluster
// split the batch picks: bitwise identical, iqp.cuh cluster_parts) and the baseline run
// the same arithmetic at any batch, so they must agree bit for bit; elsewhere the batch
// may pick another schedule (the resident Kronecker schedule), whose stage order may
// round differently, so there the rows agree to the tolerance.
TEMPLATE_TEST_CASE("iqp_encode: row b of a batch equals a single-sample encode of row b",
                   "[iqp][gpu]", (std::tuple<double, cuda::std::complex<double>>),
                   (std::tuple<float, cuda::std::complex<float>>)) {
  using P = std::tuple_element_t<0, TestType>;
  using Out = std::tuple_element_t<1, TestType>;
  const int n = GENERATE(3, 10, 13, 16);
  const wham::iqp_path path = GENERATE(wham::iqp_path::automatic, wham::iqp_path::fused,
                                       wham::iqp_path::kronecker, wham::iqp_path::baseline);
  const wham::iqp_variant variant = GENERATE(wham::iqp_variant::iqp, wham::iqp_variant::iqp_z);
  if (!wham::iqp_path_serves<Out>(path, n, variant)) return;
  if (wham_test::reduced() && n > 10) return;
  const bool bitwise =
      path == wham::iqp_path::baseline ||
      (path == wham::iqp_path::fused && n <= wham::detail::iqp::block_max_qubits<Out>());
  const std::int64_t batch = 37;
  CAPTURE(n, path_name(path), variant == wham::iqp_variant::iqp, bitwise, wham_test::seed());
  auto gen = wham_test::rng(4000 + n);
  const auto params = random_params<P>(gen, n, batch, variant);
  const std::int64_t per = wham::iqp_num_params(n, variant);
  const std::size_t dim = std::size_t(1) << n;
  wham_test::device_buffer<P> d_params(params);
  wham_test::device_buffer<Out> d_all(dim * batch), d_one(dim);
  d_all.poison();
  wham::iqp_encode(d_params.data(), d_all.data(), n, batch, variant, 0, path);
  const auto all = d_all.download();
  for (std::int64_t b : {std::int64_t(0), std::int64_t(17), batch - 1}) {
    CAPTURE(b);
    d_one.poison();
    wham::iqp_encode(d_params.data() + b * per, d_one.data(), n, 1, variant, 0, path);
    const auto one = d_one.download();
    if (bitwise) {
      for (std::size_t k = 0; k < dim; ++k) {
        CAPTURE(k);
        REQUIRE(all[b * dim + k] == one[k]);
      }
    } else {
      REQUIRE(wham_test::relative_error(all.data() + b * dim, one.data(), dim) <= tolerance<Out>());
    }
  }
}

// Every launch shape inside a captured CUDA graph: one fused block, clusters, the
// baseline's launch per stage, the Kronecker stages, the product path; replayed twice.
TEST_CASE("iqp_encode launches inside a captured CUDA graph", "[iqp][gpu][graph]") {
  using Out = cuda::std::complex<float>;
  const auto shape =
      GENERATE(std::make_tuple(9, wham::iqp_path::automatic, wham::iqp_variant::iqp),
               std::make_tuple(14, wham::iqp_path::automatic, wham::iqp_variant::iqp),
               std::make_tuple(15, wham::iqp_path::automatic, wham::iqp_variant::iqp),
               std::make_tuple(12, wham::iqp_path::baseline, wham::iqp_variant::iqp),
               std::make_tuple(16, wham::iqp_path::kronecker, wham::iqp_variant::iqp),
               std::make_tuple(10, wham::iqp_path::product, wham::iqp_variant::iqp_z));
  const int n = std::get<0>(shape);
  const wham::iqp_path path = std::get<1>(shape);
  const wham::iqp_variant variant = std::get<2>(shape);
  if (!wham::iqp_path_serves<Out>(path, n, variant)) return;
  CAPTURE(n, path_name(path), wham_test::seed());
  const std::int64_t batch = 5;
  auto gen = wham_test::rng(5000 + n);
  const auto params = random_params<float>(gen, n, batch, variant);
  const std::size_t dim = std::size_t(1) << n;
  wham_test::device_buffer<float> d_params(params);
  wham_test::device_buffer<Out> d_direct(dim * batch), d_graph(dim * batch);
  d_direct.poison();
  d_graph.poison();
  WHAM_TEST_CUDA(cudaDeviceSynchronize());  // the poison (legacy stream) before the other stream

  cudaStream_t stream;
  WHAM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  wham::iqp_encode(d_params.data(), d_direct.data(), n, batch, variant, stream, path);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  WHAM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  wham::iqp_encode(d_params.data(), d_graph.data(), n, batch, variant, stream, path);
  WHAM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  WHAM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) WHAM_TEST_CUDA(cudaGraphLaunch(exec, stream));
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  const auto a = d_direct.download(), b = d_graph.download();
  // The direct call is itself right (so that two equal wrong answers cannot pass).
  const auto ref = wham::reference::iqp_state(params.data(), n, variant == wham::iqp_variant::iqp);
  REQUIRE(wham_test::relative_error(a.data(), ref.data(), dim) <= tolerance<Out>());
  for (std::size_t k = 0; k < a.size(); ++k) {
    CAPTURE(k);
    REQUIRE(a[k] == b[k]);
  }
  WHAM_TEST_CUDA(cudaGraphExecDestroy(exec));
  WHAM_TEST_CUDA(cudaGraphDestroy(graph));
  WHAM_TEST_CUDA(cudaStreamDestroy(stream));
}

TEST_CASE("iqp_encode rejects bad arguments with wham::error", "[iqp][gpu][errors]") {
  using Out = cuda::std::complex<double>;
  wham_test::device_buffer<double> p(64);
  wham_test::device_buffer<Out> s(64);
  const auto v = wham::iqp_variant::iqp;
  CHECK_THROWS_AS(wham::iqp_encode(p.data(), s.data(), 0, 1, v), wham::error);
  CHECK_THROWS_AS(wham::iqp_encode(p.data(), s.data(), 31, 1, v), wham::error);
  CHECK_NOTHROW(wham::iqp_encode(p.data(), s.data(), 4, 0, v));  // batch = 0: a no-op
  CHECK_THROWS_AS(wham::iqp_encode(p.data(), s.data(), 4, -3, v), wham::error);
  CHECK_THROWS_AS(wham::iqp_encode(static_cast<const double*>(nullptr), s.data(), 4, 1, v),
                  wham::error);
  CHECK_THROWS_AS(wham::iqp_encode(p.data(), static_cast<Out*>(nullptr), 4, 1, v), wham::error);
  CHECK_THROWS_AS(wham::iqp_encode(p.data(), s.data(), 30, std::int64_t(1) << 40, v), wham::error);
  CHECK_THROWS_AS(wham::iqp_encode(p.data(), s.data(), 4, 1, static_cast<wham::iqp_variant>(7)),
                  wham::error);
  CHECK_THROWS_AS(wham::iqp_size<Out>(30, std::int64_t(1) << 40), wham::error);
  CHECK_THROWS_AS(wham::iqp_size<Out>(31, 1), wham::error);
  CHECK_THROWS_AS(wham::iqp_num_params(0, v), wham::error);
  CHECK(wham::iqp_size<Out>(10, 3).amplitudes == 3072);
  CHECK(wham::iqp_size<Out>(10, 3).bytes == 3072 * 16);
  CHECK(wham::iqp_num_params(4, v) == 10);
  CHECK(wham::iqp_num_params(4, wham::iqp_variant::iqp_z) == 4);
  // The fused path for an n that does not fit throws, naming the valid range.
  // (Buffers of that n's sizes: smaller ones would overlap on paper, and iqp_encode
  // checks that first.)
  const int too_big = wham::iqp_fused_max_qubits<Out>() + 1;
  wham_test::device_buffer<double> p_big(std::size_t(wham::iqp_num_params(too_big, v)));
  wham_test::device_buffer<Out> s_big(std::size_t(wham::iqp_size<Out>(too_big, 1).amplitudes));
  try {
    wham::iqp_encode(p_big.data(), s_big.data(), too_big, 1, v, 0, wham::iqp_path::fused);
    FAIL("no throw");
  } catch (const wham::error& e) {
    CAPTURE(e.what());
    CHECK(std::string(e.what()).find("num_qubits = " + std::to_string(too_big)) !=
          std::string::npos);
  }
  // The product path serves iqp_z only.
  CHECK_FALSE(wham::iqp_path_serves<Out>(wham::iqp_path::product, 4, v));
  CHECK(wham::iqp_path_serves<Out>(wham::iqp_path::product, 30, wham::iqp_variant::iqp_z));
  CHECK_THROWS_AS(wham::iqp_encode(p.data(), s.data(), 4, 1, v, 0, wham::iqp_path::product),
                  wham::error);
  if (!wham::iqp_path_serves<Out>(wham::iqp_path::kronecker, 4)) {
    CHECK_THROWS_AS(wham::iqp_encode(p.data(), s.data(), 4, 1, v, 0, wham::iqp_path::kronecker),
                    wham::error);
  }
  try {
    wham::iqp_encode(p.data(), s.data(), 4, -1, v);
    FAIL("no throw");
  } catch (const wham::error& e) {
    CHECK(std::string(e.what()).find("batch = -1") != std::string::npos);
  }
  // Rows beyond one block go as clusters of four quarter-rows at large batch (n = 14 in
  // complex128 on sm_90): 2^30 rows would take 2^32 blocks. The check precedes every
  // launch, so the pointers are made-up addresses far apart (never dereferenced), given to
  // the dispatch layer: the public function would first ask the driver whether they are
  // device memory.
  if (wham::iqp_fused_max_qubits<Out>() >= 14 && wham::detail::iqp::block_max_qubits<Out>() == 13) {
    const auto* far_params = reinterpret_cast<const double*>(std::uintptr_t(1) << 60);
    auto* far_states = reinterpret_cast<Out*>(std::uintptr_t(16));
    try {
      wham::detail::iqp::dispatch(far_params, wham::iqp_num_params(14, v), far_states, 14,
                                  std::int64_t(1) << 30, v, 0, wham::iqp_path::fused);
      FAIL("no throw");
    } catch (const wham::error& e) {
      CHECK(std::string(e.what()) ==
            "wham::fused path (cluster schedule): rows = 1073741824 is invalid (valid: at most "
            "536870911: 2^31 - 1 blocks in clusters of 4)");
    }
  }
}

TEST_CASE("device_scope pins the device limits for one call and restores them", "[iqp][gpu]") {
  using wham::detail::scoped_device_limits;
  REQUIRE(scoped_device_limits() == nullptr);
  const wham::detail::device_limits& looked_up = wham::detail::current_device_limits();
  {
    const wham::detail::device_scope outer;
    REQUIRE(scoped_device_limits() == &looked_up);
    {
      const wham::detail::device_scope inner;  // nests: the same limits
      CHECK(scoped_device_limits() == &looked_up);
      CHECK(&wham::detail::current_device_limits() == &looked_up);
    }
    CHECK(scoped_device_limits() == &looked_up);
  }
  CHECK(scoped_device_limits() == nullptr);
  // A call that throws inside its dispatch (after the scope opened) leaves no scope behind,
  // and so does one that encodes.
  using Out = cuda::std::complex<double>;
  wham_test::device_buffer<double> p(64);
  wham_test::device_buffer<Out> s(64);
  WHAM_TEST_CUDA(cudaMemset(p.data(), 0, 64 * sizeof(double)));
  const int too_big = wham::iqp_fused_max_qubits<Out>() + 1;
  CHECK_THROWS_AS(wham::iqp_encode(p.data(), s.data(), too_big, 1, wham::iqp_variant::iqp, 0,
                                   wham::iqp_path::fused),
                  wham::error);
  CHECK(scoped_device_limits() == nullptr);
  wham::iqp_encode(p.data(), s.data(), 4, 1, wham::iqp_variant::iqp);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  CHECK(scoped_device_limits() == nullptr);
}

TEST_CASE("iqp_encode: all-zero parameters give |0> exactly", "[iqp][gpu]") {
  using Out = cuda::std::complex<float>;
  const int n = GENERATE(1, 5, 12, 14, 16);
  const wham::iqp_path path =
      GENERATE(wham::iqp_path::automatic, wham::iqp_path::baseline, wham::iqp_path::product);
  const auto variant =
      path == wham::iqp_path::product ? wham::iqp_variant::iqp_z : wham::iqp_variant::iqp;
  CAPTURE(n, path_name(path));
  const std::int64_t batch = 2;
  const std::size_t dim = std::size_t(1) << n;
  std::vector<double> zeros(static_cast<std::size_t>(wham::iqp_num_params(n, variant) * batch),
                            0.0);
  wham_test::device_buffer<double> d_params(zeros);
  wham_test::device_buffer<Out> d_states(dim * batch);
  d_states.poison();
  wham::iqp_encode(d_params.data(), d_states.data(), n, batch, variant, 0, path);
  const auto got = d_states.download();
  for (std::int64_t b = 0; b < batch; ++b) {
    REQUIRE(got[b * dim] == Out(1.0f, 0.0f));
    for (std::size_t k = 1; k < dim; ++k) REQUIRE(got[b * dim + k] == Out(0.0f, 0.0f));
  }
}
