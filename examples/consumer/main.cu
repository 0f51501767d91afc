// A user's program: transforms a few rows with wham and checks one value.
#include <wham/fwht.cuh>

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
  if (cudaMalloc(&d, host.size() * sizeof(float)) != cudaSuccess) return 1;
  cudaMemcpy(d, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
  try {
    wham::fwht(d, d, log_n, batch);
  } catch (const wham::error& e) {
    std::printf("%s\n", e.what());
    return 1;
  }
  cudaMemcpy(host.data(), d, host.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  // The WHT of a constant row is n at index 0 and 0 elsewhere.
  std::printf("out[0] = %g (expected %d)\n", host[0], n);
  return host[0] == float(n) ? 0 : 1;
}
