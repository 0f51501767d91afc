// The 16-bit float rows (__half, __nv_bfloat16) through every path of wham::fwht against
// the double host reference of the same 16-bit inputs.
//
// Bound (docs/specs/fwht.md): the rows are widened to float, transformed in float and
// rounded to the 16-bit type once on each store to memory. Each rounding adds a relative
// error of at most u (2^-11 half, 2^-8 bfloat16) to every element, so at most u to a row's
// norm, and the later stages (orthogonal up to scale) carry it without growth; float's
// n stages add at most about sqrt(n) * 2^-24. A row rounded r times is within
// r * u + 1e-6 of the reference: r = 1 fused, at most 3 kronecker (stage 0 and at most two
// strided stages up to n = 30), n + 1 baseline (its fill and every stage).
#include <wham/fwht.cuh>
#include <wham/reference/fwht.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace {

template <class T>
double unit_roundoff() {
  return std::is_same_v<T, __half> ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
}

template <class T>
T to_16(double v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __double2half(v);
  } else {
    return __double2bfloat16(v);
  }
}

template <class T>
double to_double(T v) {
  return wham_test::widen(v).real();
}

template <class T>
std::vector<T> random_rows(std::size_t count, std::uint64_t tag) {
  auto gen = wham_test::rng(tag);
  std::normal_distribution<double> normal;
  std::vector<T> v(count);
  for (auto& x : v) x = to_16<T>(normal(gen));
  return v;
}

/// Times a row of 2^log_n is rounded to T on `path` (the bound above).
int roundings(wham::fwht_path path, int log_n) {
  switch (path) {
    case wham::fwht_path::baseline:
      return log_n + 1;
    case wham::fwht_path::kronecker:
      return 3;
    default:
      return log_n > 15 ? 3 : 1;  // automatic takes kronecker beyond one block's row
  }
}

template <class T>
double bound(wham::fwht_path path, int log_n) {
  return roundings(path, log_n) * unit_roundoff<T>() + 1e-6;
}

template <class T>
double worst_row_error(const std::vector<T>& got, const std::vector<double>& ref, std::size_t n,
                       std::int64_t batch) {
  double worst = 0.0;
  for (std::int64_t b = 0; b < batch; ++b) {
    worst = std::max(worst, wham_test::relative_error(got.data() + b * n, ref.data() + b * n, n));
  }
  return worst;
}

constexpr wham::fwht_path all_paths[] = {wham::fwht_path::automatic, wham::fwht_path::fused,
                                         wham::fwht_path::kronecker, wham::fwht_path::baseline};

}  // namespace

TEMPLATE_TEST_CASE("fwht of 16-bit floats: every path matches the reference, n = 0..24",
                   "[fwht][half][gpu]", __half, __nv_bfloat16) {
  using T = TestType;
  const int log_n = GENERATE(range(0, 25));
  const std::int64_t batch = GENERATE(1, 3, 64);
  const std::size_t n = std::size_t(1) << log_n;
  if (batch > 1 && n * batch > (std::size_t(1) << 23)) return;
  if (wham_test::reduced() && (log_n > 16 || (log_n > 12 && batch > 3))) return;
  CAPTURE(log_n, batch, wham_test::seed());

  const auto host = random_rows<T>(n * batch, 0x16F0 + 1000 * log_n + batch);
  const double scale = 1.0 / std::sqrt(double(n));
  std::vector<double> wide(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) wide[i] = to_double(host[i]);
  const auto ref = wham::reference::fwht_batched<double>(wide.data(), log_n, batch, scale);

  wham_test::device_buffer<T> d_in(host.size()), d_out(host.size());
  for (const wham::fwht_path path : all_paths) {
    for (const bool in_place : {false, true}) {
      CAPTURE(int(path), in_place);
      d_in.upload(host);
      if (!in_place) d_out.poison();
      T* out = in_place ? d_in.data() : d_out.data();
      if (!wham::fwht_path_serves<T>(path, log_n)) {
        CHECK_THROWS_AS(wham::fwht(d_in.data(), out, log_n, batch, float(scale), 0, path),
                        wham::error);
        continue;
      }
      wham::fwht(d_in.data(), out, log_n, batch, float(scale), 0, path);
      WHAM_TEST_CUDA(cudaDeviceSynchronize());
      const auto got = in_place ? d_in.download() : d_out.download();
      const double err = worst_row_error(got, ref, n, batch);
      CAPTURE(err, bound<T>(path, log_n));
      REQUIRE(err <= bound<T>(path, log_n));
    }
  }
}

// Rows of 2^25 to 2^30 (the kronecker path; 2 GiB a buffer at 30): a separable row
// f (x) g (x) h, whose transform is the product of the factors' transforms.
TEMPLATE_TEST_CASE("fwht of 16-bit floats: n = 25, 28 and 30 (kronecker path)",
                   "[fwht][half][gpu][large]", __half, __nv_bfloat16) {
  using T = TestType;
  const int log_n = GENERATE(25, 28, 30);
  if (wham_test::reduced()) return;
  std::size_t free_bytes = 0, total_bytes = 0;
  WHAM_TEST_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t n = std::size_t(1) << log_n;
  if (2 * n * sizeof(T) + (std::size_t(1) << 30) > free_bytes) {
    WARN("skipped: not enough device memory for n = " << log_n);
    return;
  }
  const bool in_place = log_n == 28;
  CAPTURE(log_n, in_place, wham_test::seed());
  const int cut1 = 7, cut2 = 17;  // f: bits [0, 7), g: [7, 17), h: [17, n)
  auto gen = wham_test::rng(0x16C + log_n);
  std::normal_distribution<double> normal;
  auto factor = [&](int bits) {
    std::vector<double> v(std::size_t(1) << bits);
    for (auto& x : v) x = normal(gen);
    return v;
  };
  auto f = factor(cut1), g = factor(cut2 - cut1), h = factor(log_n - cut2);
  const std::size_t f_mask = (std::size_t(1) << cut1) - 1;
  const std::size_t g_mask = (std::size_t(1) << (cut2 - cut1)) - 1;
  std::vector<T> host(n);
  for (std::size_t x = 0; x < n; ++x) {
    host[x] = to_16<T>(f[x & f_mask] * g[(x >> cut1) & g_mask] * h[x >> cut2]);
  }
  const double scale = 1.0 / std::sqrt(double(n));
  wham::reference::fwht_inplace(f.data(), cut1);
  wham::reference::fwht_inplace(g.data(), cut2 - cut1);
  wham::reference::fwht_inplace(h.data(), log_n - cut2);

  wham_test::device_buffer<T> d_in(host);
  wham_test::device_buffer<T> d_out(in_place ? 0 : n);
  if (!in_place) d_out.poison();
  T* out = in_place ? d_in.data() : d_out.data();
  wham::fwht(d_in.data(), out, log_n, 1, float(scale));
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  host = in_place ? d_in.download() : d_out.download();
  double num = 0.0, den = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    const double r = f[k & f_mask] * g[(k >> cut1) & g_mask] * h[k >> cut2] * scale;
    const double e = to_double(host[k]) - r;
    num += e * e;
    den += r * r;
  }
  const double err = std::isfinite(num) ? std::sqrt(num / den) : INFINITY;
  // The input's own rounding to T is one more u.
  CAPTURE(err);
  REQUIRE(err <= bound<T>(wham::fwht_path::kronecker, log_n) + unit_roundoff<T>());
}

// The orthonormal transform twice returns the input (to the bound, twice), with a
// CUDA graph of the two calls where one row fills a cluster.
TEMPLATE_TEST_CASE("fwht of 16-bit floats: the orthonormal transform is its own inverse",
                   "[fwht][half][gpu]", __half, __nv_bfloat16) {
  using T = TestType;
  const int log_n = GENERATE(3, 10, 15, 16, 17, 20);
  const std::int64_t batch = log_n > 15 ? 2 : 100;
  if (wham_test::reduced() && log_n > 15) return;
  CAPTURE(log_n, batch, wham_test::seed());
  const std::size_t n = std::size_t(1) << log_n;
  const auto host = random_rows<T>(n * batch, 0x16A + log_n);
  wham_test::device_buffer<T> d(host), tmp(host.size());
  tmp.poison();
  const float scale = float(1.0 / std::sqrt(double(n)));
  cudaStream_t stream;
  WHAM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  WHAM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  wham::fwht(d.data(), tmp.data(), log_n, batch, scale, stream);
  wham::fwht(tmp.data(), tmp.data(), log_n, batch, scale, stream);
  WHAM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  WHAM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  WHAM_TEST_CUDA(cudaGraphLaunch(exec, stream));
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  WHAM_TEST_CUDA(cudaGraphExecDestroy(exec));
  WHAM_TEST_CUDA(cudaGraphDestroy(graph));
  WHAM_TEST_CUDA(cudaStreamDestroy(stream));
  const auto got = tmp.download();
  std::vector<double> want(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) want[i] = to_double(host[i]);
  const double err = worst_row_error(got, want, n, batch);
  CAPTURE(err);
  REQUIRE(err <= 2 * bound<T>(wham::fwht_path::automatic, log_n));
}
