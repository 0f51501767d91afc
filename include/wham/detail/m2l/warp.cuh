/// \file wham/detail/m2l/warp.cuh
/// \brief The warp schedule of the pair-streaming M2L: one warp per pair, run-time order
/// (0..20), lanes over the row pairs (l, +-m) of the folded swaps (the parities of
/// blocks.cuh) and over the coefficients of the z-translation; swap matrices and
/// factorials copied once per (persistent) block into shared memory.
///
/// Exposed for the accumulate forms: `warp_load_tables`, `warp_m2l` (a whole pair by one
/// warp from a shared-memory buffer) and their scratch layout.
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace wham::detail::m2l {

/// Shared-memory tables of the warp schedule: folded swap matrices to degree p, factorials.
template <class T>
struct warp_tables {
  T* b;     ///< swap_offset(p + 1) entries
  T* fact;  ///< 2p + 1 entries
};

/// Copies the tables for order p from __constant__ memory (whole block; then __syncthreads).
template <class T>
__device__ __forceinline__ void warp_load_tables(warp_tables<T> t, int p) {
  const swap_table<T>& c = swap_constants<T>();
  for (int i = threadIdx.x; i < swap_offset(p + 1); i += blockDim.x) t.b[i] = c.b[i];
  for (int i = threadIdx.x; i <= 2 * p; i += blockDim.x) t.fact[i] = c.fact[i];
}

__device__ __forceinline__ void degree_order(int idx, int& l, int& m) {
  l = int(sqrtf(float(idx)));
  while (l * l > idx) --l;
  while ((l + 1) * (l + 1) <= idx) ++l;
  m = idx - l * l - l;
}

/// Per-warp scratch of the warp schedule: two expansions and the pair's powers.
template <class T>
struct warp_scratch {
  cpx<T>* a;   ///< (p+1)^2
  cpx<T>* b;   ///< (p+1)^2
  cpx<T>* pa;  ///< p+1: e^{i m alpha}
  cpx<T>* pb;  ///< p+1: e^{i m beta}
  T* ir;       ///< p+2: r^-j
};

template <class T>
__host__ __device__ constexpr std::size_t warp_scratch_elems(int p) {
  // in units of cpx<T>: two expansions, two power tables, r powers (rounded up)
  return std::size_t(2 * (p + 1) * (p + 1) + 2 * (p + 1) + (p + 3) / 2);
}

template <class T>
__device__ __forceinline__ warp_scratch<T> warp_scratch_at(cpx<T>* base, int p) {
  const int C = (p + 1) * (p + 1);
  return {base, base + C, base + 2 * C, base + 2 * C + p + 1,
          reinterpret_cast<T*>(base + 2 * C + 2 * (p + 1))};
}

/// (l, m >= 0) of the j-th row pair, j = 0..(p+1)(p+2)/2 - 1.
__device__ __forceinline__ void degree_row(int j, int& l, int& m) {
  l = int((sqrtf(8.0f * float(j) + 1.0f) - 1.0f) * 0.5f);
  while (l * (l + 1) / 2 > j) --l;
  while ((l + 1) * (l + 2) / 2 <= j) ++l;
  m = j - l * (l + 1) / 2;
}

/// dst <- the folded form of Dz src: dst[l, 0] = v_0, dst[l, k] = v_k + v_-k,
/// dst[l, -k] = v_k - v_-k (k > 0), v_m = src[l, m] e^{+-i m a} (pw = null: no Dz).
template <class T>
__device__ __forceinline__ void warp_fold(const cpx<T>* src, cpx<T>* dst, int rows,
                                          const cpx<T>* pw, bool conj) {
  for (int j = threadIdx.x & 31; j < rows; j += 32) {
    int l, m;
    degree_row(j, l, m);
    const int c = l * l + l;
    cpx<T> xp = src[c + m];
    if (m == 0) {
      dst[c] = xp;
      continue;
    }
    cpx<T> xn = src[c - m];
    if (pw != nullptr) {
      xp = conj ? mul_conj(xp, pw[m]) : xp * pw[m];
      xn = conj ? xn * pw[m] : mul_conj(xn, pw[m]);
    }
    dst[c + m] = xp + xn;
    dst[c - m] = xp - xn;
  }
}

/// dst[l] <- A src[l] per degree, A = B_l (Transpose = false) or B_l^T, src folded
/// (warp_fold); then dst[l, m] *= post_m: Dz(+-pw) when pw != null, r^-(l+1) when ir != null.
template <bool Transpose, class T>
__device__ __forceinline__ void warp_swap(const T* b, const cpx<T>* src, cpx<T>* dst, int rows,
                                          const cpx<T>* pw, bool conj, const T* ir) {
  for (int j = threadIdx.x & 31; j < rows; j += 32) {
    int l, m;
    degree_row(j, l, m);
    const int c = l * l + l;
    const int par = (l + m) & 1;
    const T* row = b + swap_offset(l);
    cpx<T> E{T(0), T(0)}, O{T(0), T(0)};
    if (!par) E = fma(Transpose ? row[m] : row[m * (l + 1)], src[c], E);
    for (int k = 1; k <= l; ++k) {
      const T v = Transpose ? row[k * (l + 1) + m] : row[m * (l + 1) + k];
      const cpx<T> x = par ? src[c - k] : src[c + k];
      if (k & 1) {
        O = fma(v, x, O);
      } else {
        E = fma(v, x, E);
      }
    }
    cpx<T> yp = E + O, yn = (l & 1) ? O - E : E - O;
    if (pw != nullptr) {
      yp = conj ? mul_conj(yp, pw[m]) : yp * pw[m];
      yn = conj ? yn * pw[m] : mul_conj(yn, pw[m]);
    }
    if (ir != nullptr) {
      yp = scale(yp, ir[l + 1]);
      yn = scale(yn, ir[l + 1]);
    }
    dst[c + m] = yp;
    if (m > 0) dst[c - m] = yn;
  }
}

/// One pair by one warp: s.a holds the multipole (all lanes synchronised);
/// writes the local to out (global or shared, (p+1)^2 contiguous, coalesced).
/// Ten passes over the expansion, separated by __syncwarp; the swaps work on row
/// pairs (m, -m) of the folded vectors, (p+1)(p+2)/2 rows of l+1 terms a degree.
template <class T>
__device__ __forceinline__ void warp_m2l(warp_tables<T> tab, warp_scratch<T> s, int p, T x, T y,
                                         T z, cpx<T>* out) {
  const int lane = threadIdx.x & 31;
  const int C = (p + 1) * (p + 1);
  const int rows = (p + 1) * (p + 2) / 2;
  if (lane == 0) {
    const geometry<T> g = make_geometry(x, y, z);
    const cpx<T> ea = g.ea, eb = g.eb;
    const T inv_r = g.inv_r;
    cpx<T> qa{T(1), T(0)}, qb{T(1), T(0)};
    T ir = T(1);
    for (int m = 0; m <= p; ++m) {
      s.pa[m] = qa;
      s.pb[m] = qb;
      s.ir[m] = ir;
      qa = qa * ea;
      qb = qb * eb;
      ir *= inv_r;
    }
    s.ir[p + 1] = ir;
  }
  __syncwarp();
  // to z: M_rot = r^-(l+1) B^T Dz(beta) B^T Dz(alpha) M
  warp_fold(s.a, s.b, rows, s.pa, false);
  __syncwarp();
  warp_swap<true>(tab.b, s.b, s.a, rows, s.pb, false, static_cast<const T*>(nullptr));
  __syncwarp();
  warp_fold(s.a, s.b, rows, static_cast<const cpx<T>*>(nullptr), false);
  __syncwarp();
  warp_swap<true>(tab.b, s.b, s.a, rows, static_cast<const cpx<T>*>(nullptr), false, s.ir);
  __syncwarp();
  // z: b[n, m] = (-1)^m r^-n sum_{k=|m|}^{p-n} (n+k)! a[k, m]
  for (int idx = lane; idx < C; idx += 32) {
    int n, m;
    degree_order(idx, n, m);
    const int am = m < 0 ? -m : m;
    cpx<T> acc{T(0), T(0)};
    for (int k = am; k <= p - n; ++k) acc = fma(tab.fact[n + k], s.a[k * k + k + m], acc);
    s.b[idx] = scale(acc, (m & 1) ? -s.ir[n] : s.ir[n]);
  }
  __syncwarp();
  // back: L = Dz(-alpha) B Dz(-beta) B L_z
  warp_fold(s.b, s.a, rows, static_cast<const cpx<T>*>(nullptr), false);
  __syncwarp();
  warp_swap<false>(tab.b, s.a, s.b, rows, s.pb, true, static_cast<const T*>(nullptr));
  __syncwarp();
  warp_fold(s.b, s.a, rows, static_cast<const cpx<T>*>(nullptr), false);
  __syncwarp();
  warp_swap<false>(tab.b, s.a, s.b, rows, s.pa, true, static_cast<const T*>(nullptr));
  __syncwarp();
  for (int idx = lane; idx < C; idx += 32) out[idx] = s.b[idx];
  __syncwarp();
}

template <class T>
__host__ __device__ constexpr std::size_t warp_smem_bytes(int p, int warps) {
  const std::size_t tab = (std::size_t(swap_offset(p + 1)) + 2 * p + 1) * sizeof(T);
  const std::size_t tab_rounded = (tab + sizeof(cpx<T>) - 1) / sizeof(cpx<T>) * sizeof(cpx<T>);
  return tab_rounded + std::size_t(warps) * warp_scratch_elems<T>(p) * sizeof(cpx<T>);
}

template <class T, int WARPS>
__global__ void __launch_bounds__(WARPS * 32)
    m2l_warp_kernel(const cpx<T>* __restrict__ multipoles, const T* __restrict__ deltas,
                    cpx<T>* __restrict__ locals, std::int64_t num_pairs, int p) {
  extern __shared__ __align__(16) unsigned char m2l_smem_raw[];
  const int C = (p + 1) * (p + 1);
  T* tb = reinterpret_cast<T*>(m2l_smem_raw);
  const warp_tables<T> tab{tb, tb + swap_offset(p + 1)};
  const std::size_t tab_bytes = (std::size_t(swap_offset(p + 1)) + 2 * p + 1) * sizeof(T);
  cpx<T>* scratch_base = reinterpret_cast<cpx<T>*>(
      m2l_smem_raw + (tab_bytes + sizeof(cpx<T>) - 1) / sizeof(cpx<T>) * sizeof(cpx<T>));
  warp_load_tables(tab, p);
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const warp_scratch<T> s = warp_scratch_at(scratch_base + warp * warp_scratch_elems<T>(p), p);
  for (std::int64_t pair = std::int64_t(blockIdx.x) * WARPS + warp; pair < num_pairs;
       pair += std::int64_t(gridDim.x) * WARPS) {
    const cpx<T>* src = multipoles + pair * C;
    for (int i = lane; i < C; i += 32) s.a[i] = src[i];
    __syncwarp();
    const T* d = deltas + 3 * pair;
    warp_m2l(tab, s, p, d[0], d[1], d[2], locals + pair * C);
  }
}

template <class T>
void launch_warp(int p, const cpx<T>* multipoles, const T* deltas, cpx<T>* locals,
                 std::int64_t num_pairs, cudaStream_t stream) {
  constexpr int W = warp_schedule_warps;
  auto kernel = m2l_warp_kernel<T, W>;
  const std::size_t smem = warp_smem_bytes<T>(p, W);
  ensure_dynamic_smem(kernel, smem);
  const auto& lim = current_device_limits();
  int per_sm = 0;
  WHAM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, W * 32, smem));
  const std::int64_t needed = (num_pairs + W - 1) / W;
  const std::int64_t grid = std::max<std::int64_t>(
      1, std::min<std::int64_t>(needed, std::int64_t(lim.sm_count) * std::max(per_sm, 1)));
  kernel<<<dim3(unsigned(grid)), W * 32, smem, stream>>>(multipoles, deltas, locals, num_pairs, p);
  WHAM_CHECK_LAUNCH("m2l_warp_kernel");
}

}  // namespace wham::detail::m2l
