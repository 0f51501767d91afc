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

#include <wham/detail/device.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/detail/wht/fused.cuh>
#include <wham/error.hpp>

#include <cooperative_groups.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace wham::detail::wht {

/// An empty kernel: its attributes tell which code the program carries for the device.
template <int = 0>
__global__ void arch_probe_kernel() {}

/// Whether thread block clusters can run here: the device has compute capability 9.0+
/// and the program's kernels were compiled for it. A build for sm_80 alone also runs
/// on an H100 or H200 (its sm_80 code, or its PTX compiled by the driver), but the
/// cluster kernels' bodies are empty below `__CUDA_ARCH__` 900, so the device's
/// capability alone would pick schedules that write nothing. The PTX version the
/// kernels were compiled from (not the SASS the driver loaded) is what decides, looked
/// up once per device.
inline bool clusters_supported() {
  const device_limits& l = current_device_limits();
  if (l.cc_major < 9) return false;
  constexpr int max_devices = 64;
  static std::array<int, max_devices> ptx_version{};
  static std::array<std::once_flag, max_devices> once{};
  std::call_once(once[l.device], [&l] {
    cudaFuncAttributes a{};
    WHAM_CUDA_TRY(cudaFuncGetAttributes(&a, arch_probe_kernel<0>));
    ptx_version[l.device] = a.ptxVersion;
  });
  return ptx_version[l.device] >= 90;
}

/// The launch configuration of `blocks` blocks (a multiple of `cluster`) of `threads`
/// threads and `smem` bytes of dynamic shared memory as clusters of `cluster` blocks
/// along x; `attribute` (the caller's) holds the cluster dimension and must outlive it.
inline cudaLaunchConfig_t cluster_config(std::int64_t blocks, int threads, int cluster,
                                         std::size_t smem, cudaStream_t stream,
                                         cudaLaunchAttribute& attribute) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(static_cast<unsigned>(threads));
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = static_cast<unsigned>(cluster);
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}

/// Launches `kernel` on `stream` as clusters of `cluster` blocks along x (cluster_config).
/// The one place wham launches clusters.
template <class Kernel, class... Args>
inline void launch_clusters(Kernel kernel, std::int64_t blocks, int threads, int cluster,
                            std::size_t smem, cudaStream_t stream, Args... args) {
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config =
      cluster_config(blocks, threads, cluster, smem, stream, attribute);
  WHAM_CUDA_TRY(cudaLaunchKernelEx(&config, kernel, args...));
}

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
    throw error("wham: the cluster schedule needs compute capability 9.0 or later and code "
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

/// Largest segment one block holds compiled per element size (2^15 float, 2^14
/// 8-byte, 2^13 complex<double>: what 227 KiB of shared memory holds).
template <class V>
inline constexpr int block_compiled_max_log_n = sizeof(V) >= 16 ? 13 : sizeof(V) >= 8 ? 14 : 15;

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

/// Whether `rows` rows as clusters of C blocks beat the Kronecker split (for the
/// rows beyond one block). H200, IQP, us, cluster vs kronecker: complex128
/// n = 14 (C = 2): batch 1 18.6 vs 14.4, batch 64 19.9 vs 23.7, 512 MiB 465 vs 540;
/// n = 15 (C = 4): batch 64 50.8 vs 38.9, 512 MiB 547 vs 549; complex64 n = 16
/// (C = 4): batch 64 50.1 vs 41.4, 512 MiB 534 vs 585. FWHT float, fraction of the
/// copy floor: log_n = 16 (C = 2) batch 64 0.50 vs 0.41, 1 GiB 0.57 vs 0.49;
/// log_n = 17 (C = 4) batch 64 0.40 vs 0.46, 1 GiB 0.52 vs 0.49. One cluster holds
/// its row's SMs for the whole row, so it pays once the clusters fill the GPU.
inline bool cluster_pays(int C, std::int64_t rows) {
  const std::int64_t sms = current_device_limits().sm_count;
  return C <= 2 ? rows * C >= sms / 2 : rows * C >= 4 * sms;
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

/// What `automatic` does with rows of 2^log_n: the fused family when one block
/// holds a row, or when clusters hold it and pay for `rows` rows (else the caller
/// falls back to the Kronecker split). A row one block holds stays one block for the
/// FWHT even where it fills the block's shared memory (unlike the IQP phases, whose
/// rows of 2^M gain from two half-rows: iqp.cuh, cluster_parts): H200, 1 GiB, fraction
/// of the copy floor, one block vs cluster of 2 (2026-12-01): float n = 15 0.72 vs
/// 0.43, n = 14 0.83 vs 0.56; double n = 14 0.82 vs 0.73; complex64 n = 14 0.82 vs
/// 0.72; complex128 n = 13 0.78 vs 0.79.
template <class V>
inline bool fused_pays(int log_n, std::int64_t rows) {
  const int block = fused_max_log_n<V>();
  if (log_n <= block) return true;
  return log_n <= fused_cluster_max_log_n<V>() && cluster_pays(1 << (log_n - block), rows);
}

}  // namespace wham::detail::wht
