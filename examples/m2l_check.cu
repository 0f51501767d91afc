// Two well-separated clusters of random charges: P2M on the host, M2L on the GPU
// (wham::m2l), L2P on the host, against the direct sum of q / r; then the time of
// one wham::m2l call over 100,000 pairs at each order.
#include <wham/m2l.cuh>
#include <wham/reference/m2l.hpp>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>
#include <thrust/device_vector.h>

#include <algorithm>
#include <cmath>
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

}  // namespace

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no CUDA device: nothing to run\n");
    return 0;
  }
  namespace ref = wham::reference;
  std::mt19937_64 gen(2024);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  // sources in a ball of radius 0.5 about cA, targets in a ball of radius 0.5 about cB
  const double a = 0.5;
  const double cA[3] = {0.0, 0.0, 0.0}, cB[3] = {1.2, -1.6, 2.0};  // |cB - cA| ~ 2.83
  auto in_ball = [&](const double* c, double* x) {
    do {
      for (int i = 0; i < 3; ++i) x[i] = a * u(gen);
    } while (x[0] * x[0] + x[1] * x[1] + x[2] * x[2] > a * a);
    for (int i = 0; i < 3; ++i) x[i] += c[i];
  };
  const int ns = 200, nt = 50;
  std::vector<double> src(3 * ns), q(ns), tgt(3 * nt), exact(nt, 0.0);
  for (int i = 0; i < ns; ++i) {
    in_ball(cA, &src[3 * i]);
    q[i] = u(gen);
  }
  for (int j = 0; j < nt; ++j) {
    in_ball(cB, &tgt[3 * j]);
    for (int i = 0; i < ns; ++i) {
      const double dx = tgt[3 * j] - src[3 * i], dy = tgt[3 * j + 1] - src[3 * i + 1],
                   dz = tgt[3 * j + 2] - src[3 * i + 2];
      exact[j] += q[i] / std::sqrt(dx * dx + dy * dy + dz * dz);
    }
  }
  const double delta[3] = {cB[0] - cA[0], cB[1] - cA[1], cB[2] - cA[2]};
  const std::int64_t batch = 100000;
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::printf("  p   max rel. error (L2P vs direct sum)   m2l time, %lld pairs (double)\n",
              (long long)batch);
  for (int p = 2; p <= 12; ++p) {
    const int C = wham::m2l_num_coeffs(p);
    const auto M = ref::p2m(p, cA, src.data(), q.data(), ns);
    // the same pair `batch` times, to time a realistic call
    std::vector<cuda::std::complex<double>> hM(std::size_t(C) * batch);
    std::vector<double> hd(3 * batch);
    for (std::int64_t i = 0; i < batch; ++i) {
      for (int c = 0; c < C; ++c) hM[i * C + c] = {M[c].real(), M[c].imag()};
      for (int k = 0; k < 3; ++k) hd[3 * i + k] = delta[k];
    }
    const thrust::device_vector<cuda::std::complex<double>> dM(hM);
    thrust::device_vector<cuda::std::complex<double>> dL(hM.size());
    const thrust::device_vector<double> dd(hd);
    const auto* M_ptr = thrust::raw_pointer_cast(dM.data());
    const double* d_ptr = thrust::raw_pointer_cast(dd.data());
    auto* L_ptr = thrust::raw_pointer_cast(dL.data());
    wham::m2l(M_ptr, d_ptr, L_ptr, p, batch, stream);  // warm-up
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    wham::m2l(M_ptr, d_ptr, L_ptr, p, batch, stream);
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    std::vector<cuda::std::complex<double>> L(C);
    check(cudaMemcpy(L.data(), L_ptr, C * sizeof(L[0]), cudaMemcpyDeviceToHost), "cudaMemcpy");
    std::vector<ref::m2l_complex> Lh(C);
    for (int c = 0; c < C; ++c) Lh[c] = {L[c].real(), L[c].imag()};
    double worst = 0.0, scale = 0.0;
    for (int j = 0; j < nt; ++j) {
      worst = std::max(worst, std::abs(ref::l2p(p, Lh.data(), cB, &tgt[3 * j]) - exact[j]));
      scale = std::max(scale, std::abs(exact[j]));
    }
    std::printf(" %2d   %.3e                            %8.1f us\n", p, worst / scale,
                double(ms) * 1e3);
  }
  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return 0;
}
