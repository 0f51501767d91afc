// Pair-streaming M2L: every path against the copy floor over the same minimal bytes
// and against the two baselines (GPU direct O(p^4), materialised rotation blocks),
// all in the same run.
//
// Minimal bytes per pair: read (p+1)^2 complex + 3 reals, write (p+1)^2 complex.
// floor_frac: a plain copy of the same total traffic (half read, half written) over ours.
// GFLOP/s: wham::detail::m2l::flops_per_pair(p) per pair (the factorised algorithm's
// real flops as the fused kernels do them, see blocks.cuh), for every path.
// speedup_direct / speedup_materialised (on the automatic rows): baseline time over
// ours, baselines timed with 3 reps. Skipped: direct at 1e6 pairs for p > 12
// (seconds a call), materialised where its workspace passes 4 GB.
#include <wham/m2l.cuh>

#include "common.cuh"
#include "m2l_baselines.cuh"

#include <cuda/std/complex>

#include <cmath>
#include <string>
#include <type_traits>

namespace {

enum bench_path {
  automatic = 0,
  thread = 1,
  warp = 2,
  direct = 3,
  materialised = 4,
  split = 5,
  tensor = 6
};

template <class T>
__global__ void away_from_zero(T* d, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    d[3 * i + 2] += d[3 * i + 2] >= T(0) ? T(1.5) : T(-1.5);  // 1.5 <= |delta| < 2.7
  }
}

constexpr std::size_t materialised_limit = std::size_t(4) << 30;

template <class T>
void BM_m2l(benchmark::State& state) {
  const int p = int(state.range(0));
  const std::int64_t n = std::int64_t(std::llround(std::pow(10.0, double(state.range(1)))));
  const auto path = bench_path(state.range(2));
  if (p > wham::m2l_max_order<T>()) {
    state.SkipWithError("order beyond m2l_max_order");
    return;
  }
  if (path == thread && p > wham::detail::m2l::thread_max_order) {
    state.SkipWithError("order beyond the thread schedule");
    return;
  }
  if (path == split &&
      (p < wham::detail::m2l::split_min_order || p > wham::detail::m2l::split_max_order)) {
    state.SkipWithError("order outside the split schedule");
    return;
  }
  if (path == tensor && !std::is_same_v<T, double> && !wham::detail::m2l::wide_supported()) {
    state.SkipWithError("float on tensor cores needs the sm_90 wide schedule");
    return;
  }
  if (path == materialised &&
      wham_bench::materialised_workspace_bytes<T>(p, n) > materialised_limit) {
    state.SkipWithError("materialised workspace beyond 4 GB");
    return;
  }
  const std::size_t C = std::size_t(p + 1) * (p + 1);
  using Z = cuda::std::complex<T>;
  wham_test::device_buffer<Z> M(C * n), L(C * n);
  wham_test::device_buffer<T> d(3 * n);
  wham_bench::fill_uniform(reinterpret_cast<T*>(M.data()), 2 * C * n, 1);
  wham_bench::fill_uniform(d.data(), 3 * n, 2);
  away_from_zero<<<wham_bench::floor_grid(), 256>>>(d.data(), n);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  cudaStream_t stream = nullptr;
  const double bytes = double(n) * (2.0 * C * sizeof(Z) + 3.0 * sizeof(T));
  // The copy floor over the same traffic: copy bytes/2 (read it, write it), between the
  // halves of a scratch buffer: M and L alone hold only the coefficients (a copy of M
  // alone would leave the displacements out of the floor's traffic).
  const std::size_t half = std::size_t(bytes / 2) / 16 * 16;
  double floor_s = 0.0;
  {
    wham_test::device_buffer<unsigned char> scratch(2 * half);
    wham_bench::fill_uniform(reinterpret_cast<float*>(scratch.data()), half / sizeof(float), 3);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    floor_s = wham_bench::copy_floor(scratch.data(), scratch.data() + half, half, stream);
  }

  wham_test::device_buffer<unsigned char> work(
      path == materialised ? wham_bench::materialised_workspace_bytes<T>(p, n) : 0);
  using wham::detail::m2l::cpx;
  auto run = [&](bench_path k) {
    switch (k) {
      case automatic:
        wham::m2l(M.data(), d.data(), L.data(), p, n, stream);
        break;
      case thread:
        wham::m2l(M.data(), d.data(), L.data(), p, n, stream, wham::m2l_path::thread);
        break;
      case warp:
        wham::m2l(M.data(), d.data(), L.data(), p, n, stream, wham::m2l_path::warp);
        break;
      case split:
        wham::m2l(M.data(), d.data(), L.data(), p, n, stream, wham::m2l_path::split);
        break;
      case tensor:
        wham::m2l(M.data(), d.data(), L.data(), p, n, stream, wham::m2l_path::tensor);
        break;
      case direct:
        wham::m2l(M.data(), d.data(), L.data(), p, n, stream, wham::m2l_path::direct);
        break;
      case materialised:
        wham_bench::launch_materialised<T>(p, reinterpret_cast<const cpx<T>*>(M.data()), d.data(),
                                           reinterpret_cast<cpx<T>*>(L.data()), n, work.data(),
                                           stream);
        break;
    }
  };
  const double t = wham_bench::run_manual(state, stream, [&] { run(path); });
  // floor_frac over the half-size copy reports the whole traffic (the copy moves `bytes`)
  wham_bench::set_common_counters(state, t, bytes, floor_s);
  state.counters["p"] = p;
  state.counters["pairs"] = double(n);
  state.counters["Mpairs/s"] = t > 0 ? double(n) / t * 1e-6 : 0.0;
  state.counters["GFLOP/s"] =
      t > 0 ? wham::detail::m2l::flops_per_pair(p) * double(n) / t * 1e-9 : 0.0;
  state.counters["flops_per_pair"] = wham::detail::m2l::flops_per_pair(p);
  if (path == automatic) {
    if (!(n >= 1000000 && p > 12)) {
      const double td = wham_bench::median_time(
          stream, [&] { run(direct); }, 3, 1);
      state.counters["direct_us"] = td * 1e6;
      state.counters["speedup_direct"] = td / t;
    }
    const std::size_t wbytes = wham_bench::materialised_workspace_bytes<T>(p, n);
    if (wbytes <= materialised_limit) {
      wham_test::device_buffer<unsigned char> w2(wbytes);
      const double tm = wham_bench::median_time(
          stream,
          [&] {
            wham_bench::launch_materialised<T>(p, reinterpret_cast<const cpx<T>*>(M.data()),
                                               d.data(), reinterpret_cast<cpx<T>*>(L.data()), n,
                                               w2.data(), stream);
          },
          3, 1);
      state.counters["materialised_us"] = tm * 1e6;
      state.counters["speedup_materialised"] = tm / t;
    }
  }
}

template <class T>
void m2l_args(benchmark::internal::Benchmark* b) {
  const int pmax = wham::m2l_max_order<T>();
  for (int path : {automatic, thread, split, warp, tensor}) {
    // float on tensor cores (sm_90, computed in double): p >= 9, against the split and
    // warp schedules it would replace
    if (path == tensor && !std::is_same_v<T, double>) {
      for (int p = 9; p <= pmax; ++p) b->Args({p, 5, path});
      continue;
    }
    for (int p = 0; p <= pmax; ++p) {
      if (path == tensor && p < 8) continue;  // far behind the thread schedule there
      if (path == thread && p > wham::detail::m2l::thread_max_order) continue;
      if (path == split &&
          (p < wham::detail::m2l::split_min_order || p > wham::detail::m2l::split_max_order)) {
        continue;
      }
      // the explicit schedules (for the tuning table) at 1e5 pairs, automatic at all sizes
      for (int lg = 4; lg <= 6; ++lg) {
        if (path == automatic || lg == 5) b->Args({p, lg, path});
      }
    }
  }
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

/// One schedule variant at 1e5 pairs (for the tuning table, detail/m2l/tuning.cuh):
/// launch(M, deltas, L, n) timed against the copy floor of the same bytes.
template <class T, int P, class Launch>
void run_m2l_variant(benchmark::State& state, Launch launch) {
  const std::int64_t n = 100000;
  const std::size_t C = std::size_t(P + 1) * (P + 1);
  using Z = cuda::std::complex<T>;
  using wham::detail::m2l::cpx;
  wham_test::device_buffer<Z> M(C * n), L(C * n);
  wham_test::device_buffer<T> d(3 * n);
  wham_bench::fill_uniform(reinterpret_cast<T*>(M.data()), 2 * C * n, 1);
  wham_bench::fill_uniform(d.data(), 3 * n, 2);
  away_from_zero<<<wham_bench::floor_grid(), 256>>>(d.data(), n);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const double bytes = double(n) * (2.0 * C * sizeof(Z) + 3.0 * sizeof(T));
  const double t = wham_bench::run_manual(state, nullptr, [&] {
    launch(reinterpret_cast<const cpx<T>*>(M.data()), d.data(), reinterpret_cast<cpx<T>*>(L.data()),
           n);
  });
  const double floor_s = wham_bench::copy_floor(
      M.data(), L.data(), std::min(std::size_t(bytes / 2) / 16 * 16, M.bytes()), nullptr);
  wham_bench::set_common_counters(state, t, bytes, floor_s);
  state.counters["p"] = P;
  state.counters["Mpairs/s"] = t > 0 ? double(n) / t * 1e-6 : 0.0;
}

/// The thread schedule: threads per block, registers or shared memory.
template <class T, int P, int NT, bool Registers>
void BM_m2l_variant(benchmark::State& state) {
  run_m2l_variant<T, P>(state, [](auto M, auto d, auto L, std::int64_t n) {
    wham::detail::m2l::launch_thread_variant<P, T, NT, Registers>(M, d, L, n, nullptr);
  });
  state.counters["threads"] = NT;
  state.counters["registers"] = Registers;
}

/// The split schedule: warps per block and register cap (blocks per SM).
template <class T, int P, int G, int MinBlocks>
void BM_m2l_split_variant(benchmark::State& state) {
  run_m2l_variant<T, P>(state, [](auto M, auto d, auto L, std::int64_t n) {
    wham::detail::m2l::launch_split_variant<P, T, G, MinBlocks>(M, d, L, n, nullptr);
  });
  state.counters["warps"] = G;
  state.counters["min_blocks"] = MinBlocks;
}

}  // namespace

BENCHMARK_TEMPLATE(BM_m2l_split_variant, double, 8, 1, 0)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_split_variant, double, 8, 4, 0)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_split_variant, double, 8, 4, 5)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_split_variant, double, 8, 2, 5)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_split_variant, double, 7, 2, 5)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_split_variant, double, 9, 2, 0)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_split_variant, double, 10, 2, 0)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_split_variant, double, 12, 1, 0)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_split_variant, double, 12, 2, 0)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_split_variant, float, 10, 2, 0)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_split_variant, float, 12, 2, 0)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_TEMPLATE(BM_m2l_variant, double, 7, 64, true)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_variant, double, 8, 64, true)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_variant, double, 8, 32, true)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_variant, double, 6, 128, true)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_variant, float, 7, 128, true)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_variant, float, 8, 64, true)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_m2l_variant, float, 5, 64, true)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_TEMPLATE(BM_m2l, double)->Apply(m2l_args<double>);
BENCHMARK_TEMPLATE(BM_m2l, float)->Apply(m2l_args<float>);

BENCHMARK_MAIN();
