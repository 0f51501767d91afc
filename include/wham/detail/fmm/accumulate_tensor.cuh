/// \file wham/detail/fmm/accumulate_tensor.cuh
/// \brief The accumulate form's pair policies for the M2L tensor schedules (double, atomic
/// method): which records and displacements the kernels read, and how their results reach
/// locals[tgt].
#pragma once

#include <wham/detail/fmm/pair_list.cuh>
#include <wham/detail/m2l/tensor.cuh>
#include <wham/detail/m2l/tensor_wide.cuh>

#include <cstdint>

namespace wham::detail::fmm {

/// The accumulate form's pairs for the M2L tensor schedule (detail/m2l/tensor.cuh's
/// Pairs policy): records gathered by src, displacements by the list's geometry, and
/// each run of equal targets among a warp's four pairs summed in the warp, then added
/// to locals[tgt] with one atomicAdd per real part and coefficient.
struct tensor_list {
  pair_list<double> l;
  std::int64_t num_pairs;

  __device__ __forceinline__ const cpx<double>* record(std::int64_t i, int C) const {
    return l.multipoles + std::int64_t(l.source_row(l.src[i])) * C;
  }
  __device__ __forceinline__ void delta(std::int64_t i, double& x, double& y, double& z) const {
    const std::int32_t k = l.mode == geometry::classes ? l.cls[i] : 0;
    const std::int32_t s = l.src[i];
    pair_delta(l, i, l.source_row(s), l.target_row(s, l.tgt[i]), k, x, y, z);
  }
  /// Pair i's target row, -1 when the pair is skipped.
  __device__ __forceinline__ std::int32_t target(std::int64_t i) const {
    return l.target_row(l.src[i], l.tgt[i]);
  }
  __device__ __forceinline__ void flush(const m2l::tensor_warp& w, std::int64_t first, int count,
                                        int C) const {
    constexpr int NP = m2l::tensor_pairs;
    const int lane = threadIdx.x & 31;
    const int q = (lane >> 3) & 3;  // the pair whose coefficients this lane adds
    std::int32_t t[NP];
#pragma unroll
    for (int u = 0; u < NP; ++u) t[u] = u < count ? target(first + u) : -1;
    std::int32_t tq = -1, tprev = -1;
#pragma unroll
    for (int u = 0; u < NP; ++u) {
      if (u == q) tq = t[u];
      if (u + 1 == q) tprev = t[u];
    }
    // q starts a run of equal targets: it adds the run (its later pairs add nothing)
    unsigned run = 0;
    if (q < count && (q == 0 || tprev != tq)) {
      bool open = true;
#pragma unroll
      for (int u = 0; u < NP; ++u) {
        if (u >= q && open) {
          if (u < count && t[u] == tq) {
            run |= 1u << u;
          } else {
            open = false;
          }
        }
      }
    }
    if (run == 0 || tq < 0) return;  // tq < 0: skipped pairs
    for (int j = lane; j < m2l::tensor_tiles(C, 8) * 8 * NP; j += 32) {
      const int idx = (j >> 5) * 8 + (j & 7);
      if (idx >= C) continue;
      cpx<double> sum{0.0, 0.0};
#pragma unroll
      for (int u = 0; u < NP; ++u) {
        if (run & (1u << u)) sum = sum + m2l::tensor_at(w.rec, idx, u);
      }
      add_atomic(l.locals, std::int64_t(tq) * C + idx, sum);
    }
  }
};

/// The accumulate form's pairs for the wide tensor schedule (sm_90, detail/m2l/
/// tensor_wide.cuh's Pairs policy): records and displacements from tensor_list; each value
/// added to locals[tgt] by an atomicAdd per real part from its lane, or, where the tile's
/// pairs share one target (a uniform list's runs are long), summed over the tile's eight
/// pairs in the warp first (three shuffles) and added once.
struct wide_list : tensor_list {
  struct add_sink {
    cpx<double>* dst;  ///< locals[tgt] of the lane's pair, null past the tile's count
    bool shared;       ///< every pair of the tile has one target (warp-uniform)
    __device__ __forceinline__ void put(int idx, cpx<double> v, bool ok) const {
      if (shared) {
        // lanes l, l ^ 4, l ^ 8, l ^ 16 hold the eight pairs' values of one coefficient
#pragma unroll
        for (int s = 4; s <= 16; s <<= 1) {
          v.re += __shfl_xor_sync(0xffffffffu, v.re, s);
          v.im += __shfl_xor_sync(0xffffffffu, v.im, s);
        }
        if (ok && dst != nullptr && (threadIdx.x & 28) == 0) add_atomic(dst, idx, v);
      } else if (ok && dst != nullptr) {
        add_atomic(dst, idx, v);
      }
    }
  };
  __device__ __forceinline__ add_sink sink(std::int64_t first, int count, int C) const {
    const int q = (threadIdx.x & 31) >> 2;
    const std::int32_t t0 = target(first);
    const std::int32_t tq = q < count ? target(first + q) : t0;
    const bool shared = __all_sync(0xffffffffu, tq == t0);
    return {q < count && tq >= 0 ? l.locals + std::int64_t(tq) * C : nullptr, shared};
  }
};

}  // namespace wham::detail::fmm
