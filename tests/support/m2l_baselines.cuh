// The materialised-blocks M2L baseline that bench_m2l measures beside the fused kernels
// and test_m2l_gpu checks (here, in tests/support/, which the benchmarks include as well): jaccpot v0's structure. A first kernel builds the dense
// per-pair rotation blocks (to z: B^T Dz(beta) B^T Dz(alpha), from z: Dz(-alpha) B Dz(-beta)
// B, per degree) and writes them to device memory; a second reads them back and applies
// them around the z-translation. Needs a workspace of materialised_workspace_bytes<T>(p, n)
// bytes. Run-time order (0..20), local memory, one thread a pair.
#pragma once

#include <wham/detail/m2l/blocks.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace wham_bench {

using wham::detail::m2l::cpx;
using wham::detail::m2l::max_table_order;
using wham::detail::m2l::swap_constants;
using wham::detail::m2l::swap_offset;

/// B_l[i][j], i, j in -l..l, from a folded table.
template <class T>
__host__ __device__ __forceinline__ T swap_entry(const T* b, int l, int i, int j) {
  const int ai = i < 0 ? -i : i, aj = j < 0 ? -j : j;
  const T v = b[swap_offset(l) + ai * (l + 1) + aj];
  const bool neg = (i < 0 && ((l + aj) & 1)) != (j < 0 && ((l + ai) & 1));
  return neg ? -v : v;
}

inline constexpr int materialised_block_threads = 128;

/// Complex entries of one pair's blocks: to z and from z, (2l+1)^2 each, l = 0..p.
__host__ __device__ constexpr std::int64_t materialised_entries(int p) {
  std::int64_t e = 0;
  for (int l = 0; l <= p; ++l) e += 2 * std::int64_t(2 * l + 1) * (2 * l + 1);
  return e;
}

template <class T>
constexpr std::size_t materialised_workspace_bytes(int p, std::int64_t num_pairs) {
  return std::size_t(materialised_entries(p)) * std::size_t(num_pairs) * sizeof(cpx<T>);
}

/// Entry e of the pair at W[e * num_pairs + pair] (coalesced over pairs).
template <class T>
__global__ void __launch_bounds__(materialised_block_threads)
    m2l_build_blocks_kernel(const T* __restrict__ deltas, cpx<T>* __restrict__ work,
                            std::int64_t num_pairs, int p) {
  const std::int64_t pair = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (pair >= num_pairs) return;
  const T* b = swap_constants<T>().b;
  const T x = deltas[3 * pair], y = deltas[3 * pair + 1], z = deltas[3 * pair + 2];
  const T rho = sqrt(x * x + y * y);
  const T inv_r = T(1) / sqrt(x * x + y * y + z * z);
  cpx<T> ea{T(1), T(0)};
  if (rho > T(0)) ea = {y / rho, x / rho};
  const cpx<T> eb{z * inv_r, -rho * inv_r};
  cpx<T> pa[2 * max_table_order + 1], pb[2 * max_table_order + 1];  // index m + p
  {
    cpx<T> qa{T(1), T(0)}, qb{T(1), T(0)};
    for (int m = 0; m <= p; ++m) {
      pa[p + m] = qa;
      pb[p + m] = qb;
      pa[p - m] = {qa.re, -qa.im};
      pb[p - m] = {qb.re, -qb.im};
      qa = qa * ea;
      qb = qb * eb;
    }
  }
  std::int64_t e = 0;
  for (int l = 0; l <= p; ++l) {
    for (int m = -l; m <= l; ++m) {  // to z: [m][k] = sum_j B[j][m] eb^j B[k][j] ea^k
      for (int k = -l; k <= l; ++k) {
        cpx<T> acc{T(0), T(0)};
        for (int j = -l; j <= l; ++j) {
          acc = fma(swap_entry(b, l, j, m) * swap_entry(b, l, k, j), pb[p + j], acc);
        }
        work[(e++) * num_pairs + pair] = acc * pa[p + k];
      }
    }
    for (int m = -l; m <= l;
         ++m) {  // from z: [m][k] = e^{-i m alpha} sum_j B[m][j] e^{-i j beta} B[j][k]
      for (int k = -l; k <= l; ++k) {
        cpx<T> acc{T(0), T(0)};
        for (int j = -l; j <= l; ++j) {
          acc = fma(swap_entry(b, l, m, j) * swap_entry(b, l, j, k), pb[p - j], acc);
        }
        work[(e++) * num_pairs + pair] = acc * pa[p - m];
      }
    }
  }
}

template <class T>
__global__ void __launch_bounds__(materialised_block_threads)
    m2l_apply_blocks_kernel(const cpx<T>* __restrict__ multipoles, const T* __restrict__ deltas,
                            const cpx<T>* __restrict__ work, cpx<T>* __restrict__ locals,
                            std::int64_t num_pairs, int p) {
  const std::int64_t pair = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (pair >= num_pairs) return;
  const T* fact = swap_constants<T>().fact;
  constexpr int CM = (max_table_order + 1) * (max_table_order + 1);
  const int C = (p + 1) * (p + 1);
  const cpx<T>* M = multipoles + pair * C;
  cpx<T> a[CM];
  const T x = deltas[3 * pair], y = deltas[3 * pair + 1], z = deltas[3 * pair + 2];
  const T inv_r = T(1) / sqrt(x * x + y * y + z * z);
  T ir[max_table_order + 2];
  ir[0] = T(1);
  for (int j = 1; j <= p + 1; ++j) ir[j] = ir[j - 1] * inv_r;
  // to z, with r^-(l+1)
  std::int64_t e = 0;
  std::int64_t e_from[max_table_order + 1];
  for (int l = 0; l <= p; ++l) {
    for (int m = -l; m <= l; ++m) {
      cpx<T> acc{T(0), T(0)};
      for (int k = -l; k <= l; ++k) acc = acc + work[(e++) * num_pairs + pair] * M[l * l + l + k];
      a[l * l + l + m] = scale(acc, ir[l + 1]);
    }
    e_from[l] = e;
    e += std::int64_t(2 * l + 1) * (2 * l + 1);
  }
  // z-translation, one Hankel block per m
  cpx<T> bz[CM];
  for (int n = 0; n <= p; ++n) {
    for (int m = -n; m <= n; ++m) {
      const int am = m < 0 ? -m : m;
      cpx<T> acc{T(0), T(0)};
      for (int k = am; k <= p - n; ++k) acc = fma(fact[n + k], a[k * k + k + m], acc);
      bz[n * n + n + m] = scale(acc, (m & 1) ? -ir[n] : ir[n]);
    }
  }
  cpx<T>* L = locals + pair * C;
  for (int l = 0; l <= p; ++l) {
    std::int64_t f = e_from[l];
    for (int m = -l; m <= l; ++m) {
      cpx<T> acc{T(0), T(0)};
      for (int k = -l; k <= l; ++k) acc = acc + work[(f++) * num_pairs + pair] * bz[l * l + l + k];
      L[l * l + l + m] = acc;
    }
  }
}

/// The materialised-blocks baseline; `workspace` holds materialised_workspace_bytes<T>(p, n).
template <class T>
void launch_materialised(int p, const cpx<T>* multipoles, const T* deltas, cpx<T>* locals,
                         std::int64_t num_pairs, void* workspace, cudaStream_t stream) {
  const std::int64_t blocks =
      (num_pairs + materialised_block_threads - 1) / materialised_block_threads;
  auto* work = static_cast<cpx<T>*>(workspace);
  m2l_build_blocks_kernel<T><<<dim3(unsigned(blocks)), materialised_block_threads, 0, stream>>>(
      deltas, work, num_pairs, p);
  WHAM_CHECK_LAUNCH("m2l_build_blocks_kernel");
  m2l_apply_blocks_kernel<T><<<dim3(unsigned(blocks)), materialised_block_threads, 0, stream>>>(
      multipoles, deltas, work, locals, num_pairs, p);
  WHAM_CHECK_LAUNCH("m2l_apply_blocks_kernel");
}

}  // namespace wham_bench
