/// \file wham/detail/fmm/accumulate_warp.cuh
/// \brief The warp schedule of the accumulate and class forms (the orders above the tile
/// schedules'): a warp per chunk of 32 pairs, one pair at a time (m2l::warp_m2l), run sums
/// in registers (coefficient c at lane c % 32), flushed with atomics (atomic) or by the
/// run's owner (deterministic, as accumulate.cuh).
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/fmm/pair_list.cuh>
#include <wham/detail/fmm/tuning.cuh>
#include <wham/detail/m2l/warp.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace wham::detail::fmm {

/// Registers per lane for run sums: coefficient c at lane c % 32, slot c / 32.
inline constexpr int warp_slots = ((20 + 1) * (20 + 1) + 31) / 32;

/// First index in [from, to) where a run starts, or `to`; the whole warp calls it.
__device__ __forceinline__ std::int64_t warp_next_run_start(const std::int32_t* tgt,
                                                            std::int64_t from, std::int64_t to) {
  const int lane = threadIdx.x & 31;
  for (std::int64_t base = from; base < to; base += 32) {
    const std::int64_t i = base + lane;
    const bool head = i < to && (i == 0 || tgt[i] != tgt[i - 1]);
    const unsigned mask = __ballot_sync(0xffffffffu, head);
    if (mask != 0) return base + (__ffs(mask) - 1);
  }
  return to;
}

template <class T, int WARPS>
__global__ void __launch_bounds__(WARPS * 32)
    accumulate_warp_kernel(const pair_list<T> l, int p, std::int64_t num_units,
                           bool deterministic) {
  extern __shared__ __align__(16) unsigned char fmm_smem_raw[];
  const int C = (p + 1) * (p + 1);
  T* tb = reinterpret_cast<T*>(fmm_smem_raw);
  const m2l::warp_tables<T> tab{tb, tb + m2l::swap_offset(p + 1)};
  const std::size_t tab_bytes = (std::size_t(m2l::swap_offset(p + 1)) + 2 * p + 1) * sizeof(T);
  cpx<T>* scratch_base = reinterpret_cast<cpx<T>*>(
      fmm_smem_raw + (tab_bytes + sizeof(cpx<T>) - 1) / sizeof(cpx<T>) * sizeof(cpx<T>));
  m2l::warp_load_tables(tab, p);
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const m2l::warp_scratch<T> s =
      m2l::warp_scratch_at(scratch_base + warp * m2l::warp_scratch_elems<T>(p), p);
  const std::int64_t n = l.num_pairs;

  for (std::int64_t unit = std::int64_t(blockIdx.x) * WARPS + warp; unit < num_units;
       unit += std::int64_t(gridDim.x) * WARPS) {
    const std::int64_t chunk0 = unit * 32;
    const std::int64_t chunk1 = chunk0 + 32 < n ? chunk0 + 32 : n;
    std::int64_t begin = chunk0, end = chunk1;
    if (deterministic) {
      begin = warp_next_run_start(l.tgt, chunk0, chunk1);
      if (begin >= chunk1) continue;
      end = warp_next_run_start(l.tgt, chunk1, n);
    }
    cpx<T> acc[warp_slots];
#pragma unroll
    for (int k = 0; k < warp_slots; ++k) acc[k] = {T(0), T(0)};
    std::int32_t cur = -1;
    for (std::int64_t i = begin; i < end; ++i) {
      const std::int32_t raw = l.src[i];
      const std::int32_t si = l.source_row(raw), ti = l.target_row(raw, l.tgt[i]);
      const std::int32_t ki = l.mode == geometry::classes ? l.cls[i] : 0;
      if (ti != cur) {
#pragma unroll
        for (int k = 0; k < warp_slots; ++k) {
          const int c = lane + 32 * k;
          if (c < C && cur >= 0) {  // cur < 0: skipped pairs' sums, dropped
            if (deterministic) {
              add_owned(l.locals, std::int64_t(cur) * C + c, acc[k]);
            } else {
              add_atomic(l.locals, std::int64_t(cur) * C + c, acc[k]);
            }
          }
          acc[k] = {T(0), T(0)};
        }
        cur = ti;
      }
      const cpx<T>* M = l.multipoles + std::int64_t(si) * C;
      for (int c = lane; c < C; c += 32) s.a[c] = M[c];
      __syncwarp();
      T x, y, z;
      pair_delta(l, i, si, ti, ki, x, y, z);
      m2l::warp_m2l(tab, s, p, x, y, z, s.b);
#pragma unroll
      for (int k = 0; k < warp_slots; ++k) {
        const int c = lane + 32 * k;
        if (c < C) acc[k] = acc[k] + s.b[c];
      }
      __syncwarp();
    }
    if (cur >= 0) {
#pragma unroll
      for (int k = 0; k < warp_slots; ++k) {
        const int c = lane + 32 * k;
        if (c < C) {
          if (deterministic) {
            add_owned(l.locals, std::int64_t(cur) * C + c, acc[k]);
          } else {
            add_atomic(l.locals, std::int64_t(cur) * C + c, acc[k]);
          }
        }
      }
    }
  }
}

template <class T>
void launch_warp(const pair_list<T>& l, int p, bool deterministic, cudaStream_t stream) {
  constexpr int W = warp_schedule_warps;
  auto kernel = accumulate_warp_kernel<T, W>;
  const std::size_t smem = m2l::warp_smem_bytes<T>(p, W);
  ensure_dynamic_smem(kernel, smem);
  int per_sm = 0;
  WHAM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, W * 32, smem));
  const std::int64_t units = (l.num_pairs + 31) / 32;
  const std::int64_t needed = (units + W - 1) / W;
  const std::int64_t grid = std::max<std::int64_t>(
      1, std::min<std::int64_t>(
             needed, std::int64_t(current_device_limits().sm_count) * std::max(per_sm, 1)));
  kernel<<<dim3(unsigned(grid)), W * 32, smem, stream>>>(l, p, units, deterministic);
  WHAM_CHECK_LAUNCH("fmm accumulate_warp_kernel");
}

}  // namespace wham::detail::fmm
