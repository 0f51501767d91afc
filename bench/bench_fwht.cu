// Batched FWHT throughput against a plain copy of the same rows, measured in
// the same run. GB/s counts one read and one write of the data; floor_frac is
// the copy's time over ours (1 = as fast as the faster of a 16-byte copy kernel
// and cudaMemcpyAsync; bench/common.cuh).
//
// BM_fwht:      log_n x batch (64, or "large": 1 GiB of rows) x type x path
//               (fused where it serves, kronecker where it serves, baseline);
//               speedup_vs_baseline against the baseline path timed in the same run
//               on the same buffers.
//               Batch 64 is skipped where the two buffers pass 16 GiB (float
//               n >= 26, double / complex<float> n >= 25, complex<double> n >= 24).
// BM_kron_tune: the Kronecker path's two knobs at a few points (L2 chunk size,
//               most bits per strided stage); the defaults in
//               wham/detail/wht/tuning.cuh (kronecker_config) come from it.
#include <wham/fwht.cuh>

#include "common.cuh"

#include <cuda/std/complex>

#include <string>

namespace {

using wham::fwht_path;

/// args: log_n, batch (0 = large: 1 GiB of rows), path
template <class T>
void BM_fwht(benchmark::State& state) {
  const int log_n = static_cast<int>(state.range(0));
  const std::int64_t batch_arg = state.range(1);
  const auto path = static_cast<fwht_path>(state.range(2));
  const std::size_t n = std::size_t(1) << log_n;
  const std::int64_t batch =
      batch_arg > 0
          ? batch_arg
          : std::max<std::int64_t>(1, (std::int64_t(1) << 30) / std::int64_t(n * sizeof(T)));
  if (!wham::fwht_path_serves<T>(path, log_n)) {
    state.SkipWithError("path does not serve this log_n");
    return;
  }
  if (2.0 * double(n) * double(batch) * sizeof(T) > 16.0 * (1 << 30)) {
    state.SkipWithError("buffers beyond 16 GiB");
    return;
  }
  wham_test::device_buffer<T> in(n * batch), out(n * batch);
  using R = wham::fwht_scale_t<T>;
  wham_bench::fill_uniform(reinterpret_cast<R*>(in.data()), in.bytes() / sizeof(R));
  cudaStream_t stream = nullptr;
  const double floor_s = wham_bench::copy_floor(in.data(), out.data(), in.bytes(), stream);
  auto run = [&](fwht_path p) {
    return [&, p] { wham::fwht(in.data(), out.data(), log_n, batch, R(1), stream, p); };
  };
  // The baseline (one global-memory pass a stage) timed on the same buffers, few
  // repetitions at 1 GiB where it is slow; its own rows read 1.
  const bool large = in.bytes() >= (std::size_t(1) << 30);
  const double base_s =
      path == fwht_path::baseline
          ? 0.0
          : wham_bench::median_time(stream, run(fwht_path::baseline), large ? 3 : 7, 1);
  const double t = wham_bench::run_manual(state, stream, run(path));
  wham_bench::set_common_counters(state, t, 2.0 * double(in.bytes()), floor_s);
  state.counters["speedup_vs_baseline"] =
      path == fwht_path::baseline ? 1.0 : (t > 0 ? base_s / t : 0.0);
  state.counters["baseline_us"] = (path == fwht_path::baseline ? t : base_s) * 1e6;
  state.counters["batch"] = double(batch);
  state.counters["log_n"] = log_n;
  state.counters["path"] = double(static_cast<int>(path));
}

// One block's row on the H200, plus two bits as clusters of 2 and 4 blocks.
constexpr int max_fused_h200(int bytes) { return (bytes == 4 ? 15 : bytes == 16 ? 13 : 14) + 2; }

template <class T>
void fwht_args(benchmark::internal::Benchmark* b) {
  const int fmax = max_fused_h200(int(sizeof(T)));
  for (std::int64_t batch : {std::int64_t(64), std::int64_t(0)}) {
    for (int log_n = batch == 0 ? 0 : 10; log_n <= 28; ++log_n) {
      if (batch == 64 &&
          2.0 * 64.0 * double(sizeof(T)) * double(std::int64_t(1) << log_n) > 16.0 * (1 << 30)) {
        continue;
      }
      if (log_n <= fmax) b->Args({log_n, batch, int(fwht_path::fused)});
      if (log_n >= 11) b->Args({log_n, batch, int(fwht_path::kronecker)});
      // The baseline: every n at batch 64, a few at large batch (it is slow).
      if (batch == 64 || log_n % 4 == 0 || log_n == 15) {
        b->Args({log_n, batch, int(fwht_path::baseline)});
      }
    }
  }
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

/// args: log_n, stage-0 bits (0: default), chunk_bytes in MiB (0: none), max bits per strided stage
template <class T>
void BM_kron_tune(benchmark::State& state) {
  const int log_n = static_cast<int>(state.range(0));
  wham::detail::wht::kronecker_config cfg;
  cfg.lo_bits = static_cast<int>(state.range(1));
  cfg.chunk_bytes = state.range(2) << 20;
  cfg.max_strided_bits = static_cast<int>(state.range(3));
  const std::size_t n = std::size_t(1) << log_n;
  const std::int64_t batch =
      std::max<std::int64_t>(1, (std::int64_t(1) << 30) / std::int64_t(n * sizeof(T)));
  wham_test::device_buffer<T> in(n * batch), out(n * batch);
  using R = wham::fwht_scale_t<T>;
  wham_bench::fill_uniform(reinterpret_cast<R*>(in.data()), in.bytes() / sizeof(R));
  cudaStream_t stream = nullptr;
  const double floor_s = wham_bench::copy_floor(in.data(), out.data(), in.bytes(), stream);
  const double t = wham_bench::run_manual(state, stream, [&] {
    wham::detail::wht::launch_kronecker_config<T>(
        log_n, batch, wham::detail::wht::loaded_input<T, T>{in.data()},
        wham::detail::wht::stored_output<T, T>{out.data()}, R(1), stream, cfg);
  });
  wham_bench::set_common_counters(state, t, 2.0 * double(in.bytes()), floor_s);
  state.counters["batch"] = double(batch);
  state.counters["log_n"] = log_n;
  const auto plan = wham::detail::wht::kronecker_plan<T>(log_n, cfg);
  state.counters["stage0_bits"] = plan.stages[0].bits;
  state.counters["stages"] = plan.num_stages;
}

void kron_tune_args(benchmark::internal::Benchmark* b) {
  for (int log_n : {16, 20, 24}) {
    for (int lo : {10, 11, 12, 15}) {
      for (int chunk_mib : {0, 24}) b->Args({log_n, lo, chunk_mib, 0});
    }
    for (int bits : {9, 10}) b->Args({log_n, 0, 0, bits});
  }
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK_TEMPLATE(BM_fwht, float)->Apply(fwht_args<float>);
BENCHMARK_TEMPLATE(BM_fwht, double)->Apply(fwht_args<double>);
BENCHMARK_TEMPLATE(BM_fwht, cuda::std::complex<float>)->Apply(fwht_args<cuda::std::complex<float>>);
BENCHMARK_TEMPLATE(BM_fwht, cuda::std::complex<double>)
    ->Apply(fwht_args<cuda::std::complex<double>>);
BENCHMARK_TEMPLATE(BM_kron_tune, float)->Apply(kron_tune_args);
BENCHMARK_TEMPLATE(BM_kron_tune, cuda::std::complex<double>)->Apply(kron_tune_args);

BENCHMARK_MAIN();
