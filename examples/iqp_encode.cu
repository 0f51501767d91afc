// Encodes a small batch of feature vectors into IQP states, prints a few
// amplitudes and each state's norm, and times a short sweep over n.
// Without a CUDA device it says so in its first line and prints the same
// encoding computed by the host reference (wham/reference/iqp.hpp), exit 0.
#include <wham/iqp.cuh>
#include <wham/reference/iqp.hpp>

#include "device_buffer.cuh"

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <vector>

namespace {

std::vector<double> make_params(int n, std::int64_t batch, wham::iqp_variant variant) {
  std::mt19937_64 gen(2026);
  std::uniform_real_distribution<double> u(-3.14159, 3.14159);
  std::vector<double> p(static_cast<std::size_t>(wham::iqp_num_params(n, variant) * batch));
  for (auto& v : p) v = u(gen);
  return p;
}

template <class C>
void print_states(const char* what, const C* states, int n, std::int64_t batch) {
  const std::size_t dim = std::size_t(1) << n;
  std::printf("%s: %lld states of %d qubits (first 4 amplitudes, norm)\n", what,
              static_cast<long long>(batch), n);
  for (std::int64_t b = 0; b < batch; ++b) {
    const C* s = states + b * dim;
    double norm = 0.0;
    for (std::size_t k = 0; k < dim; ++k) {
      norm += double(s[k].real()) * double(s[k].real()) + double(s[k].imag()) * double(s[k].imag());
    }
    std::printf("  sample %lld:", static_cast<long long>(b));
    for (std::size_t k = 0; k < 4 && k < dim; ++k) {
      std::printf(" (%+.6f%+.6fi)", double(s[k].real()), double(s[k].imag()));
    }
    std::printf("  norm %.12f\n", std::sqrt(norm));
  }
}

}  // namespace

int main() {
  const int n = 6;
  const std::int64_t batch = 3;
  const auto variant = wham::iqp_variant::iqp;
  const auto params = make_params(n, batch, variant);

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: showing the host reference of the same encoding instead\n");
    const auto ref = wham::reference::iqp_states(params.data(), n, batch, true);
    print_states("host reference", ref.data(), n, batch);
    return 0;
  }
  cudaDeviceProp prop{};
  WHAM_TEST_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (fused path up to n = %d for complex64, %d for complex128)\n",
              prop.name, wham::iqp_fused_max_qubits<cuda::std::complex<float>>(),
              wham::iqp_fused_max_qubits<cuda::std::complex<double>>());

  using C = cuda::std::complex<double>;
  wham_test::device_buffer<double> d_params(params);
  const wham::iqp_size<C> size(n, batch);
  wham_test::device_buffer<C> d_states(static_cast<std::size_t>(size.amplitudes));
  wham::iqp_encode(d_params.data(), d_states.data(), n, batch, variant);
  const auto got = d_states.download();
  print_states("device (complex128)", got.data(), n, batch);
  const auto ref = wham::reference::iqp_states(params.data(), n, batch, true);
  double err = 0.0, den = 0.0;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    err += std::norm(std::complex<double>(got[k].real(), got[k].imag()) - ref[k]);
    den += std::norm(ref[k]);
  }
  std::printf("relative error against the host reference: %.3e\n", std::sqrt(err / den));

  // A short timing sweep: batch 64, complex128 and complex64 states, automatic path.
  std::printf("\n  n   batch  complex128 ms  complex64 ms  (automatic path, median of 20)\n");
  cudaEvent_t start, stop;
  WHAM_TEST_CUDA(cudaEventCreate(&start));
  WHAM_TEST_CUDA(cudaEventCreate(&stop));
  for (int q : {8, 10, 12, 13, 14, 16}) {
    const std::int64_t b = 64;
    const auto p = make_params(q, b, variant);
    wham_test::device_buffer<double> dp(p);
    wham_test::device_buffer<C> d64(static_cast<std::size_t>(wham::iqp_size<C>(q, b).amplitudes));
    using F = cuda::std::complex<float>;
    wham_test::device_buffer<F> d32(static_cast<std::size_t>(wham::iqp_size<F>(q, b).amplitudes));
    auto time_ms = [&](auto* states) {
      std::vector<float> t;
      for (int rep = 0; rep < 23; ++rep) {
        WHAM_TEST_CUDA(cudaEventRecord(start));
        wham::iqp_encode(dp.data(), states, q, b, variant);
        WHAM_TEST_CUDA(cudaEventRecord(stop));
        WHAM_TEST_CUDA(cudaEventSynchronize(stop));
        float ms = 0.0f;
        WHAM_TEST_CUDA(cudaEventElapsedTime(&ms, start, stop));
        if (rep >= 3) t.push_back(ms);
      }
      std::sort(t.begin(), t.end());
      return t[t.size() / 2];
    };
    const float t64 = time_ms(d64.data());
    const float t32 = time_ms(d32.data());
    std::printf("  %2d  %5lld  %13.4f  %12.4f\n", q, static_cast<long long>(b), t64, t32);
  }
  WHAM_TEST_CUDA(cudaEventDestroy(start));
  WHAM_TEST_CUDA(cudaEventDestroy(stop));
  return 0;
}
