/// \file wham/detail/particles/p2m.cuh
/// \brief P2M: one block a cell, compile-time order P.
///
///   multipoles[c] = sum_{i in cell c} charges[i] R(points[i] - centers[c])   (overwritten)
///
/// A block of p2m_threads<P> threads: thread t owns column m = t % (P+1) of the harmonics
/// (m >= 0) and slice s = t / (P+1) of the cell's points (S = threads / (P+1) slices; the
/// spare threads of the last warp idle). The cell's points are staged in tiles of one
/// point a thread through shared memory (coalesced loads, x - centre formed once); each
/// thread adds q R_n^m, n = m..P, of its slice's points into P+1 registers (add_column).
/// The slices' partial sums meet in shared memory (the tile's storage, reused), and the
/// block writes the (P+1)^2 coefficients contiguously: M_n^m summed over the slices, and
/// M_n^{-m} = (-1)^m conj(M_n^m) (the charges are real). Shared memory: the tile or the
/// partial sums (S (P+1)(P+2)/2 complex: 33 KB at p = 20 in double) and 1/j, j <= P*P.
/// An empty cell (offsets clamped, an end below its begin) gets zeros.
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/particles/harmonics.cuh>
#include <wham/detail/particles/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace wham::detail::particles {

/// Shared-memory layout of the P2M block at order P.
template <int P, class T>
struct p2m_shape {
  static constexpr int threads = p2m_threads<P>;
  static constexpr int columns = P + 1;
  static constexpr int slices = threads / columns;
  static constexpr int half = (P + 1) * (P + 2) / 2;  ///< coefficients m >= 0
  static constexpr int tile = threads;                ///< points staged at a time
  static constexpr std::size_t tile_bytes = std::size_t(4) * tile * sizeof(T);
  static constexpr std::size_t sums_bytes = std::size_t(slices) * half * sizeof(cpx<T>);
  static constexpr std::size_t bytes = tile_bytes > sums_bytes ? tile_bytes : sums_bytes;
};

/// Position of (n, m), m >= 0, among the coefficients m >= 0.
__host__ __device__ __forceinline__ int half_index(int n, int m) { return n * (n + 1) / 2 + m; }

/// Degree n of the coefficient j = n*n + n + m (j < 441: the float square root is exact at
/// the squares, the correction covers rounding below them).
__device__ __forceinline__ int degree_of(int j) {
  int n = int(sqrtf(float(j)));
  if (n * n > j) --n;
  if ((n + 1) * (n + 1) <= j) ++n;
  return n;
}

template <int P, class T>
__global__ void __launch_bounds__(p2m_threads<P>)
    p2m_kernel(const T* __restrict__ points, const T* __restrict__ charges, std::int64_t num_points,
               const std::int64_t* __restrict__ cell_offsets, const T* __restrict__ centers,
               cpx<T>* __restrict__ multipoles) {
  using shape = p2m_shape<P, T>;
  constexpr int NT = shape::threads, NC = shape::columns, S = shape::slices, H = shape::half;
  constexpr int C = (P + 1) * (P + 1);
  __shared__ __align__(16) unsigned char raw[shape::bytes];
  __shared__ T inv[inverse_entries<P>];
  T* tile = reinterpret_cast<T*>(raw);            // [4][NT]: x, y, z (less the centre), q
  cpx<T>* sums = reinterpret_cast<cpx<T>*>(raw);  // [S][H], after the last tile
  const std::int64_t c = blockIdx.x;
  const int t = threadIdx.x;
  const int m = t % NC, s = t / NC;
  fill_inverses<P>(inv, t, NT);
  const point_range r = clamped_range(cell_offsets, c, num_points);
  const T cx = centers[3 * c], cy = centers[3 * c + 1], cz = centers[3 * c + 2];
  cpx<T> acc[P + 1];
#pragma unroll
  for (int k = 0; k <= P; ++k) acc[k] = {T(0), T(0)};
  for (std::int64_t base = r.begin; base < r.end; base += NT) {
    const int count = int(min(std::int64_t(NT), r.end - base));
    __syncthreads();  // the previous tile is used up (and, the first time, inv is filled)
    // x, y, z in three coalesced passes (not unrolled: unrolled, ptxas of CUDA 13.0 spilled
    // a few bytes at some orders)
#pragma unroll 1
    for (int j = t; j < 3 * count; j += NT) {
      const int q = j / 3, k = j - 3 * q;
      tile[k * NT + q] = points[3 * base + j] - (k == 0 ? cx : (k == 1 ? cy : cz));
    }
    if (t < count) tile[3 * NT + t] = charges[base + t];
    __syncthreads();
    if (s < S) {
      for (int i = s; i < count; i += S) {
        add_column<P>(tile[i], tile[NT + i], tile[2 * NT + i], tile[3 * NT + i], m, inv, acc);
      }
    }
  }
  __syncthreads();  // the tile's storage becomes the partial sums
  if (s < S) {
#pragma unroll
    for (int k = 0; k <= P; ++k) {
      if (k <= P - m) sums[s * H + half_index(m + k, m)] = acc[k];
    }
  }
  __syncthreads();
  cpx<T>* out = multipoles + c * C;
  for (int j = t; j < C; j += NT) {
    const int n = degree_of(j);
    const int mm = j - n * n - n;
    const int h = half_index(n, mm < 0 ? -mm : mm);
    cpx<T> v = {T(0), T(0)};
#pragma unroll
    for (int k = 0; k < S; ++k) v = v + sums[k * H + h];
    if (mm < 0) v = (mm & 1) ? cpx<T>{-v.re, v.im} : cpx<T>{v.re, -v.im};
    out[j] = v;
  }
}

/// One launch of the P2M kernel, one block a cell (num_cells in 1..2^31-1, checked).
template <class T>
void launch_p2m(int p, const T* points, const T* charges, std::int64_t num_points,
                const std::int64_t* cell_offsets, const T* centers, std::int64_t num_cells,
                cpx<T>* multipoles, cudaStream_t stream) {
  const bool done = arch::dispatch_int<0, m2l_max_order<T>() + 1>(p, [&](auto Pc) {
    constexpr int P = decltype(Pc)::value;
    p2m_kernel<P, T><<<dim3(unsigned(num_cells)), p2m_threads<P>, 0, stream>>>(
        points, charges, num_points, cell_offsets, centers, multipoles);
    WHAM_CHECK_LAUNCH("p2m_kernel");
  });
  if (!done) throw_invalid_argument("p2m", "p", p, "an order the kernels are built for");
}

}  // namespace wham::detail::particles
