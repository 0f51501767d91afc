/// \file wham/detail/wht/fused.cuh
/// \brief The fused on-chip schedule of the Walsh-Hadamard family: one block
/// holds whole segments of 2^LogN elements; input comes from a policy (loaded
/// from memory, or generated on chip as the IQP phases are), every butterfly
/// stage runs in registers and shared memory, the scale is folded into the one
/// store.
///
/// Policies (the only thing that differs between FWHT and IQP):
///   input.load<E>(g0, v)          fills v with the E contiguous elements whose
///                                 flat index (segment * 2^LogN + x) starts at g0
///   output.store<E>(g0, v, scale) writes them, multiplied by scale
/// g0 is always a multiple of E; E is a power of two, and the store's E need not
/// be the load's (the last shared-memory pass stores single elements, E = 1, so
/// that neighbouring lanes write neighbouring elements). Segments are contiguous, so a row of 2^n split
/// into 2^(n - LogN) segments is addressed by the same flat index (the Kronecker
/// path's first stage uses exactly that).
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/error.hpp>
#include <wham/reference/fused_layout.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace wham::detail::wht {

/// Input policy: elements loaded from `in` (any type of the family), converted to V.
template <class In, class V>
struct loaded_input {
  const In* in;
  template <int E>
  __device__ __forceinline__ void load(std::int64_t g0, V (&v)[E]) const {
    if constexpr (cuda::std::is_same_v<In, V>) {
      load_contiguous<V, E>(in + g0, v);
    } else {
      In tmp[E];
      load_contiguous<In, E>(in + g0, tmp);
#pragma unroll
      for (int j = 0; j < E; ++j) v[j] = convert<V>(tmp[j]);
    }
  }
};

/// Whether an input policy makes per-warp tables before its loads (the IQP
/// phases' product form): `static constexpr bool warp_tables = true` and
///   table_bytes<E>(elements)           shared bytes for a block of that many elements
///                                      (0: not used for this E and row length)
///   warp_table_bytes<E>()              one warp's share of them (a multiple of 16)
///   prepare<E>(warp_table, g0)         every lane of a warp, g0 its first element:
///                                      the warp builds its table (synchronises the warp)
///   load<E>(g0, v, warp_table)         loads reading it
/// Every warp of a schedule that uses them lies within one segment.
template <class Input, class = void>
struct has_warp_tables : cuda::std::false_type {};
template <class Input>
struct has_warp_tables<Input, cuda::std::void_t<decltype(Input::warp_tables)>>
    : cuda::std::bool_constant<Input::warp_tables> {};
template <class Input>
inline constexpr bool has_warp_tables_v = has_warp_tables<Input>::value;
/// Whether a schedule of TPS threads a segment takes its loads from the tables
/// alone (`load_product<E>(g0, v, warp_table)`, the table never null): inputs with
/// warp tables at TPS >= 32 (every warp within a segment, so every warp makes one),
/// complex128 only. Without the per-element fallback compiled in beside the
/// product form, the complex128 IQP kernels shrink from about 188 KB of SASS to
/// 29 KB; at batch 64 most of their stalls had been instruction-cache misses (ncu,
/// n = 10: "no instruction" 67% of the stall samples). H200, 2026-12-01, same-run
/// A/B, bitwise-identical states: complex128 batch 64, n = 10: 9.1 -> 8.0 us, n = 12:
/// 11.1 -> 9.2 us; 512 MiB about 3% faster; complex64 7% slower at 512 MiB, so not there.
template <class V, class Input, int TPS>
inline constexpr bool product_only_v = has_warp_tables_v<Input> && TPS >= 32 && sizeof(V) == 16;
/// The fused kernel's tables_offset when the input makes no tables.
inline constexpr unsigned no_tables = 0xffffffffu;

/// One thread's E elements from the input, through its warp's table where the input
/// makes them (`table`: null where this schedule made none; never null under
/// product_only_v). The one place the fused and cluster kernels choose their load.
template <class V, int TPS, int E, class Input>
__device__ __forceinline__ void load_elements(const Input& input, std::int64_t g0, V (&v)[E],
                                              unsigned char* table) {
  if constexpr (product_only_v<V, Input, TPS>) {
    input.template load_product<E>(g0, v, table);
  } else if constexpr (has_warp_tables_v<Input>) {
    input.template load<E>(g0, v, table);
  } else {
    input.template load<E>(g0, v);
  }
}

/// Output policy: elements scaled, converted to Out, stored 16 bytes wide.
/// Scaled = false ignores the scale: for inputs that applied it already (the IQP
/// phases, whose 2^-n multiplies each thread's first phase, exactly, instead of
/// every element at the store).
template <class Out, class V, bool Scaled = true>
struct stored_output {
  Out* out;
  template <int E>
  __device__ __forceinline__ void store(std::int64_t g0, const V (&v)[E], real_t<V> scale) const {
    if constexpr (E == 1) {
      out[g0] = convert<Out>(scaled(v[0], scale));  // one element: its own natural-width store
    } else {
      alignas(16) Out tmp[E];
#pragma unroll
      for (int j = 0; j < E; ++j) tmp[j] = convert<Out>(scaled(v[j], scale));
      store_contiguous<Out, E>(out + g0, tmp);
    }
  }
  __device__ __forceinline__ static V scaled(const V& x, real_t<V> scale) {
    if constexpr (Scaled) {
      return x * scale;
    } else {
      return x;
    }
  }
};

/// Launch shape of the fused schedule for a value type and segment length.
/// Each thread holds E contiguous elements (16 for complex128 and 32 for complex64 where
/// the IQP phases make them, fewer for loaded rows: complex128_items, complex64_items;
/// 8 or 32 for double and 8 to 64 for float by row length): the first log2(E) butterfly
/// stages run in registers, and every round trip through shared memory does another
/// log2(E), so a segment of 2^13 complex128 takes 3 round trips, 2^14 complex64 2.
/// Tuning (H200, 2026-11-30): E by the shared-memory budget (round trips per
/// element) for the complex types, checked against half of it (real types:
/// float_items, double_items): complex128 E = 8 (and 64 registers, 30
/// warps an SM instead of 15), IQP 512 MiB, us: n = 8 252 vs 219, n = 12 334 vs
/// 278, n = 13 429 vs 365; complex64 E = 16 (measured before the product-form
/// factors moved to double): n = 10 306 vs 342, n = 12 312 vs 335, n = 14 454 vs 380,
/// mixed, so E stays 32.
/// Fraction of the write floor (IQP, 512 MiB, bench_iqp, 2026-12-01, after the phase
/// tables went by warp): complex128 n = 6: 0.70, 8: 0.65, 10: 0.66, 12: 0.57, 13:
/// 0.53 (cluster); complex64 n = 8: 0.61, 10: 0.62, 12: 0.54, 14: 0.44 (ncu, complex128
/// n = 12: 16 warps an SM, issue slots 50% busy; the largest stalls left are the wait
/// for each warp's parameter loads and the sine/cosine chains).
/// Preferred E for float rows, by length. H200, 2026-11-30, FWHT float, 1 GiB, fraction
/// of the copy floor, E = 64 -> the value here: log_n = 6: 0.90 -> 0.99 (8), 7: 0.73 ->
/// 1.08 (8), 8: 0.74 -> 1.08 (16), 9: 0.74 -> 0.98 (16), 10-12: 0.92 -> 1.00 (16), 13:
/// 0.82 -> 0.86 (32; 16: 0.81); 14 and 15 stay at 64 (0.83, 0.71; 32: 0.69, 0.70;
/// 16: 0.67, 0.69). Rows of 16 threads or more store straight from registers in
/// 64-byte runs, and a short register tile leaves room for more warps.
constexpr int float_items(int log_n) {
  return log_n <= 5 ? 64 : log_n <= 7 ? 8 : log_n <= 12 ? 16 : log_n == 13 ? 32 : 64;
}

/// Preferred E for double rows (real), by length: H200, 2026-11-30, FWHT double,
/// 1 GiB, fraction of the copy floor, E = 32 -> 8: log_n = 5-9: 0.92-0.95 -> 1.06-1.07,
/// 10-12: 0.94-0.95 -> 0.98-1.02; 13, 14 stay at 32 (0.95, 0.83; 8: 0.72, 0.78; 16:
/// 0.70, 0.78). complex64 has its own (complex64_items).
constexpr int double_items(int log_n) { return log_n >= 5 && log_n <= 12 ? 8 : 32; }

/// Preferred E for complex128 rows: 16, but 8 at log_n = 8, where 16 leaves a row 16
/// threads, below the warp the IQP phases' product form needs (phase.cuh's
/// uses_tables), so every amplitude took its own sine and cosine; with 8 a row is a
/// warp and takes the products. H200, 2026-12-03, two builds run in turn (two device
/// calls, two rounds each), us at 512 MiB, E = 16 -> 8: IQP n = 8 198-201 -> 182-184,
/// FWHT complex128 n = 8 293-295 -> 285; IQP batch 64, ten launches back to back, a
/// launch: 5.2-6.0 -> 4.4-4.9. Elsewhere 16 stays: IQP 512 MiB n = 4 182 vs 202, n = 7
/// 182 vs 220, n = 9 174 vs 191, n = 10 192 vs 221, n = 12 217 vs 390; n = 5, 6 within
/// 8%, mixed. Loaded rows (no warp tables: the FWHT) have their own shape since the
/// twenty-sixth session, fewer elements a thread: H200, 2026-12-04, FWHT complex<double>,
/// 1 GiB, fused path, fraction of a cudaMemcpy, two runs, E = 16 / 8 / 4:
///   log_n = 3    0.92 / 0.92 / 0.98        8      0.87 / 0.90 / 0.96
///   log_n = 4-7  0.86-0.88 / 0.90-0.92 / 0.98-0.99
///   log_n = 9-10 0.87-0.89 / 0.90-0.91 / 0.88    11  0.87 / 0.90-0.91 / 0.78
///   log_n = 12   0.87 / 0.84 / 0.62       (1 and 2: 0.98 whatever E).
constexpr int complex128_items(int log_n, bool tables) {
  if (tables) return log_n == 8 ? 8 : 16;
  return log_n <= 8 ? 4 : log_n <= 11 ? 8 : 16;
}

/// Preferred E for complex<float> rows: 32 where the input makes warp tables (the IQP
/// phases: their product form wants long register tiles), else 8 up to 2^11. H200,
/// 2026-12-04, FWHT complex<float>, 512 MiB, fused path, fraction of a cudaMemcpy, two
/// runs, E = 32 -> 8: log_n = 4-7 0.84-0.89 -> 0.99, 8-9 0.85-0.86 -> 0.98-0.99, 10-11
/// 0.87 -> 0.94; at 12 8 loses (0.87 -> 0.84, and the Kronecker plans' 12-bit stage 0:
/// n = 20 0.46 -> 0.44), and so does the IQP (complex64, 512 MiB, of the write floor:
/// n = 8 0.58 -> 0.37, n = 10 0.58 -> 0.32).
constexpr int complex64_items(int log_n, bool tables) { return !tables && log_n <= 11 ? 8 : 32; }

/// Tables: whether the input makes warp tables (has_warp_tables_v; fused_shape_for
/// derives it from the input policy, so no caller picks it by hand).
template <class V, int LogN, bool Tables>
struct fused_shape {
  static constexpr int n = 1 << LogN;
  static constexpr int e_pref = sizeof(V) >= 16 ? complex128_items(LogN, Tables)
                                : sizeof(V) >= 8 ? (is_complex_v<V> ? complex64_items(LogN, Tables)
                                                                    : double_items(LogN))
                                                 : float_items(LogN);
  static constexpr int e_min = e_pref > n / 1024 ? e_pref : n / 1024;
  static constexpr int items = e_min < n ? e_min : n;
  static constexpr int log_items = ilog2(items);
  static constexpr int threads_per_segment = n / items;
  /// Largest block (several segments per block for short segments).
  static constexpr int threads = threads_per_segment >= 256 ? threads_per_segment : 256;
  static constexpr int segments_per_block = threads / threads_per_segment;
  static constexpr int min_blocks = threads >= 512 ? 1 : 512 / threads;
  static constexpr bool uses_smem = LogN > log_items;
  /// Short segments: a segment's threads would write runs narrower than 64 bytes
  /// (one thread per segment: 16-byte stores 256 bytes apart), which ran at a
  /// quarter of the write floor on the H200 (complex128 n = 4, 512 MiB: 527 us
  /// against a 129 us floor). Their results go out through shared memory in the
  /// block's linear order instead: neighbouring lanes, neighbouring elements.
  static constexpr bool linear_store = threads_per_segment * sizeof(V) < 64;
  static constexpr bool needs_smem = uses_smem || linear_store;
  /// Shared-memory layout of a segment (smem_slot): padded (one empty slot after
  /// every E elements) where the input makes warp tables, the IQP phases, whose
  /// kernels run 100-120 instructions an amplitude (ncu, 2026-12-02/03) where a
  /// loaded row is bound by memory; XOR-swizzled elsewhere. Measured together with the
  /// phase changes it came with (H200, 2026-12-05): iqp/phase.cuh's comment.
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
using fused_shape_for = fused_shape<V, LogN, has_warp_tables_v<Input>>;

/// Shared-memory slot of element x of a segment (wham/reference/fused_layout.hpp):
/// XOR-swizzled, the low log2(E) bits with the next log2(E), or padded, x + x / E
/// (one empty slot after every E elements). Both keep the contiguous per-thread
/// layout (thread t at t * E + j) and the passes' layouts (neighbouring lanes,
/// neighbouring elements) free of bank conflicts for the element sizes and E that
/// use them (padded: complex<double> E = 8, 16 and complex<float> E = 32; the
/// contiguous layout's threads are E + 1 slots apart, an odd count of 16-byte or
/// 8-byte slots). The padded slot of a pass's x = thread part | register part is
/// the sum of theirs, so each access is a thread's base address plus a constant,
/// where the swizzle costs several integer operations an element (PTX of the
/// complex<double> n = 10 IQP kernel: 611 -> 299 integer instructions a thread of
/// 16 amplitudes; complex<float> fused kernels 128 -> 100-102 registers).
template <int LogE, bool Padded>
__device__ __forceinline__ unsigned smem_slot(unsigned x) {
  return ::wham::reference::fused_layout::slot(x, LogE, Padded);
}

/// Orders a segment's shared-memory round trip: a segment of at most 32 threads
/// lies within one warp (TPS divides 32, segments are consecutive threads), so
/// its warp synchronises alone instead of waiting at a block barrier for the
/// block's other segments. `lanes` names the warp's threads (the last warp of a
/// block may be partial). Longer segments are whole warps (TPS a power of two);
/// with Named, each waits at its own named barrier (1 + segment; at most 4
/// segments of 64 threads a block), so the block's segments drift apart instead
/// of marching in step. That pays where the input is made on chip and loses
/// where it is loaded (H200, 512 MiB, 2026-12-01, block barrier -> named: IQP
/// complex128 n = 10: 260 -> 241 us, n = 11: 265 -> 256, complex64 n = 11: 301 ->
/// 289; FWHT double n = 9: 257 -> 269, n = 10: 272 -> 284), so the fused kernel
/// names them for inputs with warp tables (the IQP phases) only.
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
template <int B, int LogN, int LogE, int TPS, bool Linear, bool Named, bool Padded, class V,
          int E, class Output>
__device__ __forceinline__ void fused_passes(V* seg, int t, int s_local, V (&v)[E],
                                             const Output& output, std::int64_t g_seg, bool active,
                                             real_t<V> scale) {
  namespace layout = ::wham::reference::fused_layout;
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
      fused_passes<B + G, LogN, LogE, TPS, Linear, Named, Padded>(seg, t, s_local, v, output,
                                                                  g_seg, active, scale);
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
      fused_passes<B + G, LogN, LogE, TPS, Linear, Named, Padded>(seg, t, s_local, v, output,
                                                                  g_seg, active, scale);
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
    // Inputs made on chip (no loads from memory the kernel writes): threads past
    // the last segment (the last block only) make the last segment's elements and
    // store nothing (`active`), so that no branch goes around the loads and no
    // zeros are made first (SASS of the complex128 n = 10 IQP kernel: 118 fewer
    // instructions a thread of 16 amplitudes, of about 1500).
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
      // The block's segments are contiguous in memory: store them in linear order.
      // Block-wide, not warp by warp (H200, 1 GiB, fraction of the copy floor,
      // warp-local vs block-wide): float log_n = 6: 0.68 vs 0.90, double 5: 0.72 vs
      // 0.94, float 7-9: 0.75-0.77 vs 0.74; IQP unchanged.
      __syncthreads();
      const std::int64_t first = block * segments_here;
      const std::int64_t g_block = first * N;
      constexpr int T = shape::threads;
      if (T % N == 0 && segments_here == shape::segments_per_block &&
          first + segments_here <= num_segments) {
        // A full block (every block of a large batch but the grid's last): element
        // k * T + tid is segment k * T / N + tid / N, position tid % N, so each load
        // and store is the thread's base address plus a constant, with no bounds test
        // (SASS of the complex<float> n = 6 IQP kernel: about 20 instructions an
        // element before, 3 here).
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
            const V one[1] = {block_smem[s * shape::stride + smem_slot<LogE, shape::padded>(unsigned(e) & (N - 1u))]};
            output.template store<1>(g_block + e, one, scale);
          }
        }
      }
    }
  } else {
    if (active) output.template store<E>(g_seg, v, scale);
  }
}

// A register cap of 128 (minimum blocks per SM: 512 threads' worth): with no
// minimum, ptxas capped the small-n complex128 IQP kernels at 80 registers and
// spilled (n = 4: 128 bytes); at 128 they take 122 and do not. Tighter caps, for
// more blocks an SM, spill and gain nothing or lose (H200, 2026-12-02, IQP 512 MiB,
// fraction of the write floor, this cap vs one more block an SM: complex128 n = 10
// 0.62 vs 0.63 at 80 registers, 0.23 at 64; n = 12 0.56 vs 0.44 at 80; n = 13 0.39 vs
// 0.18 at 64; complex64 n = 12 0.51 vs 0.44, n = 13 0.47 vs 0.40 at 80).
template <class V, int LogN, class Input, class Output>
__global__ void __launch_bounds__(fused_shape_for<V, LogN, Input>::threads,
                                  fused_shape_for<V, LogN, Input>::min_blocks)
    fused_kernel(Input input, Output output, std::int64_t num_segments, real_t<V> scale,
                 unsigned tables_offset) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  fused_block<V, LogN>(input, output, std::int64_t(blockIdx.x), num_segments, scale,
                       tables_offset, smem_raw);
}

/// Largest segment the fused schedule serves for V in `smem` bytes of shared memory a
/// block: the elements alone (the IQP phases' warp tables and the padded layout need a
/// little more; test_iqp_host checks that they fit at every opt-in limit of compute
/// capability 8.0 and later).
template <class V>
inline int fused_max_log_n_for(std::size_t smem) {
  constexpr int compiled_max = 15;
  int log_n = 0;
  while (log_n < compiled_max && (std::size_t(2) << log_n) * sizeof(V) <= smem) ++log_n;
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
inline void launch_fused_n(Input input, Output output, std::int64_t num_segments,
                           real_t<V> scale, cudaStream_t stream) {
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

/// Transforms num_segments contiguous segments of 2^log_n elements (0 <= log_n <= 15,
/// and the segment must fit the device's shared memory: see fused_max_log_n).
template <class V, class Input, class Output>
inline void launch_fused(int log_n, std::int64_t num_segments, Input input, Output output,
                         real_t<V> scale, cudaStream_t stream) {
  switch (log_n) {
#define WHAM_FUSED_CASE(L) \
  case L: return launch_fused_n<V, L>(input, output, num_segments, scale, stream);
    WHAM_FUSED_CASE(0)
    WHAM_FUSED_CASE(1)
    WHAM_FUSED_CASE(2)
    WHAM_FUSED_CASE(3)
    WHAM_FUSED_CASE(4)
    WHAM_FUSED_CASE(5)
    WHAM_FUSED_CASE(6)
    WHAM_FUSED_CASE(7)
    WHAM_FUSED_CASE(8)
    WHAM_FUSED_CASE(9)
    WHAM_FUSED_CASE(10)
    WHAM_FUSED_CASE(11)
    WHAM_FUSED_CASE(12)
    WHAM_FUSED_CASE(13)
    WHAM_FUSED_CASE(14)
    WHAM_FUSED_CASE(15)
#undef WHAM_FUSED_CASE
    default:
      throw_invalid_argument("fused path", "log_n", log_n, "0..15");
  }
}

}  // namespace wham::detail::wht
