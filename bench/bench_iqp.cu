// IQP encoder throughput: n = 4..20 x batch {1, 64, large (output >= 512 MiB)}
// x output type x path (variant iqp), and iqp_z's product path at n = 4..24. Counters
// (bench/common.cuh): median_us, GB/s of the output written once, floor_frac against a plain write
// over the same output buffer (the faster of a 16-byte write kernel and cudaMemsetAsync, measured
// in the same run), and speedup_vs_baseline against the baseline path timed in the same run on the
// same buffers; io_floor_frac against a kernel that also reads the parameters (the traffic the
// write floor leaves out), and io_bound, the most floor_frac can be given that read.
// BM_iqp_float_params: complex64 from float parameters at large batch, n = 4..13.
#include <wham/iqp.cuh>

#include "common.cuh"

#include <cuda/std/complex>

#include <algorithm>
#include <cstdint>

namespace {

constexpr std::int64_t large_bytes = std::int64_t(512) << 20;

/// args: n, batch (0 = large: the smallest batch whose output is >= 512 MiB), path
/// (wham::iqp_path: 0 automatic, 1 fused, 2 kronecker, 3 baseline, 4 product; the
/// counter resolved_path says what automatic ran). Parameters uniform in [-1, 1).
/// iqp_z also reports speedup_vs_transform: against the Walsh-Hadamard path that
/// automatic runs for iqp at the same n and batch, on the same iqp_z parameters.
template <class Out, class Param = double>
void iqp_case(benchmark::State& state, wham::iqp_variant variant) {
  const int n = static_cast<int>(state.range(0));
  const std::int64_t dim = std::int64_t(1) << n;
  std::int64_t batch = state.range(1);
  if (batch == 0)
    batch = std::max<std::int64_t>(
        1, (large_bytes + dim * std::int64_t(sizeof(Out)) - 1) / (dim * std::int64_t(sizeof(Out))));
  const auto path = static_cast<wham::iqp_path>(state.range(2));
  if (!wham::iqp_path_serves<Out>(path, n, variant)) {
    state.SkipWithError("path does not serve n");
    return;
  }
  // What automatic resolved to: 1 fused, 2 kronecker, 3 baseline, 4 product.
  state.counters["resolved_path"] = double(static_cast<int>(
      path == wham::iqp_path::automatic ? wham::iqp_automatic_path<Out>(n, batch, variant) : path));
  const std::int64_t per = wham::iqp_num_params(n, variant);
  wham_test::device_buffer<Param> params(static_cast<std::size_t>(per * batch));
  wham_bench::fill_uniform(params.data(), params.size());
  const wham::iqp_size<Out> size(n, batch);
  wham_test::device_buffer<Out> states(static_cast<std::size_t>(size.amplitudes));
  cudaStream_t stream = nullptr;
  const bool large = size.bytes >= std::size_t(large_bytes);
  auto run = [&](wham::iqp_path p) {
    return [&, p] { wham::iqp_encode(params.data(), states.data(), n, batch, variant, stream, p); };
  };

  const double floor_s = wham_bench::write_floor(states.data(), size.bytes, stream);
  // The parameters are read as the states are written: at small n a large share of the
  // traffic (complex64 n = 4, double parameters: 80 bytes a row against 128 written).
  const std::size_t param_bytes = params.size() * sizeof(Param);
  const double io_floor_s =
      wham_bench::read_write_floor(params.data(), param_bytes, states.data(), size.bytes, stream);
  // The baseline once per case, few repetitions where it is slow.
  const double base_s =
      wham_bench::median_time(stream, run(wham::iqp_path::baseline), large ? 3 : 7, 1);
  const double t = wham_bench::run_manual(state, stream, run(path));
  wham_bench::set_common_counters(state, t, double(size.bytes), floor_s);
  state.counters["speedup_vs_baseline"] = t > 0 ? base_s / t : 0.0;
  state.counters["baseline_us"] = base_s * 1e6;
  // io_floor_frac: a kernel that reads the parameters and writes the states, over ours;
  // io_bound: the most floor_frac can be, given that read (the write floor over it).
  state.counters["param_bytes_per_out_byte"] = double(param_bytes) / double(size.bytes);
  state.counters["io_floor_us"] = io_floor_s * 1e6;
  state.counters["io_floor_frac"] = t > 0 ? io_floor_s / t : 0.0;
  state.counters["io_bound"] = io_floor_s > 0 ? floor_s / io_floor_s : 0.0;
  if (variant == wham::iqp_variant::iqp_z) {
    const auto transform = wham::iqp_automatic_path<Out>(n, batch, wham::iqp_variant::iqp);
    const double tr_s = wham_bench::median_time(stream, run(transform), large ? 5 : 15, 1);
    state.counters["transform_us"] = tr_s * 1e6;
    state.counters["speedup_vs_transform"] = t > 0 ? tr_s / t : 0.0;
  }
  state.counters["batch"] = double(batch);
  state.counters["n"] = n;
}

template <class Out>
void BM_iqp(benchmark::State& state) {
  iqp_case<Out>(state, wham::iqp_variant::iqp);
}

/// complex64 states from float parameters (half the parameter bytes of BM_iqp's double):
/// the large batch of the fused path, where the parameters' share of the traffic matters.
void BM_iqp_float_params(benchmark::State& state) {
  iqp_case<cuda::std::complex<float>, float>(state, wham::iqp_variant::iqp);
}

/// iqp_z (no pair couplings) at every n the output fits: the product path
/// (automatic) against the transform paths on the same parameters.
template <class Out>
void BM_iqp_z(benchmark::State& state) {
  iqp_case<Out>(state, wham::iqp_variant::iqp_z);
}

void iqp_args(benchmark::internal::Benchmark* b) {
  for (int n = 4; n <= 20; ++n) {
    for (std::int64_t batch : {std::int64_t(1), std::int64_t(64), std::int64_t(0)}) {
      for (auto path : {wham::iqp_path::automatic, wham::iqp_path::kronecker}) {
        b->Args({n, batch, static_cast<std::int64_t>(path)});
      }
    }
  }
  // The fused path's clusters beyond one block (n = M + 1, M + 2: complex128 14, 15,
  // complex64 15, 16) where automatic takes kronecker instead at small batch; rows where
  // fused does not serve n report a skip.
  for (int n = 14; n <= 16; ++n) {
    for (std::int64_t batch : {std::int64_t(1), std::int64_t(64)}) {
      b->Args({n, batch, static_cast<std::int64_t>(wham::iqp_path::fused)});
    }
  }
  b->ArgNames({"n", "batch", "path"});
  b->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.02);
}

void iqp_float_params_args(benchmark::internal::Benchmark* b) {
  for (int n = 4; n <= 13; ++n) {
    b->Args({n, 0, static_cast<std::int64_t>(wham::iqp_path::automatic)});
  }
  b->ArgNames({"n", "batch", "path"});
  b->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.02);
}

void iqp_z_args(benchmark::internal::Benchmark* b) {
  for (int n : {4, 8, 10, 12, 13, 14, 16, 20, 24}) {
    for (std::int64_t batch : {std::int64_t(64), std::int64_t(0)}) {
      if (n > 20 && batch == 64) continue;  // 16 GiB of complex128; the large batch covers it
      b->Args({n, batch, static_cast<std::int64_t>(wham::iqp_path::automatic)});
    }
  }
  b->ArgNames({"n", "batch", "path"});
  b->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.02);
}

}  // namespace

BENCHMARK_TEMPLATE(BM_iqp, cuda::std::complex<double>)->Apply(iqp_args);
BENCHMARK_TEMPLATE(BM_iqp, cuda::std::complex<float>)->Apply(iqp_args);
BENCHMARK(BM_iqp_float_params)->Apply(iqp_float_params_args);
BENCHMARK_TEMPLATE(BM_iqp_z, cuda::std::complex<double>)->Apply(iqp_z_args);
BENCHMARK_TEMPLATE(BM_iqp_z, cuda::std::complex<float>)->Apply(iqp_z_args);

BENCHMARK_MAIN();
