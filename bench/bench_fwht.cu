// Batched FWHT throughput against a plain copy of the same rows, measured in
// the same run. GB/s counts one read and one write of the data.
#include <wham/fwht.cuh>

#include "common.cuh"

#include <cuda/std/complex>

#include <string>

namespace {

/// args: log_n, total bytes of the rows (the batch follows from it)
template <class T>
void BM_fwht(benchmark::State& state) {
  const int log_n = static_cast<int>(state.range(0));
  const std::size_t bytes_total = std::size_t(state.range(1));
  const std::size_t n = std::size_t(1) << log_n;
  const std::int64_t batch = std::max<std::int64_t>(1, bytes_total / (n * sizeof(T)));
  if (log_n > wham::fwht_fused_max_log_n<T>()) {
    state.SkipWithError("log_n beyond the fused path");
    return;
  }
  wham_test::device_buffer<T> in(n * batch), out(n * batch);
  using R = wham::detail::wht::real_t<T>;
  wham_bench::fill_uniform(reinterpret_cast<R*>(in.data()), in.bytes() / sizeof(R));
  cudaStream_t stream = nullptr;
  const double floor_s = wham_bench::copy_floor(in.data(), out.data(), in.bytes(), stream);
  const double t = wham_bench::run_manual(state, stream, [&] {
    wham::fwht(in.data(), out.data(), log_n, batch, wham::detail::wht::real_t<T>(1), stream);
  });
  wham_bench::set_common_counters(state, t, 2.0 * double(in.bytes()), floor_s);
  state.counters["batch"] = double(batch);
  state.counters["log_n"] = log_n;
}

void fwht_args(benchmark::internal::Benchmark* b) {
  for (int log_n = 1; log_n <= 15; ++log_n) b->Args({log_n, std::int64_t(1) << 30});
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK_TEMPLATE(BM_fwht, float)->Apply(fwht_args);
BENCHMARK_TEMPLATE(BM_fwht, double)->Apply(fwht_args);
BENCHMARK_TEMPLATE(BM_fwht, cuda::std::complex<float>)->Apply(fwht_args);
BENCHMARK_TEMPLATE(BM_fwht, cuda::std::complex<double>)->Apply(fwht_args);

BENCHMARK_MAIN();
