/// \file wham/detail/translations/split.cuh
/// \brief The degree-split schedule of M2M / L2L: M2L's (detail/m2l/split.cuh) with the
/// translations' rotations and z-shift. One pair a lane, 32 pairs a block, the degrees over
/// the block's warps (M2L's compile-time partitions and barrier):
///   1. records staged through shared memory (gathered by src for the accumulate forms);
///   2. warp g rotates the degrees it owns to z (B^T twice for M2M, B twice for L2L);
///   3. barrier; warp g forms its output degrees of the Toeplitz z-shift in registers;
///      barrier; writes them in place;
///   4. barrier; warp g rotates its degrees back;
///   5. barrier; coalesced stores, or one atomic a coefficient per run of pairs that share
///      a target (accumulate).
#pragma once

#include <wham/detail/m2l/split.cuh>
#include <wham/detail/translations/kernels.cuh>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace wham::detail::translations {

/// Steps 2-4 for warp Group; `slot` = the lane's record; `work` = the lane has a pair
/// whose delta is not zero (a zero delta is the identity: its record stays as it is).
template <kind K, int P, class T, int G, int Group>
__device__ __forceinline__ void split_group(cpx<T>* slot, bool work, m2l::angles<T> dir,
                                            T inv_r) {
  using m2l::swap_post;
  constexpr bool tr = K == kind::m2m;  // B^T both ways (M2M) or B both ways (L2L)
  constexpr int own = m2l::split_out_offset(P, G, Group, P + 1);
  if (work) {
    m2l::static_for<0, P + 1>([&](auto Lc) {
      constexpr int L = decltype(Lc)::value;
      if constexpr (m2l::split_owner(P, G, L) == Group) {
        cpx<T> v[2 * L + 1];
        cpx<T>* d = slot + L * L;
        WHAM_M2L_UNROLL
        for (int i = 0; i < 2 * L + 1; ++i) v[i] = d[i];
        m2l::dz_powers_inplace<L, false>(v, dir.ea);
        m2l::swap_store<L, tr, swap_post::dz, false>(v, d, dir.eb, T(1));
        WHAM_M2L_UNROLL
        for (int i = 0; i < 2 * L + 1; ++i) v[i] = d[i];
        m2l::swap_store<L, tr, swap_post::none, false>(v, d, dir.eb, T(1));
      }
    });
  }
  m2l::split_barrier();
  cpx<T> out[own > 0 ? own : 1];
  if (work) {
    T c[P + 1];
    taylor_powers<P>(inv_r, c);
    m2l::static_for<0, P + 1>([&](auto Nc) {
      constexpr int N = decltype(Nc)::value;
      if constexpr (m2l::split_z_owner(P, G, N) == Group) {
        constexpr int off = m2l::split_out_offset(P, G, Group, N);
        WHAM_M2L_UNROLL
        for (int m = -N; m <= N; ++m) {
          cpx<T> acc{T(0), T(0)};
          if constexpr (K == kind::m2m) {
            const int am = m < 0 ? -m : m;
            WHAM_M2L_UNROLL
            for (int k = am; k <= N; ++k) acc = m2l::fma(c[N - k], slot[k * k + k + m], acc);
          } else {
            WHAM_M2L_UNROLL
            for (int n = N; n <= P; ++n) acc = m2l::fma(c[n - N], slot[n * n + n + m], acc);
          }
          out[off + N + m] = acc;
        }
      }
    });
  }
  m2l::split_barrier();
  if (work) {
    m2l::static_for<0, P + 1>([&](auto Nc) {
      constexpr int N = decltype(Nc)::value;
      if constexpr (m2l::split_z_owner(P, G, N) == Group) {
        constexpr int off = m2l::split_out_offset(P, G, Group, N);
        WHAM_M2L_UNROLL
        for (int i = 0; i < 2 * N + 1; ++i) slot[N * N + i] = out[off + i];
      }
    });
  }
  m2l::split_barrier();
  if (work) {
    m2l::static_for<0, P + 1>([&](auto Lc) {
      constexpr int L = decltype(Lc)::value;
      if constexpr (m2l::split_owner(P, G, L) == Group) {
        cpx<T> v[2 * L + 1];
        cpx<T>* d = slot + L * L;
        WHAM_M2L_UNROLL
        for (int i = 0; i < 2 * L + 1; ++i) v[i] = d[i];
        m2l::swap_store<L, tr, swap_post::dz_conj, false>(v, d, dir.eb, T(1));
        WHAM_M2L_UNROLL
        for (int i = 0; i < 2 * L + 1; ++i) v[i] = d[i];
        m2l::swap_store<L, tr, swap_post::dz_conj, false>(v, d, dir.ea, T(1));
      }
    });
  }
}

template <kind K, int P, class T, int G, int MinBlocks>
__global__ void __launch_bounds__(32 * G, MinBlocks > 0 ? MinBlocks : 1)
    translate_split_kernel(const cpx<T>* __restrict__ in, const T* __restrict__ deltas,
                           pair_rows<T> pr, cpx<T>* __restrict__ out, std::int64_t num_pairs) {
  constexpr int C = (P + 1) * (P + 1);
  constexpr int S = m2l::split_stride<P>;
  constexpr int NT = 32 * G;
  constexpr int NP = m2l::split_pairs;
  extern __shared__ __align__(16) unsigned char translate_smem_raw[];
  cpx<T>* sm = reinterpret_cast<cpx<T>*>(translate_smem_raw);
  __shared__ std::int64_t rows_in[NP], rows_out[NP];
  const std::int64_t first = std::int64_t(blockIdx.x) * NP;
  const int count = int(min(std::int64_t(NP), num_pairs - first));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const bool gather = pr.tgt != nullptr;
  if (threadIdx.x < count) pr.rows(first + threadIdx.x, rows_in[threadIdx.x], rows_out[threadIdx.x]);
  if (gather) {
    __syncthreads();
    stage_gathered<C, S, NT>(sm, in, rows_in, count);
  } else {
    m2l::stage_records<C, S, NT>(sm, in + first * C, count);
  }
  bool work = lane < count;
  m2l::angles<T> dir{};
  T inv_r = T(0);
  if (work) {
    const T* d = deltas + 3 * (first + lane);
    const T x = d[0], y = d[1], z = d[2];
    work = !is_zero(x, y, z);
    dir = m2l::make_angles(x, y, z);
    inv_r = m2l::inverse_distance(x, y, z);
  }
  m2l::stage_records_wait();
  __syncthreads();
  m2l::static_for<0, G>([&](auto Gc) {
    constexpr int Group = decltype(Gc)::value;
    if (warp == Group) split_group<K, P, T, G, Group>(sm + lane * S, work, dir, inv_r);
  });
  __syncthreads();
  store_records<C, S, NT>(sm, out, first, rows_out, count, gather);
}

template <kind K, int P, class T, int G, int MinBlocks>
void launch_split_variant(const cpx<T>* in, const T* deltas, pair_rows<T> pr, cpx<T>* out,
                          std::int64_t num_pairs, cudaStream_t stream) {
  constexpr std::size_t smem = m2l::split_smem_bytes<P, T>();
  auto kernel = translate_split_kernel<K, P, T, G, MinBlocks>;
  ensure_dynamic_smem(kernel, smem);
  const std::int64_t blocks = (num_pairs + m2l::split_pairs - 1) / m2l::split_pairs;
  kernel<<<dim3(unsigned(blocks)), 32 * G, smem, stream>>>(in, deltas, pr, out, num_pairs);
  if constexpr (K == kind::m2m) {
    WHAM_CHECK_LAUNCH("m2m split kernel");
  } else {
    WHAM_CHECK_LAUNCH("l2l split kernel");
  }
}

}  // namespace wham::detail::translations
