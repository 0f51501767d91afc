// The M2L as an FMM uses it: uniform-octree interaction lists (16^3 and 32^3 target
// cells, about 0.7M and 5.8M pairs) translated into accumulated locals.
//
// Per benchmark (args: p, level): pairs per second of one form, and in the same
// benchmark the pair-streaming form (wham::m2l) on the same pairs (multipoles
// gathered per pair beforehand, not timed), as `vs_pair_stream` = our pairs/s over
// its pairs/s. Forms:
//   accumulate_atomic / accumulate_deterministic   centres form (delta from cell centres)
//   class_atomic / class_deterministic             class form (316 displacement classes)
//   class_groups        class form on the same pairs grouped by class (the grouped schedule)
//   BM_class_groups_tensor<P> / BM_class_groups_dense<P>  one grouped schedule by name (the
//                       tensor one, or the dense class operator) against the scalar one
//                       and pair streaming, double, 16^3
//   class_groups_tiled  the same on the pairs grouped by tiles of targets, then by class
//                       (wham::group_by_tile_and_class, four z-planes a tile)
//   cublas_class_gemm   the dense-operator baseline: one C x C operator per class, built
//                       on the host from the direct form (not timed), applied to the
//                       pairs of every class by one strided batched GEMM (classes padded
//                       to the largest class); cuBLAS is loaded at run time
//                       (libcublas.so.13) and the benchmark skips where it is missing.
//                       It writes per-pair locals, no scatter into targets, so it is a
//                       lower bound of that baseline's time.
#include <wham/fmm.cuh>
#include <wham/fmm_lists.hpp>
#include <wham/m2l.cuh>
#include <wham/reference/m2l.hpp>

#include "common.cuh"

#include <cublas_v2.h>
#include <cuda/std/complex>
#include <dlfcn.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using method = wham::m2l_accumulate_method;

/// A list's pair columns on the device.
struct device_pairs {
  wham_test::device_buffer<std::int32_t> src, tgt, cls;
  explicit device_pairs(const wham::interaction_list& h) : src(h.src), tgt(h.tgt), cls(h.cls) {}
};

/// The interaction list of one uniform level, on the host and the device (cached).
struct level_list {
  int level = 0;
  wham::interaction_list host;
  std::vector<double> centers, class_deltas, pair_deltas;
  std::unique_ptr<wham_test::device_buffer<std::int32_t>> src, tgt, cls;
  /// the same pairs grouped by tiles of `planes` z-planes of targets, then by class
  /// (wham::group_by_tile_and_class; planes 0: by class alone,
  /// group_by_class), made on first use
  mutable std::map<int, std::unique_ptr<device_pairs>> tiled;
  const device_pairs& by_tile(int planes) const {
    auto& slot = tiled[planes];
    if (!slot) {
      const std::int64_t plane = std::int64_t(1) << (2 * level);
      slot = std::make_unique<device_pairs>(wham::group_by_tile_and_class(host, planes * plane));
    }
    return *slot;
  }
};

const level_list& get_level(int level) {
  static std::map<int, std::unique_ptr<level_list>> cache;
  auto& slot = cache[level];
  if (!slot) {
    slot = std::make_unique<level_list>();
    slot->level = level;
    slot->host = wham::uniform_interaction_lists(level);
    slot->centers = wham::cell_centers(level);
    slot->class_deltas = wham::uniform_class_deltas(1.0 / double(1 << level));
    const auto& h = slot->host;
    slot->pair_deltas.resize(3 * h.size());
    for (std::size_t i = 0; i < h.size(); ++i)
      for (int k = 0; k < 3; ++k)
        slot->pair_deltas[3 * i + k] = slot->class_deltas[3 * std::size_t(h.cls[i]) + k];
    slot->src = std::make_unique<wham_test::device_buffer<std::int32_t>>(h.src);
    slot->tgt = std::make_unique<wham_test::device_buffer<std::int32_t>>(h.tgt);
    slot->cls = std::make_unique<wham_test::device_buffer<std::int32_t>>(h.cls);
  }
  return *slot;
}

template <class T>
std::vector<T> narrow(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

/// What every form of this file runs on at one level and order: random cell
/// multipoles, zeroed cell locals, the cell centres and the class deltas in T.
template <class T>
struct level_buffers {
  using cT = cuda::std::complex<T>;
  wham_test::device_buffer<cT> M, Lc;
  wham_test::device_buffer<T> centers, classes;
  std::int64_t cells;
  level_buffers(const level_list& L, int level, int p)
      : M((std::size_t(1) << (3 * level)) * std::size_t((p + 1) * (p + 1))),
        Lc(M.size()),
        centers(narrow<T>(L.centers)),
        classes(narrow<T>(L.class_deltas)),
        cells(std::int64_t(1) << (3 * level)) {
    wham_bench::fill_uniform(reinterpret_cast<T*>(M.data()), M.bytes() / sizeof(T));
    WHAM_TEST_CUDA(cudaMemset(Lc.data(), 0, Lc.bytes()));
  }
  /// The schedules' own argument (detail level): L's pairs in the list order, or
  /// grouped by class; geometry from the centres or the class deltas.
  wham::detail::fmm::pair_list<T> list(const level_list& L, wham::detail::fmm::geometry mode,
                                       bool grouped) const {
    if (grouped) {
      const device_pairs& g = L.by_tile(0);
      return list(L, mode, g.src.data(), g.tgt.data(), g.cls.data());
    }
    return list(L, mode, L.src->data(), L.tgt->data(), L.cls->data());
  }
  /// The same on explicit pair columns (another order of L's pairs).
  wham::detail::fmm::pair_list<T> list(const level_list& L, wham::detail::fmm::geometry mode,
                                       const std::int32_t* src, const std::int32_t* tgt,
                                       const std::int32_t* cls) const {
    using wham::detail::fmm::cpx;
    const bool by_class = mode == wham::detail::fmm::geometry::classes;
    return {reinterpret_cast<const cpx<T>*>(M.data()),
            reinterpret_cast<cpx<T>*>(Lc.data()),
            src,
            tgt,
            by_class ? cls : nullptr,
            by_class ? classes.data() : centers.data(),
            by_class ? wham::uniform_num_classes : 0,
            mode,
            std::int64_t(L.host.size()),
            cells,
            cells};
  }
};

template <class T>
__global__ void gather_kernel(const cuda::std::complex<T>* cells, const std::int32_t* idx,
                              cuda::std::complex<T>* out, std::int64_t n, int C) {
  for (std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; j < n * C;
       j += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = j / C;
    out[j] = cells[std::int64_t(idx[i]) * C + (j - i * C)];
  }
}

/// Pairs per second of wham::m2l (pair streaming) on the list's pairs.
template <class T>
double pair_stream_seconds(const level_list& L,
                           const wham_test::device_buffer<cuda::std::complex<T>>& M, int p,
                           cudaStream_t stream, bool once_per_run = false) {
  const int C = (p + 1) * (p + 1);
  // once_per_run: measured once per type, level and order in this process (the
  // variant sweeps repeat them); else measured anew, beside the form it is compared to.
  static std::map<std::pair<int, int>, double> seen;
  const auto key = std::make_pair(L.level, p);
  if (once_per_run) {
    if (const auto it = seen.find(key); it != seen.end()) return it->second;
  }
  const std::int64_t n = std::int64_t(L.host.size());
  wham_test::device_buffer<cuda::std::complex<T>> Mp(std::size_t(n) * C), Lp(std::size_t(n) * C);
  wham_test::device_buffer<T> d(narrow<T>(L.pair_deltas));
  gather_kernel<<<wham_bench::floor_grid(), 256, 0, stream>>>(M.data(), L.src->data(), Mp.data(), n,
                                                              C);
  WHAM_TEST_CUDA(cudaGetLastError());
  return seen[key] = wham_bench::median_time(
             stream, [&] { wham::m2l(Mp.data(), d.data(), Lp.data(), p, n, stream); }, 5, 1);
}

enum class variant {
  atomic,
  deterministic,
  class_atomic,
  class_deterministic,
  class_groups,       ///< the list grouped by class
  class_groups_tiled  ///< the list grouped by tiles of four z-planes of targets, then by class
};

/// args: p, level
template <class T, variant V>
void BM_fmm(benchmark::State& state) {
  const int p = int(state.range(0));
  const int level = int(state.range(1));
  if (p > wham::m2l_max_order<T>()) {
    state.SkipWithError("order beyond this precision");
    return;
  }
  const level_list& L = get_level(level);
  const std::int64_t n = std::int64_t(L.host.size());
  const level_buffers<T> b(L, level, p);
  // planes 0: grouped by class alone (group_by_class)
  const device_pairs* tiled = V == variant::class_groups         ? &L.by_tile(0)
                              : V == variant::class_groups_tiled ? &L.by_tile(4)
                                                                 : nullptr;
  cudaStream_t stream = nullptr;
  const double t = wham_bench::run_manual(state, stream, [&] {
    switch (V) {
      case variant::atomic:
      case variant::deterministic:
        wham::m2l_accumulate_centers(b.M.data(), b.centers.data(), L.src->data(), L.tgt->data(),
                                     b.Lc.data(), p, n, b.cells, b.cells, stream,
                                     V == variant::atomic ? method::atomic : method::deterministic);
        break;
      case variant::class_atomic:
      case variant::class_deterministic:
        wham::m2l_accumulate_classes(
            b.M.data(), b.classes.data(), L.cls->data(), L.src->data(), L.tgt->data(), b.Lc.data(),
            p, n, wham::uniform_num_classes, b.cells, b.cells, stream,
            V == variant::class_atomic ? method::atomic : method::deterministic);
        break;
      case variant::class_groups:
      case variant::class_groups_tiled: {
        // the grouped schedule itself wherever it serves (the public function may
        // route an order elsewhere), on the list grouped by class (or by tile and class)
        const std::int32_t* src = tiled->src.data();
        const std::int32_t* tgt = tiled->tgt.data();
        const std::int32_t* cls = tiled->cls.data();
        if (p >= wham::detail::fmm::class_group_min_order &&
            p <= wham::detail::fmm::class_group_max_order<T>()) {
          wham::detail::fmm::launch_class_groups<T>(
              b.list(L, wham::detail::fmm::geometry::classes, src, tgt, cls), p, stream);
        } else {
          wham::m2l_accumulate_class_groups(b.M.data(), b.classes.data(), cls, src, tgt,
                                            b.Lc.data(), p, n, wham::uniform_num_classes, b.cells,
                                            b.cells, stream);
        }
        break;
      }
    }
  });
  const double ts = pair_stream_seconds<T>(L, b.M, p, stream);
  state.counters["p"] = p;
  state.counters["pairs"] = double(n);
  state.counters["median_us"] = t * 1e6;
  state.counters["Mpairs/s"] = t > 0 ? double(n) / t * 1e-6 : 0.0;
  state.counters["pair_stream_us"] = ts * 1e6;
  state.counters["vs_pair_stream"] = t > 0 ? ts / t : 0.0;
}

// ---- the dense-operator cuBLAS baseline ------------------------------------------------

struct cublas_api {
  void* lib = nullptr;
  cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t) = nullptr;
  cublasStatus_t (*zgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                          const cuDoubleComplex*, const cuDoubleComplex*, int, long long,
                          const cuDoubleComplex*, int, long long, const cuDoubleComplex*,
                          cuDoubleComplex*, int, long long, int) = nullptr;
  cublasStatus_t (*cgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                          const cuComplex*, const cuComplex*, int, long long, const cuComplex*, int,
                          long long, const cuComplex*, cuComplex*, int, long long, int) = nullptr;
  cublasHandle_t handle = nullptr;
  bool ok = false;
};

const cublas_api& cublas() {
  static cublas_api api = [] {
    cublas_api a;
    for (const char* name : {"libcublas.so.13", "libcublas.so"}) {
      a.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (a.lib) break;
    }
    if (!a.lib) return a;
    a.create = reinterpret_cast<decltype(a.create)>(dlsym(a.lib, "cublasCreate_v2"));
    a.destroy = reinterpret_cast<decltype(a.destroy)>(dlsym(a.lib, "cublasDestroy_v2"));
    a.set_stream = reinterpret_cast<decltype(a.set_stream)>(dlsym(a.lib, "cublasSetStream_v2"));
    a.zgemm = reinterpret_cast<decltype(a.zgemm)>(dlsym(a.lib, "cublasZgemmStridedBatched"));
    a.cgemm = reinterpret_cast<decltype(a.cgemm)>(dlsym(a.lib, "cublasCgemmStridedBatched"));
    a.ok = a.create && a.destroy && a.set_stream && a.zgemm && a.cgemm &&
           a.create(&a.handle) == CUBLAS_STATUS_SUCCESS;
    return a;
  }();
  return api;
}

/// The dense operator of one class, column-major C x C: A[(n,m), (k,l)] =
/// (-1)^l S_{n+k}^{m-l}(delta) for n + k <= p (the direct form).
std::vector<std::complex<double>> dense_operator(int p, const double* delta) {
  const int C = (p + 1) * (p + 1);
  const auto S = wham::reference::singular_harmonics(p, delta[0], delta[1], delta[2]);
  std::vector<std::complex<double>> A(std::size_t(C) * C);
  for (int n = 0; n <= p; ++n)
    for (int m = -n; m <= n; ++m)
      for (int k = 0; k <= p - n; ++k)
        for (int l = -k; l <= k; ++l) {
          const int row = n * n + n + m, col = k * k + k + l;
          const int d = n + k, o = m - l;
          if (o < -d || o > d) continue;
          A[std::size_t(col) * C + row] = ((l & 1) ? -1.0 : 1.0) * S[std::size_t(d * d + d + o)];
        }
  return A;
}

/// args: p, level
template <class T>
void BM_cublas_class_gemm(benchmark::State& state) {
  const int p = int(state.range(0));
  const int level = int(state.range(1));
  const auto& api = cublas();
  if (!api.ok) {
    state.SkipWithError("libcublas.so.13 not loadable here");
    return;
  }
  const level_list& L = get_level(level);
  const int C = (p + 1) * (p + 1);
  const int K = wham::uniform_num_classes;
  std::vector<std::int64_t> count(K, 0);
  for (auto c : L.host.cls) ++count[std::size_t(c)];
  const std::int64_t nmax = *std::max_element(count.begin(), count.end());
  using cT = cuda::std::complex<T>;
  // Operators (host, double, then T), multipoles of [class][nmax][C] (padded), outputs.
  std::vector<cT> A(std::size_t(K) * C * C);
  for (int k = 0; k < K; ++k) {
    const auto a = dense_operator(p, L.class_deltas.data() + 3 * k);
    for (std::size_t i = 0; i < a.size(); ++i)
      A[std::size_t(k) * C * C + i] = cT(T(a[i].real()), T(a[i].imag()));
  }
  wham_test::device_buffer<cT> dA(A), dM(std::size_t(K) * nmax * C), dL(std::size_t(K) * nmax * C);
  wham_bench::fill_uniform(reinterpret_cast<T*>(dM.data()), dM.bytes() / sizeof(T));
  cudaStream_t stream = nullptr;
  api.set_stream(api.handle, stream);
  const double t = wham_bench::run_manual(state, stream, [&] {
    cublasStatus_t s;
    if constexpr (std::is_same_v<T, double>) {
      const cuDoubleComplex one{1.0, 0.0}, zero{0.0, 0.0};
      s = api.zgemm(api.handle, CUBLAS_OP_N, CUBLAS_OP_N, C, int(nmax), C, &one,
                    reinterpret_cast<const cuDoubleComplex*>(dA.data()), C, (long long)C * C,
                    reinterpret_cast<const cuDoubleComplex*>(dM.data()), C, (long long)C * nmax,
                    &zero, reinterpret_cast<cuDoubleComplex*>(dL.data()), C, (long long)C * nmax,
                    K);
    } else {
      const cuComplex one{1.0f, 0.0f}, zero{0.0f, 0.0f};
      s = api.cgemm(api.handle, CUBLAS_OP_N, CUBLAS_OP_N, C, int(nmax), C, &one,
                    reinterpret_cast<const cuComplex*>(dA.data()), C, (long long)C * C,
                    reinterpret_cast<const cuComplex*>(dM.data()), C, (long long)C * nmax, &zero,
                    reinterpret_cast<cuComplex*>(dL.data()), C, (long long)C * nmax, K);
    }
    if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublas gemm failed");
  });
  const double n = double(L.host.size());
  state.counters["p"] = p;
  state.counters["pairs"] = n;
  state.counters["padded_pairs"] = double(K * nmax);
  state.counters["median_us"] = t * 1e6;
  state.counters["Mpairs/s"] = t > 0 ? n / t * 1e-6 : 0.0;
}

/// Warps per block of the split schedule in the accumulate form (centres, atomic,
/// 16^3 level), for detail/fmm/tuning.cuh's accumulate_split_warps: args none, P, G and
/// the blocks an SM that registers must allow (0: no cap) compile time.
template <class T, int P, int G, int MinBlocks = 0>
void BM_fmm_split_variant(benchmark::State& state) {
  const level_list& L = get_level(4);
  const std::int64_t n = std::int64_t(L.host.size());
  const level_buffers<T> b(L, 4, P);
  const auto l = b.list(L, wham::detail::fmm::geometry::centers, false);
  const double t = wham_bench::run_manual(state, nullptr, [&] {
    wham::detail::fmm::launch_tile_variant<P, T, 32, 32 * G, wham::detail::fmm::translator::split,
                                           MinBlocks>(l, false, nullptr);
  });
  state.counters["p"] = P;
  state.counters["warps"] = G;
  state.counters["min_blocks"] = MinBlocks;
  state.counters["Mpairs/s"] = t > 0 ? double(n) / t * 1e-6 : 0.0;
}

/// Warps per block of the grouped class schedule (16^3 level, grouped list), for
/// class_group_warps: args none, P and W compile time; vs_pair_stream as BM_fmm.
template <class T, int P, int W>
void BM_class_groups_warps(benchmark::State& state) {
  const level_list& L = get_level(4);
  const level_buffers<T> b(L, 4, P);
  const auto l = b.list(L, wham::detail::fmm::geometry::classes, true);
  const double t = wham_bench::run_manual(
      state, nullptr, [&] { wham::detail::fmm::launch_class_group_schedule<P, T, W>(l, nullptr); });
  const double ts = pair_stream_seconds<T>(L, b.M, P, nullptr);
  state.counters["p"] = P;
  state.counters["warps"] = W;
  state.counters["median_us"] = t * 1e6;
  state.counters["vs_pair_stream"] = t > 0 ? ts / t : 0.0;
}

/// Grouped class schedules in double against the scalar one (class_group_warps warps) and
/// pair streaming on the same grouped 16^3 level in the same run: Dense false, the tensor
/// schedule (class_tensor_apply); true, the dense operator (class_dense.cuh).
template <int P, bool Dense>
void BM_class_groups_tensor(benchmark::State& state) {
  const level_list& L = get_level(4);
  const level_buffers<double> b(L, 4, P);
  const auto l = b.list(L, wham::detail::fmm::geometry::classes, true);
  namespace f = wham::detail::fmm;
  bool ok = true;
  const double t = wham_bench::run_manual(state, nullptr, [&] {
    if constexpr (Dense) {
      ok = f::launch_class_dense_order<P>(l, nullptr);
    } else {
      f::launch_class_group_schedule<P, double, f::class_tensor_warps, true>(l, nullptr);
    }
  });
  if (!ok) {
    state.SkipWithError("the dense schedule's shared memory does not fit this device");
    return;
  }
  const double tscalar = wham_bench::median_time(
      nullptr, [&] { f::launch_class_group_schedule<P, double>(l, nullptr); }, 7, 1);
  const double ts = pair_stream_seconds<double>(L, b.M, P, nullptr);
  state.counters["p"] = P;
  state.counters["median_us"] = t * 1e6;
  state.counters["scalar_us"] = tscalar * 1e6;
  state.counters["vs_scalar"] = t > 0 ? tscalar / t : 0.0;
  state.counters["vs_pair_stream"] = t > 0 ? ts / t : 0.0;
}

/// Spans of the grouped class schedule against the list's order, for
/// class_group_span_max: args p, level, planes (0: grouped by class alone; else tiles of
/// that many z-planes of targets, then class), span_max (0: one contiguous stretch a
/// block, the schedule before spans); vs_pair_stream as BM_fmm (pair streaming measured once per
/// level and order in the run).
template <class T>
void BM_class_groups_span(benchmark::State& state) {
  const int p = int(state.range(0)), level = int(state.range(1));
  const int planes = int(state.range(2));
  const std::int64_t span_max = state.range(3);
  const level_list& L = get_level(level);
  const level_buffers<T> b(L, level, p);
  const device_pairs& g = L.by_tile(planes);
  const auto l =
      b.list(L, wham::detail::fmm::geometry::classes, g.src.data(), g.tgt.data(), g.cls.data());
  bool done = false;
  const double t = wham_bench::run_manual(state, nullptr, [&] {
    wham::detail::arch::static_for<8, 17>([&](auto Pc) {
      constexpr int P = decltype(Pc)::value;
      if (P == p) {
        wham::detail::fmm::launch_class_group_order<P, T>(l, nullptr, span_max);
        done = true;
      }
    });
  });
  if (!done) {
    state.SkipWithError("order outside 8..16");
    return;
  }
  const double ts = pair_stream_seconds<T>(L, b.M, p, nullptr, true);
  state.counters["p"] = p;
  state.counters["planes"] = planes;
  state.counters["span_max"] = double(span_max);
  state.counters["median_us"] = t * 1e6;
  state.counters["vs_pair_stream"] = t > 0 ? ts / t : 0.0;
}
void span_args(benchmark::internal::Benchmark* b) {
  for (int p : {8, 10, 12, 16}) {
    for (const auto& ps : {std::pair<int, int>{0, 0},
                           {0, 32},
                           {0, 64},
                           {0, 128},
                           {2, 64},
                           {4, 32},
                           {4, 64},
                           {4, 128},
                           {8, 64}}) {
      b->Args({p, 5, ps.first, ps.second});
    }
  }
  for (int p : {9, 10, 12, 16}) {
    for (const auto& ps : {std::pair<int, int>{0, 0}, {0, 64}, {4, 64}}) {
      b->Args({p, 4, ps.first, ps.second});
    }
  }
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}
void span_args_float(benchmark::internal::Benchmark* b) {
  for (int p : {12, 16})
    for (const auto& ps : {std::pair<int, int>{0, 0}, {0, 64}, {4, 64}}) {
      b->Args({p, 5, ps.first, ps.second});
    }
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

void levels_all_p(benchmark::internal::Benchmark* b) {
  for (int level : {4, 5})
    for (int p = 2; p <= 16; ++p) b->Args({p, level});
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}
void gemm_args(benchmark::internal::Benchmark* b) {
  for (int p : {2, 3, 4, 5, 8, 12, 16}) b->Args({p, 4});
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK_TEMPLATE(BM_fmm_split_variant, double, 8, 1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_fmm_split_variant, double, 8, 2)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_fmm_split_variant, double, 8, 2, 5)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_fmm_split_variant, double, 7, 2, 5)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_fmm_split_variant, double, 7, 2)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_fmm_split_variant, double, 9, 1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_fmm_split_variant, double, 9, 2)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_fmm_split_variant, double, 10, 2)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_fmm_split_variant, double, 12, 2)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_fmm_split_variant, double, 12, 4)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 1, true)
    ->Name("BM_class_groups_dense<1>")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 2, true)
    ->Name("BM_class_groups_dense<2>")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 3, true)
    ->Name("BM_class_groups_dense<3>")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 4, true)
    ->Name("BM_class_groups_dense<4>")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 5, true)
    ->Name("BM_class_groups_dense<5>")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 6, true)
    ->Name("BM_class_groups_dense<6>")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 7, true)
    ->Name("BM_class_groups_dense<7>")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 8, true)
    ->Name("BM_class_groups_dense<8>")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 9, true)
    ->Name("BM_class_groups_dense<9>")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 10, true)
    ->Name("BM_class_groups_dense<10>")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 2, false)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 4, false)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 6, false)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 8, false)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 9, false)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 10, false)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 11, false)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 12, false)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 13, false)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 14, false)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 15, false)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_tensor, 16, false)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 8, 3)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 8, 4)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 8, 5)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 9, 4)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 9, 5)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 10, 4)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 10, 5)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 10, 6)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 12, 5)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 12, 6)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 13, 5)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 13, 6)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 13, 7)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 16, 6)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 16, 7)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, double, 16, 8)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, float, 12, 4)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, float, 12, 5)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, float, 12, 6)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, float, 16, 6)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, float, 16, 7)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_class_groups_warps, float, 16, 8)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_fmm, double, variant::atomic)
    ->Name("accumulate_atomic<double>")
    ->Apply(levels_all_p);
BENCHMARK_TEMPLATE(BM_fmm, double, variant::deterministic)
    ->Name("accumulate_deterministic<double>")
    ->Apply(levels_all_p);
BENCHMARK_TEMPLATE(BM_fmm, double, variant::class_atomic)
    ->Name("class_atomic<double>")
    ->Apply(levels_all_p);
BENCHMARK_TEMPLATE(BM_fmm, double, variant::class_deterministic)
    ->Name("class_deterministic<double>")
    ->Apply(levels_all_p);
BENCHMARK_TEMPLATE(BM_fmm, double, variant::class_groups)
    ->Name("class_groups<double>")
    ->Apply(levels_all_p);
BENCHMARK_TEMPLATE(BM_fmm, double, variant::class_groups_tiled)
    ->Name("class_groups_tiled<double>")
    ->Apply(levels_all_p);
BENCHMARK_TEMPLATE(BM_class_groups_span, double)->Apply(span_args);
BENCHMARK_TEMPLATE(BM_class_groups_span, float)->Apply(span_args_float);
BENCHMARK_TEMPLATE(BM_cublas_class_gemm, double)
    ->Name("cublas_class_gemm<double>")
    ->Apply(gemm_args);
BENCHMARK_TEMPLATE(BM_fmm, float, variant::atomic)
    ->Name("accumulate_atomic<float>")
    ->Apply(levels_all_p);
BENCHMARK_TEMPLATE(BM_fmm, float, variant::deterministic)
    ->Name("accumulate_deterministic<float>")
    ->Apply(levels_all_p);
BENCHMARK_TEMPLATE(BM_fmm, float, variant::class_atomic)
    ->Name("class_atomic<float>")
    ->Apply(levels_all_p);
BENCHMARK_TEMPLATE(BM_fmm, float, variant::class_deterministic)
    ->Name("class_deterministic<float>")
    ->Apply(levels_all_p);
BENCHMARK_TEMPLATE(BM_fmm, float, variant::class_groups)
    ->Name("class_groups<float>")
    ->Apply(levels_all_p);
BENCHMARK_TEMPLATE(BM_fmm, float, variant::class_groups_tiled)
    ->Name("class_groups_tiled<float>")
    ->Apply(levels_all_p);
BENCHMARK_TEMPLATE(BM_cublas_class_gemm, float)->Name("cublas_class_gemm<float>")->Apply(gemm_args);

BENCHMARK_MAIN();
