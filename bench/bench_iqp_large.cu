// IQP encoding at large qubit counts (the Kronecker-split path) against a plain
// write of the same output buffer, measured in the same run, and against the
// baseline path (phase launch + one global-memory launch per butterfly stage).
//
// args: n, batch (0 = large: 1 GiB of output), output type, path.
// GB/s counts one write of the output; floor_frac is the write floor's time over
// ours; speedup_vs_baseline is measured at batch 64 (the baseline is timed in the
// same case). Batch 64 is skipped where the output passes 16 GiB (complex128
// n >= 25, complex64 n >= 26). Variant iqp (all pair couplings), double parameters
// uniform in [-1, 1).
#include <wham/iqp.cuh>

#include "common.cuh"

#include <cuda/std/complex>

namespace {

template <class Out>
void BM_iqp_large(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::int64_t batch_arg = state.range(1);
  const auto path = static_cast<wham::iqp_path>(state.range(2));
  const std::size_t N = std::size_t(1) << n;
  const std::int64_t batch =
      batch_arg > 0
          ? batch_arg
          : std::max<std::int64_t>(1, (std::int64_t(1) << 30) / std::int64_t(N * sizeof(Out)));
  if (!wham::iqp_path_serves<Out>(path, n)) {
    state.SkipWithError("path does not serve n");
    return;
  }
  const auto variant = wham::iqp_variant::iqp;
  const std::int64_t per = wham::iqp_num_params(n, variant);
  wham_test::device_buffer<double> params(std::size_t(per * batch));
  wham_test::device_buffer<Out> states(N * batch);
  wham_bench::fill_uniform(params.data(), params.size());
  cudaStream_t stream = nullptr;
  const double floor_s = wham_bench::write_floor(states.data(), states.bytes(), stream);
  auto run = [&](wham::iqp_path p) {
    return [&, p] { wham::iqp_encode(params.data(), states.data(), n, batch, variant, stream, p); };
  };
  const double t = wham_bench::run_manual(state, stream, run(path));
  wham_bench::set_common_counters(state, t, double(states.bytes()), floor_s);
  state.counters["batch"] = double(batch);
  state.counters["qubits"] = n;
  if (batch_arg == 64 && path != wham::iqp_path::baseline && n <= 22) {
    const double tb = wham_bench::median_time(stream, run(wham::iqp_path::baseline), 3, 1);
    state.counters["baseline_us"] = tb * 1e6;
    state.counters["speedup_vs_baseline"] = t > 0 ? tb / t : 0.0;
  }
}

template <class Out>
void iqp_large_args(benchmark::internal::Benchmark* b) {
  for (std::int64_t batch : {std::int64_t(64), std::int64_t(0)}) {
    for (int n = 14; n <= 28; ++n) {
      if (batch == 64 &&
          64.0 * double(sizeof(Out)) * double(std::int64_t(1) << n) > 16.0 * (1 << 30)) {
        continue;
      }
      b->Args({n, batch, int(wham::iqp_path::automatic)});
      if (n == 14) b->Args({n, batch, int(wham::iqp_path::kronecker)});
    }
  }
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK_TEMPLATE(BM_iqp_large, cuda::std::complex<float>)
    ->Apply(iqp_large_args<cuda::std::complex<float>>);
BENCHMARK_TEMPLATE(BM_iqp_large, cuda::std::complex<double>)
    ->Apply(iqp_large_args<cuda::std::complex<double>>);

BENCHMARK_MAIN();
