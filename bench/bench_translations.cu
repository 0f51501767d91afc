// M2M and L2L (wham/translations.cuh): every path against the copy floor over the same
// minimal bytes, and wham::m2l at the same order and pairs in the same run.
//
// Pair-streaming, minimal bytes a pair: read (p+1)^2 complex + 3 reals, write (p+1)^2
// complex. Accumulate (children to parents, 8 pairs a target, targets in order): read the
// pair's (p+1)^2 complex, 3 reals and two int32, read and write each target once.
// floor_frac: a plain copy of the same traffic over ours. m2l_ratio: wham::m2l's time
// (automatic) over ours, pair-streaming rows.
#include <wham/m2l.cuh>
#include <wham/translations.cuh>

#include "common.cuh"

#include <cuda/std/complex>

#include <cmath>
#include <vector>

namespace {

enum form { pair_m2m = 0, pair_l2l = 1, accumulate_m2m = 2, accumulate_l2l = 3 };

template <class T>
void BM_translation(benchmark::State& state) {
  const int p = int(state.range(0));
  const auto path = wham::translation_path(state.range(1));
  const auto f = form(state.range(2));
  const std::int64_t n = 100000;
  const int pmax = path == wham::translation_path::direct   ? 4
                   : path == wham::translation_path::thread ? 12
                   : path == wham::translation_path::split  ? 12
                                                            : wham::m2l_max_order<T>();
  const int pmin = path == wham::translation_path::split ? 7 : 0;
  if (p < pmin || p > pmax || p > wham::m2l_max_order<T>()) {
    state.SkipWithError("order beyond the path");
    return;
  }
  const std::size_t C = std::size_t(p + 1) * (p + 1);
  using Z = cuda::std::complex<T>;
  const bool acc = f >= accumulate_m2m;
  const std::int64_t num_out = acc ? n / 8 : n;
  wham_test::device_buffer<Z> in(C * n), out(C * num_out);
  wham_test::device_buffer<T> d(3 * n);
  std::vector<std::int32_t> src(n), tgt(n);
  for (std::int64_t i = 0; i < n; ++i) {
    src[i] = std::int32_t(i);
    tgt[i] = std::int32_t(i / 8);
  }
  wham_test::device_buffer<std::int32_t> d_src(src), d_tgt(tgt);
  wham_bench::fill_uniform(reinterpret_cast<T*>(in.data()), 2 * C * n, 1);
  wham_bench::fill_uniform(reinterpret_cast<T*>(out.data()), 2 * C * num_out, 4);
  wham_bench::fill_uniform(d.data(), 3 * n, 2);  // |delta| <= sqrt(3): a child's offset
  const double bytes =
      acc ? double(n) * (C * sizeof(Z) + 3.0 * sizeof(T) + 8.0) + 2.0 * num_out * C * sizeof(Z)
          : double(n) * (2.0 * C * sizeof(Z) + 3.0 * sizeof(T));
  const std::size_t half = std::size_t(bytes / 2) / 16 * 16;
  double floor_s = 0.0;
  {
    wham_test::device_buffer<unsigned char> scratch(2 * half);
    wham_bench::fill_uniform(reinterpret_cast<float*>(scratch.data()), half / sizeof(float), 3);
    floor_s = wham_bench::copy_floor(scratch.data(), scratch.data() + half, half, nullptr);
  }
  auto run = [&] {
    switch (f) {
      case pair_m2m:
        wham::m2m(in.data(), d.data(), out.data(), p, n, nullptr, path);
        break;
      case pair_l2l:
        wham::l2l(in.data(), d.data(), out.data(), p, n, nullptr, path);
        break;
      case accumulate_m2m:
        wham::m2m_accumulate(in.data(), d.data(), d_src.data(), d_tgt.data(), out.data(), p, n,
                             n, num_out, nullptr, path);
        break;
      case accumulate_l2l:
        wham::l2l_accumulate(in.data(), d.data(), d_src.data(), d_tgt.data(), out.data(), p, n,
                             n, num_out, nullptr, path);
        break;
    }
  };
  const double t = wham_bench::run_manual(state, nullptr, run);
  wham_bench::set_common_counters(state, t, bytes, floor_s);
  state.counters["p"] = p;
  state.counters["Mpairs/s"] = t > 0 ? double(n) / t * 1e-6 : 0.0;
  if (!acc && path == wham::translation_path::automatic) {
    // M2L over the same records, displacements moved off the near field
    const double tm = wham_bench::median_time(nullptr, [&] {
      wham::m2l(in.data(), d.data(), out.data(), p, n, nullptr);
    });
    state.counters["m2l_us"] = tm * 1e6;
    state.counters["m2l_ratio"] = tm / t;
  }
}

template <class T>
void translation_args(benchmark::internal::Benchmark* b) {
  using P = wham::translation_path;
  for (int f : {pair_m2m, pair_l2l, accumulate_m2m, accumulate_l2l}) {
    for (int p = 0; p <= wham::m2l_max_order<T>(); ++p) {
      b->Args({p, int(P::automatic), f});
      if (f >= accumulate_m2m) continue;
      // the explicit paths where automatic switches (the tuning table)
      if (p <= 4) b->Args({p, int(P::direct), f});
      if (p <= 12) b->Args({p, int(P::thread), f});
      if (p >= 7 && p <= 12) b->Args({p, int(P::split), f});
      if (p >= 6) b->Args({p, int(P::warp), f});
    }
  }
  b->ArgNames({"p", "path", "form"})->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK_TEMPLATE(BM_translation, float)->Apply(translation_args<float>);
BENCHMARK_TEMPLATE(BM_translation, double)->Apply(translation_args<double>);

BENCHMARK_MAIN();
