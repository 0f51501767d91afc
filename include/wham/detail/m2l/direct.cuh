/// \file wham/detail/m2l/direct.cuh
/// \brief The direct O(p^4) M2L, one thread per pair (m2l_path::direct: a baseline and
/// the GPU cross-check of the fused schedules): S_n^m(delta) by the spec's recurrences
/// into a local array, then the double sum. Run-time order (0..20), local memory.
#pragma once

#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>

namespace wham::detail::m2l {

template <class T>
__global__ void __launch_bounds__(direct_block_threads)
    m2l_direct_kernel(const cpx<T>* __restrict__ multipoles, const T* __restrict__ deltas,
                      cpx<T>* __restrict__ locals, std::int64_t num_pairs, int p) {
  const std::int64_t pair = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (pair >= num_pairs) return;
  constexpr int CM = (max_table_order + 1) * (max_table_order + 1);
  const int C = (p + 1) * (p + 1);
  cpx<T> S[CM];
  const T x = deltas[3 * pair], y = deltas[3 * pair + 1], z = deltas[3 * pair + 2];
  // the recurrences in u = delta / r and 1 / r: r^2 alone over- or underflows long before
  // the harmonics do
  const unit<T> u = make_unit(x, y, z);
  const T ir = u.inv_r;
  const cpx<T> xy{u.x, u.y};
  S[0] = {ir, T(0)};
  for (int m = 0; m <= p; ++m) {
    if (m > 0) S[m * m + 2 * m] = scale(S[(m - 1) * (m - 1) + 2 * (m - 1)] * xy, T(2 * m - 1) * ir);
    if (m + 1 <= p)
      S[(m + 1) * (m + 1) + (m + 1) + m] = scale(S[m * m + 2 * m], T(2 * m + 1) * u.z * ir);
    for (int n = m + 2; n <= p; ++n) {
      const cpx<T> a = S[(n - 1) * (n - 1) + (n - 1) + m], b = S[(n - 2) * (n - 2) + (n - 2) + m];
      S[n * n + n + m] =
          scale(scale(a, T(2 * n - 1) * u.z) - scale(b, T((n + m - 1) * (n - m - 1)) * ir), ir);
    }
  }
  for (int n = 1; n <= p; ++n) {
    for (int m = 1; m <= n; ++m) {
      const cpx<T> v = S[n * n + n + m];
      S[n * n + n - m] = (m & 1) ? cpx<T>{-v.re, v.im} : cpx<T>{v.re, -v.im};
    }
  }
  const cpx<T>* M = multipoles + pair * C;
  cpx<T>* L = locals + pair * C;
  for (int n = 0; n <= p; ++n) {
    for (int m = -n; m <= n; ++m) {
      cpx<T> acc{T(0), T(0)};
      for (int k = 0; k <= p - n; ++k) {
        const int j = n + k;
        for (int l = -k; l <= k; ++l) {
          const cpx<T> t = M[k * k + k + l] * S[j * j + j + m - l];
          acc = (l & 1) ? acc - t : acc + t;
        }
      }
      L[n * n + n + m] = acc;
    }
  }
}

template <class T>
void launch_direct(int p, const cpx<T>* multipoles, const T* deltas, cpx<T>* locals,
                   std::int64_t num_pairs, cudaStream_t stream) {
  const std::int64_t blocks = (num_pairs + direct_block_threads - 1) / direct_block_threads;
  m2l_direct_kernel<T><<<dim3(unsigned(blocks)), direct_block_threads, 0, stream>>>(
      multipoles, deltas, locals, num_pairs, p);
  WHAM_CHECK_LAUNCH("m2l_direct_kernel");
}

}  // namespace wham::detail::m2l
