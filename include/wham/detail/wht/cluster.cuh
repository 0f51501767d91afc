/// \file wham/detail/wht/cluster.cuh
/// \brief The cluster schedule of the Walsh-Hadamard family (sm_90 and later):
/// one row of 2^(LogS + c) elements split over a thread block cluster of C = 2^c
/// blocks, each holding 2^LogS of it in shared memory.
///
/// Each block runs the fused schedule (fused.cuh) over its part, index bits
/// [0, LogS), and leaves the result in its shared memory; after a cluster
/// barrier, block r reads element x of every block's part (distributed shared
/// memory) for x in its share [r 2^LogS / C, (r + 1) 2^LogS / C), applies the
/// C-point transform of the top c bits in registers, and writes the C results
/// (scaled) to global memory; a second barrier keeps every part alive until the
/// cluster's last remote read. The row is written once, never read back.
///
/// Two uses: rows one block's shared memory cannot hold (complex128 2^14 and
/// 2^15 on an H200), and small batches, where one block a row leaves most
/// multiprocessors idle. Same input and output policies as the fused schedule.
#pragma once

#include <wham/detail/wht/cluster_launch.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/detail/wht/fused.cuh>
#include <wham/error.hpp>

#include <cooperative_groups.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace wham::detail::wht {

template <class V, int LogS, int C, class Input, class Output>
__global__ void __launch_bounds__(fused_shape_for<V, LogS, Input>::threads_per_segment, 1)
    cluster_kernel(Input input, Output output, real_t<V> scale, unsigned tables_offset) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using shape = fused_shape_for<V, LogS, Input>;
  constexpr int S = shape::n;
  constexpr int E = shape::items;
  constexpr int LogE = shape::log_items;
  constexpr int TPS = shape::threads_per_segment;
  constexpr int LogC = ilog2(C);
  static_assert(shape::uses_smem && !shape::linear_store && TPS >= 32,
                "a cluster part spans whole warps and the shared-memory passes");
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();

  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t g_part = std::int64_t(blockIdx.x) * S;  // parts are consecutive in a row

  V v[E];
  unsigned char* table = nullptr;
  if constexpr (has_warp_tables_v<Input>) {
    if (tables_offset != no_tables) {
      table = smem_raw + tables_offset + (t / 32) * input.template warp_table_bytes<E>();
      input.template prepare<E>(table, g_part + std::int64_t(t) * E);
    }
  }
  load_elements<V, TPS>(input, g_part + std::int64_t(t) * E, v, table);
  register_butterflies<LogE>(v);
  V* const part = reinterpret_cast<V*>(smem_raw);
#pragma unroll
  for (int j = 0; j < E; ++j) part[smem_slot<LogE, shape::padded>(unsigned(t * E + j))] = v[j];
  __syncthreads();
  // Bits [LogE, LogS), the result left in shared memory (the Linear ending).
  fused_passes<LogE, LogS, LogE, TPS, true, false, shape::padded>(part, t, 0, v, output, g_part,
                                                                  true, scale);
  cluster.sync();

  const unsigned rank = cluster.block_rank();
  const std::int64_t g_row = (std::int64_t(blockIdx.x) >> LogC) * (std::int64_t(S) * C);
  const V* parts[C];
#pragma unroll
  for (int j = 0; j < C; ++j) parts[j] = cluster.map_shared_rank(part, j);
  constexpr int share = S / C;
#pragma unroll
  for (int k = 0; k < share / TPS; ++k) {
    const unsigned x = rank * share + unsigned(k * TPS + t);
    V a[C];
#pragma unroll
    for (int j = 0; j < C; ++j) a[j] = parts[j][smem_slot<LogE, shape::padded>(x)];
    register_butterflies<LogC>(a);
#pragma unroll
    for (int j = 0; j < C; ++j) {
      const V one[1] = {a[j]};
      output.template store<1>(g_row + std::int64_t(j) * S + x, one, scale);
    }
  }
  cluster.sync();  // no part may go while another block still reads it
#endif
}

/// Transforms `rows` rows of 2^(LogS + log2 C) elements, one cluster of C blocks a row.
template <class V, int LogS, int C, class Input, class Output>
inline void launch_cluster_n(Input input, Output output, std::int64_t rows, real_t<V> scale,
                             cudaStream_t stream) {
  using shape = fused_shape_for<V, LogS, Input>;
  if (!clusters_supported()) {
    throw error(
        "wham: the cluster schedule needs compute capability 9.0 or later and code "
        "compiled for it (sm_90 or later)");
  }
  if (rows > 0x7fffffff / C) {
    throw_invalid_argument("fused path (cluster schedule)", "rows", rows,
                           "at most " + std::to_string(0x7fffffff / C) +
                               ": 2^31 - 1 blocks in clusters of " + std::to_string(C));
  }
  auto kernel = cluster_kernel<V, LogS, C, Input, Output>;
  // One part a block, laid out as a fused block of one segment.
  const fused_smem_layout smem = fused_block_smem<V, LogS>(input, 1);
  ensure_dynamic_smem(kernel, smem.bytes);
  launch_clusters(kernel, rows * C, shape::threads_per_segment, C, smem.bytes, stream, input,
                  output, scale, smem.tables_offset);
}

/// Largest row the fused family keeps on chip: one block, or on compute
/// capability 9.0+ a cluster of up to 4 blocks of the compiled block maximum.
template <class V>
inline int fused_cluster_max_log_n() {
  const int block = fused_max_log_n<V>();
  if (clusters_supported() && block >= block_compiled_max_log_n<V>) {
    return block_compiled_max_log_n<V> + 2;
  }
  return block;
}

/// Rows of 2^(M + 1) or 2^(M + 2) elements, M the compiled block maximum: clusters
/// of 2 or 4 blocks of 2^M.
template <class V, class Input, class Output>
inline void launch_cluster_beyond_block(int log_n, std::int64_t rows, Input input, Output output,
                                        real_t<V> scale, cudaStream_t stream) {
  constexpr int M = block_compiled_max_log_n<V>;
  if (log_n == M + 1) return launch_cluster_n<V, M, 2>(input, output, rows, scale, stream);
  if (log_n == M + 2) return launch_cluster_n<V, M, 4>(input, output, rows, scale, stream);
  throw_invalid_argument("fused path (cluster schedule)", "log_n", log_n,
                         std::to_string(M + 1) + ".." + std::to_string(M + 2));
}

}  // namespace wham::detail::wht
