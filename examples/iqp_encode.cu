// Encodes a small batch of feature vectors into IQP states, prints a few
// amplitudes and each state's norm, and times a short sweep over n.
// Without a CUDA device it says so in its first line and prints the same
// encoding computed by the host reference (wham/reference/iqp.hpp), exit 0.
#include <wham/iqp.cuh>
#include <wham/reference/iqp.hpp>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>
#include <thrust/device_vector.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

// Exits with the failing call's name and CUDA's message: an example has no caller to recover.
void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", call, cudaGetErrorString(status));
    std::exit(1);
  }
}

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
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device: %s (fused path up to n = %d for complex64, %d for complex128)\n", prop.name,
              wham::iqp_fused_max_qubits<cuda::std::complex<float>>(),
              wham::iqp_fused_max_qubits<cuda::std::complex<double>>());

  using C = cuda::std::complex<double>;
  const thrust::device_vector<double> d_params(params);
  const wham::iqp_size<C> size(n, batch);
  thrust::device_vector<C> d_states(static_cast<std::size_t>(size.amplitudes));
  wham::iqp_encode(thrust::raw_pointer_cast(d_params.data()),
                   thrust::raw_pointer_cast(d_states.data()), n, batch, variant);
  std::vector<C> got(d_states.size());
  thrust::copy(d_states.begin(), d_states.end(), got.begin());
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
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int q : {8, 10, 12, 13, 14, 16}) {
    const std::int64_t b = 64;
    const auto p = make_params(q, b, variant);
    const thrust::device_vector<double> dp(p);
    thrust::device_vector<C> d64(static_cast<std::size_t>(wham::iqp_size<C>(q, b).amplitudes));
    using F = cuda::std::complex<float>;
    thrust::device_vector<F> d32(static_cast<std::size_t>(wham::iqp_size<F>(q, b).amplitudes));
    auto time_ms = [&](auto* states) {
      std::vector<float> t;
      for (int rep = 0; rep < 23; ++rep) {
        check(cudaEventRecord(start), "cudaEventRecord");
        wham::iqp_encode(thrust::raw_pointer_cast(dp.data()), states, q, b, variant);
        check(cudaEventRecord(stop), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float ms = 0.0f;
        check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        if (rep >= 3) t.push_back(ms);
      }
      std::sort(t.begin(), t.end());
      return t[t.size() / 2];
    };
    const float t64 = time_ms(thrust::raw_pointer_cast(d64.data()));
    const float t32 = time_ms(thrust::raw_pointer_cast(d32.data()));
    std::printf("  %2d  %5lld  %13.4f  %12.4f\n", q, static_cast<long long>(b), t64, t32);
  }
  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  return 0;
}
