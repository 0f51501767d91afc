/// \file wham/detail/translations/kernels.cuh
/// \brief The M2M / L2L kernels, pair-streaming (out[i] = op(in[i])) and accumulate
/// (out[tgt[i]] += op(in[src[i]]), atomics; a pair with an index out of range contributes
/// nothing) in one body each:
///   translate_thread_kernel  one thread a pair, compile-time order: the direct form or
///                            the rotated one (blocks.cuh), records staged through shared
///                            memory so that loads and stores are coalesced (M2L's thread
///                            schedule layout, detail/m2l/thread.cuh);
///   translate_warp_kernel    one warp a pair, run-time order: M2L's warp passes
///                            (detail/m2l/warp.cuh) with the z-shift of blocks.cuh;
/// and the staging both block schedules share (the split schedule: split.cuh).
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/m2l/staging.cuh>
#include <wham/detail/m2l/thread.cuh>
#include <wham/detail/m2l/warp.cuh>
#include <wham/detail/translations/blocks.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace wham::detail::translations {

/// Where a pair's rows are: consecutive (pair-streaming) or named by src / tgt.
template <class T>
struct pair_rows {
  const std::int32_t* src;  ///< null: row i
  const std::int32_t* tgt;  ///< null: row i, and the output is overwritten, not added to
  std::int64_t num_in, num_out;

  /// The input and output rows of pair i, or -1 for both when either is out of range.
  __device__ __forceinline__ void rows(std::int64_t i, std::int64_t& in, std::int64_t& out) const {
    if (tgt == nullptr) {
      in = out = i;
      return;
    }
    const std::int64_t s = src[i], t = tgt[i];
    const bool ok = s >= 0 && s < num_in && t >= 0 && t < num_out;
    in = ok ? s : -1;
    out = ok ? t : -1;
  }
};

/// out (one coefficient) <- v, or += v by atomics.
template <class T>
__device__ __forceinline__ void put(cpx<T>* out, cpx<T> v, bool add) {
  if (add) {
    atomicAdd(&out->re, v.re);
    atomicAdd(&out->im, v.im);
  } else {
    *out = v;
  }
}

/// Exactly zero: the identity (delta = 0 is a valid M2M / L2L, unlike M2L's).
template <class T>
__host__ __device__ __forceinline__ bool is_zero(T x, T y, T z) {
  return x == T(0) && y == T(0) && z == T(0);
}

/// Gathers `count` records, record q from row rows[q] (zeros for -1), into slots of stride S;
/// the whole block, plain loads. Follow with a block barrier.
template <int C, int S, int NT, class T>
__device__ __forceinline__ void stage_gathered(cpx<T>* sm, const cpx<T>* __restrict__ in,
                                               const std::int64_t* rows, int count) {
  for (int j = threadIdx.x; j < count * C; j += NT) {
    const int q = j / C;
    const std::int64_t r = rows[q];
    sm[q * S + (j - q * C)] = r >= 0 ? in[r * C + (j - q * C)] : cpx<T>{T(0), T(0)};
  }
}

/// Writes a block's records: pair-streaming, record q to row first + q (coalesced);
/// accumulate, each run of consecutive pairs with one target summed in shared memory and
/// added once, one atomic a coefficient a run (8 children a parent in a tree: 8 times fewer
/// atomics on one address); a pair out of range (row -1) adds nothing.
template <int C, int S, int NT, class T>
__device__ __forceinline__ void store_records(const cpx<T>* sm, cpx<T>* __restrict__ out,
                                              std::int64_t first, const std::int64_t* rows_out,
                                              int count, bool add) {
  if (!add) {
    cpx<T>* dst = out + first * C;
    for (int j = threadIdx.x; j < count * C; j += NT) {
      const int q = j / C;
      dst[j] = sm[q * S + (j - q * C)];
    }
    return;
  }
  for (int j = threadIdx.x; j < count * C; j += NT) {
    const int q = j / C, i = j - q * C;
    const std::int64_t r = rows_out[q];
    if (r < 0 || (q > 0 && rows_out[q - 1] == r)) continue;  // not the head of a run
    cpx<T> acc = sm[q * S + i];
    for (int u = q + 1; u < count && rows_out[u] == r; ++u) acc = acc + sm[u * S + i];
    put(out + r * C + i, acc, true);
  }
}

template <kind K, bool Direct, int P, class T, int NT, bool Registers>
__global__ void __launch_bounds__(NT)
    translate_thread_kernel(const cpx<T>* __restrict__ in, const T* __restrict__ deltas,
                            pair_rows<T> pr, cpx<T>* __restrict__ out, std::int64_t num_pairs) {
  constexpr int C = (P + 1) * (P + 1);
  constexpr int S = m2l::slot_stride<P, T, Registers>;
  extern __shared__ __align__(16) unsigned char translate_smem_raw[];
  cpx<T>* sm = reinterpret_cast<cpx<T>*>(translate_smem_raw);
  __shared__ std::int64_t rows_in[NT], rows_out[NT];
  const std::int64_t first = std::int64_t(blockIdx.x) * NT;
  const int count = int(min(std::int64_t(NT), num_pairs - first));
  const int t = threadIdx.x;
  if (t < count) pr.rows(first + t, rows_in[t], rows_out[t]);
  const bool gather = pr.tgt != nullptr;
  if (!gather) m2l::stage_records<C, S, NT>(sm, in + first * C, count);
  T x = T(0), y = T(0), z = T(0);
  if (t < count) {
    const T* d = deltas + 3 * (first + t);
    x = d[0];
    y = d[1];
    z = d[2];
  }
  if (gather) {
    __syncthreads();  // rows_in
    stage_gathered<C, S, NT>(sm, in, rows_in, count);
  }
  m2l::stage_records_wait();
  __syncthreads();
  if (t < count && !is_zero(x, y, z)) {
    cpx<T>* slot = sm + t * S;
    if constexpr (Direct) {
      static_assert(Registers, "the direct form works in registers");
      cpx<T> a[C];
#pragma unroll
      for (int i = 0; i < C; ++i) a[i] = slot[i];
      translate_direct<K, P>(a, x, y, z, slot);
    } else if constexpr (Registers) {
      const m2l::direction<P, T> dir = m2l::make_direction<P>(x, y, z);
      cpx<T> a[C];
#pragma unroll
      for (int i = 0; i < C; ++i) a[i] = slot[i];
      translate_inplace<K, P>(a, dir, m2l::inverse_distance(x, y, z));
#pragma unroll
      for (int i = 0; i < C; ++i) slot[i] = a[i];
    } else {
      auto* dir = reinterpret_cast<m2l::direction<P, T>*>(slot + C);
      *dir = m2l::make_direction<P>(x, y, z);
      translate_inplace<K, P>(slot, *dir, m2l::inverse_distance(x, y, z));
    }
  }
  __syncthreads();
  store_records<C, S, NT>(sm, out, first, rows_out, count, gather);
}

template <kind K, bool Direct, int P, class T, int NT, bool Registers>
constexpr std::size_t thread_smem_bytes() {
  return m2l::thread_smem_bytes<P, T, NT, Registers>();
}

template <kind K, bool Direct, int P, class T, int NT, bool Registers>
void launch_thread_variant(const cpx<T>* in, const T* deltas, pair_rows<T> pr, cpx<T>* out,
                           std::int64_t num_pairs, cudaStream_t stream) {
  constexpr std::size_t smem = thread_smem_bytes<K, Direct, P, T, NT, Registers>();
  auto kernel = translate_thread_kernel<K, Direct, P, T, NT, Registers>;
  ensure_dynamic_smem(kernel, smem);
  const std::int64_t blocks = (num_pairs + NT - 1) / NT;
  kernel<<<dim3(unsigned(blocks)), NT, smem, stream>>>(in, deltas, pr, out, num_pairs);
  if constexpr (K == kind::m2m) {
    WHAM_CHECK_LAUNCH("m2m thread kernel");
  } else {
    WHAM_CHECK_LAUNCH("l2l thread kernel");
  }
}

/// The M2M or L2L of the pair in s.a (all lanes synchronised) into s.b: M2L's ten warp
/// passes with the z-shift of blocks.cuh in the middle; B^T in both rotations for M2M, B
/// in both for L2L (blocks.cuh, rotate_forward_degree).
template <kind K, class T>
__device__ __forceinline__ void warp_translate(m2l::warp_tables<T> tab, m2l::warp_scratch<T> s,
                                               int p, T x, T y, T z) {
  constexpr bool tr = K == kind::m2m;
  const int lane = threadIdx.x & 31;
  const int C = (p + 1) * (p + 1);
  const int rows = (p + 1) * (p + 2) / 2;
  if (is_zero(x, y, z)) {  // identity
    for (int i = lane; i < C; i += 32) s.b[i] = s.a[i];
    __syncwarp();
    return;
  }
  if (lane == 0) {
    const m2l::geometry<T> g = m2l::make_geometry(x, y, z);
    cpx<T> qa{T(1), T(0)}, qb{T(1), T(0)};
    const T minus_r = -T(1) / g.inv_r;
    T c = T(1);
    for (int m = 0; m <= p; ++m) {
      s.pa[m] = qa;
      s.pb[m] = qb;
      s.ir[m] = c;  // (-r)^m / m!
      qa = qa * g.ea;
      qb = qb * g.eb;
      c *= minus_r / T(m + 1);
    }
  }
  __syncwarp();
  const cpx<T>* none = nullptr;
  const T* no_scale = nullptr;
  m2l::warp_fold(s.a, s.b, rows, s.pa, false);
  __syncwarp();
  m2l::warp_swap<tr>(tab.b, s.b, s.a, rows, s.pb, false, no_scale);
  __syncwarp();
  m2l::warp_fold(s.a, s.b, rows, none, false);
  __syncwarp();
  m2l::warp_swap<tr>(tab.b, s.b, s.a, rows, none, false, no_scale);
  __syncwarp();
  for (int idx = lane; idx < C; idx += 32) {
    int n, m;
    m2l::degree_order(idx, n, m);
    const int am = m < 0 ? -m : m;
    cpx<T> acc{T(0), T(0)};
    if constexpr (K == kind::m2m) {
      for (int k = am; k <= n; ++k) acc = m2l::fma(s.ir[n - k], s.a[k * k + k + m], acc);
    } else {
      for (int j = n; j <= p; ++j) acc = m2l::fma(s.ir[j - n], s.a[j * j + j + m], acc);
    }
    s.b[idx] = acc;
  }
  __syncwarp();
  m2l::warp_fold(s.b, s.a, rows, none, false);
  __syncwarp();
  m2l::warp_swap<tr>(tab.b, s.a, s.b, rows, s.pb, true, no_scale);
  __syncwarp();
  m2l::warp_fold(s.b, s.a, rows, none, false);
  __syncwarp();
  m2l::warp_swap<tr>(tab.b, s.a, s.b, rows, s.pa, true, no_scale);
  __syncwarp();
}

template <kind K, class T, int WARPS>
__global__ void __launch_bounds__(WARPS * 32)
    translate_warp_kernel(const cpx<T>* __restrict__ in, const T* __restrict__ deltas,
                          pair_rows<T> pr, cpx<T>* __restrict__ out, std::int64_t num_pairs,
                          int p) {
  extern __shared__ __align__(16) unsigned char translate_smem_raw[];
  const int C = (p + 1) * (p + 1);
  T* tb = reinterpret_cast<T*>(translate_smem_raw);
  const m2l::warp_tables<T> tab{tb, tb + m2l::swap_offset(p + 1)};
  const std::size_t tab_bytes = (std::size_t(m2l::swap_offset(p + 1)) + 2 * p + 1) * sizeof(T);
  cpx<T>* scratch_base = reinterpret_cast<cpx<T>*>(
      translate_smem_raw + (tab_bytes + sizeof(cpx<T>) - 1) / sizeof(cpx<T>) * sizeof(cpx<T>));
  m2l::warp_load_tables(tab, p);
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const m2l::warp_scratch<T> s =
      m2l::warp_scratch_at(scratch_base + warp * m2l::warp_scratch_elems<T>(p), p);
  const bool add = pr.tgt != nullptr;
  for (std::int64_t pair = std::int64_t(blockIdx.x) * WARPS + warp; pair < num_pairs;
       pair += std::int64_t(gridDim.x) * WARPS) {
    std::int64_t ri, ro;
    pr.rows(pair, ri, ro);
    if (ri < 0) continue;  // warp-uniform
    for (int i = lane; i < C; i += 32) s.a[i] = in[ri * C + i];
    __syncwarp();
    const T* d = deltas + 3 * pair;
    warp_translate<K>(tab, s, p, d[0], d[1], d[2]);
    for (int i = lane; i < C; i += 32) put(out + ro * C + i, s.b[i], add);
    __syncwarp();
  }
}

template <kind K, class T, int WARPS>
void launch_warp(int p, const cpx<T>* in, const T* deltas, pair_rows<T> pr, cpx<T>* out,
                 std::int64_t num_pairs, cudaStream_t stream) {
  auto kernel = translate_warp_kernel<K, T, WARPS>;
  const std::size_t smem = m2l::warp_smem_bytes<T>(p, WARPS);
  ensure_dynamic_smem(kernel, smem);
  const auto& lim = current_device_limits();
  int per_sm = 0;
  WHAM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, WARPS * 32, smem));
  const std::int64_t needed = (num_pairs + WARPS - 1) / WARPS;
  const std::int64_t grid = std::max<std::int64_t>(
      1, std::min<std::int64_t>(needed, std::int64_t(lim.sm_count) * std::max(per_sm, 1)));
  kernel<<<dim3(unsigned(grid)), WARPS * 32, smem, stream>>>(in, deltas, pr, out, num_pairs, p);
  if constexpr (K == kind::m2m) {
    WHAM_CHECK_LAUNCH("m2m warp kernel");
  } else {
    WHAM_CHECK_LAUNCH("l2l warp kernel");
  }
}

}  // namespace wham::detail::translations
