// The Hadamard transforms that quantized language models call: 16-bit and float rows, powers
// of two (wham::fwht) and m * 2^k (wham::hadamard), against a copy of the same bytes measured
// in the same run (floor_frac; bench/common.cuh). GB/s counts one read and one write.
//
// BM_pow2:   rows of 2^log_n, 1 GiB of them, __half / __nv_bfloat16 / float, log_n 1..28.
// BM_mk:     rows of m * 2^k, 1 GiB of them, every m, k 0..14.
// BM_model:  model shapes (rows of 96 .. 28672 elements x 1, 16, 512, 8192 tokens), where
//            small token counts are launch-bound: median_us (CUDA events around one call),
//            host_us_per_call (wall time of 200 calls enqueued back to back, then a sync,
//            over 200) and graph_us_per_call (device time a call inside a CUDA graph of 200).
#include <wham/hadamard.cuh>

#include "common.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <chrono>
#include <cmath>

namespace {

template <class T>
using scale_t = wham::fwht_scale_t<T>;

/// 1 GiB of rows of m * 2^log_k elements (m = 1: wham::fwht's rows, through wham::hadamard,
/// which hands them to it), uniform in [-1, 1), against a copy of the same bytes.
template <class T>
void run_rows(benchmark::State& state, int m, int log_k) {
  const std::size_t n = std::size_t(m) << log_k;
  const std::int64_t batch =
      std::max<std::int64_t>(1, (std::int64_t(1) << 30) / std::int64_t(n * sizeof(T)));
  wham_test::device_buffer<T> in(n * batch), out(n * batch);
  wham_bench::fill_uniform(in.data(), n * batch);  // converts from double to 16-bit types
  cudaStream_t stream = nullptr;
  const double floor_s = wham_bench::copy_floor(in.data(), out.data(), in.bytes(), stream);
  const scale_t<T> scale(1.0 / std::sqrt(double(n)));
  const double t = wham_bench::run_manual(state, stream, [&] {
    wham::hadamard(in.data(), out.data(), m, log_k, batch, scale, stream);
  });
  wham_bench::set_common_counters(state, t, 2.0 * double(in.bytes()), floor_s);
  state.counters["batch"] = double(batch);
  if (m > 1) {
    state.counters["fused"] =
        wham::detail::wht::hadamard_m_rows_per_block<T>(m, log_k, batch) > 0 ? 1.0 : 0.0;
  }
}

/// args: log_n
template <class T>
void BM_pow2(benchmark::State& state) {
  run_rows<T>(state, 1, static_cast<int>(state.range(0)));
}

/// args: m, log_k
template <class T>
void BM_mk(benchmark::State& state) {
  run_rows<T>(state, static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
}

/// args: m, log_k, tokens
template <class T>
void BM_model(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0));
  const int log_k = static_cast<int>(state.range(1));
  const std::int64_t tokens = state.range(2);
  const std::size_t n = std::size_t(m) << log_k;
  wham_test::device_buffer<T> in(n * tokens), out(n * tokens);
  wham_bench::fill_uniform(in.data(), n * tokens);
  cudaStream_t stream;
  WHAM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const scale_t<T> scale(1.0 / std::sqrt(double(n)));
  auto call = [&] { wham::hadamard(in.data(), out.data(), m, log_k, tokens, scale, stream); };
  const double floor_s = wham_bench::copy_floor(in.data(), out.data(), in.bytes(), stream);
  const double t = wham_bench::run_manual(state, stream, call);
  constexpr int calls = 200;
  call();
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  const auto h0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) call();
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  const double host_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - h0).count() / calls;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  WHAM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < calls; ++i) call();
  WHAM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  WHAM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  WHAM_TEST_CUDA(cudaGraphLaunch(exec, stream));  // upload and warm
  const double graph_s = wham_bench::median_time(
                             stream, [&] { WHAM_TEST_CUDA(cudaGraphLaunch(exec, stream)); }, 5, 1) /
                         calls;
  WHAM_TEST_CUDA(cudaGraphExecDestroy(exec));
  WHAM_TEST_CUDA(cudaGraphDestroy(graph));
  WHAM_TEST_CUDA(cudaStreamDestroy(stream));
  wham_bench::set_common_counters(state, t, 2.0 * double(in.bytes()), floor_s);
  state.counters["host_us_per_call"] = host_s * 1e6;
  state.counters["graph_us_per_call"] = graph_s * 1e6;
  state.counters["row"] = double(n);
  state.counters["tokens"] = double(tokens);
}

void pow2_args(benchmark::internal::Benchmark* b) {
  for (int log_n = 1; log_n <= 28; ++log_n) b->Args({log_n});
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

void mk_args(benchmark::internal::Benchmark* b) {
  for (int m : {12, 20, 28, 40}) {
    for (int log_k = 0; log_k <= 14; log_k += (log_k < 12 ? 1 : 2)) b->Args({m, log_k});
  }
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

void model_args(benchmark::internal::Benchmark* b) {
  // 96, 128, 192, 4096, 5120 (20 * 2^8), 12288, 14336, 28672
  const int shapes[][2] = {{12, 3}, {1, 7}, {12, 4}, {1, 12}, {20, 8}, {12, 10}, {28, 9}, {28, 10}};
  for (const auto& s : shapes) {
    for (int tokens : {1, 16, 512, 8192}) b->Args({s[0], s[1], tokens});
  }
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK_TEMPLATE(BM_pow2, __half)->Apply(pow2_args);
BENCHMARK_TEMPLATE(BM_pow2, __nv_bfloat16)->Apply(pow2_args);
BENCHMARK_TEMPLATE(BM_pow2, float)->Apply(pow2_args);
BENCHMARK_TEMPLATE(BM_mk, __half)->Apply(mk_args);
BENCHMARK_TEMPLATE(BM_mk, __nv_bfloat16)->Apply(mk_args);
BENCHMARK_TEMPLATE(BM_mk, float)->Apply(mk_args);
BENCHMARK_TEMPLATE(BM_model, __half)->Apply(model_args);
BENCHMARK_TEMPLATE(BM_model, __nv_bfloat16)->Apply(model_args);
BENCHMARK_TEMPLATE(BM_model, float)->Apply(model_args);

BENCHMARK_MAIN();
