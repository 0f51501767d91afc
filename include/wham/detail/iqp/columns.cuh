/// \file wham/detail/iqp/columns.cuh
/// \brief The columns-first resident schedule of the IQP encoder (sm_90): rows of
/// 2^n, n = Lo + 4, Lo = 10..13, as one cluster of K blocks a row, the Kronecker
/// split taken high bits first.
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
/// dispatch; bench_iqp times it beside `automatic` (path 5) and test_iqp_columns_gpu checks
/// it against the host reference.
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
#include <string>

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

/// Stage A for the tile of columns_threads columns starting at column c0 of row `row`.
template <class Out, int Lo, class Input>
__device__ __forceinline__ void columns_stage_a(const Input& input, Out* out, std::int64_t row,
                                                unsigned c0, const unsigned char* warp_table) {
  namespace ref = ::wham::reference::iqp_columns;
  constexpr int n = Lo + columns_hi;
  constexpr int E = 1 << columns_hi;
  using C = Out;
  const unsigned x0 = c0 + threadIdx.x;
  const double* p = reinterpret_cast<const double*>(warp_table);
  const C* w = reinterpret_cast<const C*>(warp_table + input.table_w_offset());
  double base, f[columns_hi];
  ref::angles<columns_hi>(p, n, input.pairs, Lo, x0, base, f);
  C fac[columns_hi];
#pragma unroll
  for (int i = 0; i < columns_hi; ++i) fac[i] = unit_phase<C, true>(f[i]);
  C v[E];
  v[0] = unit_phase<C, true>(base) * input.prescale;
#pragma unroll
  for (int l = 1; l < E; ++l) {
    const int top = wht::ilog2(l);
    v[l] = cmul(v[l - (1 << top)], fac[top]);
  }
  if (input.pairs) {
#pragma unroll
    for (int l = 3; l < E; ++l) {
      if ((l & (l - 1)) != 0) v[l] = cmul(v[l], w[l]);  // two or more row qubits set
    }
  }
  wht::register_butterflies<columns_hi>(v);
  Out* const dst = out + (row << n) + x0;
#pragma unroll
  for (int l = 0; l < E; ++l) dst[std::int64_t(l) << Lo] = v[l];
}

template <class Out, int Lo, int K, class Input>
__global__ void __launch_bounds__(columns_threads, 2)
    columns_resident_kernel(Input input, Out* out, std::int64_t rows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int n = Lo + columns_hi;
  constexpr int E = 1 << columns_hi;
  using C = Out;
  using stage_b = columns_stage_b<Out, Lo>;
  constexpr int tiles = (1 << Lo) / columns_threads;
  constexpr int blocks_b = E / stage_b::segments_per_block;
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int rank = static_cast<int>(cluster.block_rank());
  const std::int64_t row = std::int64_t(blockIdx.x) / K;

  // Stage A. Each warp copies the row's parameters to its table and makes w (lanes < 16).
  unsigned char* const table =
      smem_raw + (threadIdx.x / 32) * input.template warp_table_bytes<E>();
  input.template prepare<E>(table, row << n);
  const unsigned lane = threadIdx.x & 31u;
  if (input.pairs && lane < unsigned(E)) {
    const double* p = reinterpret_cast<const double*>(table);
    reinterpret_cast<C*>(table + input.table_w_offset())[lane] = unit_phase<C, true>(
        ::wham::reference::iqp_columns::row_couplings<columns_hi>(p, n, true, Lo, lane));
  }
  __syncwarp();
  for (int t = rank; t < tiles; t += K) {
    columns_stage_a<Out, Lo>(input, out, row, unsigned(t) * columns_threads, table);
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

}  // namespace wham::detail::iqp
