// A user's program: one call into each public header, built for the architectures
// the user names (the consumer test builds it for sm_80 and sm_90). Runs the FWHT
// and checks one value when a GPU is there.
#include <wham/fmm.cuh>
#include <wham/fwht.cuh>
#include <wham/iqp.cuh>
#include <wham/m2l.cuh>

#include <cstdio>
#include <vector>

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: built against wham, nothing to run\n");
    return 0;
  }
  const int log_n = 4, batch = 2, n = 1 << log_n;
  std::vector<float> host(batch * n, 1.0f);
  float* d = nullptr;
  cuda::std::complex<float>* states = nullptr;
  if (cudaMalloc(&d, host.size() * sizeof(float)) != cudaSuccess) return 1;
  if (cudaMalloc(&states, host.size() * sizeof(*states)) != cudaSuccess) return 1;
  cudaMemcpy(d, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
  try {
    wham::iqp_encode(d, states, log_n, batch, wham::iqp_variant::iqp_z);
    wham::fwht(d, d, log_n, batch);
    if (devices < 0) {  // never taken: instantiates the M2L entry points for the build
      wham::m2l<double>(nullptr, nullptr, nullptr, 4, 0);
      wham::m2l_accumulate<double>(nullptr, nullptr, nullptr, nullptr, nullptr, 4, 0, 0, 0);
    }
  } catch (const wham::error& e) {
    std::printf("%s\n", e.what());
    return 1;
  }
  cudaMemcpy(host.data(), d, host.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(states);
  cudaFree(d);
  // The WHT of a constant row is n at index 0 and 0 elsewhere.
  std::printf("out[0] = %g (expected %d)\n", host[0], n);
  return host[0] == float(n) ? 0 : 1;
}
