/// \file wham/detail/fmm/accumulate.cuh
/// \brief Kernels and dispatch of the accumulate and class forms of the M2L
/// (`locals[tgt[i]] += M2L_p(multipoles[src[i]], delta_i)`), built on the M2L
/// concept's device building blocks (`detail/m2l/blocks.cuh`: `make_direction`,
/// `m2l_inplace`; `detail/m2l/fused.cuh`: the thread schedule's tuning table and
/// slot layout, `warp_m2l` and its tables for the warp schedule).
///
/// Three schedules, each with two accumulation methods (the method is a kernel argument,
/// so one instantiation per schedule, order and type):
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
///   warp (higher orders): a warp per chunk of 32 pairs, one pair at a time
///     (`warp_m2l`), run sums in registers (coefficient c at lane c % 32), flushed
///     with atomics (atomic) or owned by run as above (deterministic).
///
/// Geometry: the displacement of pair i is `deltas[i]`, or
/// `centers[tgt[i]] - centers[src[i]]`, or `class_deltas[cls[i]]` (class form: each
/// block makes the rotation data of every class once, e^{i alpha}, e^{i beta}, 1/r,
/// into shared memory; threads raise them to the powers their order needs).
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/fused.cuh>
#include <wham/detail/m2l/tensor.cuh>
#include <wham/detail/m2l/tensor_wide.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace wham::detail::fmm {

using m2l::cpx;

/// Where a pair's displacement comes from.
enum class geometry : int { pair_deltas = 0, centers = 1, classes = 2 };

/// Everything a launch needs (device pointers; `cls` only for the class form).
template <class T>
struct pair_list {
  const cpx<T>* multipoles;
  cpx<T>* locals;
  const std::int32_t* src;
  const std::int32_t* tgt;
  const std::int32_t* cls;
  const T* geo;  ///< deltas [num_pairs][3] | centers [cells][3] | class deltas [classes][3]
  int num_classes;
  geometry mode;
  std::int64_t num_pairs;
};

/// Largest class table the class form takes (shared memory: 5 values a class).
inline constexpr int max_classes = 1024;

/// Rotation data of one displacement class, made once per block.
template <class T>
struct class_rotation {
  cpx<T> ea;  ///< e^{i alpha}
  cpx<T> eb;  ///< e^{i beta}
  T inv_r;    ///< 1 / r
  T pad;
};

template <class T>
__device__ __forceinline__ class_rotation<T> make_class_rotation(const T* d) {
  const T x = d[0], y = d[1], z = d[2];
  const T rho2 = x * x + y * y;
  const T rho = sqrt(rho2);
  const T inv_r = T(1) / sqrt(rho2 + z * z);
  class_rotation<T> c;
  c.ea = {T(1), T(0)};
  if (rho > T(0)) {
    const T inv_rho = T(1) / rho;
    c.ea = {y * inv_rho, x * inv_rho};
  }
  c.eb = {z * inv_r, -rho * inv_r};
  c.inv_r = inv_r;
  c.pad = T(0);
  return c;
}

/// Every block fills the class table (call before the block's first __syncthreads).
template <class T>
__device__ __forceinline__ void load_class_table(const pair_list<T>& l, class_rotation<T>* table) {
  if (l.mode != geometry::classes) return;
  for (int c = threadIdx.x; c < l.num_classes; c += blockDim.x) {
    table[c] = make_class_rotation(l.geo + 3 * std::int64_t(c));
  }
}

/// The direction powers and 1/r of pair i (source s, target t, class k).
template <int P, class T>
__device__ __forceinline__ void pair_direction(const pair_list<T>& l,
                                               const class_rotation<T>* table, std::int64_t i,
                                               std::int32_t s, std::int32_t t, std::int32_t k,
                                               m2l::direction<P, T>& dir, T& inv_r) {
  if (l.mode == geometry::classes) {
    class_rotation<T> c;
    if (k >= 0 && k < l.num_classes) {
      c = table[k];
    } else {  // a class id out of range: the pair's result is NaN, visibly
      const T nan = T(0) / T(0);
      c = {{nan, nan}, {nan, nan}, nan, nan};
    }
    dir.ea[0] = {T(1), T(0)};
    dir.eb[0] = {T(1), T(0)};
#pragma unroll
    for (int m = 1; m <= P; ++m) {
      dir.ea[m] = dir.ea[m - 1] * c.ea;
      dir.eb[m] = dir.eb[m - 1] * c.eb;
    }
    inv_r = c.inv_r;
    return;
  }
  T x, y, z;
  if (l.mode == geometry::pair_deltas) {
    const T* d = l.geo + 3 * i;
    x = d[0];
    y = d[1];
    z = d[2];
  } else {
    const T* a = l.geo + 3 * std::int64_t(t);
    const T* b = l.geo + 3 * std::int64_t(s);
    x = a[0] - b[0];
    y = a[1] - b[1];
    z = a[2] - b[2];
  }
  dir = m2l::make_direction<P>(x, y, z);
  inv_r = m2l::inverse_distance(x, y, z);
}

/// The displacement of pair i (warp schedule: warp_m2l makes its own powers).
template <class T>
__device__ __forceinline__ void pair_delta(const pair_list<T>& l, std::int64_t i, std::int32_t s,
                                           std::int32_t t, std::int32_t k, T& x, T& y, T& z) {
  const T* d;
  if (l.mode == geometry::pair_deltas) {
    d = l.geo + 3 * i;
  } else if (l.mode == geometry::classes) {
    if (k < 0 || k >= l.num_classes) {
      x = y = z = T(0) / T(0);
      return;
    }
    d = l.geo + 3 * std::int64_t(k);
  } else {
    const T* a = l.geo + 3 * std::int64_t(t);
    const T* b = l.geo + 3 * std::int64_t(s);
    x = a[0] - b[0];
    y = a[1] - b[1];
    z = a[2] - b[2];
    return;
  }
  x = d[0];
  y = d[1];
  z = d[2];
}

/// The unpowered rotation angles and 1/r of pair i (split schedule).
template <class T>
__device__ __forceinline__ void pair_angles(const pair_list<T>& l, const class_rotation<T>* table,
                                            std::int64_t i, std::int32_t s, std::int32_t t,
                                            std::int32_t k, m2l::angles<T>& a, T& inv_r) {
  if (l.mode == geometry::classes) {
    if (k >= 0 && k < l.num_classes) {
      const class_rotation<T> c = table[k];
      a = {c.ea, c.eb};
      inv_r = c.inv_r;
    } else {  // a class id out of range: the pair's result is NaN, visibly
      const T nan = T(0) / T(0);
      a = {{nan, nan}, {nan, nan}};
      inv_r = nan;
    }
    return;
  }
  T x, y, z;
  pair_delta(l, i, s, t, k, x, y, z);
  a = m2l::make_angles(x, y, z);
  inv_r = m2l::inverse_distance(x, y, z);
}

template <class T>
__device__ __forceinline__ void add_atomic(cpx<T>* locals, std::int64_t index, cpx<T> v) {
  atomicAdd(&locals[index].re, v.re);
  atomicAdd(&locals[index].im, v.im);
}

template <class T>
__device__ __forceinline__ void add_owned(cpx<T>* locals, std::int64_t index, cpx<T> v) {
  locals[index] = locals[index] + v;
}

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
inline constexpr int tile_stride = X == translator::split
                                       ? m2l::split_stride<P>
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
  constexpr int K = (C + NT - 1) / NT;  // coefficients per thread (deterministic)
  constexpr int G = NT / C > 1 ? NT / C : 1;  // pair groups per coefficient (atomic)
  constexpr bool Registers = X == translator::thread_registers;
  static_assert(X == translator::split ? NP == 32 && NTH % 32 == 0 : NP == NTH,
                "tile shape of the translator");
  extern __shared__ __align__(16) unsigned char fmm_smem_raw[];
  cpx<T>* sm = reinterpret_cast<cpx<T>*>(fmm_smem_raw);
  std::int32_t* s_src = reinterpret_cast<std::int32_t*>(sm + NP * S);
  std::int32_t* s_tgt = s_src + NP;
  std::int32_t* s_cls = s_tgt + NP;
  auto* table = reinterpret_cast<class_rotation<T>*>(
      fmm_smem_raw + (tile_bytes<P, T, NP, X>() + 15) / 16 * 16);
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
        s_src[t] = l.src[first + t];
        s_tgt[t] = l.tgt[first + t];
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
              add_atomic(l.locals, std::int64_t(cur) * C + c, acc);
              acc = {T(0), T(0)};
              cur = tq;
            }
            acc = acc + sm[q * S + c];
          }
          add_atomic(l.locals, std::int64_t(cur) * C + c, acc);
        }
      }
    }
    if (deterministic) {
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const int c = t + k * NT;
        if (c < C) add_owned(l.locals, std::int64_t(carry_tgt) * C + c, carry[k]);
      }
    }
  }
}

template <int P, class T, int NP, int NTH, translator X, int MinBlocks = 0>
void launch_tile_variant(const pair_list<T>& l, bool deterministic, cudaStream_t stream) {
  constexpr int NT = NTH;
  auto kernel = accumulate_tile_kernel<P, T, NP, NTH, X, MinBlocks>;
  const std::size_t smem = tile_smem_bytes<P, T, NP, X>(l.mode, l.num_classes);
  if (smem > current_device_limits().smem_per_block_optin) {
    throw_invalid_argument("m2l_accumulate_classes", "num_classes", l.num_classes,
                           "a class table that fits shared memory beside the tile at p = " +
                               std::to_string(P) + " (" +
                               std::to_string(current_device_limits().smem_per_block_optin) +
                               " bytes a block)");
  }
  ensure_dynamic_smem(kernel, smem);
  int per_sm = 0;
  WHAM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, NT, smem));
  const std::int64_t units = (l.num_pairs + NP - 1) / NP;
  // Persistent blocks when the class table is made per block; otherwise one tile each.
  const std::int64_t resident = std::int64_t(current_device_limits().sm_count) * std::max(per_sm, 1);
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

/// Warps per block of the split translator in the accumulate forms. H200, bench_fmm
/// (BM_fmm_split_variant: 16^3 level, centres, atomic, double), median us by warps
/// G = 1, 2, 4: p = 7: -, 433, 587; p = 8: 692, 642-693, 875; p = 9: 1678, 1102-1108,
/// 1555; p = 10: -, 1677, 1917-1927 (G = 4 was the automatic row); p = 12: -, 4430,
/// 3155-3171. Fewer warps than pair streaming takes up to p = 10 (there G = 4 wins from
/// p = 9: 268 vs 287 us at 1e5 pairs). p = 11 and float: not measured, the same rule.
constexpr int accumulate_split_warps(int p) { return p <= 10 ? 2 : 4; }

/// Blocks an SM the split translator's registers must allow in the accumulate forms (0:
/// no cap). At p <= 8 a 64-thread block takes 255 registers and 42 KB of shared memory
/// (4 blocks, 8 warps an SM; Nsight Compute: latency-bound, IPC 1.09); capped for 5
/// blocks (168 registers, 0.5-0.9 KB spilled to L1) it runs faster. H200, BM_fmm_split_variant,
/// 16^3 level, centres, atomic, double, two runs (2026-12-01): p = 7: 1401-1406 vs
/// 1600-1609 Mpairs/s; p = 8: 860-861 vs 946-948. p = 9, 10: not measured, no cap.
/// The class form keeps the uncapped kernel: its class table (316 classes, 15 KB) holds
/// it to 4 blocks an SM by shared memory, so the cap only spilled there (bench_fmm,
/// class_atomic, double, p = 8: 695 us capped in two runs, 567 uncapped in a third
/// (2026-12-01)).
constexpr int accumulate_split_min_blocks(int p) { return p <= 8 ? 5 : 0; }

template <int P, class T>
void launch_split_order(const pair_list<T>& l, bool deterministic, cudaStream_t stream) {
  constexpr int W = accumulate_split_warps(P);
  if (l.mode == geometry::classes) {
    return launch_tile_variant<P, T, 32, 32 * W, translator::split>(l, deterministic, stream);
  }
  launch_tile_variant<P, T, 32, 32 * W, translator::split, accumulate_split_min_blocks(P)>(
      l, deterministic, stream);
}

// ---- warp schedule (runtime order) ---------------------------------------------------

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
      const std::int32_t si = l.src[i], ti = l.tgt[i];
      const std::int32_t ki = l.mode == geometry::classes ? l.cls[i] : 0;
      if (ti != cur) {
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
            acc[k] = {T(0), T(0)};
          }
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

inline constexpr int warp_schedule_warps = 4;

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
      1, std::min<std::int64_t>(needed, std::int64_t(current_device_limits().sm_count) *
                                            std::max(per_sm, 1)));
  kernel<<<dim3(unsigned(grid)), W * 32, smem, stream>>>(l, p, units, deterministic);
  WHAM_CHECK_LAUNCH("fmm accumulate_warp_kernel");
}

// ---- tensor schedule (double, high orders, atomic method) ----------------------------

/// The accumulate form's pairs for the M2L tensor schedule (detail/m2l/tensor.cuh's
/// Pairs policy): records gathered by src, displacements by the list's geometry, and
/// each run of equal targets among a warp's four pairs summed in the warp, then added
/// to locals[tgt] with one atomicAdd per real part and coefficient.
struct tensor_list {
  pair_list<double> l;
  std::int64_t num_pairs;

  __device__ __forceinline__ const cpx<double>* record(std::int64_t i, int C) const {
    return l.multipoles + std::int64_t(l.src[i]) * C;
  }
  __device__ __forceinline__ void delta(std::int64_t i, double& x, double& y, double& z) const {
    const std::int32_t k = l.mode == geometry::classes ? l.cls[i] : 0;
    pair_delta(l, i, l.src[i], l.tgt[i], k, x, y, z);
  }
  __device__ __forceinline__ void flush(const m2l::tensor_warp& w, std::int64_t first, int count,
                                        int C) const {
    constexpr int NP = m2l::tensor_pairs;
    const int lane = threadIdx.x & 31;
    const int q = (lane >> 3) & 3;  // the pair whose coefficients this lane adds
    std::int32_t t[NP];
#pragma unroll
    for (int u = 0; u < NP; ++u) t[u] = u < count ? l.tgt[first + u] : -1;
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
    if (run == 0) return;
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
        if (ok && (threadIdx.x & 28) == 0) add_atomic(dst, idx, v);
      } else if (ok && dst != nullptr) {
        add_atomic(dst, idx, v);
      }
    }
  };
  __device__ __forceinline__ add_sink sink(std::int64_t first, int count, int C) const {
    const int q = (threadIdx.x & 31) >> 2;
    const std::int32_t t0 = l.tgt[first];
    const std::int32_t tq = q < count ? l.tgt[first + q] : t0;
    const bool shared = __all_sync(0xffffffffu, tq == t0);
    return {q < count ? l.locals + std::int64_t(tq) * C : nullptr, shared};
  }
};

/// Which schedule and method run one call.
enum class schedule { thread, split, warp, tensor };

/// The pair-streaming form's choice (detail/m2l/fused.cuh's, tensor.cuh's and
/// tensor_wide.cuh's tuning tables): the tile kernels do the same translation between the
/// same gather and flush. The tensor schedule takes the atomic method only (the
/// deterministic one runs the split schedule there to p = 12, the warp schedule above).
template <class T>
inline schedule pick_schedule(int p) {
  if (p <= m2l::automatic_thread_max_order<T>()) return schedule::thread;
  if (std::is_same_v<T, double> && m2l::tensor_automatic(p)) return schedule::tensor;
  return p <= m2l::split_max_order ? schedule::split : schedule::warp;
}

/// Launches the accumulate form (arguments checked by the caller).
template <class T>
void launch_accumulate(const pair_list<T>& l, int p, bool deterministic, schedule sched,
                       cudaStream_t stream) {
  if (l.num_pairs == 0) return;
  if (sched == schedule::tensor) {
    if constexpr (std::is_same_v<T, double>) {
      if (!deterministic) {
        const tensor_list pairs{l, l.num_pairs};
        m2l::launch_tensor_any(p, wide_list{pairs}, pairs, stream);
        return;
      }
    }
    sched = p <= m2l::split_max_order ? schedule::split : schedule::warp;
  }
  if (sched == schedule::warp) {
    launch_warp<T>(l, p, deterministic, stream);
    return;
  }
  bool done = false;
  if (sched == schedule::split) {
    m2l::static_for_host<m2l::split_min_order, m2l::split_max_order + 1>([&](auto Pc) {
      constexpr int P = decltype(Pc)::value;
      if (P == p) {
        launch_split_order<P, T>(l, deterministic, stream);
        done = true;
      }
    });
    if (!done) {
      throw_invalid_argument("m2l_accumulate", "p", p,
                             std::to_string(m2l::split_min_order) + ".." +
                                 std::to_string(m2l::split_max_order) +
                                 " for the split schedule");
    }
    return;
  }
  m2l::static_for_host<0, m2l::thread_max_order + 1>([&](auto Pc) {
    constexpr int P = decltype(Pc)::value;
    if (P == p) {
      launch_thread_order<P, T>(l, deterministic, stream);
      done = true;
    }
  });
  if (!done) {
    throw_invalid_argument("m2l_accumulate", "p", p,
                           "0.." + std::to_string(m2l::thread_max_order) +
                               " for the thread schedule");
  }
}

}  // namespace wham::detail::fmm
