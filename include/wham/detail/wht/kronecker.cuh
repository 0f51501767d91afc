/// \file wham/detail/wht/kronecker.cuh
/// \brief The Kronecker-split schedule for rows too long for one block:
/// H_n = H_{bits of stage k} (x) ... (x) H_lo, one pass over memory per factor.
///
/// Stage 0 is the fused kernel (fused.cuh) over contiguous segments of 2^lo,
/// with the caller's input policy (loaded, or generated on chip as the IQP
/// phases are) addressed by the flat index sample * 2^n + x, written through the
/// caller's output policy with scale 1. Every later stage is a strided pass over
/// the output buffer in place (the buffer is the workspace: nothing is
/// allocated): a block loads a tile of 2^log_h rows x C adjacent columns with
/// coalesced loads (C contiguous elements per row: 128 bytes, 64 at 2^11 rows), transforms the
/// rows' direction on chip (register butterflies, shared-memory exchanges between
/// rounds), scales on the last stage and stores the tile back. The index
/// arithmetic lives in wham/reference/kronecker.hpp, which the CPU tests replay.
/// A stage wider than one block's tile runs as clusters of blocks that finish it
/// through distributed shared memory (strided_cluster_kernel); the plans take it
/// only where it saves a pass (strided_cluster_log_k). A 10-bit stage of float rows
/// streams its tiles instead (strided_streamed.cuh) where the device allows. Loaded
/// rows of 2^22..2^28 floats (2^21..2^27 8-byte elements, 2^20..2^26 complex<double>)
/// take the middle plan instead (kronecker_middle_serves): a gathered first pass, then
/// the strided stage over the middle bits.
///
/// Precision: the intermediate between stages is stored in the output's element
/// type, and the strided stages compute in it. With complex64 output from a
/// complex128 stage 0 this rounds once to float between stages (relative error
/// ~6e-8 per element, then sqrt(bits) * eps_float from the later sums: far inside
/// the complex64 tolerance of 1e-5).
///
/// L2 ordering: rows can be processed in chunks whose intermediate fits a share of
/// the L2 cache (all stages of one chunk, then the next), so that a later stage
/// reads what the previous one just wrote while it is still in L2. Measured on the
/// H200 it lost to one launch per stage over the whole batch (kronecker_config), so
/// it is off by default and kept as a knob for other devices and for the benchmark.
/// The resident schedule (launch_kronecker_resident, below) gets that L2 reuse without
/// launch boundaries for two-stage rows of 2^16 and 2^17: one cluster a row runs both
/// stages with a cluster barrier between them.
///
/// The output policy must expose the buffer as `out` (stored_output<Out, V>).
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/wht/cluster.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/detail/wht/fused.cuh>
#include <wham/detail/wht/streamed.cuh>
#include <wham/detail/wht/strided_streamed.cuh>
#include <wham/error.hpp>
#include <wham/reference/kronecker.hpp>

#include <cooperative_groups.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <type_traits>

namespace wham::detail::wht {

namespace kron = ::wham::reference::kronecker;

/// Tuning of the split, per device (H200 defaults; see launch_kronecker).
struct kronecker_config {
  /// Most row bits one strided stage takes (tile = 2^bits rows x 128 bytes of
  /// shared memory, 64 bytes at 11 bits: 128 KiB at 10 and 11). 0: the largest the device's shared memory holds.
  int max_strided_bits = 0;
  /// Bytes of intermediate per chunk of rows (all stages of a chunk run before the
  /// next chunk, so that a stage reads its predecessor's output from L2).
  /// <= 0: no chunking, the default: on the H200 every chunk size tried was slower
  /// than none (1 GiB of rows, ms: float n = 16: none 1.33, 30 MiB 1.65, 20 MiB 2.01,
  /// 10 MiB 2.27; complex<double> n = 20 (16 MiB rows): none 1.22, one row per
  /// chunk 1.59): small launches lose more to partial last waves than L2 saves.
  std::int64_t chunk_bytes = 0;
  /// Stage-0 bits (0: kronecker_preferred_lo, moved as the stage count requires).
  int lo_bits = 0;
  /// Strided stages wider than max_strided_bits as clusters of blocks
  /// (strided_cluster_kernel, devices with clusters): 0: where that saves a whole
  /// pass over memory, for elements of at most 8 bytes (strided_cluster_log_k has the
  /// measurements); 1: whenever a stage is wider; -1: never.
  int clusters = 0;
  /// log2 of the largest cluster a strided stage may use, 1..strided_cluster_max_log_k
  /// (0: strided_cluster_log_k).
  int cluster_log_k = 0;
  /// Run the middle plan (kronecker_middle_serves must hold) instead of the stages
  /// above; launch_kronecker sets it wherever the plan serves.
  bool middle = false;
};

/// Policies shifted by a flat offset (one chunk of rows at a time).
template <class Input>
struct offset_input {
  Input inner;
  std::int64_t offset;
  template <int E, class V>
  __device__ __forceinline__ void load(std::int64_t g0, V (&v)[E]) const {
    inner.template load<E>(g0 + offset, v);
  }
  // Warp tables (fused.cuh's has_warp_tables), forwarded when the inner policy makes them.
  static constexpr bool warp_tables = has_warp_tables_v<Input>;
  template <int E>
  std::size_t table_bytes(std::int64_t elements) const {
    return inner.template table_bytes<E>(elements);
  }
  template <int E>
  __host__ __device__ std::size_t warp_table_bytes() const {
    return inner.template warp_table_bytes<E>();
  }
  template <int E>
  __device__ __forceinline__ void prepare(unsigned char* warp_table, std::int64_t g0) const {
    inner.template prepare<E>(warp_table, g0 + offset);
  }
  template <int E, class V>
  __device__ __forceinline__ void load(std::int64_t g0, V (&v)[E],
                                       unsigned char* warp_table) const {
    inner.template load<E>(g0 + offset, v, warp_table);
  }
  template <int E, class V>
  __device__ __forceinline__ void load_product(std::int64_t g0, V (&v)[E],
                                               unsigned char* warp_table) const {
    inner.template load_product<E>(g0 + offset, v, warp_table);
  }
};
template <class Output>
struct offset_output {
  Output inner;
  std::int64_t offset;
  template <int E, class V, class R>
  __device__ __forceinline__ void store(std::int64_t g0, const V (&v)[E], R scale) const {
    inner.template store<E>(g0 + offset, v, scale);
  }
};

/// One strided stage over row bits [bit, bit + LogH) of the flat index, in place.
template <class T, int LogH>
struct strided_kernel_shape {
  static constexpr kron::strided_shape_t s = kron::strided_shape(LogH, int(sizeof(T)));
  static constexpr int log_e = s.log_e;
  static constexpr int log_c = s.log_c;
  static constexpr int threads = s.threads;
  static constexpr int E = 1 << log_e;
  static constexpr int C = 1 << log_c;
  static constexpr int P = threads / C;  // threads per column
  static constexpr std::size_t tile_elems = std::size_t(1) << (LogH + log_c);
  static constexpr std::size_t smem_bytes = LogH > log_e ? tile_elems * sizeof(T) : 0;
};

/// Round over row bits [B, Top) (Top - B <= log_e) from shared memory; the last
/// round (B == 0) stores to global memory with the scale, or, ToShared, leaves the
/// result in the tile (unscaled) for the cluster stage.
template <class T, int LogH, int Top, int E, bool ToShared = false>
__device__ __forceinline__ void strided_rounds(T* tile, int c, int p, T (&v)[E], T* gbase,
                                               std::int64_t stride, real_t<T> scale) {
  using shape = strided_kernel_shape<T, LogH>;
  constexpr int C = shape::C;
  constexpr int P = shape::P;
  constexpr int B = Top - shape::log_e > 0 ? Top - shape::log_e : 0;
  constexpr int G = Top - B;
  constexpr int R = E >> G;
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int g = 0; g < (1 << G); ++g)
      v[r * (1 << G) + g] = tile[kron::round_row(B, G, unsigned(r * P + p), unsigned(g)) * C + c];
  register_butterflies<G>(v);
  if constexpr (B > 0 || ToShared) {
    // Each thread writes back the elements it read: no barrier before the writes.
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int g = 0; g < (1 << G); ++g)
        tile[kron::round_row(B, G, unsigned(r * P + p), unsigned(g)) * C + c] = v[r * (1 << G) + g];
    if constexpr (B > 0) {
      __syncthreads();
      strided_rounds<T, LogH, B, E, ToShared>(tile, c, p, v, gbase, stride, scale);
    }
  } else {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int g = 0; g < (1 << G); ++g) {
        const unsigned h = kron::round_row(0, G, unsigned(r * P + p), unsigned(g));
        gbase[std::int64_t(h) * stride] = v[r * (1 << G) + g] * scale;
      }
  }
}

/// One tile of a strided stage by the block's first strided_kernel_shape::threads
/// threads (`smem_raw`: its smem_bytes of shared memory), the tile whose row 0,
/// column 0 is `base` (rows `stride` elements apart). ToShared: the result stays in
/// shared memory, row-major (row * C + column), unscaled.
template <class T, int LogH, bool ToShared = false>
__device__ __forceinline__ void strided_tile_at(T* base, std::int64_t stride, real_t<T> scale,
                                                unsigned char* smem_raw) {
  using shape = strided_kernel_shape<T, LogH>;
  constexpr int E = shape::E;
  constexpr int C = shape::C;
  constexpr int B0 = LogH - shape::log_e;  // round 0: the top log_e row bits, from global
  static_assert(!ToShared || B0 > 0, "a tile left in shared memory spans several rounds");
  const int c = static_cast<int>(threadIdx.x) % C;
  const int p = static_cast<int>(threadIdx.x) / C;
  T* gbase = base + c;

  T v[E];
#pragma unroll
  for (int j = 0; j < E; ++j) v[j] = gbase[std::int64_t(p | (j << B0)) * stride];
  register_butterflies<shape::log_e>(v);
  if constexpr (B0 > 0) {
    T* tile = reinterpret_cast<T*>(smem_raw);
#pragma unroll
    for (int j = 0; j < E; ++j) tile[(p | (j << B0)) * C + c] = v[j];
    __syncthreads();
    strided_rounds<T, LogH, B0, E, ToShared>(tile, c, p, v, gbase, stride, scale);
  } else {
#pragma unroll
    for (int j = 0; j < E; ++j) gbase[std::int64_t(j) * stride] = v[j] * scale;
  }
}

/// Tile `tile_index` of the stage over row bits [bit, bit + LogH): the body of
/// strided_kernel, and of kernels that run several tiles in turn.
template <class T, int LogH>
__device__ __forceinline__ void strided_tile(T* data, int bit, real_t<T> scale,
                                             std::int64_t tile_index, unsigned char* smem_raw) {
  using shape = strided_kernel_shape<T, LogH>;
  strided_tile_at<T, LogH>(data + kron::tile_base(bit, LogH, shape::log_c, tile_index),
                           std::int64_t(1) << bit, scale, smem_raw);
}

template <class T, int LogH>
__global__ void __launch_bounds__(strided_kernel_shape<T, LogH>::threads)
    strided_kernel(T* data, int bit, real_t<T> scale) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  strided_tile<T, LogH>(data, bit, scale, std::int64_t(blockIdx.x), smem_raw);
}

/// Most row bits a strided stage takes on this device: the largest log_h whose
/// tile (kron::strided_shape, for the widest element) fits the shared memory a
/// block may opt in to; at least 8 (a 32 KiB tile), at most 11.
inline int strided_max_bits() {
  const std::size_t smem = current_device_limits().smem_per_block_optin;
  int bits = 8;
  while (bits < 11) {
    const auto s = kron::strided_shape(bits + 1, 16);
    if ((std::size_t(16) << (bits + 1 + s.log_c)) > smem) break;
    ++bits;
  }
  return bits;
}

template <class T, int LogH>
inline void launch_strided_n(T* data, std::int64_t total, int bit, real_t<T> scale,
                             cudaStream_t stream) {
  using shape = strided_kernel_shape<T, LogH>;
  const std::int64_t tiles = total / std::int64_t(shape::tile_elems);
  if (tiles > 0x7fffffff) {
    throw_invalid_argument("kronecker path", "number of tiles", tiles, "at most 2^31 - 1");
  }
  auto kernel = strided_kernel<T, LogH>;
  ensure_dynamic_smem(kernel, shape::smem_bytes);
  kernel<<<static_cast<unsigned>(tiles), shape::threads, shape::smem_bytes, stream>>>(data, bit,
                                                                                      scale);
  WHAM_CHECK_LAUNCH("wham::detail::wht::strided_kernel");
}

template <class T>
inline void launch_strided(int log_h, T* data, std::int64_t total, int bit, real_t<T> scale,
                           cudaStream_t stream) {
  switch (log_h) {
#define WHAM_STRIDED_CASE(L) \
  case L: return launch_strided_n<T, L>(data, total, bit, scale, stream);
    WHAM_STRIDED_CASE(1)
    WHAM_STRIDED_CASE(2)
    WHAM_STRIDED_CASE(3)
    WHAM_STRIDED_CASE(4)
    WHAM_STRIDED_CASE(5)
    WHAM_STRIDED_CASE(6)
    WHAM_STRIDED_CASE(7)
    WHAM_STRIDED_CASE(8)
    WHAM_STRIDED_CASE(9)
    WHAM_STRIDED_CASE(10)
    WHAM_STRIDED_CASE(11)
#undef WHAM_STRIDED_CASE
    default:
      throw_invalid_argument("kronecker path", "strided stage bits", log_h, "1..11");
  }
}

// ---- strided stages beyond one block's tile (sm_90 and later) -------------------
// A stage of LogH + LogK row bits as clusters of K = 2^LogK blocks. Block r of a cluster
// holds the rows whose top LogK bits are r: a tile of the one-block stage's shape
// (2^LogH rows x 128 contiguous bytes), transformed over its low LogH bits into its
// shared memory. After a cluster barrier, block r takes its K-th share of the tile's
// (row, column) places, reads each place from the K blocks (distributed shared
// memory), applies the K-point transform in registers and stores the K results. Rows
// stay 128 bytes wide however many bits the stage takes (the one-block stage narrows
// them to 64 bytes at 11 bits and cannot take 12), so long rows need no third pass.

/// Clusters of up to 8 blocks are portable; 16 needs the non-portable opt-in.
inline constexpr int strided_cluster_max_log_k = 4;
/// Tuning (H200, 2026-12-02, an A/B probe of whole plans, fraction of a plain copy of
/// 1 GiB of FWHT rows; plan bits in brackets). Blocks of 2^9 rows (64 KiB, two
/// blocks an SM) against 2^10 (128 KiB, one): float n = 24 (12+12) 0.41 vs 0.38,
/// n = 27 (14+13) 0.36 vs 0.34. The clustered stage runs at about 0.75-0.8 of a copy,
/// the one-block stage of <= 11 bits at about 0.9 (its two cluster barriers leave an
/// SM idle while the cluster's slowest block catches up), so clusters pay only where
/// they replace three passes by two: float n = 27 0.36 (14+13) vs 0.32 (12+8+7);
/// double / complex64 n = 26 0.35-0.36 (13+13, 14+12) vs 0.34 (12+7+7); float n = 28
/// 0.33 (15+13) vs 0.32. Where both plans take two passes they lose or tie: float
/// n = 24 0.41 (12+12) vs 0.41 (13+11), n = 25 0.39 (12+13) vs 0.41 (14+11), n = 26
/// 0.36-0.38 vs 0.37 (15+11); double / complex64 n = 24 0.40 vs 0.45 (13+11); and at 16
/// bytes they lose even when they save a pass (complex128 n = 26: 0.31, 13+13 with
/// blocks of 2^10, vs 0.34, 12+7+7; IQP complex128 n = 26 0.146 vs 0.154 of the write
/// floor). The tree as kept (blocks of 2^9, up to 16 a cluster, clusters where they save
/// a pass at <= 8 bytes), same probe, plans with clusters vs without: float n = 27 0.358
/// vs 0.324, n = 28 0.323 vs 0.319; double n = 26 0.353 vs 0.337, n = 27 0.331 vs 0.334
/// (the only loss kept: within the probe's noise of a few thousandths). The IQP phases
/// keep one-block stages (iqp.cuh, kronecker_tuning).
inline constexpr int strided_cluster_part_bits = 9;
inline constexpr int strided_cluster_log_k = 4;
/// Blocks an SM the clustered stage's registers must allow: two 64-KiB parts share an
/// SM. Without the bound complex<float> parts took 72 registers, one block an SM and 7
/// clusters of 16 at a time (H200, 2026-12-03, 13-bit stage over 1 GiB: 0.35 of a copy,
/// double 0.52 at 64 registers and 14 clusters).
inline constexpr int strided_cluster_min_blocks = 2;

template <class T, int LogH, int LogK>
__global__ void __launch_bounds__(strided_kernel_shape<T, LogH>::threads, strided_cluster_min_blocks)
    strided_cluster_kernel(T* data, int bit, real_t<T> scale) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using shape = strided_kernel_shape<T, LogH>;
  constexpr int K = 1 << LogK;
  constexpr int C = shape::C;
  constexpr int threads = shape::threads;
  constexpr int share = ((1 << LogH) * C) / K;  // (row, column) places a block combines
  static_assert(share % threads == 0, "every thread combines the same number of places");
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const unsigned rank = cluster.block_rank();
  const std::int64_t stride = std::int64_t(1) << bit;
  T* const base =
      data + kron::tile_base(bit, LogH + LogK, shape::log_c, std::int64_t(blockIdx.x) >> LogK);
  strided_tile_at<T, LogH, true>(base + (std::int64_t(rank) << LogH) * stride, stride,
                                 real_t<T>(1), smem_raw);
  cluster.sync();  // release / acquire: every block's tile is complete and visible

  T* const tile = reinterpret_cast<T*>(smem_raw);
  const T* parts[K];
#pragma unroll
  for (int j = 0; j < K; ++j) parts[j] = cluster.map_shared_rank(tile, j);
  const unsigned t = threadIdx.x;
#pragma unroll
  for (int k = 0; k < share / threads; ++k) {
    const unsigned place = rank * unsigned(share) + unsigned(k * threads) + t;
    T a[K];
#pragma unroll
    for (int j = 0; j < K; ++j) a[j] = parts[j][place];
    register_butterflies<LogK>(a);
    T* const g = base + std::int64_t(place / C) * stride + (place % C);
#pragma unroll
    for (int j = 0; j < K; ++j) g[(std::int64_t(j) << LogH) * stride] = a[j] * scale;
  }
  cluster.sync();  // no tile may go while another block still reads it
#endif
}

/// Sets up a clustered stage's kernel once per device (its shared memory and, for 16
/// blocks, the non-portable cluster size: function attributes, so legal during stream
/// capture) and returns whether the device can hold one of its clusters at all
/// (cudaOccupancyMaxActiveClusters: clusters of 16 are not promised on every sm_90 part).
template <class T, int LogH, int LogK>
inline bool prepare_strided_cluster() {
  using shape = strided_kernel_shape<T, LogH>;
  constexpr int K = 1 << LogK;
  static std::array<bool, 64> runs{};
  static std::array<std::once_flag, 64> once{};
  const int dev = current_device_limits().device;
  std::call_once(once[dev], [dev] {
    auto kernel = strided_cluster_kernel<T, LogH, LogK>;
    ensure_dynamic_smem(kernel, shape::smem_bytes);
    if constexpr (K > 8) {
      WHAM_CUDA_TRY(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    }
    cudaLaunchAttribute attribute;
    const cudaLaunchConfig_t config =
        cluster_config(K, shape::threads, K, shape::smem_bytes, nullptr, attribute);
    int clusters = 0;
    WHAM_CUDA_TRY(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    runs[dev] = clusters > 0;
  });
  return runs[dev];
}

template <class T, int LogH, int LogK>
inline void launch_strided_cluster_n(T* data, std::int64_t total, int bit, real_t<T> scale,
                                     cudaStream_t stream) {
  using shape = strided_kernel_shape<T, LogH>;
  constexpr int K = 1 << LogK;
  if (!clusters_supported()) {
    throw error("wham: clustered strided stages need thread block clusters "
                "(compute capability 9.0 or later, code compiled for it)");
  }
  if (!prepare_strided_cluster<T, LogH, LogK>()) {
    throw error("wham: this device cannot run clusters of " + std::to_string(K) +
                " blocks of the strided stage (kronecker_config::cluster_log_k)");
  }
  const std::int64_t blocks = (total >> LogK) / std::int64_t(shape::tile_elems) * K;
  if (blocks > 0x7fffffff) {
    throw_invalid_argument("kronecker path", "blocks of a clustered strided stage", blocks,
                           "at most 2^31 - 1");
  }
  launch_clusters(strided_cluster_kernel<T, LogH, LogK>, blocks, shape::threads, K,
                  shape::smem_bytes, stream, data, bit, scale);
}

/// A strided stage of `log_h` bits as clusters of 2^(log_h - PartBits) blocks of
/// 2^PartBits rows (1 <= log_h - PartBits <= strided_cluster_max_log_k).
template <class T, int PartBits>
inline void launch_strided_cluster(int log_h, T* data, std::int64_t total, int bit,
                                   real_t<T> scale, cudaStream_t stream) {
  switch (log_h - PartBits) {
    case 1: return launch_strided_cluster_n<T, PartBits, 1>(data, total, bit, scale, stream);
    case 2: return launch_strided_cluster_n<T, PartBits, 2>(data, total, bit, scale, stream);
    case 3: return launch_strided_cluster_n<T, PartBits, 3>(data, total, bit, scale, stream);
    case 4: return launch_strided_cluster_n<T, PartBits, 4>(data, total, bit, scale, stream);
    default:
      throw_invalid_argument("kronecker path", "clustered strided stage bits", log_h,
                             std::to_string(PartBits + 1) + ".." +
                                 std::to_string(PartBits + strided_cluster_max_log_k));
  }
}

/// Largest stage-0 segment compiled per element size: what 227 KiB of shared
/// memory holds (2^13 complex<double>, 2^14 of 8-byte types, 2^15 float), so
/// that no kernel is instantiated that no device could launch.
template <class V>
inline constexpr int kronecker_stage0_compiled_max = sizeof(V) >= 16 ? 13 : sizeof(V) >= 8 ? 14 : 15;

/// Stage 0: the fused kernel over segments of 2^lo, 10 <= lo <= the compiled
/// maximum (the only segment lengths the split uses, so only these are instantiated).
template <class V, class Input, class Output>
inline void launch_kronecker_stage0(int lo, std::int64_t segments, Input input, Output output,
                                    cudaStream_t stream) {
  // Loaded rows of V (the FWHT's stage 0; a chunk's offset on both sides): the
  // streamed schedule where it serves.
  if constexpr (std::is_same_v<Input, offset_input<loaded_input<V, V>>> &&
                std::is_same_v<Output, offset_output<stored_output<V, V>>>) {
    const V* in = input.inner.in + input.offset;
    if (input.offset == output.offset && streamed_serves<V>(lo, in)) {
      return launch_streamed<V>(lo, in, output.inner.out + output.offset, segments, real_t<V>(1),
                                stream);
    }
  }
  switch (lo) {
#define WHAM_STAGE0_CASE(L)                                                          \
  case L:                                                                            \
    if constexpr (L <= kronecker_stage0_compiled_max<V>) {                           \
      return launch_fused_n<V, L>(input, output, segments, real_t<V>(1), stream);    \
    }                                                                                \
    break;
    WHAM_STAGE0_CASE(10)
    WHAM_STAGE0_CASE(11)
    WHAM_STAGE0_CASE(12)
    WHAM_STAGE0_CASE(13)
    WHAM_STAGE0_CASE(14)
    WHAM_STAGE0_CASE(15)
#undef WHAM_STAGE0_CASE
    default:
      break;
  }
  throw_invalid_argument("kronecker path", "stage-one bits", lo,
                         "10.." + std::to_string(kronecker_stage0_compiled_max<V>));
}

/// Stage-0 bits for loaded float rows whose stage 0 streams (streamed.cuh), 0 for the
/// default (kronecker_preferred_lo). The streamed schedule runs 2^14 and 2^15 closer
/// to a copy than the fused kernel runs 2^12, and a longer stage 0 leaves a narrower
/// strided stage. H200, 2026-12-03, float, 1 GiB of rows, fraction of a copy
/// (cudaMemcpy), default plan vs this one: n = 22 12+10 0.42 vs 14+8 0.46; n = 23 12+11
/// 0.42 vs 14+9 0.46 (15+8 0.45); n = 24 13+11 0.38 vs 15+9 0.44 (14+10 0.42). At
/// n = 16-21 and 27 the two tie within 0.01; n = 26 and 28 take 15 bits anyway. n = 25,
/// once 2^15 streamed faster (2026-12-03, three runs): 14+11 0.401-0.403 vs 15+10
/// 0.418-0.421 (the 10-bit strided stage keeps 128-byte tile rows, the 11-bit one 64).
template <class V>
inline int kronecker_streamed_lo(int log_n, const void* in) {
  if (!std::is_same_v<V, float> || log_n < 22 || log_n > 25) return 0;
  const int lo = log_n <= 23 ? 14 : 15;
  return streamed_serves<V>(lo, in) ? lo : 0;
}

/// Smallest row the split serves: stage 0 takes at least 10 bits, a strided stage at least 1.
inline constexpr int kronecker_min_log_n = 11;

/// Preferred stage-0 segment: the fused kernel runs closest to a copy at 2^12
/// (H200, 1 GiB of rows, fraction of a copy: float 0.93 at n = 12 against 0.71 at
/// 15; complex<double> 0.95 at 12 against 0.73 at 13), so stage 0 takes 12 bits
/// unless fewer strided stages need more.
inline constexpr int kronecker_preferred_lo = 12;

/// What a strided stage may take under `cfg` on this device: at most single_max bits
/// in one block, and (cluster_max > 0) up to cluster_max bits as clusters of blocks of
/// 2^strided_cluster_part_bits rows.
struct strided_limits {
  int single_max = 0;
  int cluster_max = 0;  ///< 0: no clustered stages
};
template <class T>
inline strided_limits strided_stage_limits(const kronecker_config& cfg) {
  strided_limits lim;
  const int dev_max = strided_max_bits();
  lim.single_max = cfg.max_strided_bits > 0 ? std::min(cfg.max_strided_bits, dev_max) : dev_max;
  int log_k = std::min(cfg.cluster_log_k > 0 ? cfg.cluster_log_k : strided_cluster_log_k,
                       strided_cluster_max_log_k);
  const bool fits = (std::size_t(128) << strided_cluster_part_bits) <=
                    current_device_limits().smem_per_block_optin;
  if (cfg.clusters >= 0 && fits && clusters_supported()) {
    // 16 blocks only where the device can hold such a cluster (else 8, portable).
    if (log_k == 4 && !prepare_strided_cluster<T, strided_cluster_part_bits, 4>()) log_k = 3;
    lim.cluster_max = strided_cluster_part_bits + log_k;
  }
  return lim;
}

/// Whether a strided stage of `bits` runs as clusters under `lim`.
inline bool strided_stage_clustered(int bits, const strided_limits& lim) {
  return lim.cluster_max > 0 && bits > lim.single_max && bits > strided_cluster_part_bits;
}

/// The plan launch_kronecker runs for rows of 2^log_n elements (stage 0 computed in V):
/// the fewest strided stages of at most hi_max bits after a stage 0 of at most
/// the fused maximum, stage 0 as close to kronecker_preferred_lo as that allows;
/// hi_max is one block's limit, or the clusters' where cfg.clusters asks for them.
template <class V>
inline kron::plan kronecker_plan(int log_n, const kronecker_config& cfg,
                                 const strided_limits& lim) {
  const int lo_max = std::min(fused_max_log_n<V>(), kronecker_stage0_compiled_max<V>);
  const auto plan_for = [&](int hi_max) {
    const int strided = log_n > lo_max ? (log_n - lo_max + hi_max - 1) / hi_max : 1;
    const int pref = cfg.lo_bits > 0 ? cfg.lo_bits : kronecker_preferred_lo;
    int lo = std::max(std::min(pref, log_n - 1), log_n - hi_max * strided);
    lo = std::min(std::max(lo, 10), lo_max);
    return kron::make_plan(log_n, lo, hi_max);
  };
  const kron::plan one_block = plan_for(lim.single_max);
  if (lim.cluster_max <= lim.single_max) return one_block;
  const kron::plan wide = plan_for(lim.cluster_max);
  if (cfg.clusters > 0) return wide;
  return sizeof(V) <= 8 && wide.num_stages < one_block.num_stages ? wide : one_block;
}

/// The same, under this device's limits for cfg.
template <class V>
inline kron::plan kronecker_plan(int log_n, const kronecker_config& cfg = {}) {
  return kronecker_plan<V>(log_n, cfg, strided_stage_limits<V>(cfg));
}

/// Whether launch_kronecker serves rows of 2^log_n elements of V on this device.
template <class V>
inline bool kronecker_serves(int log_n) {
  return log_n >= kronecker_min_log_n && log_n <= 30 && fused_max_log_n<V>() >= 10;
}

/// The middle plan for loaded rows of 2^n (float 22 <= n <= 28, double and
/// complex<float> 21 <= n <= 27, complex<double> 20 <= n <= 26), two passes: the streamed
/// schedule over gathered rows of 2^S (S = streamed_log_n_max: 15 for float, 14 for
/// 8-byte elements, 13 for complex<double>), flat-index bits [0, 10) and
/// [n - S + 10, n), runs of 2^10 elements (streamed_gathered_rows); then the strided
/// stage over the middle bits [10, n - S + 10), whose tile rows lie 2^10 elements apart:
/// one block a tile up to 11 middle bits (64-byte tile rows at 11), clusters of 8 or 16
/// blocks of 2^9 rows x 128 bytes at 12 and 13 (launch_strided_stage). The default plan
/// (stage 0 over bits [0, S), then bits [S, n)) strides its tile rows 2^S apart, where the
/// float streamed 10-bit stage runs at 0.85 of a copy against 0.91 at 2^10
/// (strided_streamed.cuh) and the 8-byte one-block stage at 0.85-0.86 against 0.91 (2^14
/// against 2^12); beyond 10 middle bits it takes a narrower stage 0 or a third pass.
/// H200, 2026-12-04, 1 GiB of rows, fraction of a cudaMemcpy, three rounds in one
/// process, default plan -> middle plan: float n = 23 0.451-0.452 -> 0.468-0.470, 24
/// 0.451-0.452 -> 0.467, 25 0.437-0.439 -> 0.452-0.453; double n = 22 0.449-0.451 ->
/// 0.466-0.468, 23 0.417-0.420 -> 0.465-0.467, 24 0.424-0.425 -> 0.459-0.460;
/// complex<float> n = 22 0.446 -> 0.464-0.466, 23 0.414 -> 0.464, 24 0.419-0.420 ->
/// 0.454-0.456; with 7 middle bits (a later probe, same measure): float n = 22
/// 0.459-0.461 -> 0.471-0.472, double n = 21 0.457 -> 0.472-0.474, complex<float> n = 21
/// 0.455 -> 0.475-0.476; complex<double> (after its streamed rows of 2^13) n = 20
/// 0.465-0.467 -> 0.472-0.474, 21 0.453 -> 0.472-0.473, 22 0.444 -> 0.466-0.467, 23
/// 0.409-0.411 -> 0.454-0.455, bitwise equal. 11-13 middle bits (a later probe, two rounds,
/// the library's plan in brackets; one block / clusters of 2^9-row / of 2^10-row blocks):
/// float n = 26 (15+11) 0.406-0.408 / 0.410-0.412 / 0.346 (0.399), n = 27 - / 0.394 /
/// 0.327 (0.356, 14+13), n = 28 - / 0.364-0.365 / 0.313 (0.346, 15+13); double n = 25
/// 0.425-0.426 / 0.389-0.390 / 0.322-0.324 (0.411, 14+11), n = 26 - / 0.370-0.371 / 0.294
/// (0.332, 13+13), n = 27 - / 0.333-0.336 / 0.291 (0.333, 14+13); complex<double> n = 24
/// 0.422 / 0.404-0.406 / 0.292 (0.412, 13+11), n = 25 - / 0.391-0.393 / 0.274 (0.313,
/// 12+7+6), n = 26 - / 0.322-0.323 / 0.260 (0.313, 12+7+7). The same clustered stages
/// after the contiguous stage 0 (rows 2^S apart) ran 0.01-0.03 lower.
/// The gathered stage alone: 0.89-0.92 (the contiguous streamed rows: 0.90-0.92). With
/// its shifts as kernel arguments, or with 64-bit offsets for complex<float>, the
/// gathered kernel spilled and ran at 0.82-0.85.
/// launch_kronecker takes the plan wherever it serves (under cfg's limits on the
/// strided stage: without clusters, at most 11 middle bits).
template <class V>
inline bool kronecker_middle_serves(int log_n, const void* in, const void* out,
                                    const kronecker_config& cfg = {}) {
  constexpr int S = streamed_log_n_max<V>;
  if constexpr (S == 0) {
    return false;
  } else {
    const int mid = log_n - S;
    if (mid < streamed_gathered_mid_min || mid > streamed_gathered_mid_max) return false;
    if (reinterpret_cast<std::uintptr_t>(out) % 16 != 0) return false;
    if (!streamed_serves<V>(S, in)) return false;
    // The middle stage: one block a tile, or clusters (launch_strided_stage) under cfg.
    const strided_limits lim = strided_stage_limits<V>(cfg);
    return mid <= std::max(lim.single_max, lim.cluster_max);
  }
}

/// One strided stage over row bits [bit, bit + bits) of `total` elements at `data`, in
/// place, scaled: as clusters where the limits say so, streamed where that serves
/// (float, 10 bits), else one block a tile.
template <class T>
inline void launch_strided_stage(int bits, T* data, std::int64_t total, int bit, real_t<T> scale,
                                 const strided_limits& lim, cudaStream_t stream) {
  if (strided_stage_clustered(bits, lim)) {
    return launch_strided_cluster<T, strided_cluster_part_bits>(bits, data, total, bit, scale,
                                                                stream);
  }
  if constexpr (std::is_same_v<T, float>) {
    if (strided_streamed_serves<T>(bits, data)) {
      return launch_strided_streamed(data, total, bit, scale, stream);
    }
  }
  launch_strided<T>(bits, data, total, bit, scale, stream);
}

/// Transforms `batch` rows of 2^log_n elements (kronecker_min_log_n <= log_n <= 30):
/// input from the policy (loaded or generated; see fused.cuh for the policy
/// interface), result times `scale` written through `output`, whose buffer
/// (`output.out`) is also the workspace (no allocation).
template <class V, class Input, class Output>
inline void launch_kronecker_config(int log_n, std::int64_t batch, Input input, Output output,
                                    real_t<V> scale, cudaStream_t stream,
                                    const kronecker_config& cfg) {
  using Out = std::remove_cv_t<std::remove_pointer_t<decltype(output.out)>>;
  if (!kronecker_serves<V>(log_n)) {
    throw_invalid_argument("kronecker path", "log_n", log_n,
                           std::to_string(kronecker_min_log_n) + "..30");
  }
  check_range("kronecker path", "batch", batch, 1, INT64_MAX >> log_n);
  const strided_limits lim = strided_stage_limits<V>(cfg);
  const kron::plan plan = kronecker_plan<V>(log_n, cfg, lim);

  const std::int64_t row = std::int64_t(1) << log_n;
  const std::int64_t row_bytes = row * std::int64_t(sizeof(Out));
  const std::int64_t budget = cfg.chunk_bytes;
  std::int64_t rows_per_chunk = batch;
  if (budget > 0 && row_bytes <= budget) rows_per_chunk = std::max<std::int64_t>(1, budget / row_bytes);

  // The middle plan: loaded rows of an element type with a streamed schedule.
  constexpr bool middle_built = streamed_log_n_max<V> > 0 &&
                                std::is_same_v<Input, loaded_input<V, V>> &&
                                std::is_same_v<Output, stored_output<V, V>>;
  bool middle = false;
  if constexpr (middle_built) {
    middle = cfg.middle && kronecker_middle_serves<V>(log_n, input.in, output.out, cfg);
  }

  using RO = real_t<Out>;
  const RO out_scale = static_cast<RO>(scale);
  for (std::int64_t r0 = 0; r0 < batch; r0 += rows_per_chunk) {
    const std::int64_t rows = std::min(rows_per_chunk, batch - r0);
    const std::int64_t offset = r0 * row;
    const std::int64_t total = rows * row;
    if constexpr (middle_built) {
      if (middle) {
        constexpr int lo_run = 10;  // streamed_gathered_rows::log_run
        V* const data = output.out + offset;
        launch_streamed_gathered<V>(log_n, input.in + offset, data, rows, real_t<V>(1), stream);
        launch_strided_stage<V>(log_n - streamed_log_n_max<V>, data, total, lo_run, out_scale, lim,
                                stream);
        continue;
      }
    }
    launch_kronecker_stage0<V>(plan.stages[0].bits, total >> plan.stages[0].bits,
                               offset_input<Input>{input, offset},
                               offset_output<Output>{output, offset}, stream);
    for (int k = 1; k < plan.num_stages; ++k) {
      const RO s = k + 1 == plan.num_stages ? out_scale : RO(1);
      launch_strided_stage<Out>(plan.stages[k].bits, output.out + offset, total, plan.stages[k].bit,
                                s, lim, stream);
    }
  }
}

/// Transforms `batch` rows of 2^log_n elements: input from the policy (loaded or
/// generated; see fused.cuh for the policy interface), result written through
/// `output`, which is also the workspace (no allocation).
template <class V, class Input, class Output>
inline void launch_kronecker(int log_n, std::int64_t batch, Input input, Output output,
                             real_t<V> scale, cudaStream_t stream) {
  kronecker_config cfg;
  if constexpr (std::is_same_v<Input, loaded_input<V, V>>) {
    cfg.middle = kronecker_middle_serves<V>(log_n, input.in, output.out);
    if (!cfg.middle) cfg.lo_bits = kronecker_streamed_lo<V>(log_n, input.in);
  }
  launch_kronecker_config<V>(log_n, batch, input, output, scale, stream, cfg);
}

// ---- the resident schedule (sm_90 and later) ---------------------------------
// Two stages in one kernel: a cluster of K blocks per row runs stage 0 over the row's
// segments, waits at a cluster barrier, then runs the strided stage over the row's
// tiles, so that the second stage reads what the first wrote a few microseconds before,
// from L2, and the launch boundary between the stages (the last wave of one, the first
// of the next) disappears. Both stages run in blocks of resident_threads threads, so
// only (Lo, Hi) pairs whose two shapes have that many threads are compiled.
//
// What it buys is modest, because DRAM traffic is not what bounds the split: ncu
// (H200, complex128 n = 16, 512 MiB, clocks as ncu sets them) counts 1.56 GB of DRAM
// traffic for the two launches (312 + 256 us) and 0.67 GB for the resident kernel (504
// us). Stage 0 is bound by its own instructions (120 an amplitude, issue slots 51%
// busy, 25% occupancy: 120 registers), stage 1 by the latency of its L2 reads.
// H200, 2026-12-02, IQP, Lo = 12, back to back, fraction of the write floor, two
// launches vs resident K = 8 (K = 16): complex128 n = 16 512 MiB 0.24 vs 0.30 (0.27),
// batch 64 73 vs 62.5 us (64.7); n = 17 512 MiB 0.24 vs 0.26 (0.25), batch 64 136 vs
// 138 us (133); complex64 n = 17 512 MiB 0.23 vs 0.28 (0.25), batch 64 74 vs 68 us
// (71); n = 18 512 MiB 0.23 vs 0.25 (0.25), batch 64 136 vs 146 us (128). It loses at
// small batch (complex128 n = 16, batch 1: 11.1 vs 16.6 us; batch 8: 12.9 vs 17.1),
// where K blocks a row leave most SMs idle. Whole rows on chip (clusters of 8 or 16
// blocks exchanging through distributed shared memory) did no better at n = 16
// (complex128: 0.21-0.23 of the write floor at 512 MiB).

inline constexpr int resident_threads = 256;

/// Whether stage 0 over segments of 2^Lo (computed in V, from an input with warp tables:
/// the IQP phases, the only input the schedule serves) and a strided stage of Hi bits
/// over Out share the resident block shape.
template <class V, class Out, int Lo, int Hi>
inline constexpr bool resident_shapes_match =
    fused_shape<V, Lo, true>::threads == resident_threads &&
    strided_kernel_shape<Out, Hi>::threads == resident_threads;

template <class V, int Lo, int Hi, int K, class Input, class Output>
__global__ void __launch_bounds__(resident_threads, 2)
    kronecker_resident_kernel(Input input, Output output, real_t<V> scale,
                              unsigned tables_offset, std::int64_t rows) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Out = std::remove_cv_t<std::remove_pointer_t<decltype(output.out)>>;
  using stage0 = fused_shape_for<V, Lo, Input>;
  using stage1 = strided_kernel_shape<Out, Hi>;
  static_assert(resident_shapes_match<V, Out, Lo, Hi>, "one block shape for both stages");
  constexpr std::int64_t stage0_blocks = (std::int64_t(1) << Hi) / stage0::segments_per_block;
  constexpr std::int64_t tiles = (std::int64_t(1) << (Lo + Hi)) / std::int64_t(stage1::tile_elems);
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int rank = static_cast<int>(cluster.block_rank());
  const std::int64_t row = std::int64_t(blockIdx.x) / K;
  for (std::int64_t b = rank; b < stage0_blocks; b += K) {
    fused_block<V, Lo>(input, output, row * stage0_blocks + b, rows << Hi, real_t<V>(1),
                       tables_offset, smem_raw);
    __syncthreads();  // the next segment reuses the shared memory
  }
  // Release / acquire at cluster scope: the row's stage-0 stores are visible below.
  cluster.sync();
  for (std::int64_t t = rank; t < tiles; t += K) {
    strided_tile<Out, Hi>(output.out, Lo, static_cast<real_t<Out>>(scale), row * tiles + t,
                          smem_raw);
    __syncthreads();
  }
#endif
}

template <class V, int Lo, int Hi, int K, class Input, class Output>
inline void launch_kronecker_resident_n(std::int64_t rows, Input input, Output output,
                                        real_t<V> scale, cudaStream_t stream) {
  using Out = std::remove_cv_t<std::remove_pointer_t<decltype(output.out)>>;
  using stage0 = fused_shape_for<V, Lo, Input>;
  using stage1 = strided_kernel_shape<Out, Hi>;
  if (rows > 0x7fffffff / K) {
    throw_invalid_argument("kronecker path (resident schedule)", "rows", rows,
                           "at most (2^31 - 1) / " + std::to_string(K));
  }
  auto kernel = kronecker_resident_kernel<V, Lo, Hi, K, Input, Output>;
  std::size_t smem = stage0::smem_bytes;
  unsigned tables_offset = no_tables;
  if constexpr (has_warp_tables_v<Input>) {
    const std::size_t tables =
        input.template table_bytes<stage0::items>(stage0::segments_per_block * stage0::n);
    if (tables != 0) {
      tables_offset = static_cast<unsigned>((smem + 15) & ~std::size_t(15));
      smem = tables_offset + tables;
    }
  }
  smem = std::max(smem, stage1::smem_bytes);
  ensure_dynamic_smem(kernel, smem);
  launch_clusters(kernel, rows * K, resident_threads, K, smem, stream, input, output, scale,
                  tables_offset, rows);
}

/// Stage-0 bits of the resident schedule (kronecker_preferred_lo: the measured one).
inline constexpr int resident_lo = 12;
/// Blocks a row (cluster size) of the resident schedule (the portable maximum; see above).
inline constexpr int resident_cluster = 8;

/// Whether the resident schedule serves rows of 2^log_n (stage 0 in V, stored as Out)
/// on this device; compiled for log_n = 16, 17 (complex128) and 17 (complex64) only,
/// the rows where it was measured to pay.
template <class V, class Out>
inline bool kronecker_resident_serves(int log_n) {
  if (!clusters_supported() || fused_max_log_n<V>() < resident_lo) return false;
  const int hi = log_n - resident_lo;
  return (hi == 4 && sizeof(Out) >= 16 && resident_shapes_match<V, Out, resident_lo, 4>) ||
         (hi == 5 && resident_shapes_match<V, Out, resident_lo, 5>);
}

/// Transforms `rows` rows of 2^log_n elements with the resident schedule (see
/// kronecker_resident_serves): input from the policy, result times `scale` written
/// through `output`, whose buffer is also the stage-0 intermediate (no allocation).
template <class V, class Input, class Output>
inline void launch_kronecker_resident(int log_n, std::int64_t rows, Input input, Output output,
                                      real_t<V> scale, cudaStream_t stream) {
  using Out = std::remove_cv_t<std::remove_pointer_t<decltype(output.out)>>;
  if (!kronecker_resident_serves<V, Out>(log_n)) {
    throw_invalid_argument("kronecker path (resident schedule)", "log_n", log_n,
                           "a row the resident schedule is compiled for on this device");
  }
  check_range("kronecker path (resident schedule)", "rows", rows, 1, INT64_MAX >> log_n);
  constexpr int Lo = resident_lo;
  constexpr int K = resident_cluster;
  if constexpr (resident_shapes_match<V, Out, Lo, 4> && sizeof(Out) >= 16) {
    if (log_n == Lo + 4) {
      return launch_kronecker_resident_n<V, Lo, 4, K>(rows, input, output, scale, stream);
    }
  }
  if constexpr (resident_shapes_match<V, Out, Lo, 5>) {
    if (log_n == Lo + 5) {
      return launch_kronecker_resident_n<V, Lo, 5, K>(rows, input, output, scale, stream);
    }
  }
  throw_invalid_argument("kronecker path (resident schedule)", "log_n", log_n,
                         "a row the resident schedule is compiled for");
}

}  // namespace wham::detail::wht
