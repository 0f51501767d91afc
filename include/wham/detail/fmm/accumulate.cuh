/// \file wham/detail/fmm/accumulate.cuh
/// \brief The tile schedules of the accumulate and class forms of the M2L
/// (`locals[tgt[i]] += M2L_p(multipoles[src[i]], delta_i)`), built on the pair-streaming
/// schedules' device code (detail/m2l/thread.cuh's slots and m2l_inplace, split.cuh's
/// split_group). The warp schedule is in accumulate_warp.cuh, the tensor ones'
/// pair policies in accumulate_tensor.cuh, the choice among them in dispatch.cuh.
///
/// Each has two accumulation methods (a kernel argument, so one instantiation per
/// schedule, order and type):
///
///   thread (p <= the M2L thread schedule's orders): a block takes tiles of NT
///     consecutive pairs; it gathers their multipoles into shared memory (coalesced:
///     a pair's record is contiguous), each thread translates one pair (registers or
///     its shared-memory slot, as the pair-streaming kernel), then threads run over
///     the coefficients and sum the tile's pairs run by run (a run: consecutive pairs
///     with one target):
///       atomic:        NT / C groups of pairs per coefficient; each group's partial
///                      sum of a run is one atomicAdd per real lane. Any pair order is
///                      correct; target-sorted lists need the fewest atomics.
///       deterministic: a block owns the runs that start in its chunk of NT pairs and
///                      sums each run in pair order, one thread per coefficient,
///                      carrying partial sums across tiles in registers; then
///                      `locals += sum` once, a plain read-modify-write. No atomics:
///                      bitwise reproducible. Requires each target's pairs to be
///                      contiguous in the list (grouped by target).
///   split (the M2L split schedule's orders): as thread, tiles of 32 pairs, one lane a
///     pair with its degrees over the block's warps (detail/m2l/split.cuh); the same
///     gather and the same two flushes.
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/fmm/pair_list.cuh>
#include <wham/detail/fmm/tuning.cuh>
#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/split.cuh>
#include <wham/detail/m2l/staging.cuh>
#include <wham/detail/m2l/thread.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace wham::detail::fmm {

/// First index in [from, to) where a run starts (tgt differs from its predecessor),
/// or `to`; the whole block calls it with the same arguments.
__device__ __forceinline__ std::int64_t block_next_run_start(const std::int32_t* tgt,
                                                             std::int64_t from, std::int64_t to,
                                                             unsigned long long* slot) {
  for (std::int64_t base = from; base < to; base += blockDim.x) {
    __syncthreads();
    if (threadIdx.x == 0) *slot = ~0ull;
    __syncthreads();
    const std::int64_t i = base + threadIdx.x;
    if (i < to && (i == 0 || tgt[i] != tgt[i - 1])) atomicMin(slot, (unsigned long long)i);
    __syncthreads();
    const unsigned long long found = *slot;
    if (found != ~0ull) return std::int64_t(found);
  }
  return to;
}

/// How a tile's pairs are translated: one thread a pair with its record in registers
/// or in its shared-memory slot (the M2L thread schedule), or one lane a pair with its
/// degrees over the block's warps (the M2L split schedule, 32 pairs a tile).
enum class translator { thread_registers, thread_shared, split };

/// Slot stride of a tile's records, in cpx<T>.
template <int P, class T, translator X>
inline constexpr int tile_stride =
    X == translator::split ? m2l::split_stride<P>
                           : m2l::slot_stride<P, T, X == translator::thread_registers>;

/// Shared memory of the tile kernel: NP records, their src/tgt/cls, the class table.
template <int P, class T, int NP, translator X>
constexpr std::size_t tile_bytes() {
  return std::size_t(NP) * tile_stride<P, T, X> * sizeof(cpx<T>) + 3 * NP * sizeof(std::int32_t);
}
template <int P, class T, int NP, translator X>
inline std::size_t tile_smem_bytes(geometry mode, int num_classes) {
  std::size_t b = (tile_bytes<P, T, NP, X>() + 15) / 16 * 16;
  if (mode == geometry::classes) b += std::size_t(num_classes) * sizeof(class_rotation<T>);
  return b;
}

/// Tiles of NP consecutive pairs, NTH threads (NP = NTH for the thread translators,
/// 32 for split with NTH = 32 G); MinBlocks > 0 caps registers for that many blocks an SM.
template <int P, class T, int NP, int NTH, translator X, int MinBlocks = 0>
__global__ void __launch_bounds__(NTH, MinBlocks > 0 ? MinBlocks : 1)
    accumulate_tile_kernel(const pair_list<T> l, std::int64_t num_units, bool deterministic) {
  constexpr int C = (P + 1) * (P + 1);
  constexpr int S = tile_stride<P, T, X>;
  constexpr int NT = NTH;
  constexpr int K = (C + NT - 1) / NT;        // coefficients per thread (deterministic)
  constexpr int G = NT / C > 1 ? NT / C : 1;  // pair groups per coefficient (atomic)
  constexpr bool Registers = X == translator::thread_registers;
  static_assert(X == translator::split ? NP == 32 && NTH % 32 == 0 : NP == NTH,
                "tile shape of the translator");
  extern __shared__ __align__(16) unsigned char fmm_smem_raw[];
  cpx<T>* sm = reinterpret_cast<cpx<T>*>(fmm_smem_raw);
  std::int32_t* s_src = reinterpret_cast<std::int32_t*>(sm + NP * S);
  std::int32_t* s_tgt = s_src + NP;
  std::int32_t* s_cls = s_tgt + NP;
  auto* table = reinterpret_cast<class_rotation<T>*>(fmm_smem_raw +
                                                     (tile_bytes<P, T, NP, X>() + 15) / 16 * 16);
  __shared__ unsigned long long s_found;
  load_class_table(l, table);
  const int t = threadIdx.x;
  const std::int64_t n = l.num_pairs;

  for (std::int64_t unit = blockIdx.x; unit < num_units; unit += gridDim.x) {
    const std::int64_t chunk0 = unit * NP;
    const std::int64_t chunk1 = chunk0 + NP < n ? chunk0 + NP : n;
    std::int64_t begin = chunk0, end = chunk1;
    if (deterministic) {
      begin = block_next_run_start(l.tgt, chunk0, chunk1, &s_found);
      if (begin >= chunk1) continue;  // uniform: no run starts here
      end = block_next_run_start(l.tgt, chunk1, n, &s_found);
    }
    cpx<T> carry[K];
#pragma unroll
    for (int k = 0; k < K; ++k) carry[k] = {T(0), T(0)};
    std::int32_t carry_tgt = -1;

    for (std::int64_t first = begin; first < end; first += NP) {
      const int count = int(end - first < NP ? end - first : NP);
      __syncthreads();  // the previous tile's readers are done (and the class table made)
      if (t < count) {
        const std::int32_t si = l.src[first + t];
        s_src[t] = l.source_row(si);
        s_tgt[t] = l.target_row(si, l.tgt[first + t]);  // -1: the pair adds to nothing
        s_cls[t] = l.mode == geometry::classes ? l.cls[first + t] : 0;
      }
      __syncthreads();
      for (int j = t; j < count * C; j += NT) {  // every load in flight at once
        const int q = j / C;
        m2l::copy_async(sm + q * S + (j - q * C),
                        l.multipoles + std::int64_t(s_src[q]) * C + (j - q * C));
      }
      m2l::stage_records_wait();
      __syncthreads();
      if constexpr (X == translator::split) {
        constexpr int W = NTH / 32;
        const int lane = t & 31, warp = t >> 5;
        const bool valid = lane < count;
        m2l::angles<T> a{};
        T inv_r = T(0);
        if (valid) {
          pair_angles(l, table, first + lane, s_src[lane], s_tgt[lane], s_cls[lane], a, inv_r);
        }
        m2l::static_for<0, W>([&](auto Wc) {
          constexpr int Group = decltype(Wc)::value;
          if (warp == Group) m2l::split_group<P, T, W, Group>(sm + lane * S, valid, a, inv_r);
        });
      } else if (t < count) {
        cpx<T>* slot = sm + t * S;
        T inv_r;
        if constexpr (Registers) {
          m2l::direction<P, T> dir;
          pair_direction<P>(l, table, first + t, s_src[t], s_tgt[t], s_cls[t], dir, inv_r);
          cpx<T> a[C];
#pragma unroll
          for (int i = 0; i < C; ++i) a[i] = slot[i];
          m2l::m2l_inplace<P>(a, dir, inv_r);
#pragma unroll
          for (int i = 0; i < C; ++i) slot[i] = a[i];
        } else {
          // the powers beside the record, in the slot (the M2L thread schedule's layout)
          auto* dir = reinterpret_cast<m2l::direction<P, T>*>(slot + C);
          pair_direction<P>(l, table, first + t, s_src[t], s_tgt[t], s_cls[t], *dir, inv_r);
          m2l::m2l_inplace<P>(slot, *dir, inv_r);
        }
      }
      __syncthreads();
      if (deterministic) {
        // One thread per coefficient, pairs in order; the running sum of the last run
        // carries into the next tile.
#pragma unroll
        for (int k = 0; k < K; ++k) {
          const int c = t + k * NT;
          if (c < C) {
            cpx<T> acc = carry[k];
            std::int32_t cur = carry_tgt;
            for (int q = 0; q < count; ++q) {
              const std::int32_t tq = s_tgt[q];
              if (tq != cur) {
                if (cur >= 0) add_owned(l.locals, std::int64_t(cur) * C + c, acc);
                acc = {T(0), T(0)};
                cur = tq;
              }
              acc = acc + sm[q * S + c];
            }
            carry[k] = acc;
          }
        }
        carry_tgt = s_tgt[count - 1];
      } else {
        for (int u = t; u < C * G; u += NT) {
          const int c = u % C, g = u / C;
          const int q0 = g * count / G, q1 = (g + 1) * count / G;
          if (q0 >= q1) continue;
          cpx<T> acc{T(0), T(0)};
          std::int32_t cur = s_tgt[q0];
          for (int q = q0; q < q1; ++q) {
            const std::int32_t tq = s_tgt[q];
            if (tq != cur) {
              if (cur >= 0) add_atomic(l.locals, std::int64_t(cur) * C + c, acc);
              acc = {T(0), T(0)};
              cur = tq;
            }
            acc = acc + sm[q * S + c];
          }
          if (cur >= 0) add_atomic(l.locals, std::int64_t(cur) * C + c, acc);
        }
      }
    }
    if (deterministic) {
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const int c = t + k * NT;
        if (c < C && carry_tgt >= 0) add_owned(l.locals, std::int64_t(carry_tgt) * C + c, carry[k]);
      }
    }
  }
}

template <int P, class T, int NP, int NTH, translator X, int MinBlocks = 0>
void launch_tile_variant(const pair_list<T>& l, bool deterministic, cudaStream_t stream) {
  constexpr int NT = NTH;
  auto kernel = accumulate_tile_kernel<P, T, NP, NTH, X, MinBlocks>;
  const std::size_t smem = tile_smem_bytes<P, T, NP, X>(l.mode, l.num_classes);
  ensure_dynamic_smem(kernel, smem);
  int per_sm = 0;
  WHAM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, NT, smem));
  const std::int64_t units = (l.num_pairs + NP - 1) / NP;
  // Persistent blocks when the class table is made per block; otherwise one tile each.
  const std::int64_t resident =
      std::int64_t(current_device_limits().sm_count) * std::max(per_sm, 1);
  const std::int64_t grid = std::max<std::int64_t>(
      1, std::min<std::int64_t>(units, l.mode == geometry::classes ? resident : 0x7fffffff));
  kernel<<<dim3(unsigned(grid)), NT, smem, stream>>>(l, units, deterministic);
  WHAM_CHECK_LAUNCH("fmm accumulate_tile_kernel");
}

template <int P, class T>
void launch_thread_order(const pair_list<T>& l, bool deterministic, cudaStream_t stream) {
  constexpr m2l::thread_config cfg = m2l::thread_schedule_config<T>(P);
  launch_tile_variant<P, T, cfg.threads, cfg.threads,
                      cfg.registers ? translator::thread_registers : translator::thread_shared>(
      l, deterministic, stream);
}

template <int P, class T>
void launch_split_order(const pair_list<T>& l, bool deterministic, cudaStream_t stream) {
  constexpr int W = accumulate_split_warps(P);
  // The class form keeps the uncapped kernel (tuning.cuh's accumulate_split_min_blocks).
  if (l.mode == geometry::classes) {
    return launch_tile_variant<P, T, 32, 32 * W, translator::split>(l, deterministic, stream);
  }
  launch_tile_variant<P, T, 32, 32 * W, translator::split, accumulate_split_min_blocks(P)>(
      l, deterministic, stream);
}

}  // namespace wham::detail::fmm
