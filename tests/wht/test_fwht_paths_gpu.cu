// Every path of the public batched FWHT (automatic, fused, kronecker, baseline)
// x every element type x log_n = 0..24 x batch {1, 3, 64}, in and out of place,
// against the double host reference; spot checks at 25, 26 and 28; the orthonormal
// transform applied twice; the clustered and streamed strided stages and the middle
// plan, forced; paths that cannot serve throw.
//
// Tolerance: each output is a +-1 sum of 2^n inputs formed through n butterfly
// stages (fused, kronecker or baseline alike). Every stage is sqrt(2) times an
// orthogonal map and adds a rounding error of at most eps (relative, per
// element); those errors are independent and propagate through the later
// (orthogonal up to scale) stages without growth, so the relative error of a row
// is about sqrt(n) * eps (n = 30: 5.5 eps). float: 3.3e-7 at n = 30 against a
// bound of 1e-5 (30x margin); double: 6e-16 against 1e-12.
#include <wham/fwht.cuh>
#include <wham/reference/fwht.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <algorithm>
#include <complex>
#include <random>
#include <vector>

namespace {

template <class T>
constexpr bool is_real_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

template <class T>
using double_of = std::conditional_t<is_real_v<T>, double, std::complex<double>>;

template <class T>
T random_value(std::mt19937_64& gen) {
  std::normal_distribution<double> normal;
  if constexpr (is_real_v<T>) {
    return T(normal(gen));
  } else {
    using R = typename T::value_type;
    return T(R(normal(gen)), R(normal(gen)));
  }
}

template <class T>
double_of<T> to_double(const T& v) {
  if constexpr (is_real_v<T>) {
    return double(v);
  } else {
    return {double(v.real()), double(v.imag())};
  }
}

template <class T>
double tolerance() {
  return std::is_same_v<wham::fwht_scale_t<T>, float> ? 1e-5 : 1e-12;
}

const char* path_name(wham::fwht_path p) {
  switch (p) {
    case wham::fwht_path::automatic:
      return "automatic";
    case wham::fwht_path::fused:
      return "fused";
    case wham::fwht_path::kronecker:
      return "kronecker";
    case wham::fwht_path::baseline:
      return "baseline";
  }
  return "?";
}

constexpr wham::fwht_path all_paths[] = {wham::fwht_path::automatic, wham::fwht_path::fused,
                                         wham::fwht_path::kronecker, wham::fwht_path::baseline};

/// Worst per-row relative error of got against ref.
template <class T, class D>
double worst_row_error(const std::vector<T>& got, const std::vector<D>& ref, std::size_t n,
                       std::int64_t batch) {
  double worst = 0.0;
  for (std::int64_t b = 0; b < batch; ++b) {
    worst = std::max(worst, wham_test::relative_error(got.data() + b * n, ref.data() + b * n, n));
  }
  return worst;
}

}  // namespace

TEMPLATE_TEST_CASE("fwht: every path matches the reference, n = 0..24", "[fwht][paths][gpu]", float,
                   double, cuda::std::complex<float>, cuda::std::complex<double>) {
  using T = TestType;
  using R = wham::fwht_scale_t<T>;
  const int log_n = GENERATE(range(0, 25));
  const std::int64_t batch = GENERATE(1, 3, 64);
  const std::size_t n = std::size_t(1) << log_n;
  // Host reference time and device memory: at most 2^23 elements per case beyond batch 1.
  if (batch > 1 && n * batch > (std::size_t(1) << 23)) return;
  if (wham_test::reduced() && (log_n > 16 || (log_n > 12 && batch > 3))) return;
  CAPTURE(log_n, batch, wham_test::seed());

  auto gen = wham_test::rng(0xF0 + 1000 * log_n + batch);
  std::vector<T> host(n * batch);
  for (auto& v : host) v = random_value<T>(gen);
  const double scale = 1.0 / std::sqrt(double(n));
  const auto ref = wham::reference::fwht_batched<double_of<T>>(host.data(), log_n, batch, scale);

  wham_test::device_buffer<T> d_in(host.size()), d_out(host.size());
  for (const wham::fwht_path path : all_paths) {
    for (const bool in_place : {false, true}) {
      CAPTURE(path_name(path), in_place);
      d_in.upload(host);
      if (!in_place) d_out.poison();
      T* out = in_place ? d_in.data() : d_out.data();
      if (!wham::fwht_path_serves<T>(path, log_n)) {
        CHECK_THROWS_AS(wham::fwht(d_in.data(), out, log_n, batch, R(scale), 0, path), wham::error);
        continue;
      }
      wham::fwht(d_in.data(), out, log_n, batch, R(scale), 0, path);
      WHAM_TEST_CUDA(cudaDeviceSynchronize());
      const auto got = in_place ? d_in.download() : d_out.download();
      REQUIRE(worst_row_error(got, ref, n, batch) <= tolerance<T>());
    }
  }
}

TEMPLATE_TEST_CASE("fwht: the orthonormal transform applied twice gives the input back",
                   "[fwht][paths][gpu]", float, double, cuda::std::complex<float>,
                   cuda::std::complex<double>) {
  using T = TestType;
  using R = wham::fwht_scale_t<T>;
  const int log_n = GENERATE(1, 9, 12, 14, 15, 16, 19, 22);
  if (wham_test::reduced() && log_n > 14) return;
  const std::int64_t batch = log_n <= 16 ? 5 : 2;
  const std::size_t n = std::size_t(1) << log_n;
  CAPTURE(log_n, batch, wham_test::seed());
  auto gen = wham_test::rng(0xAB + log_n);
  std::vector<T> host(n * batch);
  for (auto& v : host) v = random_value<T>(gen);
  const R scale = R(1.0 / std::sqrt(double(n)));
  wham_test::device_buffer<T> d_in(host), d_mid(host.size()), d_back(host.size());
  for (const wham::fwht_path path : all_paths) {
    if (!wham::fwht_path_serves<T>(path, log_n)) continue;
    CAPTURE(path_name(path));
    d_mid.poison();
    d_back.poison();
    wham::fwht(d_in.data(), d_mid.data(), log_n, batch, scale, 0, path);
    wham::fwht(d_mid.data(), d_back.data(), log_n, batch, scale, 0, path);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    const auto back = d_back.download();
    REQUIRE(worst_row_error(back, host, n, batch) <= 2 * tolerance<T>());
  }
}

// At 25, 26 and 28 the dense host reference is too slow, so the input is a random
// Kronecker product f (x) g (x) h over bit groups that straddle the device's
// stage boundaries; its transform is the product of the three factors'
// transforms (O(2^n) to form). The device input is the product rounded to T
// (relative error eps per element, which the orthogonal transform keeps).
// Every element type; the baseline path (one launch a bit) at 26 as well.
TEMPLATE_TEST_CASE("fwht: spot checks at n = 25, 26 and 28 (kronecker path)", "[fwht][paths][gpu]",
                   float, double, cuda::std::complex<float>, cuda::std::complex<double>) {
  using T = TestType;
  using R = wham::fwht_scale_t<T>;
  using D = double_of<T>;
  const int log_n = GENERATE(25, 26, 28);
  const wham::fwht_path path = GENERATE(wham::fwht_path::automatic, wham::fwht_path::baseline);
  if (path == wham::fwht_path::baseline && log_n != 26) return;
  if (wham_test::reduced()) return;
  std::size_t free_bytes = 0, total_bytes = 0;
  WHAM_TEST_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t n = std::size_t(1) << log_n;
  if (2 * n * sizeof(T) + (std::size_t(1) << 30) > free_bytes) {
    WARN("skipped: not enough device memory for n = " << log_n);
    return;
  }
  const bool in_place = log_n == 26;
  CAPTURE(log_n, in_place, int(path), wham_test::seed());
  const int cut1 = 7, cut2 = 17;  // f: bits [0, 7), g: [7, 17), h: [17, n)
  auto gen = wham_test::rng(0x5C + log_n);
  auto factor = [&](int bits) {
    std::vector<D> v(std::size_t(1) << bits);
    for (auto& x : v) x = to_double(random_value<T>(gen));
    return v;
  };
  auto f = factor(cut1), g = factor(cut2 - cut1), h = factor(log_n - cut2);
  std::vector<T> host(n);
  for (std::size_t x = 0; x < n; ++x) {
    const D v =
        f[x & ((1u << cut1) - 1)] * g[(x >> cut1) & ((1u << (cut2 - cut1)) - 1)] * h[x >> cut2];
    if constexpr (is_real_v<T>) {
      host[x] = T(v);
    } else {
      host[x] = T(R(v.real()), R(v.imag()));
    }
  }
  const double scale = 1.0 / std::sqrt(double(n));
  wham::reference::fwht_inplace(f.data(), cut1);
  wham::reference::fwht_inplace(g.data(), cut2 - cut1);
  wham::reference::fwht_inplace(h.data(), log_n - cut2);

  wham_test::device_buffer<T> d_in(host);
  wham_test::device_buffer<T> d_out(in_place ? 0 : n);
  if (!in_place) d_out.poison();
  T* out = in_place ? d_in.data() : d_out.data();
  wham::fwht(d_in.data(), out, log_n, 1, R(scale), 0, path);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  host = in_place ? d_in.download() : d_out.download();
  double num = 0.0, den = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    const D r = f[k & ((1u << cut1) - 1)] * g[(k >> cut1) & ((1u << (cut2 - cut1)) - 1)] *
                h[k >> cut2] * scale;
    const std::complex<double> e = wham_test::widen(host[k]) - std::complex<double>(r);
    num += std::norm(e);
    den += std::norm(std::complex<double>(r));
  }
  const double err = std::isfinite(num) ? std::sqrt(num / den) : INFINITY;
  CAPTURE(err);
  REQUIRE(err <= tolerance<T>());
}

// Strided stages wider than one block's tile run as clusters of 2^k blocks
// (detail/wht/kronecker.cuh, strided_cluster_kernel); the automatic plans take them
// only where they save a pass (float n = 27, 28; 8-byte n = 26, 27), so each size is forced
// here: stage 0 of 10 bits, then one strided stage of part_bits + k bits, k = 1..4,
// in and out of place, with one block's stages capped at part_bits.
TEMPLATE_TEST_CASE("fwht: strided stages as clusters of 2, 4, 8 and 16 blocks",
                   "[fwht][paths][gpu]", float, double, cuda::std::complex<float>,
                   cuda::std::complex<double>) {
  using T = TestType;
  using R = wham::fwht_scale_t<T>;
  namespace wd = wham::detail::wht;
  const int log_k = GENERATE(1, 2, 3, 4);
  if (wham_test::reduced() && log_k > 2) return;
  if (!wd::clusters_supported()) {
    WARN("skipped: no thread block clusters on this device");
    return;
  }
  if (log_k == 4 && !wd::prepare_strided_cluster<T, wd::strided_cluster_part_bits, 4>()) {
    WARN("skipped: this device cannot hold clusters of 16 blocks");
    return;
  }
  const int log_n = 10 + wd::strided_cluster_part_bits + log_k;
  const std::int64_t batch = log_k == 1 ? 3 : 1;
  const std::size_t n = std::size_t(1) << log_n;
  CAPTURE(log_k, log_n, batch, wham_test::seed());
  wd::kronecker_config cfg;
  cfg.lo_bits = 10;
  cfg.max_strided_bits = wd::strided_cluster_part_bits;
  cfg.clusters = 1;
  cfg.cluster_log_k = log_k;
  const auto plan = wd::kronecker_plan<T>(log_n, cfg);
  REQUIRE(plan.num_stages == 2);
  REQUIRE(plan.stages[1].bits == log_n - 10);
  REQUIRE(wd::strided_stage_clustered(plan.stages[1].bits, wd::strided_stage_limits<T>(cfg)));

  auto gen = wham_test::rng(0xC1 + log_k);
  std::vector<T> host(n * batch);
  for (auto& v : host) v = random_value<T>(gen);
  const double scale = 1.0 / std::sqrt(double(n));
  const auto ref = wham::reference::fwht_batched<double_of<T>>(host.data(), log_n, batch, scale);
  wham_test::device_buffer<T> d_in(host.size()), d_out(host.size());
  for (const bool in_place : {false, true}) {
    CAPTURE(in_place);
    d_in.upload(host);
    if (!in_place) d_out.poison();
    T* out = in_place ? d_in.data() : d_out.data();
    wd::launch_kronecker_config<T>(log_n, batch, wd::loaded_input<T, T>{d_in.data()},
                                   wd::stored_output<T, T>{out}, R(scale), 0, cfg);
    WHAM_TEST_CUDA(cudaGetLastError());
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = in_place ? d_in.download() : d_out.download();
    REQUIRE(worst_row_error(got, ref, n, batch) <= tolerance<T>());
  }
}

// A 10-bit strided stage of float rows streams its tiles (detail/wht/strided_streamed.cuh)
// where the buffer is 16-byte aligned; the automatic plans give one only at n = 25, so
// it is forced here (stage 0 of log_n - 10 bits): one tile a block (n = 20, batch 1) and
// blocks that take several in turn (n = 21, batch 3: 192 tiles), in and out of place,
// and a buffer 4 bytes off alignment, which the one-block stage serves instead.
TEST_CASE("fwht: the streamed 10-bit strided stage of float rows", "[fwht][paths][gpu]") {
  namespace wd = wham::detail::wht;
  const int log_n = GENERATE(20, 21);
  const std::int64_t batch = log_n == 20 ? 1 : 3;
  const std::size_t n = std::size_t(1) << log_n;
  const std::size_t count = n * std::size_t(batch);
  wham_test::device_buffer<float> d_in(count + 1), d_out(count + 1);
  if (!wd::strided_streamed_serves<float>(10, d_out.data())) {
    WARN("skipped: the streamed strided stage needs sm_90 and its shared memory");
    return;
  }
  CAPTURE(log_n, batch, wham_test::seed());
  wd::kronecker_config cfg;
  cfg.lo_bits = log_n - 10;
  const auto plan = wd::kronecker_plan<float>(log_n, cfg);
  REQUIRE(plan.num_stages == 2);
  REQUIRE(plan.stages[1].bits == 10);

  auto gen = wham_test::rng(0x57 + log_n);
  std::vector<float> host(count);
  for (auto& v : host) v = random_value<float>(gen);
  const double scale = 1.0 / std::sqrt(double(n));
  const auto ref = wham::reference::fwht_batched<double>(host.data(), log_n, batch, scale);
  for (const int shift : {0, 1}) {
    for (const bool in_place : {false, true}) {
      CAPTURE(shift, in_place);
      float* in = d_in.data() + shift;
      float* out = in_place ? in : d_out.data() + shift;
      CHECK(wd::strided_streamed_serves<float>(10, out) == (shift == 0));
      d_in.poison();
      d_out.poison();
      WHAM_TEST_CUDA(cudaMemcpy(in, host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
      wd::launch_kronecker_config<float>(log_n, batch, wd::loaded_input<float, float>{in},
                                         wd::stored_output<float, float>{out}, float(scale), 0,
                                         cfg);
      WHAM_TEST_CUDA(cudaGetLastError());
      WHAM_TEST_CUDA(cudaDeviceSynchronize());
      std::vector<float> got(count);
      WHAM_TEST_CUDA(cudaMemcpy(got.data(), out, count * sizeof(float), cudaMemcpyDeviceToHost));
      REQUIRE(worst_row_error(got, ref, n, batch) <= tolerance<float>());
    }
  }
}

TEMPLATE_TEST_CASE("fwht: the middle plan: a gathered streamed pass then the middle bits",
                   "[fwht][paths][gpu]", float, double, cuda::std::complex<float>,
                   cuda::std::complex<double>) {
  using T = TestType;
  namespace wd = wham::detail::wht;
  constexpr int S = wd::streamed_log_n_max<T>;  // 15 float, 14 8-byte, 13 complex<double>
  // Middle bits 7-10: one-block stages of 128-byte tile rows; 11: one block, 64-byte
  // rows; 12, 13: clusters of 8 and 16 blocks. Rows up to 2^26 elements (the dense host
  // reference); float n = 28 (13 middle bits) is among the spot checks above.
  // Reduced (under compute-sanitizer): one row with 7 middle bits, out of place, aligned.
  const bool reduced = wham_test::reduced();
  const int mid = reduced ? 7 : GENERATE(7, 8, 9, 10, 11, 12, 13);
  const int log_n = S + mid;
  if (log_n > 26) return;
  const std::int64_t batch = mid == 7 && !reduced ? 3 : 1;
  const std::size_t n = std::size_t(1) << log_n;
  const std::size_t count = n * std::size_t(batch);
  wham_test::device_buffer<T> d_in(count + 1), d_out(count + 1);
  if (!wd::kronecker_middle_serves<T>(log_n, d_in.data(), d_out.data())) {
    WARN("skipped: the middle plan needs sm_90 and its shared memory");
    return;
  }
  CHECK_FALSE(wd::kronecker_middle_serves<T>(S + wd::streamed_gathered_mid_min - 1, d_in.data(),
                                             d_out.data()));
  CHECK_FALSE(wd::kronecker_middle_serves<T>(S + wd::streamed_gathered_mid_max + 1, d_in.data(),
                                             d_out.data()));
  // Beyond one block's tile the middle stage needs clusters; a config without them
  // leaves those rows to the default plan.
  wd::kronecker_config no_clusters;
  no_clusters.clusters = -1;
  CHECK(wd::kronecker_middle_serves<T>(S + 12, d_in.data(), d_out.data(), no_clusters) ==
        (wd::strided_max_bits() >= 12));
  CAPTURE(log_n, batch, wham_test::seed());
  auto gen = wham_test::rng(0x4D + log_n);
  std::vector<T> host(count);
  for (auto& v : host) v = random_value<T>(gen);
  const double scale = 1.0 / std::sqrt(double(n));
  const auto ref = wham::reference::fwht_batched<double_of<T>>(host.data(), log_n, batch, scale);
  wd::kronecker_config cfg;
  cfg.middle = true;
  for (const int shift : {0, 1}) {
    for (const bool in_place : {false, true}) {
      if (reduced && (shift != 0 || in_place)) continue;
      CAPTURE(shift, in_place);
      T* in = d_in.data() + shift;
      T* out = in_place ? in : d_out.data() + shift;
      // A buffer off 16-byte alignment takes the default plan (the bulk copies); a
      // complex<double> element is 16-byte aligned wherever it lies.
      CHECK(wd::kronecker_middle_serves<T>(log_n, in, out) == (shift * sizeof(T) % 16 == 0));
      d_in.poison();
      d_out.poison();
      WHAM_TEST_CUDA(cudaMemcpy(in, host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
      wd::launch_kronecker_config<T>(log_n, batch, wd::loaded_input<T, T>{in},
                                     wd::stored_output<T, T>{out}, wd::real_t<T>(scale), 0, cfg);
      WHAM_TEST_CUDA(cudaGetLastError());
      WHAM_TEST_CUDA(cudaDeviceSynchronize());
      std::vector<T> got(count);
      WHAM_TEST_CUDA(cudaMemcpy(got.data(), out, count * sizeof(T), cudaMemcpyDeviceToHost));
      REQUIRE(worst_row_error(got, ref, n, batch) <= tolerance<T>());
    }
  }
}

TEST_CASE("fwht: explicit paths that cannot serve n throw wham::error", "[fwht][paths][gpu]") {
  wham_test::device_buffer<cuda::std::complex<double>> d(std::size_t(1) << 14);
  using C = cuda::std::complex<double>;
  CHECK_THROWS_AS(wham::fwht<C>(d.data(), d.data(), 10, 1, 1.0, 0, wham::fwht_path::kronecker),
                  wham::error);
  const int max_fused = wham::fwht_fused_max_log_n<C>();
  if (max_fused < 14) {
    CHECK_THROWS_AS(
        wham::fwht<C>(d.data(), d.data(), max_fused + 1, 1, 1.0, 0, wham::fwht_path::fused),
        wham::error);
  }
  CHECK_THROWS_AS(wham::fwht<C>(d.data(), d.data(), 12, 1, 1.0, 0, static_cast<wham::fwht_path>(9)),
                  wham::error);
  try {
    wham::fwht<C>(d.data(), d.data(), 5, 1, 1.0, 0, wham::fwht_path::kronecker);
    FAIL("no throw");
  } catch (const wham::error& e) {
    CHECK(std::string(e.what()).find("log_n = 5") != std::string::npos);
    CHECK(std::string(e.what()).find("kronecker") != std::string::npos);
  }
}

TEST_CASE("fwht kronecker path inside a captured CUDA graph", "[fwht][paths][gpu][graph]") {
  using C = cuda::std::complex<float>;
  const int log_n = 17;
  const std::int64_t batch = 3;
  const std::size_t n = std::size_t(1) << log_n;
  auto gen = wham_test::rng(0x6A);
  std::vector<C> host(n * batch);
  for (auto& v : host) v = random_value<C>(gen);
  wham_test::device_buffer<C> d_in(host), d_out(host.size()), d_direct(host.size());
  cudaStream_t stream;
  WHAM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  wham::fwht(d_in.data(), d_direct.data(), log_n, batch, 0.5f, stream, wham::fwht_path::kronecker);
  d_out.poison();
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  WHAM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  wham::fwht(d_in.data(), d_out.data(), log_n, batch, 0.5f, stream, wham::fwht_path::kronecker);
  WHAM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  WHAM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  WHAM_TEST_CUDA(cudaGraphLaunch(exec, stream));
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  const auto a = d_out.download(), b = d_direct.download();
  REQUIRE(std::equal(a.begin(), a.end(), b.begin(), [](const C& x, const C& y) {
    return x.real() == y.real() && x.imag() == y.imag();
  }));
  WHAM_TEST_CUDA(cudaGraphExecDestroy(exec));
  WHAM_TEST_CUDA(cudaGraphDestroy(graph));
  WHAM_TEST_CUDA(cudaStreamDestroy(stream));
}
