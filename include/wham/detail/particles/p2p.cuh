/// \file wham/detail/particles/p2p.cuh
/// \brief P2P: one warp a target cell, one thread a target point.
///
///   for each target cell t, each source cell s in near_cells[near_offsets[t] ..
///   near_offsets[t+1]), each target j of t, each source i of s with r^2 = |x_j - y_i|^2 > 0:
///     potential[j] += q_i / r,   gradient[j] += -q_i (x_j - y_i) / r^3
///
/// A block of p2p_warps warps takes p2p_warps consecutive target cells. A warp holds 32 of
/// its cell's targets in registers (one a lane; a larger cell in rounds of 32) with their
/// sums, walks the cell's near list and stages each source cell through its own slot of
/// shared memory, p2p_tile sources at a time (coalesced loads of x, y, z and q, stored as
/// one aligned (x, y, z, q) record a source, so that every lane reads the same source at
/// once, a broadcast, in one 16-byte load (float) or two (double) instead of four), then
/// adds the tile's sources to each lane's target (add_interaction: rsqrt, 20 flops).
/// Each target's sums are added to its outputs once, by its own thread: no atomics, no
/// block barrier. A near cell id outside [0, num_cells) is skipped, offsets are clamped.
/// Shared memory: p2p_warps * p2p_tile records of four T (4 KB in double).
#pragma once

#include <wham/detail/particles/harmonics.cuh>
#include <wham/detail/particles/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>

namespace wham::detail::particles {

/// One staged source: position and charge, aligned for vector loads from shared memory.
template <class T>
struct alignas(4 * sizeof(T) > 16 ? 16 : 4 * sizeof(T)) staged_source {
  T x, y, z, q;
};

template <class T, bool Gradient>
__global__ void __launch_bounds__(32 * p2p_warps)
    p2p_kernel(const T* __restrict__ points, const T* __restrict__ charges, std::int64_t num_points,
               const std::int64_t* __restrict__ cell_offsets, std::int64_t num_cells,
               const std::int64_t* __restrict__ near_offsets,
               const std::int32_t* __restrict__ near_cells, std::int64_t num_near,
               T* __restrict__ potential, T* __restrict__ gradient) {
  constexpr int K = p2p_tile;
  static_assert(K == 32, "one source a lane");
  __shared__ staged_source<T> tiles[p2p_warps][K];
  const int lane = int(threadIdx.x) & 31, w = int(threadIdx.x) >> 5;
  const std::int64_t t = std::int64_t(blockIdx.x) * p2p_warps + w;
  if (t >= num_cells) return;
  const point_range targets = clamped_range(cell_offsets, t, num_points);
  const point_range listed = clamped_range(near_offsets, t, num_near);
  if (targets.begin == targets.end || listed.begin == listed.end) return;
  staged_source<T>* tile = tiles[w];
  for (std::int64_t first = targets.begin; first < targets.end; first += 32) {
    const std::int64_t j = first + lane;
    const bool own = j < targets.end;
    T xj = T(0), yj = T(0), zj = T(0);
    if (own) {
      xj = points[3 * j];
      yj = points[3 * j + 1];
      zj = points[3 * j + 2];
    }
    T phi = T(0), gx = T(0), gy = T(0), gz = T(0);
    for (std::int64_t k = listed.begin; k < listed.end; ++k) {
      const std::int32_t s = near_cells[k];
      if (s < 0 || s >= num_cells) continue;  // the whole warp: no source cell
      const point_range sources = clamped_range(cell_offsets, s, num_points);
      for (std::int64_t base = sources.begin; base < sources.end; base += K) {
        const int count = int(min(std::int64_t(K), sources.end - base));
        __syncwarp();                                 // the previous tile is used up
        for (int e = lane; e < 3 * count; e += 32) {  // x, y, z: three coalesced passes
          const int q = e / 3, c = e - 3 * q;
          T v = points[3 * base + e];
          if (!(v - v == T(0))) v = T(0);
          if (c == 0) tile[q].x = v;
          if (c == 1) tile[q].y = v;
          if (c == 2) tile[q].z = v;
        }
        if (lane < count) {
          const T* y = points + 3 * (base + lane);
          tile[lane].q = finite_point(y[0], y[1], y[2]) ? charges[base + lane] : T(0);
        }
        __syncwarp();
        if (count == K) {
#pragma unroll 4
          for (int u = 0; u < K; ++u) {
            const staged_source<T> y = tile[u];
            add_interaction<T, Gradient>(xj, yj, zj, y.x, y.y, y.z, y.q, phi, gx, gy, gz);
          }
        } else {
          for (int u = 0; u < count; ++u) {
            const staged_source<T> y = tile[u];
            add_interaction<T, Gradient>(xj, yj, zj, y.x, y.y, y.z, y.q, phi, gx, gy, gz);
          }
        }
      }
    }
    if (own) {
      potential[j] += phi;
      if constexpr (Gradient) {
        gradient[3 * j] += gx;
        gradient[3 * j + 1] += gy;
        gradient[3 * j + 2] += gz;
      }
    }
  }
}

/// One launch of the P2P kernel (arguments checked; num_cells in 1..2^31-1).
template <class T>
void launch_p2p(const T* points, const T* charges, std::int64_t num_points,
                const std::int64_t* cell_offsets, std::int64_t num_cells,
                const std::int64_t* near_offsets, const std::int32_t* near_cells,
                std::int64_t num_near, T* potential, T* gradient, cudaStream_t stream) {
  const std::int64_t blocks = (num_cells + p2p_warps - 1) / p2p_warps;
  if (gradient != nullptr) {
    p2p_kernel<T, true><<<dim3(unsigned(blocks)), 32 * p2p_warps, 0, stream>>>(
        points, charges, num_points, cell_offsets, num_cells, near_offsets, near_cells, num_near,
        potential, gradient);
  } else {
    p2p_kernel<T, false><<<dim3(unsigned(blocks)), 32 * p2p_warps, 0, stream>>>(
        points, charges, num_points, cell_offsets, num_cells, near_offsets, near_cells, num_near,
        potential, gradient);
  }
  WHAM_CHECK_LAUNCH("p2p_kernel");
}

}  // namespace wham::detail::particles
