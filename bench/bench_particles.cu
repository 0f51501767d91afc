// The particle operators (wham/particles.cuh), CUDA-event manual time.
//
// P2M and L2P at p = 4, 8, 12 over 1e6 points in cells of 32 and 64 points (31,250 and
// 15,625 cells on a cubic grid): Mparticles/s, GB/s on the minimal bytes and floor_frac,
// a plain device copy of the same bytes (half read, half written) timed in the same run
// over ours (bench/common.cuh). Minimal bytes:
//   P2M  read points and charges (4 T a point), offsets and centres (8 + 3 T a cell),
//        write the multipoles ((p+1)^2 complex a cell);
//   L2P  read the locals, offsets and centres, the points (3 T a point), read and write the
//        potential (2 T a point) and, with the gradient, the gradient (6 T a point).
// P2P over a uniform grid of G^3 cells of 32, 64 or 128 points (G^3 x points near 1e6),
// each cell's near list its 27 neighbours (periodic, so that every cell has 27), with the
// gradient: Ginteractions/s (cells x 27 x points^2 pairs, the self pairs included), GFLOP/s
// at 20 flops an interaction (3 for the difference, 5 for r^2, 2 for the reciprocal square
// root, 1 for q/r, 1 to add it, 2 for q/r^3, 6 for the gradient: detail/particles/
// harmonics.cuh, add_interaction), and peak_frac, that over the device's FP64 (double) or
// FP32 (float) peak: SM count (queried) x clock (cudaDevAttrClockRate, queried) x FMA units
// an SM a clock x 2 flops an FMA, the FMA units by compute capability (sm_90: 64 FP64, 128
// FP32, H100 and H200; sm_80: 32 and 64, A100); 0 on other devices.
#include <wham/particles.cuh>

#include "common.cuh"

#include <cuda/std/complex>

#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

namespace {

constexpr std::int64_t total_points = 1000000;

/// Cells on a G x G x G grid of the unit cube (cell c at x = c % G fastest), the first
/// `cells` of them, `per_cell` points each, uniform in their cell; charges in [-1, 1].
template <class T>
struct host_grid {
  std::vector<T> x, q, centers;
  std::vector<std::int64_t> offsets;
  host_grid(std::int64_t cells, int per_cell, int g)
      : x(3 * std::size_t(cells * per_cell)),
        q(std::size_t(cells * per_cell)),
        centers(3 * std::size_t(cells)),
        offsets(std::size_t(cells) + 1) {
    std::mt19937_64 gen(42);
    std::uniform_real_distribution<double> u(-0.5, 0.5);
    const double h = 1.0 / g;
    for (std::int64_t c = 0; c < cells; ++c) {
      const double centre[3] = {(double(c % g) + 0.5) * h, (double((c / g) % g) + 0.5) * h,
                                (double(c / (std::int64_t(g) * g)) + 0.5) * h};
      for (int k = 0; k < 3; ++k) centers[3 * c + k] = T(centre[k]);
      offsets[c] = c * per_cell;
      for (std::int64_t i = c * per_cell; i < (c + 1) * per_cell; ++i) {
        for (int k = 0; k < 3; ++k) x[3 * i + k] = T(centre[k] + h * u(gen));
        q[i] = T(2.0 * u(gen));
      }
    }
    offsets[cells] = cells * per_cell;
  }
};

/// The grid on the device.
template <class T>
struct grid {
  std::int64_t cells, points;
  wham_test::device_buffer<T> x, q, centers;
  wham_test::device_buffer<std::int64_t> offsets;
  grid(std::int64_t num_cells, int per_cell, int g) : grid(host_grid<T>(num_cells, per_cell, g)) {}
  explicit grid(const host_grid<T>& h)
      : cells(std::int64_t(h.centers.size() / 3)),
        points(std::int64_t(h.q.size())),
        x(h.x),
        q(h.q),
        centers(h.centers),
        offsets(h.offsets) {}
};

/// The copy floor of `bytes` of traffic: a copy of bytes / 2 between the halves of a scratch
/// buffer (it reads and writes bytes in all).
double copy_floor_of(double bytes) {
  const std::size_t half = std::size_t(bytes / 2) / 16 * 16;
  wham_test::device_buffer<unsigned char> scratch(2 * half);
  wham_bench::fill_uniform(reinterpret_cast<float*>(scratch.data()), half / sizeof(float), 3);
  return wham_bench::copy_floor(scratch.data(), scratch.data() + half, half, nullptr);
}

int side_for(std::int64_t cells) {
  int g = int(std::ceil(std::cbrt(double(cells))));
  while (std::int64_t(g) * g * g < cells) ++g;
  return g;
}

template <class T>
void BM_p2m(benchmark::State& state) {
  const int p = int(state.range(0)), per_cell = int(state.range(1));
  const std::int64_t cells = total_points / per_cell;
  grid<T> g(cells, per_cell, side_for(cells));
  const std::size_t C = std::size_t(wham::m2l_num_coeffs(p));
  wham_test::device_buffer<cuda::std::complex<T>> M(C * std::size_t(cells));
  const double bytes = double(g.points) * 4 * sizeof(T) +
                       double(cells) * (8 + 3 * sizeof(T) + C * 2 * sizeof(T)) + 8;
  const double floor_s = copy_floor_of(bytes);
  const double t = wham_bench::run_manual(state, nullptr, [&] {
    wham::p2m(g.x.data(), g.q.data(), g.points, g.offsets.data(), g.centers.data(), cells, M.data(),
              p);
  });
  wham_bench::set_common_counters(state, t, bytes, floor_s);
  state.counters["p"] = p;
  state.counters["points_per_cell"] = per_cell;
  state.counters["Mparticles/s"] = t > 0 ? double(g.points) / t * 1e-6 : 0.0;
}

template <class T>
void BM_l2p(benchmark::State& state) {
  const int p = int(state.range(0)), per_cell = int(state.range(1));
  const bool with_gradient = state.range(2) != 0;
  const std::int64_t cells = total_points / per_cell;
  grid<T> g(cells, per_cell, side_for(cells));
  const std::size_t C = std::size_t(wham::m2l_num_coeffs(p));
  wham_test::device_buffer<cuda::std::complex<T>> L(C * std::size_t(cells));
  wham_bench::fill_uniform(reinterpret_cast<T*>(L.data()), 2 * C * std::size_t(cells), 1);
  wham_test::device_buffer<T> phi(std::size_t(g.points)), grad(3 * std::size_t(g.points));
  wham_bench::fill_uniform(phi.data(), phi.size(), 2);
  wham_bench::fill_uniform(grad.data(), grad.size(), 3);
  const double bytes = double(cells) * (8 + 3 * sizeof(T) + C * 2 * sizeof(T)) + 8 +
                       double(g.points) * (with_gradient ? 11 : 5) * sizeof(T);
  const double floor_s = copy_floor_of(bytes);
  const double t = wham_bench::run_manual(state, nullptr, [&] {
    wham::l2p(L.data(), g.centers.data(), g.offsets.data(), cells, g.x.data(), g.points, phi.data(),
              with_gradient ? grad.data() : nullptr, p);
  });
  wham_bench::set_common_counters(state, t, bytes, floor_s);
  state.counters["p"] = p;
  state.counters["points_per_cell"] = per_cell;
  state.counters["gradient"] = with_gradient;
  state.counters["Mparticles/s"] = t > 0 ? double(g.points) / t * 1e-6 : 0.0;
}

/// The current device's peak in flop/s for T (see the file comment); 0 where its FMA units
/// an SM are not listed.
template <class T>
double peak_flops() {
  int device = 0, sms = 0, khz = 0, major = 0, minor = 0;
  WHAM_TEST_CUDA(cudaGetDevice(&device));
  WHAM_TEST_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  WHAM_TEST_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  WHAM_TEST_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  WHAM_TEST_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  constexpr bool dp = std::is_same_v<T, double>;
  int fma_units = 0;
  if (major == 9 && minor == 0) fma_units = dp ? 64 : 128;
  if (major == 8 && minor == 0) fma_units = dp ? 32 : 64;
  return double(sms) * double(khz) * 1e3 * fma_units * 2.0;
}

template <class T>
void BM_p2p(benchmark::State& state) {
  const int per_cell = int(state.range(0));
  const int G = int(std::lround(std::cbrt(double(total_points) / per_cell)));
  const std::int64_t cells = std::int64_t(G) * G * G;
  grid<T> g(cells, per_cell, G);
  // 27 neighbours of every cell, periodic
  std::vector<std::int64_t> near_offsets(std::size_t(cells) + 1);
  std::vector<std::int32_t> near_cells;
  near_cells.reserve(std::size_t(cells) * 27);
  for (std::int64_t c = 0; c < cells; ++c) {
    near_offsets[c] = std::int64_t(near_cells.size());
    const int i = int(c % G), j = int((c / G) % G), k = int(c / (std::int64_t(G) * G));
    for (int dk = -1; dk <= 1; ++dk) {
      for (int dj = -1; dj <= 1; ++dj) {
        for (int di = -1; di <= 1; ++di) {
          const int a = (i + di + G) % G, b = (j + dj + G) % G, e = (k + dk + G) % G;
          near_cells.push_back(std::int32_t((std::int64_t(e) * G + b) * G + a));
        }
      }
    }
  }
  near_offsets[cells] = std::int64_t(near_cells.size());
  wham_test::device_buffer<std::int64_t> noff(near_offsets);
  wham_test::device_buffer<std::int32_t> ids(near_cells);
  wham_test::device_buffer<T> phi(std::size_t(g.points)), grad(3 * std::size_t(g.points));
  WHAM_TEST_CUDA(cudaMemset(phi.data(), 0, phi.bytes()));
  WHAM_TEST_CUDA(cudaMemset(grad.data(), 0, grad.bytes()));
  const double t = wham_bench::run_manual(state, nullptr, [&] {
    wham::p2p(g.x.data(), g.q.data(), g.points, g.offsets.data(), cells, noff.data(), ids.data(),
              std::int64_t(near_cells.size()), phi.data(), grad.data());
  });
  const double interactions = double(cells) * 27.0 * double(per_cell) * double(per_cell);
  constexpr double flops_per_interaction = 20.0;  // see the file comment
  const double peak = peak_flops<T>();
  state.counters["median_us"] = t * 1e6;
  state.counters["points_per_cell"] = per_cell;
  state.counters["cells"] = double(cells);
  state.counters["Ginteractions/s"] = t > 0 ? interactions / t * 1e-9 : 0.0;
  state.counters["GFLOP/s"] = t > 0 ? flops_per_interaction * interactions / t * 1e-9 : 0.0;
  state.counters["peak_GFLOP/s"] = peak * 1e-9;
  state.counters["peak_frac"] =
      t > 0 && peak > 0 ? flops_per_interaction * interactions / t / peak : 0.0;
}

void expansion_args(benchmark::internal::Benchmark* b) {
  for (int p : {4, 8, 12}) {
    for (int per_cell : {32, 64}) b->Args({p, per_cell});
  }
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

void l2p_args(benchmark::internal::Benchmark* b) {
  for (int p : {4, 8, 12}) {
    for (int per_cell : {32, 64}) {
      for (int gradient : {1, 0}) b->Args({p, per_cell, gradient});
    }
  }
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

void p2p_args(benchmark::internal::Benchmark* b) {
  for (int per_cell : {32, 64, 128}) b->Args({per_cell});
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK_TEMPLATE(BM_p2m, double)->Apply(expansion_args);
BENCHMARK_TEMPLATE(BM_p2m, float)->Apply(expansion_args);
BENCHMARK_TEMPLATE(BM_l2p, double)->Apply(l2p_args);
BENCHMARK_TEMPLATE(BM_l2p, float)->Apply(l2p_args);
BENCHMARK_TEMPLATE(BM_p2p, double)->Apply(p2p_args);
BENCHMARK_TEMPLATE(BM_p2p, float)->Apply(p2p_args);

BENCHMARK_MAIN();
