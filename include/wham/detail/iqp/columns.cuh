/// \file wham/detail/iqp/columns.cuh
/// \brief The columns-first schedules of the IQP encoder (sm_90), the Kronecker split
/// taken high bits first: resident (rows of 2^n, n = Lo + 4, Lo = 10..13, one cluster of
/// K blocks a row) and streamed (n = Lo + 4 .. Lo + 8, one cooperative kernel, chunks of
/// rows a phase; its section below).
///
/// H_n = H_hi (x) H_lo in the other order from the Kronecker path (kronecker.cuh, whose
/// stage 0 makes the phases and runs the Lo-bit transform on chip, then a strided stage
/// takes the high bits):
///  - stage A: each thread makes the 16 phases of one column x0 (the elements x0 + (l << Lo),
///    l < 16, by products: wham/reference/iqp_columns.hpp), transforms the 4 high bits in
///    registers (no shared memory, no barrier) and stores them; a warp's lanes own 32
///    adjacent columns, so each store is 512 contiguous bytes (complex128);
///  - a cluster barrier;
///  - stage B: the fused FWHT kernel's block (fused.cuh, loaded rows) over the row's 16
///    contiguous segments of 2^Lo, in place, reading what stage A wrote microseconds
///    before, from L2.
/// Why: the Kronecker path's stage 0 carries both the phases and the long transform (the
/// IQP fused kernel over 2^12, bound by its own instructions: 0.61 of the write floor at
/// n = 12), and its strided stage waits on L2 latency. Here the phases go with the short,
/// barrier-free transform, and the long one reads contiguous segments as the FWHT does.
/// The 2^-n scale is folded into the phases (exact: a power of two).
///
/// Not yet measured on a GPU (written 2026-12-05 in a session without one): selected by no
/// dispatch; bench_iqp times them beside `automatic` (paths 5 and 6) and
/// test_iqp_columns_gpu checks them against the host reference.
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/iqp/phase.cuh>
#include <wham/detail/wht/cluster.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/detail/wht/fused.cuh>
#include <wham/error.hpp>
#include <wham/reference/iqp_columns.hpp>

#include <cooperative_groups.h>
#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace wham::detail::iqp {

/// Row bits stage A transforms in registers (16 elements a thread).
inline constexpr int columns_hi = 4;
inline constexpr int columns_threads = 256;
/// Stage A computes in the output type: the product form's factors are formed in double
/// and rounded (unit_phase's Precise), as the fused kernels do; complex64 in double would
/// put about 34 FP64 operations an amplitude on a pipe that runs at half the float rate
/// (the write floor of complex64 leaves about 0.36 SM cycles an amplitude on the H200).

/// Stage B's block shape: the fused kernel's for loaded rows of 2^Lo in Out.
template <class Out, int Lo>
using columns_stage_b = wht::fused_shape<Out, Lo, false>;

/// Whether the schedule is compiled for rows of 2^Lo columns of Out: stage B's blocks
/// have columns_threads threads (fused_shape: at least 256, more for long segments).
template <class Out, int Lo>
inline constexpr bool columns_shape_fits =
    Lo >= 10 && Lo <= 13 && columns_stage_b<Out, Lo>::threads == columns_threads &&
    columns_stage_b<Out, Lo>::uses_smem;

/// Blocks a row: 8 (the portable cluster maximum), fewer where stage A has fewer tiles
/// of columns_threads columns.
template <int Lo>
inline constexpr int columns_cluster = ((1 << Lo) / columns_threads) < 8 ? ((1 << Lo) / columns_threads) : 8;

/// Fills the calling warp's table for row `row` of n qubits: the row's parameters, then
/// w(l) for the 16 values of the 4 top qubits [S, S + 4) (lanes < 16). Every lane of the
/// warp calls it; it synchronises the warp before (the previous table read) and after.
template <int n, int S, class Input>
__device__ __forceinline__ void columns_table(const Input& input, unsigned char* table,
                                              std::int64_t row) {
  // The input's value type (its prescale is the real type of it).
  using Z = cuda::std::complex<cuda::std::remove_cv_t<decltype(input.prescale)>>;
  constexpr int E = 1 << columns_hi;
  __syncwarp();
  input.template prepare<E>(table, row << n);
  const unsigned lane = threadIdx.x & 31u;
  if (input.pairs && lane < unsigned(E)) {
    const double* p = reinterpret_cast<const double*>(table);
    reinterpret_cast<Z*>(table + input.table_w_offset())[lane] = unit_phase<Z, true>(
        ::wham::reference::iqp_columns::row_couplings<columns_hi>(p, n, true, S, lane));
  }
  __syncwarp();
}

/// Stage A for tile `tile` of row `row` (rows of 2^n, n = Lo + M + 4: reference/
/// iqp_columns.hpp's tile layout): the 16 phases of a column by products, the 4 top bits
/// in registers, then (M > 0) the M mid bits after one exchange through `exchange` (16
/// values a thread; the caller orders its reuse), and the stores.
template <class Out, int Lo, int M, class Input>
__device__ __forceinline__ void columns_stage_a(const Input& input, Out* out, std::int64_t row,
                                                unsigned tile, const unsigned char* warp_table,
                                                Out* exchange) {
  namespace ref = ::wham::reference::iqp_columns;
  constexpr int S = Lo + M;  // the top bits' position
  constexpr int n = S + columns_hi;
  constexpr int E = 1 << columns_hi;
  constexpr int T = columns_threads;
  constexpr int Cols = ref::tile_columns(M, T);
  // The low bits of a column that are a lane's own (the others are the same across a warp).
  constexpr int lane_bits = wht::ilog2(Cols) < 5 ? wht::ilog2(Cols) : 5;
  using C = Out;
  const unsigned t = threadIdx.x;
  const unsigned x0 = ref::a_column(Lo, M, tile, t, T);
  const double* p = reinterpret_cast<const double*>(warp_table);
  const C* w = reinterpret_cast<const C*>(warp_table + input.table_w_offset());
  double base, f[columns_hi];
  ref::angles<columns_hi, lane_bits>(p, n, input.pairs, S, x0, base, f);
  C fac[columns_hi];
#pragma unroll
  for (int i = 0; i < columns_hi; ++i) fac[i] = unit_phase<C, true>(f[i]);
  C v[E];
  v[0] = unit_phase<C, true>(base) * input.prescale;
  expand_products(v, fac);
  if (input.pairs) apply_couplings(v, w);  // two or more top qubits set
  wht::register_butterflies<columns_hi>(v);
  Out* const row_out = out + (row << n);
  if constexpr (M == 0) {
    Out* const dst = row_out + x0;
#pragma unroll
    for (int l = 0; l < E; ++l) dst[std::int64_t(l) << Lo] = v[l];
  } else {
    const unsigned c = t % Cols;
    const unsigned m = t / Cols;
#pragma unroll
    for (int l = 0; l < E; ++l) exchange[ref::exchange_slot(M, m, unsigned(l), c, T)] = v[l];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < E; ++j) {
      v[j] = exchange[ref::exchange_slot(M, ref::b_mid(M, unsigned(j)),
                                         ref::b_top(M, t, unsigned(j), T), c, T)];
    }
    wht::register_butterflies<M>(v);
#pragma unroll
    for (int j = 0; j < E; ++j) {
      row_out[ref::element(Lo, M, tile, c, ref::b_mid(M, unsigned(j)),
                           ref::b_top(M, t, unsigned(j), T), T)] = v[j];
    }
  }
}

template <class Out, int Lo, int K, class Input>
__global__ void __launch_bounds__(columns_threads, 2)
    columns_resident_kernel(Input input, Out* out, std::int64_t rows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int n = Lo + columns_hi;
  constexpr int E = 1 << columns_hi;
  using stage_b = columns_stage_b<Out, Lo>;
  constexpr int tiles = (1 << Lo) / columns_threads;
  constexpr int blocks_b = E / stage_b::segments_per_block;
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int rank = static_cast<int>(cluster.block_rank());
  const std::int64_t row = std::int64_t(blockIdx.x) / K;

  // Stage A. Each warp copies the row's parameters to its table and makes w.
  unsigned char* const table =
      smem_raw + (threadIdx.x / 32) * input.template warp_table_bytes<E>();
  columns_table<n, Lo>(input, table, row);
  for (int t = rank; t < tiles; t += K) {
    columns_stage_a<Out, Lo, 0>(input, out, row, unsigned(t), table, nullptr);
  }
  // Release / acquire at cluster scope: the row's stage-A stores are visible below.
  cluster.sync();

  // Stage B, in place; the shared memory of the tables is free again (every thread of
  // the block passed the cluster barrier).
  const wht::loaded_input<Out, Out> in_b{out};
  const wht::stored_output<Out, Out, false> out_b{out};  // 2^-n is in the phases
  for (int b = rank; b < blocks_b; b += K) {
    if (b != rank) __syncthreads();  // the previous segment's shared memory
    wht::fused_block<Out, Lo>(in_b, out_b, row * blocks_b + b, rows << columns_hi,
                              wht::real_t<Out>(1), wht::no_tables, smem_raw);
  }
#endif
}

// ---- the streamed schedule: every block of the GPU on a chunk of rows at a time -------
// Rows of 2^n, n = Lo + M + 4 (M mid bits: up to 16 MiB rows), as one cooperative
// kernel of as many blocks as the GPU holds at once. Phase k runs stage A over chunk k
// (chunk_rows rows) and stage B over chunk k - 1, then a grid barrier: stage B reads
// what stage A wrote one phase before, and two chunks (chunk_bytes each) stay in L2.
// The clusters of the resident schedule cannot do this for rows of several MiB: the
// clusters the GPU holds at once would keep more rows in flight than L2 holds.

/// Mid bits of the streamed schedule: rows of 2^(Lo + M + 4), Lo = columns_streamed_lo.
template <class Out>
inline constexpr int columns_streamed_lo = sizeof(Out) >= 16 ? 12 : 13;
inline constexpr int columns_streamed_max_mid = 4;
/// Bytes of rows a phase (tuning, not yet measured): a quarter of the L2 (15 MB on the
/// H200), so that two chunks leave half of it to everything else; at least one row.
inline std::int64_t columns_chunk_rows(int n, std::size_t out_bytes) {
  const std::int64_t row_bytes = std::int64_t(out_bytes) << n;
  const std::int64_t chunk = std::int64_t(current_device_limits().l2_bytes / 4);
  return chunk > row_bytes ? chunk / row_bytes : 1;
}

/// Shared memory of the streamed kernel: stage A's exchange buffer (M > 0) or stage B's
/// segments from 0, the warp tables after both (they outlive a phase).
template <class Out, int Lo, int M>
struct columns_streamed_smem {
  static constexpr std::size_t exchange = M > 0 ? std::size_t(16) * columns_threads * sizeof(Out) : 0;
  static constexpr std::size_t stage_b = columns_stage_b<Out, Lo>::smem_bytes;
  static constexpr std::size_t tables_offset =
      ((exchange > stage_b ? exchange : stage_b) + 15) & ~std::size_t(15);
};

template <class Out, int Lo, int M, class Input>
__global__ void __launch_bounds__(columns_threads, 2)
    columns_streamed_kernel(Input input, Out* out, std::int64_t rows, std::int64_t chunk_rows) {
  constexpr int S = Lo + M;
  constexpr int n = S + columns_hi;
  constexpr int E = 1 << columns_hi;
  using stage_b = columns_stage_b<Out, Lo>;
  constexpr int tiles = (1 << Lo) / ::wham::reference::iqp_columns::tile_columns(M, columns_threads);
  constexpr int blocks_b = (1 << (M + columns_hi)) / stage_b::segments_per_block;
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Out* const exchange = reinterpret_cast<Out*>(smem_raw);
  unsigned char* const table = smem_raw + columns_streamed_smem<Out, Lo, M>::tables_offset +
                               (threadIdx.x / 32) * input.template warp_table_bytes<E>();
  const wht::loaded_input<Out, Out> in_b{out};
  const wht::stored_output<Out, Out, false> out_b{out};  // 2^-n is in the phases
  const std::int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
  std::int64_t table_row = -1;
  for (std::int64_t phase = 0; phase <= chunks; ++phase) {
    if (phase < chunks) {
      const std::int64_t r0 = phase * chunk_rows;
      const std::int64_t items = (rows - r0 < chunk_rows ? rows - r0 : chunk_rows) * tiles;
      for (std::int64_t i = blockIdx.x; i < items; i += gridDim.x) {
        const std::int64_t row = r0 + i / tiles;
        if (row != table_row) {  // the same for the whole block
          columns_table<n, S>(input, table, row);
          table_row = row;
        }
        __syncthreads();  // the exchange buffer (M > 0) or stage B's shared memory is free
        columns_stage_a<Out, Lo, M>(input, out, row, unsigned(i % tiles), table, exchange);
      }
    }
    if (phase > 0) {
      const std::int64_t r0 = (phase - 1) * chunk_rows;
      const std::int64_t items = (rows - r0 < chunk_rows ? rows - r0 : chunk_rows) * blocks_b;
      for (std::int64_t i = blockIdx.x; i < items; i += gridDim.x) {
        __syncthreads();  // stage A's exchange or the previous segment's shared memory
        wht::fused_block<Out, Lo>(in_b, out_b, r0 * blocks_b + i, rows << (M + columns_hi),
                                  wht::real_t<Out>(1), wht::no_tables, smem_raw);
      }
    }
    // Orders every stage-A store of this phase before the next phase's stage B (and
    // stage B's reads before the next stage A, which writes other rows: not needed).
    if (phase < chunks) grid.sync();
  }
}

/// Whether the columns-first schedule serves rows of 2^n qubits of Out on this device.
template <class Out>
inline bool columns_serves(int n) {
  if (!wht::clusters_supported()) return false;
  switch (n - columns_hi) {
    case 10: return columns_shape_fits<Out, 10>;
    case 11: return columns_shape_fits<Out, 11>;
    case 12: return columns_shape_fits<Out, 12>;
    case 13: return columns_shape_fits<Out, 13>;
    default: return false;
  }
}

template <class Out, int Lo, class P>
inline void launch_columns_n(const phase_input<P, Out>& input, Out* out, std::int64_t rows,
                             cudaStream_t stream) {
  constexpr int n = Lo + columns_hi;
  constexpr int K = columns_cluster<Lo>;
  constexpr int E = 1 << columns_hi;
  if constexpr (!columns_shape_fits<Out, Lo>) {
    throw_invalid_argument("iqp_encode (columns-first schedule)", "num_qubits", n,
                           "a row length the schedule is compiled for with this output type");
  } else {
    if (rows < 1 || rows > 0x7fffffff / K) {
      throw_invalid_argument("iqp_encode (columns-first schedule)", "batch", rows,
                             "1..(2^31 - 1) / " + std::to_string(K));
    }
    // The 2^-n in the phases (exact: a power of two).
    phase_input<P, Out, n> in{input.params, input.per_sample, n, input.pairs, input.batch,
                              static_cast<wht::real_t<Out>>(std::ldexp(1.0, -n))};
    auto kernel = columns_resident_kernel<Out, Lo, K, decltype(in)>;
    const std::size_t tables =
        std::size_t(columns_threads / 32) * in.template warp_table_bytes<E>();
    const std::size_t smem =
        tables > columns_stage_b<Out, Lo>::smem_bytes ? tables : columns_stage_b<Out, Lo>::smem_bytes;
    ensure_dynamic_smem(kernel, smem);
    wht::launch_clusters(kernel, rows * K, columns_threads, K, smem, stream, in, out, rows);
  }
}

/// Encodes `rows` samples of n qubits with the columns-first schedule (columns_serves):
/// `input` as iqp_encode builds it (its prescale ignored: the schedule applies 2^-n).
template <class Out, class P>
inline void launch_columns(int n, std::int64_t rows, const phase_input<P, Out>& input, Out* out,
                           cudaStream_t stream) {
  if (!wht::clusters_supported()) {
    throw error("wham: the columns-first schedule needs compute capability 9.0 or later and "
                "code compiled for it (sm_90 or later)");
  }
  switch (n - columns_hi) {
    case 10: return launch_columns_n<Out, 10>(input, out, rows, stream);
    case 11: return launch_columns_n<Out, 11>(input, out, rows, stream);
    case 12: return launch_columns_n<Out, 12>(input, out, rows, stream);
    case 13: return launch_columns_n<Out, 13>(input, out, rows, stream);
    default:
      throw_invalid_argument("iqp_encode (columns-first schedule)", "num_qubits", n,
                             std::to_string(10 + columns_hi) + ".." + std::to_string(13 + columns_hi));
  }
}


/// Whether the streamed schedule serves rows of 2^n qubits of Out on this device:
/// n = Lo + 4 .. Lo + 8 (Lo: columns_streamed_lo), and a device with cooperative launch.
template <class Out>
inline bool columns_streamed_serves(int n) {
  constexpr int Lo = columns_streamed_lo<Out>;
  if (!columns_shape_fits<Out, Lo> || current_device_limits().cc_major < 9) return false;
  return n >= Lo + columns_hi && n <= Lo + columns_hi + columns_streamed_max_mid;
}

/// Blocks of `kernel` an SM holds at once with `threads` threads and `smem` bytes, cached
/// per kernel and device; throws where none fits.
template <class Kernel>
inline int cooperative_blocks_per_sm(Kernel kernel, int threads, std::size_t smem) {
  static std::map<std::pair<const void*, int>, int> known;
  static std::mutex m;
  const auto key =
      std::make_pair(reinterpret_cast<const void*>(kernel), current_device_limits().device);
  std::lock_guard<std::mutex> lock(m);
  auto it = known.find(key);
  if (it == known.end()) {
    int per_sm = 0;
    WHAM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    it = known.emplace(key, per_sm).first;
  }
  if (it->second < 1) {
    throw error("wham: the streamed columns-first schedule does not fit an SM of this device");
  }
  return it->second;
}

template <class Out, int M, class P>
inline void launch_columns_streamed_n(const phase_input<P, Out>& input, Out* out,
                                      std::int64_t rows, cudaStream_t stream) {
  constexpr int Lo = columns_streamed_lo<Out>;
  constexpr int n = Lo + M + columns_hi;
  constexpr int E = 1 << columns_hi;
  static_assert(columns_shape_fits<Out, Lo>, "stage B's block shape");
  if (rows < 1) {
    throw_invalid_argument("iqp_encode (streamed columns-first schedule)", "batch", rows, ">= 1");
  }
  phase_input<P, Out, n> in{input.params, input.per_sample, n, input.pairs, input.batch,
                            static_cast<wht::real_t<Out>>(std::ldexp(1.0, -n))};
  auto kernel = columns_streamed_kernel<Out, Lo, M, decltype(in)>;
  const std::size_t smem = columns_streamed_smem<Out, Lo, M>::tables_offset +
                           std::size_t(columns_threads / 32) * in.template warp_table_bytes<E>();
  ensure_dynamic_smem(kernel, smem);
  // Every block resident at once (a cooperative launch): as many as the SMs hold, asked
  // once per kernel and device (a host call on every launch would add to small batches).
  const int per_sm = cooperative_blocks_per_sm(kernel, columns_threads, smem);
  const std::int64_t chunk_rows = columns_chunk_rows(n, sizeof(Out));
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(per_sm * current_device_limits().sm_count));
  config.blockDim = dim3(columns_threads);
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeCooperative;
  attribute.val.cooperative = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  WHAM_CUDA_TRY(cudaLaunchKernelEx(&config, kernel, in, out, rows, chunk_rows));
}

/// Encodes `rows` samples of n qubits with the streamed schedule (columns_streamed_serves):
/// `input` as iqp_encode builds it (its prescale ignored: the schedule applies 2^-n).
template <class Out, class P>
inline void launch_columns_streamed(int n, std::int64_t rows, const phase_input<P, Out>& input,
                                    Out* out, cudaStream_t stream) {
  constexpr int Lo = columns_streamed_lo<Out>;
  if (!columns_streamed_serves<Out>(n)) {
    throw_invalid_argument("iqp_encode (streamed columns-first schedule)", "num_qubits", n,
                           std::to_string(Lo + columns_hi) + ".." +
                               std::to_string(Lo + columns_hi + columns_streamed_max_mid) +
                               " on a device of compute capability 9.0 or later");
  }
  switch (n - Lo - columns_hi) {
    case 0: return launch_columns_streamed_n<Out, 0>(input, out, rows, stream);
    case 1: return launch_columns_streamed_n<Out, 1>(input, out, rows, stream);
    case 2: return launch_columns_streamed_n<Out, 2>(input, out, rows, stream);
    case 3: return launch_columns_streamed_n<Out, 3>(input, out, rows, stream);
    default: return launch_columns_streamed_n<Out, 4>(input, out, rows, stream);
  }
}

}  // namespace wham::detail::iqp
