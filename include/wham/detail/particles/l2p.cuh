/// \file wham/detail/particles/l2p.cuh
/// \brief L2P: one warp a cell, one thread a point, compile-time order P.
///
///   potential[j] += Re sum conj(L_n^m) R_n^m(centers[c] - x_j),
///   gradient[3j..3j+2] += its gradient in x_j   (Gradient: gradient not null)
///
/// A block of l2p_warps warps takes l2p_warps consecutive cells, warp w cell
/// blockIdx.x * l2p_warps + w. The warp stages its cell's (P+1)^2 coefficients in its own
/// slot of shared memory (coalesced), then each lane evaluates the expansion at the cell's
/// points lane, lane + 32, ... (evaluate_local: one column of R at a time, the +m and -m
/// terms from one R_n^m; every lane reads the same coefficient at once, a broadcast) and
/// adds into its own points' outputs: no atomics, each point written by one thread. The
/// reciprocal table (1/j, j <= P*P) is shared by the block. Shared memory: l2p_warps
/// (P+1)^2 complex (28 KB at p = 20 in double) and the table.
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/particles/harmonics.cuh>
#include <wham/detail/particles/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>

namespace wham::detail::particles {

template <int P, class T, bool Gradient>
__global__ void __launch_bounds__(32 * l2p_warps)
    l2p_kernel(const cpx<T>* __restrict__ locals, const T* __restrict__ centers,
               const std::int64_t* __restrict__ cell_offsets, std::int64_t num_cells,
               const T* __restrict__ points, std::int64_t num_points, T* __restrict__ potential,
               T* __restrict__ gradient) {
  constexpr int C = (P + 1) * (P + 1);
  constexpr int W = l2p_warps;
  __shared__ cpx<T> coeffs[W][C];
  __shared__ T inv[inverse_entries<P>];
  fill_inverses<P>(inv, int(threadIdx.x), 32 * W);
  __syncthreads();  // the only block barrier: before any warp leaves
  const int lane = int(threadIdx.x) & 31, w = int(threadIdx.x) >> 5;
  const std::int64_t c = std::int64_t(blockIdx.x) * W + w;
  if (c >= num_cells) return;
  const point_range r = clamped_range(cell_offsets, c, num_points);
  if (r.begin == r.end) return;  // the whole warp: nothing to add to
  cpx<T>* L = coeffs[w];
  const cpx<T>* src = locals + c * C;
  for (int j = lane; j < C; j += 32) L[j] = src[j];
  const T cx = centers[3 * c], cy = centers[3 * c + 1], cz = centers[3 * c + 2];
  __syncwarp();
  for (std::int64_t i = r.begin + lane; i < r.end; i += 32) {
    const T* x = points + 3 * i;
    T phi, g[3];
    evaluate_local<P, T, Gradient>(L, inv, cx - x[0], cy - x[1], cz - x[2], phi, g);
    potential[i] += phi;
    if constexpr (Gradient) {
      T* out = gradient + 3 * i;
      out[0] += g[0];
      out[1] += g[1];
      out[2] += g[2];
    }
  }
}

template <int P, class T>
void launch_l2p_order(const cpx<T>* locals, const T* centers, const std::int64_t* cell_offsets,
                      std::int64_t num_cells, const T* points, std::int64_t num_points,
                      T* potential, T* gradient, cudaStream_t stream) {
  const std::int64_t blocks = (num_cells + l2p_warps - 1) / l2p_warps;
  if (gradient != nullptr) {
    l2p_kernel<P, T, true><<<dim3(unsigned(blocks)), 32 * l2p_warps, 0, stream>>>(
        locals, centers, cell_offsets, num_cells, points, num_points, potential, gradient);
  } else {
    l2p_kernel<P, T, false><<<dim3(unsigned(blocks)), 32 * l2p_warps, 0, stream>>>(
        locals, centers, cell_offsets, num_cells, points, num_points, potential, gradient);
  }
  WHAM_CHECK_LAUNCH("l2p_kernel");
}

/// One launch of the L2P kernel (arguments checked; num_cells in 1..2^31-1).
template <class T>
void launch_l2p(int p, const cpx<T>* locals, const T* centers, const std::int64_t* cell_offsets,
                std::int64_t num_cells, const T* points, std::int64_t num_points, T* potential,
                T* gradient, cudaStream_t stream) {
  const bool done = arch::dispatch_int<0, m2l_max_order<T>() + 1>(p, [&](auto Pc) {
    launch_l2p_order<decltype(Pc)::value, T>(locals, centers, cell_offsets, num_cells, points,
                                             num_points, potential, gradient, stream);
  });
  if (!done) throw_invalid_argument("l2p", "p", p, "an order the kernels are built for");
}

}  // namespace wham::detail::particles
