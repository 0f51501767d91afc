// IQP encoder throughput: n = 4..20 x batch {1, 64, large (output >= 512 MiB)}
// x output type x path. Counters (bench/common.cuh): median_us, GB/s of the
// output written once, floor_frac against a plain 16-byte write over the same
// output buffer (measured in the same run), and speedup_vs_baseline against the
// baseline path timed in the same run on the same buffers.
#include <wham/iqp.cuh>

#include "common.cuh"

#include <cuda/std/complex>

#include <algorithm>
#include <cstdint>

namespace {

constexpr std::int64_t large_bytes = std::int64_t(512) << 20;

/// args: n, batch (0 = large: the smallest batch whose output is >= 512 MiB), path
/// (wham::iqp_path: 0 automatic, 1 fused, 2 kronecker, 3 baseline; the counter
/// resolved_path says what automatic ran). Parameters: iqp variant, uniform in [-1, 1).
template <class Out>
void BM_iqp(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::int64_t dim = std::int64_t(1) << n;
  std::int64_t batch = state.range(1);
  if (batch == 0) batch = std::max<std::int64_t>(1, (large_bytes + dim * std::int64_t(sizeof(Out)) - 1) / (dim * std::int64_t(sizeof(Out))));
  const auto path = static_cast<wham::iqp_path>(state.range(2));
  if (!wham::iqp_path_serves<Out>(path, n)) {
    state.SkipWithError("path does not serve n");
    return;
  }
  // What automatic resolved to: 1 fused, 2 kronecker, 3 baseline.
  state.counters["resolved_path"] =
      double(static_cast<int>(path == wham::iqp_path::automatic ? wham::iqp_automatic_path<Out>(n, batch) : path));
  const auto variant = wham::iqp_variant::iqp;
  const std::int64_t per = wham::iqp_num_params(n, variant);
  wham_test::device_buffer<double> params(static_cast<std::size_t>(per * batch));
  wham_bench::fill_uniform(params.data(), params.size());
  const wham::iqp_size<Out> size(n, batch);
  wham_test::device_buffer<Out> states(static_cast<std::size_t>(size.amplitudes));
  cudaStream_t stream = nullptr;
  const bool large = size.bytes >= std::size_t(large_bytes);

  const double floor_s = wham_bench::write_floor(states.data(), size.bytes, stream);
  // The baseline once per case, few repetitions where it is slow.
  const double base_s = wham_bench::median_time(
      stream,
      [&] {
        wham::iqp_encode(params.data(), states.data(), n, batch, variant, stream,
                         wham::iqp_path::baseline);
      },
      large ? 3 : 7, 1);
  const double t = wham_bench::run_manual(state, stream, [&] {
    wham::iqp_encode(params.data(), states.data(), n, batch, variant, stream, path);
  });
  wham_bench::set_common_counters(state, t, double(size.bytes), floor_s);
  state.counters["speedup_vs_baseline"] = t > 0 ? base_s / t : 0.0;
  state.counters["baseline_us"] = base_s * 1e6;
  state.counters["batch"] = double(batch);
  state.counters["n"] = n;
}

void iqp_args(benchmark::internal::Benchmark* b) {
  for (int n = 4; n <= 20; ++n) {
    for (std::int64_t batch : {std::int64_t(1), std::int64_t(64), std::int64_t(0)}) {
      for (auto path : {wham::iqp_path::automatic, wham::iqp_path::kronecker}) {
        b->Args({n, batch, static_cast<std::int64_t>(path)});
      }
    }
  }
  b->ArgNames({"n", "batch", "path"});
  b->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.02);
}

}  // namespace

BENCHMARK_TEMPLATE(BM_iqp, cuda::std::complex<double>)->Apply(iqp_args);
BENCHMARK_TEMPLATE(BM_iqp, cuda::std::complex<float>)->Apply(iqp_args);

BENCHMARK_MAIN();
