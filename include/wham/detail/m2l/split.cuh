/// \file wham/detail/m2l/split.cuh
/// \brief The degree-split M2L schedule: one pair per lane, the degrees of the
/// expansion split over the warps of a block.
///
/// Between the one-thread-per-pair schedule (whose whole record stops fitting in
/// registers above p = 6 in double, 7 in float) and the one-warp-per-pair schedule
/// (whose lanes run divergent row loops), a block of G warps takes 32 pairs:
///
///   1. the 32 records are staged through shared memory (coalesced loads);
///   2. warp g rotates the degrees it owns to z, lane = pair, one degree at a time
///      in registers (the rotations act on one degree each), and scales them by
///      r^-(l+1) in place;
///   3. barrier; warp g computes the z-translated coefficients of its output degrees
///      (every m of output degree n reads input degrees k <= p - n, from all warps)
///      into registers; barrier; writes them in place;
///   4. barrier; warp g rotates its degrees back, in place;
///   5. barrier; coalesced stores.
///
/// Every lane of a warp runs the same degree at the same time: no divergence, and
/// the swap matrices come from __constant__ memory by broadcast, as in the thread
/// schedule. Degrees go to warps by compile-time greedy partitions: of their
/// rotation flops (`split_owner`) and of the z outputs held in registers
/// (`split_z_owner`); a warp's code is a template on its index, so its registers
/// hold only its own degrees. The barriers are in warp-uniform divergent code, so
/// they are the non-.aligned `barrier.sync` (defined for that; `__syncthreads`
/// is not).
#pragma once

#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/device.cuh>
#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/staging.cuh>
#include <wham/detail/m2l/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace wham::detail::m2l {

/// Number of (n, m) terms of output degree n's z-translation at order P.
__host__ __device__ constexpr int split_z_terms(int P, int n) {
  int t = 0;
  for (int m = -n; m <= n; ++m) {
    const int am = m < 0 ? -m : m;
    if (P - n - am + 1 > 0) t += P - n - am + 1;
  }
  return t;
}

/// Flops a warp spends on degree l: both rotations (blocks.cuh's count) and output
/// degree l's z-translation.
__host__ __device__ constexpr int split_degree_cost(int P, int l) {
  return 4 * (4 * (l + 1) * (l + 1) + 8 * l) + 24 * l + 4 * split_z_terms(P, l) + 6 * (2 * l + 1);
}

/// The warp (0..G-1) that owns degree l: longest-processing-time greedy (degrees by
/// falling cost, each to the least-loaded warp so far).
__host__ __device__ constexpr int split_owner(int P, int G, int l) {
  int load[32] = {};
  bool done[32] = {};
  int owner = 0;
  for (int step = 0; step <= P; ++step) {
    int best = -1;
    for (int d = 0; d <= P; ++d) {
      if (!done[d] && (best < 0 || split_degree_cost(P, d) > split_degree_cost(P, best))) best = d;
    }
    int w = 0;
    for (int g = 1; g < G; ++g) {
      if (load[g] < load[w]) w = g;
    }
    load[w] += split_degree_cost(P, best);
    done[best] = true;
    if (best == l) owner = w;
  }
  return owner;
}

/// The largest warp load over the total: 1/G when the partition is perfect.
__host__ __device__ constexpr double split_balance(int P, int G) {
  int load[32] = {};
  int total = 0;
  for (int l = 0; l <= P; ++l) {
    load[split_owner(P, G, l)] += split_degree_cost(P, l);
    total += split_degree_cost(P, l);
  }
  int worst = 0;
  for (int g = 0; g < G; ++g) worst = load[g] > worst ? load[g] : worst;
  return double(worst) / double(total);
}

/// The warp that computes output degree n of the z-translation: the same greedy over
/// the 2n + 1 outputs a warp holds in registers across a barrier (the registers
/// they cost, not their few flops, decide the occupancy).
__host__ __device__ constexpr int split_z_owner(int P, int G, int n) {
  int load[32] = {};
  int owner = 0;
  for (int d = P; d >= 0; --d) {  // falling 2d + 1
    int w = 0;
    for (int g = 1; g < G; ++g) {
      if (load[g] < load[w]) w = g;
    }
    load[w] += 2 * d + 1;
    if (d == n) owner = w;
  }
  return owner;
}

/// Offset of output degree n in warp g's z registers (its degrees, in increasing n).
__host__ __device__ constexpr int split_out_offset(int P, int G, int g, int n) {
  int off = 0;
  for (int d = 0; d < n; ++d) {
    if (split_z_owner(P, G, d) == g) off += 2 * d + 1;
  }
  return off;
}

/// Slot stride of a pair's record in shared memory, in cpx<T>: odd, so that 32 lanes
/// reading the same coefficient of their records hit distinct banks.
template <int P>
inline constexpr int split_stride = ((P + 1) * (P + 1)) | 1;

/// Pairs per block of the split schedule (one per lane).
inline constexpr int split_pairs = 32;

template <int P, class T>
constexpr std::size_t split_smem_bytes() {
  return std::size_t(split_pairs) * split_stride<P> * sizeof(cpx<T>);
}

/// A block barrier that may sit in warp-uniform divergent code (see the file comment).
__device__ __forceinline__ void split_barrier() { asm volatile("barrier.sync 0;" ::: "memory"); }

/// Steps 2-4 for warp Group; `slot` = the lane's record, `valid` = the lane has a pair.
/// Rotations: per degree, one array of registers; each swap writes its result to the
/// slot (swap_store) and the next step reads it back, so a degree never needs two
/// arrays at once. z: outputs held in registers over the barrier (they overwrite
/// inputs other warps still read), then written to the slots, then rotated back.
/// `dir` = the pair's angles (their powers are made on the way: a table of them would
/// cost 4 (P + 1) registers), `inv_r` = 1 / |delta|.
template <int P, class T, int G, int Group>
__device__ __forceinline__ void split_group(cpx<T>* slot, bool valid, angles<T> dir, T inv_r) {
  constexpr int own = split_out_offset(P, G, Group, P + 1);
  if (valid) {
    T ir = inv_r;  // r^-(L+1)
    static_for<0, P + 1>([&](auto Lc) {
      constexpr int L = decltype(Lc)::value;
      if constexpr (split_owner(P, G, L) == Group) {
        cpx<T> v[2 * L + 1];
        cpx<T>* d = slot + L * L;
        WHAM_M2L_UNROLL
        for (int i = 0; i < 2 * L + 1; ++i) v[i] = d[i];
        dz_powers_inplace<L, false>(v, dir.ea);
        swap_store<L, true, swap_post::dz, false>(v, d, dir.eb, T(1));
        WHAM_M2L_UNROLL
        for (int i = 0; i < 2 * L + 1; ++i) v[i] = d[i];
        swap_store<L, true, swap_post::none, true>(v, d, dir.eb, ir);
      }
      ir *= inv_r;
    });
  }
  split_barrier();
  // z: out[n, m] = (-1)^m r^-n sum_{k=|m|}^{P-n} (n+k)! t[k, m], t already r-scaled
  cpx<T> out[own > 0 ? own : 1];
  if (valid) {
    const swap_table<T>& tab = swap_constants<T>();
    T ir = T(1);  // r^-n
    static_for<0, P + 1>([&](auto Nc) {
      constexpr int N = decltype(Nc)::value;
      if constexpr (split_z_owner(P, G, N) == Group) {
        constexpr int off = split_out_offset(P, G, Group, N);
        WHAM_M2L_UNROLL
        for (int m = -N; m <= N; ++m) {
          const int am = m < 0 ? -m : m;
          cpx<T> acc{T(0), T(0)};
          WHAM_M2L_UNROLL
          for (int k = am; k <= P - N; ++k) acc = fma(tab.fact[N + k], slot[k * k + k + m], acc);
          out[off + N + m] = scale(acc, (m & 1) ? -ir : ir);
        }
      }
      ir *= inv_r;
    });
  }
  split_barrier();
  if (valid) {
    static_for<0, P + 1>([&](auto Nc) {
      constexpr int N = decltype(Nc)::value;
      if constexpr (split_z_owner(P, G, N) == Group) {
        constexpr int off = split_out_offset(P, G, Group, N);
        WHAM_M2L_UNROLL
        for (int i = 0; i < 2 * N + 1; ++i) slot[N * N + i] = out[off + i];
      }
    });
  }
  split_barrier();
  if (valid) {
    static_for<0, P + 1>([&](auto Lc) {
      constexpr int L = decltype(Lc)::value;
      if constexpr (split_owner(P, G, L) == Group) {
        cpx<T> v[2 * L + 1];
        cpx<T>* d = slot + L * L;
        WHAM_M2L_UNROLL
        for (int i = 0; i < 2 * L + 1; ++i) v[i] = d[i];
        swap_store<L, false, swap_post::dz_conj, false>(v, d, dir.eb, T(1));
        WHAM_M2L_UNROLL
        for (int i = 0; i < 2 * L + 1; ++i) v[i] = d[i];
        swap_store<L, false, swap_post::dz_conj, false>(v, d, dir.ea, T(1));
      }
    });
  }
}

/// MinBlocks: blocks per SM the register allocation must allow (0: no cap). The
/// compiler otherwise takes up to 255 registers for ILP and leaves an SM 2 blocks.
template <int P, class T, int G, int MinBlocks>
__global__ void __launch_bounds__(32 * G, MinBlocks > 0 ? MinBlocks : 1)
    m2l_split_kernel(const cpx<T>* __restrict__ multipoles, const T* __restrict__ deltas,
                     cpx<T>* __restrict__ locals, std::int64_t num_pairs) {
  constexpr int C = (P + 1) * (P + 1);
  constexpr int S = split_stride<P>;
  constexpr int NT = 32 * G;
  extern __shared__ __align__(16) unsigned char m2l_smem_raw[];
  cpx<T>* sm = reinterpret_cast<cpx<T>*>(m2l_smem_raw);
  const std::int64_t first = std::int64_t(blockIdx.x) * split_pairs;
  const int count = int(min(std::int64_t(split_pairs), num_pairs - first));
  stage_records<C, S, NT>(sm, multipoles + first * C, count);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const bool valid = lane < count;
  // the displacement's loads in flight with the records'
  angles<T> dir{};
  T inv_r = T(0);
  if (valid) {
    const T* d = deltas + 3 * (first + lane);
    const T x = d[0], y = d[1], z = d[2];
    dir = make_angles(x, y, z);
    inv_r = inverse_distance(x, y, z);
  }
  stage_records_wait();
  __syncthreads();
  static_for<0, G>([&](auto Gc) {
    constexpr int Group = decltype(Gc)::value;
    if (warp == Group) split_group<P, T, G, Group>(sm + lane * S, valid, dir, inv_r);
  });
  __syncthreads();
  cpx<T>* dst = locals + first * C;
  for (int j = threadIdx.x; j < count * C; j += NT) {
    const int q = j / C;
    dst[j] = sm[q * S + (j - q * C)];
  }
}

template <int P, class T, int G, int MinBlocks>
void launch_split_variant(const cpx<T>* multipoles, const T* deltas, cpx<T>* locals,
                          std::int64_t num_pairs, cudaStream_t stream) {
  constexpr std::size_t smem = split_smem_bytes<P, T>();
  auto kernel = m2l_split_kernel<P, T, G, MinBlocks>;
  ensure_dynamic_smem(kernel, smem);
  const std::int64_t blocks = (num_pairs + split_pairs - 1) / split_pairs;
  kernel<<<dim3(unsigned(blocks)), 32 * G, smem, stream>>>(multipoles, deltas, locals, num_pairs);
  WHAM_CHECK_LAUNCH("m2l_split_kernel");
}

/// One pair per lane, degrees over warps, order p in split_min_order..split_max_order
/// (checked by the caller), the shape of split_schedule_config.
template <class T>
void launch_split(int p, const cpx<T>* multipoles, const T* deltas, cpx<T>* locals,
                  std::int64_t num_pairs, cudaStream_t stream) {
  const bool done = arch::dispatch_int<split_min_order, split_max_order + 1>(p, [&](auto Pc) {
    constexpr int P = decltype(Pc)::value;
    constexpr split_config cfg = split_schedule_config<T>(P);
    launch_split_variant<P, T, cfg.warps, cfg.min_blocks>(multipoles, deltas, locals, num_pairs,
                                                          stream);
  });
  if (!done) {
    throw_invalid_argument("m2l", "p", p,
                           std::to_string(split_min_order) + ".." +
                               std::to_string(split_max_order) + " for the split schedule");
  }
}

}  // namespace wham::detail::m2l
