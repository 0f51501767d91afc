// Host cost of the entry points' checks and of an enqueue, real (wall) time per call, no
// GPU work timed: what the pointer checks (cudaPointerGetAttributes) and the kernels'
// attribute read-back (detail::ensure_dynamic_smem) add to a call, beside the cost of a
// whole small call. Counter us_per_call; the enqueue cases synchronise every 1000 calls,
// outside the timing, so that the launch queue never fills. Without a GPU it prints a line
// and exits 0.
#include <wham/detail/device.cuh>
#include <wham/error.hpp>
#include <wham/fwht.cuh>
#include <wham/iqp.cuh>

#include "common.cuh"

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>

namespace {

constexpr int sync_every = 1000;

void per_call(benchmark::State& state) {
  state.counters["us_per_call"] = benchmark::Counter(
      double(state.iterations()) * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

/// Runs `call` once an iteration, synchronising `stream` every sync_every calls untimed.
template <class Call>
void enqueue_loop(benchmark::State& state, cudaStream_t stream, Call&& call) {
  call();  // first call: module load, attributes, device limits
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  int calls = 0;
  for (auto _ : state) {
    call();
    if (++calls == sync_every) {
      state.PauseTiming();
      WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
      calls = 0;
      state.ResumeTiming();
    }
  }
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  per_call(state);
}

void BM_pointer_attributes(benchmark::State& state) {
  wham_test::device_buffer<float> d(16);
  cudaPointerAttributes a{};
  for (auto _ : state) {
    WHAM_TEST_CUDA(cudaPointerGetAttributes(&a, d.data()));
    benchmark::DoNotOptimize(a);
  }
  per_call(state);
}

void BM_check_device_accessible(benchmark::State& state) {
  wham_test::device_buffer<float> d(16);
  for (auto _ : state) wham::detail::check_device_accessible("bench", "d", d.data());
  per_call(state);
}

__global__ void big_smem_kernel(float* out) {
  extern __shared__ float smem[];
  smem[threadIdx.x] = float(threadIdx.x);
  __syncthreads();
  if (out != nullptr) out[threadIdx.x] = smem[blockDim.x - 1 - threadIdx.x];
}

constexpr std::size_t big_smem = 64 * 1024;

/// What every launch above 48 KB now pays: read the attribute back (already granted).
void BM_ensure_dynamic_smem(benchmark::State& state) {
  wham::detail::ensure_dynamic_smem(big_smem_kernel, big_smem);
  const wham::detail::device_scope device;  // as inside a wham call
  for (auto _ : state) wham::detail::ensure_dynamic_smem(big_smem_kernel, big_smem);
  per_call(state);
}

/// The alternatives: setting the attribute every launch, or reading every attribute.
void BM_func_set_attribute(benchmark::State& state) {
  for (auto _ : state) {
    WHAM_TEST_CUDA(cudaFuncSetAttribute(
        big_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(big_smem)));
  }
  per_call(state);
}

void BM_func_get_attributes(benchmark::State& state) {
  cudaFuncAttributes a{};
  for (auto _ : state) {
    WHAM_TEST_CUDA(cudaFuncGetAttributes(&a, big_smem_kernel));
    benchmark::DoNotOptimize(a);
  }
  per_call(state);
}

/// A bare launch of a kernel above 48 KB (attribute set once), for scale.
void BM_bare_launch(benchmark::State& state) {
  WHAM_TEST_CUDA(cudaFuncSetAttribute(big_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      int(big_smem)));
  cudaStream_t stream = nullptr;
  enqueue_loop(state, stream, [&] {
    big_smem_kernel<<<1, 32, big_smem, stream>>>(nullptr);
    WHAM_TEST_CUDA(cudaGetLastError());
  });
}

/// wham::fwht<float> on one row of 2^log_n: the whole host cost of a call.
void BM_fwht_enqueue(benchmark::State& state) {
  const int log_n = static_cast<int>(state.range(0));
  wham_test::device_buffer<float> d(std::size_t(1) << log_n);
  WHAM_TEST_CUDA(cudaMemset(d.data(), 0, d.bytes()));
  cudaStream_t stream = nullptr;
  enqueue_loop(state, stream, [&] { wham::fwht(d.data(), d.data(), log_n, 1, 1.0f, stream); });
}

/// wham::iqp_encode, n qubits, one sample, complex64 from double parameters.
void BM_iqp_enqueue(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const auto variant = wham::iqp_variant::iqp;
  wham_test::device_buffer<double> params(
      static_cast<std::size_t>(wham::iqp_num_params(n, variant)));
  WHAM_TEST_CUDA(cudaMemset(params.data(), 0, params.bytes()));
  wham_test::device_buffer<cuda::std::complex<float>> states(std::size_t(1) << n);
  cudaStream_t stream = nullptr;
  enqueue_loop(state, stream,
               [&] { wham::iqp_encode(params.data(), states.data(), n, 1, variant, stream); });
}

}  // namespace

BENCHMARK(BM_pointer_attributes)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_check_device_accessible)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ensure_dynamic_smem)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_func_set_attribute)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_func_get_attributes)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_bare_launch)->UseRealTime()->Unit(benchmark::kMicrosecond);
// log_n = 4: the smallest call; 14: a fused row above 48 KB (the attribute read-back).
BENCHMARK(BM_fwht_enqueue)->Arg(4)->Arg(14)->UseRealTime()->Unit(benchmark::kMicrosecond);
// n = 4: per-element phases, one block; 14: complex64 rows above 48 KB.
BENCHMARK(BM_iqp_enqueue)->Arg(4)->Arg(14)->UseRealTime()->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::printf("bench_api: no CUDA device (%s); nothing to measure\n",
                status == cudaSuccess ? "none found" : cudaGetErrorString(status));
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
