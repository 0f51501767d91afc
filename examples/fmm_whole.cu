// A whole FMM on the GPU (examples/uniform_fmm.cuh): N random charges in the unit cube, a
// uniform octree with about 4 (p + 1) particles a leaf, every phase a wham operator.
// Prints, for each N and order p: the relative 2-norm error of the potential and of its
// gradient at 4096 sampled points against the direct sum in double, the time of each
// phase (CUDA events, the second of two runs), and the direct sum's time in the same
// precision (measured over 2^16 targets and scaled to N: it is linear in the targets), and
// the number of M2L translations (to scale a per-translation CPU figure to the same work).
//   fmm_whole [float|double] [N ...] [-p p ...]     (default: double, N = 1e5, 1e6; p = 4, 8, 12)
#include "uniform_fmm.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

template <class T>
void run(const std::vector<std::int64_t>& sizes, const std::vector<int>& orders) {
  using namespace wham_example;
  std::printf("| type | N | depth | p | potential error | gradient error |");
  for (const char* name : uniform_fmm<T>::phase_names) std::printf(" %s ms |", name);
  std::printf(" FMM ms | direct ms | direct / FMM | M2L pairs |\n|---|---|---|---|---|---|");
  for (int i = 0; i < uniform_fmm<T>::phases + 4; ++i) std::printf("---|");
  std::printf("\n");
  for (const std::int64_t n : sizes) {
    // the direct sum over 2^16 targets (or all), scaled to n targets
    double direct_ms = 0;
    for (const int p : orders) {
      const int depth = depth_for(n, p);
      const particles parts = make_particles(n, depth, 2026);
      uniform_fmm<T> fmm(parts, depth, p);
      fmm.run(0);  // first run: attributes, caches
      WHAM_EXAMPLE_CUDA(cudaDeviceSynchronize());
      fmm.run(0);
      WHAM_EXAMPLE_CUDA(cudaDeviceSynchronize());
      const auto ms = fmm.phase_ms();
      float total = 0;
      for (float m : ms) total += m;
      const fmm_error err = sample_error(fmm, 4096, 7);
      if (direct_ms == 0) {
        const std::int64_t count = std::min<std::int64_t>(n, 65536);
        device_array<T> pot(count), grad(3 * count);
        cudaEvent_t a, b;
        WHAM_EXAMPLE_CUDA(cudaEventCreate(&a));
        WHAM_EXAMPLE_CUDA(cudaEventCreate(&b));
        direct_sum<T, T>(fmm.positions(), fmm.charges(), n, nullptr, count, pot.ptr, grad.ptr, 0);
        WHAM_EXAMPLE_CUDA(cudaEventRecord(a, 0));
        direct_sum<T, T>(fmm.positions(), fmm.charges(), n, nullptr, count, pot.ptr, grad.ptr, 0);
        WHAM_EXAMPLE_CUDA(cudaEventRecord(b, 0));
        WHAM_EXAMPLE_CUDA(cudaEventSynchronize(b));
        float d = 0;
        WHAM_EXAMPLE_CUDA(cudaEventElapsedTime(&d, a, b));
        direct_ms = double(d) * double(n) / double(count);
        cudaEventDestroy(a);
        cudaEventDestroy(b);
      }
      std::printf("| %s | %lld | %d | %d | %.2e | %.2e |", sizeof(T) == 8 ? "double" : "float",
                  static_cast<long long>(n), depth, p, err.potential, err.gradient);
      for (float m : ms) std::printf(" %.3f |", m);
      std::printf(" %.3f | %.1f | %.1f | %lld |\n", total, direct_ms, direct_ms / total,
                  static_cast<long long>(fmm.m2l_pairs()));
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("fmm_whole: no CUDA device here, nothing to run\n");
    return 0;
  }
  bool single = false;
  std::vector<std::int64_t> sizes;
  std::vector<int> orders;
  bool in_orders = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "float") == 0) {
      single = true;
    } else if (std::strcmp(argv[i], "double") == 0) {
      single = false;
    } else if (std::strcmp(argv[i], "-p") == 0) {
      in_orders = true;
    } else if (in_orders) {
      orders.push_back(std::atoi(argv[i]));
    } else {
      sizes.push_back(std::int64_t(std::atof(argv[i])));
    }
  }
  if (sizes.empty()) sizes = {100000, 1000000};
  if (orders.empty()) orders = {4, 8, 12};
  try {
    if (single) {
      run<float>(sizes, orders);
    } else {
      run<double>(sizes, orders);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fmm_whole: %s\n", e.what());
    return 1;
  }
  return 0;
}
