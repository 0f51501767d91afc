// fwht of one float row of 2^29 and 2^30 elements (2 and 4 GiB), the longest rows it takes:
// sampled outputs against the host sum, and the whole row by the transform's involution
// (twice, the second time scaled by 2^-log_n, gives the input back). Skipped under
// WHAM_TEST_REDUCED=1 (the sanitizer runs).
#include <wham/fwht.cuh>
#include <wham/reference/fwht.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

/// Uniform in [-1, 1) from the index: the host fills gigabytes on every core.
float value_at(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return float(double(z >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

unsigned host_threads() { return std::max(1u, std::min(32u, std::thread::hardware_concurrency())); }

template <class F>
void on_every_core(F&& f) {
  const unsigned threads = host_threads();
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back([&f, t, threads] { f(t, threads); });
  for (auto& th : pool) th.join();
}

/// out[k] = sum_x in[x] (-1)^popcount(x & k) for each k of `ks`, in double, in one pass over
/// `in`: blocks of 2^12 elements, whose signs are a table per k times one parity a block.
std::vector<double> host_sums(const std::vector<float>& in, int log_n,
                              const std::vector<std::uint64_t>& ks) {
  constexpr int lo = 12;
  constexpr std::size_t B = std::size_t(1) << lo;
  const std::size_t K = ks.size();
  std::vector<double> sign(K * B);
  for (std::size_t s = 0; s < K; ++s) {
    for (std::size_t l = 0; l < B; ++l) {
      sign[s * B + l] = wham::reference::parity(l & ks[s]) ? -1.0 : 1.0;
    }
  }
  const std::uint64_t blocks = std::uint64_t(1) << (log_n - lo);
  std::vector<std::vector<double>> partial(host_threads(), std::vector<double>(K, 0.0));
  on_every_core([&](unsigned t, unsigned threads) {
    for (std::uint64_t h = t; h < blocks; h += threads) {
      const float* x = in.data() + (h << lo);
      for (std::size_t s = 0; s < K; ++s) {
        const double* sg = sign.data() + s * B;
        double dot = 0.0;
        for (std::size_t l = 0; l < B; ++l) dot += sg[l] * double(x[l]);
        partial[t][s] += wham::reference::parity((h << lo) & ks[s]) ? -dot : dot;
      }
    }
  });
  std::vector<double> sums(K, 0.0);
  for (const auto& p : partial) {
    for (std::size_t s = 0; s < K; ++s) sums[s] += p[s];
  }
  return sums;
}

/// sum (a - b)^2 and sum b^2 over n floats, on the device (no 4 GiB download).
__global__ void difference_kernel(const float* a, const float* b, std::int64_t n, double* out) {
  double d2 = 0.0, b2 = 0.0;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const double d = double(a[i]) - double(b[i]);
    d2 += d * d;
    b2 += double(b[i]) * double(b[i]);
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    d2 += __shfl_down_sync(0xffffffffu, d2, offset);
    b2 += __shfl_down_sync(0xffffffffu, b2, offset);
  }
  if ((threadIdx.x & 31u) == 0) {
    atomicAdd(out, d2);
    atomicAdd(out + 1, b2);
  }
}

double relative_difference(const float* a, const float* b, std::int64_t n) {
  wham_test::device_buffer<double> sums(2);
  WHAM_TEST_CUDA(cudaMemset(sums.data(), 0, 2 * sizeof(double)));
  difference_kernel<<<1024, 256>>>(a, b, n, sums.data());
  WHAM_TEST_CUDA(cudaGetLastError());
  const auto s = sums.download();
  return std::sqrt(s[0] / s[1]);
}

}  // namespace

TEST_CASE("fwht at log_n = 29 and 30, one row of float", "[fwht][gpu][large]") {
  if (wham_test::reduced()) {
    WARN("WHAM_TEST_REDUCED: log_n = 29, 30 skipped");
    return;
  }
  for (const int log_n : {29, 30}) {
    CAPTURE(log_n, wham_test::seed());
    const std::size_t n = std::size_t(1) << log_n;
    std::size_t free = 0, total = 0;
    REQUIRE(cudaMemGetInfo(&free, &total) == cudaSuccess);
    if (2 * n * sizeof(float) + (std::size_t(1) << 30) > free) {
      WARN("skipped: two rows of " << n << " floats do not fit in " << free << " free bytes");
      continue;
    }
    const std::uint64_t seed = wham_test::seed() + std::uint64_t(log_n);
    std::vector<float> in(n);
    on_every_core([&](unsigned t, unsigned threads) {
      for (std::size_t i = t; i < n; i += threads) in[i] = value_at(seed, i);
    });
    double norm2 = 0.0;
    for (const float v : in) norm2 += double(v) * double(v);

    wham_test::device_buffer<float> d_in(in);
    wham_test::device_buffer<float> d_out(n);
    d_out.poison();
    wham::fwht(d_in.data(), d_out.data(), log_n, 1);  // automatic: the Kronecker split
    WHAM_TEST_CUDA(cudaDeviceSynchronize());

    // Sampled outputs against the host sums: each within 1e-5 of the row's rms output
    // (sqrt(norm2): the transform multiplies the norm by 2^(log_n / 2)).
    const std::uint64_t last = n - 1;
    std::vector<std::uint64_t> ks = {
        0, 1, last, last >> 1, std::uint64_t(1) << (log_n - 1), 0x5555555555555555ull & last};
    auto gen = wham_test::rng(6100 + std::uint64_t(log_n));
    while (ks.size() < 32) ks.push_back(gen() & last);
    const auto sums = host_sums(in, log_n, ks);
    for (std::size_t s = 0; s < ks.size(); ++s) {
      CAPTURE(ks[s]);
      float got = 0.0f;
      WHAM_TEST_CUDA(cudaMemcpy(&got, d_out.data() + ks[s], sizeof(float), cudaMemcpyDeviceToHost));
      CHECK(std::fabs(double(got) - sums[s]) <= 1e-5 * std::sqrt(norm2));
    }

    // The whole row: a second transform, scaled by 2^-log_n, in place, returns the input.
    wham::fwht(d_out.data(), d_out.data(), log_n, 1, std::ldexp(1.0f, -log_n));
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    CHECK(relative_difference(d_out.data(), d_in.data(), std::int64_t(n)) <= 1e-5);
  }
}
