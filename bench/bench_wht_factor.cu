// One Hadamard factor in three forms, to choose among them for large n: apply each factor
// of H_n = H_hi (x) H_lo as register butterflies or as a small dense product with a
// Hadamard block (entries +-1, exact in every precision), on tensor cores where they win.
// The factor is H_8 (3 bits) over "columns" of 8 elements strided by `cols` (element j of
// column c at j * cols + c): the access pattern of a Kronecker strided stage, each load
// and store coalesced across a warp's columns.
//
//   form 0, butterfly: 3 add/sub stages in registers (detail/wht/common.cuh's
//           register_butterflies, what every wham kernel runs): 24 adds a column.
//   form 1, dense:     the 8 x 8 +-1 product in registers, 64 multiply-adds a column
//           (the signs are compile-time constants; the compiler may fold them).
//   form 2, mma:       double only, FP64 tensor cores (mma.sync.m8n8k4, two k-steps): a
//           warp's tile of 8 columns times H_8; between repetitions the result goes
//           back to the A-fragment layout through 4 shuffles.
//
// Two settings (first argument `reps`):
//   reps = 1:  one pass over 1 GiB (load, factor, store): memory-bound; floor_frac
//              against a copy of the same bytes in the same run.
//   reps = 64: the factor 64 times between one load and one store, over 256 MiB:
//              the form's arithmetic cost, as factor applications a second (Gfactor/s:
//              columns x reps / time).
// Each form's output is compared with the butterflies' before timing (relative error
// 1e-4 float, 1e-12 double); a mismatch skips the row with an error.
#include <wham/detail/arch/mma.cuh>
#include <wham/detail/wht/common.cuh>

#include "common.cuh"

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace {

enum factor_form { butterfly = 0, dense = 1, mma = 2 };

constexpr int rows8 = 8;  // the factor's size: H_8

/// +-1 entry (j, k) of H_8: (-1)^popcount(j & k).
__host__ __device__ constexpr int h8_sign(int j, int k) {
  const int b = j & k;
  return ((b ^ (b >> 1) ^ (b >> 2)) & 1) ? -1 : 1;
}

template <class T>
__device__ __forceinline__ void dense_h8(T (&v)[rows8]) {
  T out[rows8];
#pragma unroll
  for (int j = 0; j < rows8; ++j) {
    T acc = T(0);
#pragma unroll
    for (int k = 0; k < rows8; ++k) acc = fma(T(h8_sign(j, k)), v[k], acc);
    out[j] = acc;
  }
#pragma unroll
  for (int j = 0; j < rows8; ++j) v[j] = out[j];
}

/// Forms 0 and 1: one thread a column.
template <class T, int Form>
__global__ void __launch_bounds__(256)
    factor_thread_kernel(const T* __restrict__ in, T* __restrict__ out, std::int64_t cols, int reps,
                         T scale) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t c = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; c < cols;
       c += stride) {
    T v[rows8];
#pragma unroll
    for (int j = 0; j < rows8; ++j) v[j] = in[j * cols + c];
    for (int r = 0; r < reps; ++r) {
      if constexpr (Form == butterfly) {
        wham::detail::wht::register_butterflies<3>(v);
      } else {
        dense_h8(v);
      }
#pragma unroll
      for (int j = 0; j < rows8; ++j) v[j] *= scale;
    }
#pragma unroll
    for (int j = 0; j < rows8; ++j) out[j * cols + c] = v[j];
  }
}

/// Form 2: one warp a tile of 8 columns (cols a multiple of 8). The tile as an 8 x 8
/// matrix A[m][k] = element k of column c0 + m; D = A H_8. m8n8k4 fragments (f64):
/// A: lane holds A[lane / 4][lane % 4 (+ 4 for the second k-step)]; B: B[lane % 4
/// (+ 4)][lane / 4]; D: D[lane / 4][2 (lane % 4) + {0, 1}].
__global__ void __launch_bounds__(256)
    factor_mma_kernel(const double* __restrict__ in, double* __restrict__ out, std::int64_t cols,
                      int reps, double scale) {
  const int lane = threadIdx.x & 31;
  const int g = lane >> 2, q = lane & 3;
  const double b0 = h8_sign(q, g), b1 = h8_sign(q + 4, g);
  const std::int64_t tiles = cols / 8;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t t = blockIdx.x * std::int64_t(blockDim.x / 32) + (threadIdx.x >> 5); t < tiles;
       t += warps) {
    const std::int64_t c = t * 8 + g;
    double a0 = in[q * cols + c], a1 = in[(q + 4) * cols + c];
    double d[2] = {0.0, 0.0};
    for (int r = 0; r < reps; ++r) {
      d[0] = 0.0;
      d[1] = 0.0;
      wham::detail::arch::mma_m8n8k4_f64(d[0], d[1], a0, b0);
      wham::detail::arch::mma_m8n8k4_f64(d[0], d[1], a1, b1);
      d[0] *= scale;
      d[1] *= scale;
      if (r + 1 < reps) {
        // A[g][q] = D[g][q] sits in lane 4g + q/2, slot q % 2; A[g][q + 4] in lane
        // 4g + q/2 + 2, same slot.
        const int src = 4 * g + (q >> 1);
        const double lo0 = __shfl_sync(0xffffffffu, d[0], src);
        const double lo1 = __shfl_sync(0xffffffffu, d[1], src);
        const double hi0 = __shfl_sync(0xffffffffu, d[0], src + 2);
        const double hi1 = __shfl_sync(0xffffffffu, d[1], src + 2);
        a0 = (q & 1) ? lo1 : lo0;
        a1 = (q & 1) ? hi1 : hi0;
      }
    }
    out[(2 * q) * cols + c] = d[0];
    out[(2 * q + 1) * cols + c] = d[1];
  }
}

template <class T>
void launch_form(int form, const T* in, T* out, std::int64_t cols, int reps, cudaStream_t s) {
  const T scale = T(1.0 / std::sqrt(8.0));  // keeps repeated factors bounded
  const int grid = wham_bench::floor_grid();
  if (form == butterfly) {
    factor_thread_kernel<T, butterfly><<<grid, 256, 0, s>>>(in, out, cols, reps, scale);
  } else if (form == dense) {
    factor_thread_kernel<T, dense><<<grid, 256, 0, s>>>(in, out, cols, reps, scale);
  } else if constexpr (std::is_same_v<T, double>) {
    factor_mma_kernel<<<grid, 256, 0, s>>>(in, out, cols, reps, scale);
  }
  WHAM_TEST_CUDA(cudaGetLastError());
}

/// The form's output on a small input against the butterflies' (relative error).
template <class T>
double check_form(int form, int reps) {
  const std::int64_t cols = 8 * 4096;
  wham_test::device_buffer<T> in(8 * cols), want(8 * cols), got(8 * cols);
  wham_bench::fill_uniform(in.data(), in.size(), 7);
  want.poison();
  got.poison();
  launch_form<T>(butterfly, in.data(), want.data(), cols, reps, nullptr);
  launch_form<T>(form, in.data(), got.data(), cols, reps, nullptr);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto w = want.download(), g = got.download();
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double e = double(g[i]) - double(w[i]);
    if (!std::isfinite(e)) return INFINITY;
    num += e * e;
    den += double(w[i]) * double(w[i]);
  }
  return std::sqrt(num / den);
}

/// args: reps (1: memory-bound pass over 1 GiB; 64: compute-bound over 256 MiB), form
template <class T>
void BM_factor(benchmark::State& state) {
  const int reps = static_cast<int>(state.range(0));
  const int form = static_cast<int>(state.range(1));
  if (form == mma && !std::is_same_v<T, double>) {
    state.SkipWithError("the mma form is FP64 only");
    return;
  }
  const double err = check_form<T>(form, reps);
  state.counters["rel_error_vs_butterfly"] = err;
  // 64 orthonormal factors in float: rounding walks about sqrt(64) * 2e-7; 1e-4 leaves room
  if (!(err <= (std::is_same_v<T, double> ? 1e-12 : 1e-4))) {
    state.SkipWithError("the form's output differs from the butterflies'");
    return;
  }
  const std::size_t bytes = reps == 1 ? std::size_t(1) << 30 : std::size_t(256) << 20;
  const std::int64_t cols = std::int64_t(bytes / sizeof(T) / 8);
  wham_test::device_buffer<T> in(8 * cols), out(8 * cols);
  wham_bench::fill_uniform(in.data(), in.size(), 11);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  cudaStream_t stream = nullptr;
  const double floor_s = wham_bench::copy_floor(in.data(), out.data(), in.bytes(), stream);
  const double t = wham_bench::run_manual(
      state, stream, [&] { launch_form<T>(form, in.data(), out.data(), cols, reps, stream); });
  wham_bench::set_common_counters(state, t, 2.0 * double(in.bytes()), floor_s);
  state.counters["reps"] = reps;
  state.counters["form"] = form;
  state.counters["Gfactor/s"] = t > 0 ? double(cols) * reps / t * 1e-9 : 0.0;
}

template <class T>
void factor_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"reps", "form"});
  for (int reps : {1, 64}) {
    for (int form : {butterfly, dense, mma}) {
      if (form != mma || std::is_same_v<T, double>) b->Args({reps, form});
    }
  }
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK_TEMPLATE(BM_factor, float)->Apply(factor_args<float>);
BENCHMARK_TEMPLATE(BM_factor, double)->Apply(factor_args<double>);

BENCHMARK_MAIN();
