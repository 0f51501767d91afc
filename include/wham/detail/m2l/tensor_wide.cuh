/// \file wham/detail/m2l/tensor_wide.cuh
/// \brief The wide tensor-core schedule of the pair-streaming M2L (double, sm_90):
/// eight pairs a warp as the M dimension of mma.m16n8k4, every swap four products with
/// the folded swap matrix's blocks (degrees >= 4; below, one with the whole matrix), the
/// two swaps of a degree chained in registers.
///
/// Why (against tensor.cuh's tiles of four pairs and m8n8k4): there, per four pairs, the
/// folds, the unfolds and the fragment bookkeeping of every degree cost more
/// instructions than the products (Nsight Compute, p = 16: the DP tensor pipe 36% busy).
/// Here:
///  - rows of the product are the eight pairs' real and imaginary parts (row q: Re of
///    pair q, row q + 8: its Im), so m16n8k4 does 512 multiply-adds an instruction (the
///    H200 runs it at twice m8n8k4's FP64 rate) and a lane's accumulators hold one
///    pair's complex values: the Dz products stay in the lane;
///  - the swap matrix is applied folded (the folded table's comment below): operands
///    x_k +- x_-k, four products of (L/2 + 1)-square blocks, rows m and -m unfolded from
///    the even-k and odd-k sums, all lane-local (the fold costs a few adds an element, where
///    the four-pair schedule's costs shuffles and bookkeeping): 2.5x fewer products than
///    the whole (2L+1)-square matrix over p = 20, 1.06-1.33x faster at p = 8-20 (H100,
///    bench_m2l tensor path);
///  - the columns of an n tile (8 outputs) are permuted, column c -> output
///    8 nt + (c >> 1) + 4 (c & 1), so that the accumulator of n tile nt is exactly the
///    A operand of k tiles 2 nt and 2 nt + 1 of the next product: the second swap of a
///    degree (and its Dz) reads its input from registers, not shared memory;
///  - the last swap back writes the result to global memory from the accumulators;
///  - W warps share a tile of eight pairs (one copy of the records): the degrees (and the
///    orders of z) spread over the warps, block barriers between the three phases, so
///    that shared memory holds the same pairs with W times the warps to hide latency.
///
/// Layout: a tile's records in shared memory, natural order, a row of eight complex values
/// per coefficient (row idx of the expansion, slot q: pair q), the slot XOR-swizzled by
/// 2 (row mod 4) so that a quarter warp's 16-byte accesses (rows r..r+3 x two pairs: the
/// operand loads and the accumulator stores) meet no bank conflicts. The angle powers are
/// tables over m = -p..p per pair (the conjugates stored), so a Dz factor is one load at
/// an offset known from the tile. The per-warp steps are in tensor_wide_degree.cuh, the
/// fragment tables in tensor_wide_tables.cuh.
#pragma once

#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/device.cuh>
#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/staging.cuh>
#include <wham/detail/m2l/tensor_wide_degree.cuh>
#include <wham/detail/m2l/tensor_wide_tables.cuh>
#include <wham/detail/m2l/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace wham::detail::m2l {

/// Whether warp `warp` of W takes item t (degrees, orders): a snake over 2W, so that the
/// costlier items (higher degrees) spread over the warps.
template <int W>
__device__ __forceinline__ bool wide_takes(int t, int warp) {
  const int r = t % (2 * W);
  return r == warp || r == 2 * W - 1 - warp;
}

/// W warps a block share one tile of eight pairs (its records in shared memory): the
/// degrees and the orders of z spread over the warps, block barriers between the phases.
template <class Pairs, int W, int MinBlocks, int MaxNT>
__global__ void __launch_bounds__(32 * W, MinBlocks)
    m2l_tensor_wide_kernel(const Pairs pairs, int p) {
  extern __shared__ __align__(16) unsigned char m2l_smem_raw[];
  const int t = threadIdx.x;
  const int warp = t >> 5;
  const int C = (p + 1) * (p + 1);
  wide_warp w;
  w.p = p;
  w.ps = wide_power_stride(p);
  w.rs = wide_radius_stride(p);
  w.fz = reinterpret_cast<double*>(m2l_smem_raw);
  w.rec = reinterpret_cast<cpx<double>*>(w.fz + 64);
  w.pa = w.rec + C * wide_pairs;
  w.pb = w.pa + wide_pairs * w.ps;
  w.pr = reinterpret_cast<double*>(w.pb + wide_pairs * w.ps);
  for (int i = t; i < 64; i += 32 * W) w.fz[i] = i <= p ? swap_constants<double>().fact[i] : 0.0;
  const std::int64_t first = std::int64_t(blockIdx.x) * wide_pairs;
  const int count = int(min(std::int64_t(wide_pairs), pairs.num_pairs - first));
  // stage the records: thread -> pair (t / 4) % 8, coefficients 4 (t / 32) + t % 4 + 4 W u
  // (conflict-free rows of the swizzle), one 16-byte asynchronous copy each
  {
    const int q = (t >> 2) & 7;
    const auto* src = q < count ? pairs.record(first + q, C) : nullptr;  // double or float
    for (int idx = (t & 3) + 4 * warp; idx < C; idx += 4 * W) {
      cpx<double>* dst = &w.rec[wide_slot(idx, q)];
      if (q < count) {
        copy_async(dst, src + idx);
      } else {
        *dst = cpx<double>{0.0, 0.0};
      }
    }
  }
  if (t < wide_pairs) {  // the pair's powers
    double x = 0.0, y = 0.0, z = 1.0;
    if (t < count) pairs.delta(first + t, x, y, z);
    const angles<double> a = make_angles(x, y, z);
    const double inv_r = inverse_distance(x, y, z);
    cpx<double> qa{1.0, 0.0}, qb{1.0, 0.0};
    double ir = 1.0;
    for (int j = 0; j <= p; ++j) {
      w.pa[t * w.ps + p + j] = qa;
      w.pa[t * w.ps + p - j] = cpx<double>{qa.re, -qa.im};
      w.pb[t * w.ps + p + j] = qb;
      w.pb[t * w.ps + p - j] = cpx<double>{qb.re, -qb.im};
      w.pr[t * w.rs + j] = ir;
      qa = j == 0 ? a.ea : qa * a.ea;
      qb = j == 0 ? a.eb : qb * a.eb;
      ir *= inv_r;
    }
    w.pr[t * w.rs + p + 1] = ir;
  }
  stage_records_wait();
  __syncthreads();

  const auto sink = pairs.sink(first, count, C);
  for (int L = 0; L <= p; ++L) {
    if (wide_takes<W>(L, warp)) wide_degree_any<true, MaxNT>(w, L, sink);
  }
  __syncthreads();
  for (int m = -p; m <= p; ++m) {
    if (!wide_takes<W>(m + p, warp)) continue;
    const int am = m < 0 ? -m : m;
    const int c = p - 2 * am + 1;  // outputs n = |m| .. p - |m|
    if (c > 16) {
      wide_z<3>(w, m);
    } else if (c > 8) {
      wide_z<2>(w, m);
    } else if (c > 0) {
      wide_z<1>(w, m);
    }
    wide_z_rest(w, m);
  }
  __syncthreads();
  for (int L = 0; L <= p; ++L) {
    if (wide_takes<W>(L, warp)) wide_degree_any<false, MaxNT>(w, L, sink);
  }
}

/// The wide kernel's Pairs policy (as tensor.cuh's, less `flush`):
///   num_pairs, record(i, C), delta(i, x, y, z)
///   sink(first, count, C)   the lane's sink for pair first + lane / 4 of a tile of `count`
///                           pairs: put(idx, value, ok) takes coefficient idx of the lane's
///                           pair (every lane of the warp calls it at once; ok: an output)
/// Pair streaming in T: pair i writes locals[i]. The schedule computes in double; float
/// coefficients are widened as they are staged (staging.cuh's copy_async for float
/// sources) and locals narrowed as they are stored.
template <class T>
struct wide_stream {
  const cpx<T>* multipoles;
  const T* deltas;
  cpx<T>* locals;
  std::int64_t num_pairs;

  __device__ __forceinline__ const cpx<T>* record(std::int64_t i, int C) const {
    return multipoles + i * C;
  }
  __device__ __forceinline__ void delta(std::int64_t i, double& x, double& y, double& z) const {
    const T* d = deltas + 3 * i;
    x = d[0];
    y = d[1];
    z = d[2];
  }
  struct store_sink {
    cpx<T>* dst;  ///< the pair's locals, null past the tile's count
    __device__ __forceinline__ void put(int idx, cpx<double> v, bool ok) const {
      if (ok && dst != nullptr) dst[idx] = cpx<T>{T(v.re), T(v.im)};
    }
  };
  __device__ __forceinline__ store_sink sink(std::int64_t first, int count, int C) const {
    const int q = (threadIdx.x & 31) >> 2;
    return {q < count ? locals + (first + q) * C : nullptr};
  }
};

inline std::size_t tensor_wide_smem_bytes(int p) {
  return std::size_t(wide_block_doubles(p)) * sizeof(double);
}

/// Launches the wide schedule over a Pairs policy (double, sm_90): W warps a tile of eight
/// pairs, registers for MinBlocks blocks an SM, compiled for orders with wide_tiles(p) <= MaxNT.
template <int W, int MinBlocks, int MaxNT, class Pairs>
void launch_tensor_wide(int p, const Pairs& pairs, cudaStream_t stream) {
  if (pairs.num_pairs == 0) return;
  if (p < 0 || wide_tiles(p) > MaxNT) {
    throw_invalid_argument("m2l", "p", p,
                           "0.." + std::to_string(4 * MaxNT - 1) + " for this wide kernel");
  }
  auto kernel = m2l_tensor_wide_kernel<Pairs, W, MinBlocks, MaxNT>;
  const std::size_t smem = tensor_wide_smem_bytes(p);
  ensure_dynamic_smem(kernel, smem);
  const std::int64_t blocks = (pairs.num_pairs + wide_pairs - 1) / wide_pairs;
  if (blocks > 0x7fffffff) {
    throw_invalid_argument("m2l", "num_pairs", pairs.num_pairs,
                           "at most (2^31 - 1) * 8 for the wide tensor schedule");
  }
  kernel<<<dim3(unsigned(blocks)), 32 * W, smem, stream>>>(pairs, p);
  WHAM_CHECK_LAUNCH("m2l_tensor_wide_kernel");
}

/// The wide schedule at order p (0..20) with the shape of tuning.cuh's wide_shapes.
template <class Pairs>
inline void launch_tensor_wide_tuned(int p, const Pairs& s, cudaStream_t stream) {
  arch::dispatch_int<0, wide_shape_count>(wide_shape_index(p), [&](auto I) {
    constexpr wide_shape k = wide_shapes[decltype(I)::value];
    launch_tensor_wide<k.warps, k.min_blocks, k.max_nt>(p, s, stream);
  });
}

}  // namespace wham::detail::m2l
