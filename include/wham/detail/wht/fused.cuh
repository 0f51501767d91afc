/// \file wham/detail/wht/fused.cuh
/// \brief The fused on-chip schedule of the Walsh-Hadamard family: one block holds
/// whole segments of 2^LogN elements; input comes from a policy (policies.cuh: loaded
/// from memory, or generated on chip as the IQP phases are), every butterfly stage runs
/// in registers and shared memory, the scale is folded into the one store. Segments are
/// contiguous, so a row of 2^n split into 2^(n - LogN) segments is addressed by the
/// same flat index (the Kronecker split's stage 0 uses exactly that).
#pragma once

#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/device.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/detail/wht/fused_layout.hpp>
#include <wham/detail/wht/policies.cuh>
#include <wham/detail/wht/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace wham::detail::wht {

/// Launch shape of the fused schedule for a value type and segment length: E elements
/// a thread (tuning.cuh's tables), at most 1024 threads a segment. Tables: whether the
/// input makes warp tables, DoubleParams: whether it reads double parameters
/// (fused_shape_for derives both from the input policy).
template <class V, int LogN, bool Tables, bool DoubleParams = false>
struct fused_shape {
  static constexpr int n = 1 << LogN;
  static constexpr int e_pref =
      sizeof(V) >= 16  ? complex128_items(LogN, Tables)
      : sizeof(V) >= 8 ? (is_complex_v<V> ? complex64_items(LogN, Tables) : double_items(LogN))
                       : float_items(LogN);
  static constexpr int e_min = e_pref > n / 1024 ? e_pref : n / 1024;
  static constexpr int items = e_min < n ? e_min : n;
  static constexpr int log_items = ilog2(items);
  static constexpr int threads_per_segment = n / items;
  /// Largest block (several segments per block for short segments).
  static constexpr int threads = threads_per_segment >= 256 ? threads_per_segment : 256;
  static constexpr int segments_per_block = threads / threads_per_segment;
  /// complex64 rows whose phases a thread makes per element (no warp tables).
  static constexpr bool phase_rows =
      Tables && sizeof(V) == 8 && is_complex_v<V> && LogN < log_items + 5;
  static constexpr int threads_per_sm =
      phase_rows ? (DoubleParams ? fused_phase_rows_double_threads_per_sm
                                 : fused_phase_rows_threads_per_sm)
                 : fused_threads_per_sm;
  static constexpr int min_blocks = threads >= threads_per_sm ? 1 : threads_per_sm / threads;
  static constexpr bool uses_smem = LogN > log_items;
  /// Short segments (one thread's 16-byte stores 256 bytes apart, say) store through
  /// shared memory in the block's linear order: neighbouring lanes, neighbouring elements.
  static constexpr bool linear_store =
      threads_per_segment * sizeof(V) < fused_linear_store_below_bytes;
  static constexpr bool needs_smem = uses_smem || linear_store;
  /// Shared-memory layout of a segment (smem_slot): padded where the input makes warp
  /// tables (the IQP phases, bound by their 100-120 instructions an amplitude, where
  /// every saved address computation counts), XOR-swizzled for loaded rows.
  static constexpr bool padded = Tables;
  /// Segment stride in shared memory: the padded layout's n + n / E slots; else
  /// padded by TPS when several segments share a bank window, so that
  /// neighbouring segments start in different banks.
  static constexpr int stride = padded || threads_per_segment < 32 ? n + threads_per_segment : n;
  static constexpr std::size_t smem_bytes =
      needs_smem ? std::size_t(segments_per_block) * stride * sizeof(V) : 0;
};

/// The fused schedule's shape for rows of V made by the input policy Input.
template <class V, int LogN, class Input>
using fused_shape_for =
    fused_shape<V, LogN, has_warp_tables_v<Input>, has_double_params_v<Input>>;

/// Shared-memory slot of element x of a segment (fused_layout.hpp): XOR-swizzled, the
/// low log2(E) bits with the next log2(E), or padded, x + x / E (one empty slot after
/// every E elements). Both keep the per-thread and the passes' layouts free of bank
/// conflicts for the element sizes and E that use them. The padded slot of a pass's
/// x = thread part | register part is the sum of theirs, so each access is a thread's
/// base address plus a constant, where the swizzle costs several integer operations.
template <int LogE, bool Padded>
__device__ __forceinline__ unsigned smem_slot(unsigned x) {
  return fused_layout::slot(x, LogE, Padded);
}

/// Orders a segment's shared-memory round trip: a segment of at most 32 threads
/// lies within one warp (TPS divides 32, segments are consecutive threads), so
/// its warp synchronises alone instead of waiting at a block barrier for the
/// block's other segments. `lanes` names the warp's threads (the last warp of a
/// block may be partial). Longer segments are whole warps (TPS a power of two);
/// with Named, each waits at its own named barrier (1 + segment; at most 4
/// segments of 64 threads a block), so the block's segments drift apart instead
/// of marching in step. That pays where the input is made on chip and loses where it
/// is loaded, so the fused kernel names them for inputs with warp tables only.
/// H200, 512 MiB, block barrier -> named: IQP complex128 n = 10 260 -> 241 us
/// (bench_iqp); FWHT double log_n = 10 272 -> 284 us (bench_fwht).
template <int TPS, bool Named>
__device__ __forceinline__ void segment_sync(unsigned lanes, int segment) {
  if constexpr (TPS <= 32) {
    __syncwarp(lanes);
  } else if constexpr (Named) {
    static_assert(TPS % 32 == 0, "a segment beyond a warp spans whole warps");
    asm volatile("bar.sync %0, %1;" ::"r"(segment + 1), "n"(TPS) : "memory");
  } else {
    __syncthreads();
  }
}

__device__ __forceinline__ unsigned warp_lanes() {
  const unsigned in_warp = blockDim.x - (threadIdx.x & ~31u);
  return in_warp >= 32 ? 0xffffffffu : (1u << in_warp) - 1u;
}

/// One round trip of the shared-memory schedule: transforms index bits [B, B + G).
/// Register j = r * 2^G + g of thread t holds x = low(o) | g << B | high(o) << (B + G)
/// with o = r * TPS + t, so neighbouring lanes touch neighbouring words. The last
/// pass stores straight from registers to global memory (neighbouring lanes write
/// neighbouring elements), or, for short segments (Linear), back to shared memory
/// for the kernel's block-linear store. Padded (smem_slot): every access of a pass
/// is one base address a thread plus a constant (likewise the global stores).
template <int B, int LogN, int LogE, int TPS, bool Linear, bool Named, bool Padded, class V, int E,
          class Output>
__device__ __forceinline__ void fused_passes(V* seg, int t, int s_local, V (&v)[E],
                                             const Output& output, std::int64_t g_seg, bool active,
                                             real_t<V> scale) {
  namespace layout = fused_layout;
  constexpr int G = layout::pass_bits(LogN, LogE, B);
  if constexpr (Padded) {
    constexpr int LogT = ilog2(TPS);
    const unsigned thread_part = layout::pass_thread_part(static_cast<unsigned>(t), B, G);
    V* const at = seg + smem_slot<LogE, true>(thread_part);
    // Register j's slot relative to `at`: a constant once the loops unroll.
    const auto offset = [](int j) {
      return smem_slot<LogE, true>(layout::pass_register_part(j, B, G, LogT));
    };
#pragma unroll
    for (int j = 0; j < E; ++j) v[j] = at[offset(j)];
    register_butterflies<G>(v);
    if constexpr (B + G < LogN || Linear) {
#pragma unroll
      for (int j = 0; j < E; ++j) at[offset(j)] = v[j];
    }
    if constexpr (B + G < LogN) {
      segment_sync<TPS, Named>(warp_lanes(), s_local);
      fused_passes<B + G, LogN, LogE, TPS, Linear, Named, Padded>(seg, t, s_local, v, output, g_seg,
                                                                  active, scale);
    } else if constexpr (!Linear) {
      if (active) {
        const std::int64_t g_thread = g_seg + thread_part;
#pragma unroll
        for (int j = 0; j < E; ++j) {
          const V one[1] = {v[j]};
          output.template store<1>(g_thread + layout::pass_register_part(j, B, G, LogT), one,
                                   scale);
        }
      }
    }
  } else {
    constexpr int R = E >> G;
    constexpr unsigned low_mask = (1u << B) - 1u;
    unsigned xs[E];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const unsigned o = static_cast<unsigned>(r * TPS + t);
#pragma unroll
      for (int g = 0; g < (1 << G); ++g) {
        xs[r * (1 << G) + g] = (o & low_mask) | (unsigned(g) << B) | ((o >> B) << (B + G));
      }
    }
#pragma unroll
    for (int j = 0; j < E; ++j) v[j] = seg[smem_slot<LogE, false>(xs[j])];
    register_butterflies<G>(v);
    if constexpr (B + G < LogN) {
#pragma unroll
      for (int j = 0; j < E; ++j) seg[smem_slot<LogE, false>(xs[j])] = v[j];
      segment_sync<TPS, Named>(warp_lanes(), s_local);
      fused_passes<B + G, LogN, LogE, TPS, Linear, Named, Padded>(seg, t, s_local, v, output, g_seg,
                                                                  active, scale);
    } else if constexpr (Linear) {
      // Back to the positions this thread just read: no other thread touches them.
#pragma unroll
      for (int j = 0; j < E; ++j) seg[smem_slot<LogE, false>(xs[j])] = v[j];
    } else if (active) {
#pragma unroll
      for (int j = 0; j < E; ++j) {
        const V one[1] = {v[j]};
        output.template store<1>(g_seg + xs[j], one, scale);
      }
    }
  }
}

/// The fused schedule for the segments of block `block` (fused_shape's segments_per_block
/// of them, consecutive), `smem_raw` its dynamic shared memory: the body of fused_kernel,
/// and of kernels that run it over several blocks' worth of segments in turn.
template <class V, int LogN, class Input, class Output>
__device__ __forceinline__ void fused_block(const Input& input, const Output& output,
                                            std::int64_t block, std::int64_t num_segments,
                                            real_t<V> scale, unsigned tables_offset,
                                            unsigned char* smem_raw) {
  using shape = fused_shape_for<V, LogN, Input>;
  constexpr int N = shape::n;
  constexpr int E = shape::items;
  constexpr int LogE = shape::log_items;
  constexpr int TPS = shape::threads_per_segment;

  const int t = static_cast<int>(threadIdx.x) % TPS;
  const int s_local = static_cast<int>(threadIdx.x) / TPS;
  const int segments_here = static_cast<int>(blockDim.x) / TPS;
  const std::int64_t segment = block * segments_here + s_local;
  const bool active = segment < num_segments;
  const std::int64_t g_seg = segment * N;

  V v[E];
  if constexpr (has_warp_tables_v<Input>) {
    // Inputs made on chip: threads past the last segment (the last block only) make
    // the last segment's elements and store nothing (`active`), so that no branch
    // goes around the loads (118 fewer instructions a thread, of about 1500).
    const std::int64_t g_load = (active ? segment : num_segments - 1) * N + std::int64_t(t) * E;
    unsigned char* table = nullptr;
    // Whole warps per segment here (table_bytes is 0 otherwise).
    if (tables_offset != no_tables) {
      table = smem_raw + tables_offset + (threadIdx.x / 32) * input.template warp_table_bytes<E>();
      input.template prepare<E>(table, g_load);
    }
    load_elements<V, TPS>(input, g_load, v, table);
  } else if (active) {
    load_elements<V, TPS>(input, g_seg + std::int64_t(t) * E, v, nullptr);
  } else {
#pragma unroll
    for (int j = 0; j < E; ++j) v[j] = V(0);
  }
  register_butterflies<LogE>(v);

  if constexpr (shape::needs_smem) {
    V* const block_smem = reinterpret_cast<V*>(smem_raw);
    V* seg = block_smem + s_local * shape::stride;
#pragma unroll
    for (int j = 0; j < E; ++j) seg[smem_slot<LogE, shape::padded>(unsigned(t * E + j))] = v[j];
    if constexpr (shape::uses_smem) {
      constexpr bool named = has_warp_tables_v<Input>;
      segment_sync<TPS, named>(warp_lanes(), s_local);
      fused_passes<LogE, LogN, LogE, TPS, shape::linear_store, named, shape::padded>(
          seg, t, s_local, v, output, g_seg, active, scale);
    }
    if constexpr (shape::linear_store) {
      // The block's segments are contiguous in memory: store them in linear order,
      // block-wide (H200: float log_n = 6 0.90 of a copy vs 0.68 warp by warp, bench_fwht).
      __syncthreads();
      const std::int64_t first = block * segments_here;
      const std::int64_t g_block = first * N;
      constexpr int T = shape::threads;
      if (T % N == 0 && segments_here == shape::segments_per_block &&
          first + segments_here <= num_segments) {
        // A full block (every block of a large batch but the grid's last): element
        // k * T + tid is segment k * T / N + tid / N, position tid % N, so each load
        // and store is the thread's base address plus a constant, with no bounds test.
        const int tid = static_cast<int>(threadIdx.x);
        const V* const at = block_smem + (tid >> LogN) * shape::stride +
                            smem_slot<LogE, shape::padded>(unsigned(tid) & (N - 1u));
#pragma unroll
        for (int k = 0; k < E; ++k) {
          const V one[1] = {at[k * (T / N) * shape::stride]};
          output.template store<1>(g_block + tid + k * T, one, scale);
        }
      } else {
        const int threads = static_cast<int>(blockDim.x);
#pragma unroll
        for (int k = 0; k < E; ++k) {
          const int e = k * threads + static_cast<int>(threadIdx.x);
          const int s = e >> LogN;
          if (first + s < num_segments) {
            const V one[1] = {block_smem[s * shape::stride +
                                         smem_slot<LogE, shape::padded>(unsigned(e) & (N - 1u))]};
            output.template store<1>(g_block + e, one, scale);
          }
        }
      }
    }
  } else {
    if (active) output.template store<E>(g_seg, v, scale);
  }
}

// min_blocks caps registers at 128 (fused_threads_per_sm): with no minimum, ptxas
// capped the small-n complex128 IQP kernels at 80 registers and spilled.
template <class V, int LogN, class Input, class Output>
__global__ void __launch_bounds__(fused_shape_for<V, LogN, Input>::threads,
                                  fused_shape_for<V, LogN, Input>::min_blocks)
    fused_kernel(Input input, Output output, std::int64_t num_segments, real_t<V> scale,
                 unsigned tables_offset) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  fused_block<V, LogN>(input, output, std::int64_t(blockIdx.x), num_segments, scale, tables_offset,
                       smem_raw);
}

/// Largest segment the fused kernel is compiled for, of any element size (float's).
inline constexpr int fused_compiled_max_log_n = 15;

/// Largest segment one block holds compiled per element size (2^15 float, 2^14
/// 8-byte, 2^13 complex<double>: what 227 KiB of shared memory holds), so that no
/// kernel is instantiated that no device could launch.
template <class V>
inline constexpr int block_compiled_max_log_n = sizeof(V) >= 16  ? 13
                                                : sizeof(V) >= 8 ? 14
                                                                 : 15;

/// Largest segment the fused schedule serves for V in `smem` bytes of shared memory a
/// block: the elements alone (the IQP phases' warp tables and the padded layout need a
/// little more; test_iqp_host checks that they fit at every opt-in limit of compute
/// capability 8.0 and later).
template <class V>
inline int fused_max_log_n_for(std::size_t smem) {
  int log_n = 0;
  while (log_n < fused_compiled_max_log_n && (std::size_t(2) << log_n) * sizeof(V) <= smem) {
    ++log_n;
  }
  return log_n;
}

/// Largest segment the fused schedule serves for V on the current device.
template <class V>
inline int fused_max_log_n() {
  return fused_max_log_n_for<V>(current_device_limits().smem_per_block_optin);
}

/// Dynamic shared memory of a fused block of `spb` segments of 2^LogN: the segments,
/// then the input's warp tables (if it makes them) from a 16-byte boundary.
struct fused_smem_layout {
  std::size_t bytes = 0;
  unsigned tables_offset = no_tables;
};

template <class V, int LogN, class Input>
inline fused_smem_layout fused_block_smem(const Input& input, std::int64_t spb) {
  using shape = fused_shape_for<V, LogN, Input>;
  fused_smem_layout l;
  l.bytes = shape::needs_smem ? std::size_t(spb) * shape::stride * sizeof(V) : 0;
  if constexpr (has_warp_tables_v<Input>) {
    const std::size_t tables = input.template table_bytes<shape::items>(spb * shape::n);
    if (tables != 0) {
      l.tables_offset = static_cast<unsigned>((l.bytes + 15) & ~std::size_t(15));
      l.bytes = l.tables_offset + tables;
    }
  }
  return l;
}

template <class V, int LogN, class Input, class Output>
inline void launch_fused_n(Input input, Output output, std::int64_t num_segments, real_t<V> scale,
                           cudaStream_t stream) {
  using shape = fused_shape_for<V, LogN, Input>;
  // Several segments per block for short segments, but never so many that the
  // grid leaves SMs idle at small batch.
  const std::int64_t sms = current_device_limits().sm_count;
  std::int64_t spb = num_segments / sms;
  spb = spb < 1 ? 1 : (spb > shape::segments_per_block ? shape::segments_per_block : spb);
  const std::int64_t blocks = (num_segments + spb - 1) / spb;
  if (blocks > 0x7fffffff) {
    // Named by the path, not the public function: fwht and iqp_encode both land here.
    throw_invalid_argument("fused path", "number of segments", num_segments,
                           "at most " + std::to_string(0x7fffffff * spb) +
                               ": 2^31 - 1 thread blocks of " + std::to_string(spb) + " segments");
  }
  auto kernel = fused_kernel<V, LogN, Input, Output>;
  const fused_smem_layout smem = fused_block_smem<V, LogN>(input, spb);
  ensure_dynamic_smem(kernel, smem.bytes > shape::smem_bytes ? smem.bytes : shape::smem_bytes);
  kernel<<<static_cast<unsigned>(blocks), static_cast<unsigned>(spb * shape::threads_per_segment),
           smem.bytes, stream>>>(input, output, num_segments, scale, smem.tables_offset);
  WHAM_CHECK_LAUNCH("wham::detail::wht::fused_kernel");
}

/// Transforms num_segments contiguous segments of 2^log_n elements (0 <= log_n <=
/// fused_compiled_max_log_n, and the segment must fit the device's shared memory: see
/// fused_max_log_n).
template <class V, class Input, class Output>
inline void launch_fused(int log_n, std::int64_t num_segments, Input input, Output output,
                         real_t<V> scale, cudaStream_t stream) {
  const bool built = arch::dispatch_int<0, fused_compiled_max_log_n + 1>(log_n, [&](auto size) {
    launch_fused_n<V, decltype(size)::value>(input, output, num_segments, scale, stream);
  });
  if (!built) {
    throw_invalid_argument("fused path", "log_n", log_n,
                           "0.." + std::to_string(fused_compiled_max_log_n));
  }
}

}  // namespace wham::detail::wht
