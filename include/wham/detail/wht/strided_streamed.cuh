/// \file wham/detail/wht/strided_streamed.cuh
/// \brief The Kronecker split's strided stage for float rows, streamed: one persistent
/// block an SM fetches its next tile with asynchronous copies (`cp.async`) while it
/// transforms the current one.
///
/// Why: the one-block strided stage (strided.cuh) loads a tile of 2^LogH rows x 128
/// bytes, transforms it and stores it, one block an SM (128 KiB at 10 bits), so an SM's
/// loads and stores take turns; even a copy through such tiles reaches only 0.76-0.82
/// of a cudaMemcpy. Smaller tiles already overlap (two or three blocks an SM), and the
/// 8-byte and 11-bit versions lost, so only 10-bit stages of float rows take it
/// (tuning.cuh, strided_streamed_log_h).
///
/// Tile: 2^LogH rows (index bits [bit, bit + LogH) of the flat index) x 32 floats
/// (128 contiguous bytes). Thread (w, l) of 2^LogH threads (warp w, lane l: column l):
///   1. takes rows w * 32 + j (j < 32) of the tile from shared memory: register bits
///      are row bits [0, 5); butterflies;
///   2. exchanges through X so that it holds rows row2(w, j), whose register bits
///      [0, LogH - 5) are row bits [5, LogH); butterflies;
///   3. stores, scaled: each warp store is one 128-byte row.
/// Shared memory: X (the exchange, one tile), then S (the first head_rows rows of the
/// next tile). The next tile's head is copied into S as soon as step 1 has read S, its
/// tail into X as soon as step 2 has read X. Every access is bank-conflict free
/// (neighbouring lanes, neighbouring columns).
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/wht/cluster_launch.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/detail/wht/kronecker_index.hpp>
#include <wham/detail/wht/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace wham::detail::wht {

/// Shared memory a block of the streamed strided stage may use (the H100's and H200's
/// opt-in limit, 227 KiB); the launcher checks the device's own.
inline constexpr std::size_t strided_streamed_smem_budget = 227 * 1024;

template <int LogH>
struct strided_streamed_shape {
  static constexpr int log_c = 5;  ///< 32 floats a tile row
  static constexpr int C = 1 << log_c;
  static constexpr int rows = 1 << LogH;
  static constexpr int threads = rows;  ///< a warp per 32 rows
  static constexpr int log_round2 = LogH - 5;
  static constexpr std::size_t row_bytes = C * sizeof(float);
  static constexpr std::size_t x_bytes = rows * row_bytes;
  static constexpr int head_rows = [] {
    const std::size_t room_rows = (strided_streamed_smem_budget - x_bytes) / row_bytes;
    const std::size_t r = room_rows >= std::size_t(rows) ? rows : room_rows / 32 * 32;
    return static_cast<int>(r);
  }();
  static constexpr std::size_t smem_bytes = x_bytes + head_rows * row_bytes;
  static constexpr int blocks_per_sm = [] {
    const int b = int((strided_streamed_smem_budget + 1024) / (smem_bytes + 1024));
    return b < 1 ? 1 : b;
  }();
  static constexpr bool valid = LogH >= 8 && LogH <= 10 && head_rows >= 32;
};

namespace strided_streamed_ptx {
/// 16 bytes global -> shared, asynchronous (completes at cp.async.wait_all).
__device__ __forceinline__ void copy16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                   static_cast<unsigned>(__cvta_generic_to_shared(dst))),
               "l"(src)
               : "memory");
}
__device__ __forceinline__ void wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }
}  // namespace strided_streamed_ptx

/// Row of the tile that register j of warp w holds in the second round.
template <int LogH>
__device__ __forceinline__ int strided_streamed_row2(int w, int j) {
  constexpr int R2 = LogH - 5;
  return ((j & ((1 << R2) - 1)) << 5) | (w << (10 - LogH)) | (j >> R2);
}

template <int LogH>
__global__ void __launch_bounds__(strided_streamed_shape<LogH>::threads,
                                  strided_streamed_shape<LogH>::blocks_per_sm)
    strided_streamed_kernel(float* data, int bit, std::int64_t tiles, float scale) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using shape = strided_streamed_shape<LogH>;
  static_assert(shape::valid, "no streamed strided stage for this tile");
  constexpr int C = shape::C;
  constexpr int T = shape::threads;
  constexpr int Head = shape::head_rows;
  namespace ptx = strided_streamed_ptx;

  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* const X = reinterpret_cast<float*>(smem_raw);
  float* const S = X + shape::rows * C;
  const int t = static_cast<int>(threadIdx.x);
  const int w = t >> 5;
  const int l = t & 31;
  const std::int64_t stride = std::int64_t(1) << bit;

  // Rows [r0, r1) of a tile into dst (row r at dst + (r - r0) * C), 16 bytes a copy.
  const auto fetch = [&](std::int64_t tile, float* dst, int r0, int r1) {
    const float* src = data + kron::tile_base(bit, LogH, shape::log_c, tile);
#pragma unroll
    for (int q = r0 * 8 + t; q < r1 * 8; q += T) {
      const int r = q >> 3;
      const int part = (q & 7) * 4;
      ptx::copy16(dst + (r - r0) * C + part, src + std::int64_t(r) * stride + part);
    }
  };

  std::int64_t tile = blockIdx.x;
  if (tile < tiles) {
    fetch(tile, S, 0, Head);
    if constexpr (Head < shape::rows) fetch(tile, X, Head, shape::rows);
  }
  for (; tile < tiles; tile += gridDim.x) {
    ptx::wait_all();
    __syncthreads();  // every thread's copies of this tile have landed
    float v[32];
    if (w * 32 < Head) {  // a warp's 32 rows lie wholly in S or in X (Head % 32 == 0)
#pragma unroll
      for (int j = 0; j < 32; ++j) v[j] = S[(w * 32 + j) * C + l];
    } else {
#pragma unroll
      for (int j = 0; j < 32; ++j) v[j] = X[(w * 32 + j - Head) * C + l];
    }
    __syncthreads();  // S and the tail in X read
    const std::int64_t next = tile + gridDim.x;
    if (next < tiles) fetch(next, S, 0, Head);
    register_butterflies<5>(v);
#pragma unroll
    for (int j = 0; j < 32; ++j) X[(w * 32 + j) * C + l] = v[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < 32; ++j) v[j] = X[strided_streamed_row2<LogH>(w, j) * C + l];
    if constexpr (Head < shape::rows) {
      __syncthreads();  // X read: the next tile's tail may land in it
      if (next < tiles) fetch(next, X, Head, shape::rows);
    }
    register_butterflies<shape::log_round2>(v);
    float* const out = data + kron::tile_base(bit, LogH, shape::log_c, tile) + l;
#pragma unroll
    for (int j = 0; j < 32; ++j)
      out[std::int64_t(strided_streamed_row2<LogH>(w, j)) * stride] = v[j] * scale;
  }
#endif
}

/// Whether a strided stage of `bits` over elements T at `data` streams on this device:
/// float, 10 bits, `data` 16-byte aligned (the asynchronous copies), code for sm_90 or
/// later on a device of compute capability 9.0+ (clusters_supported: the same test as
/// the other sm_90 schedules), and the device's shared memory.
template <class T>
inline bool strided_streamed_serves(int bits, const void* data) {
  if constexpr (!std::is_same_v<T, float>) {
    return false;
  } else {
    if (bits != strided_streamed_log_h) return false;
    if (reinterpret_cast<std::uintptr_t>(data) % 16 != 0) return false;
    if (!clusters_supported()) return false;
    return current_device_limits().smem_per_block_optin >=
           strided_streamed_shape<strided_streamed_log_h>::smem_bytes;
  }
}

/// The strided stage over row bits [bit, bit + 10) of `total` floats at `data`, in
/// place, scaled (strided_streamed_serves must hold): as many persistent blocks as the
/// device holds at once, at most one a tile.
inline void launch_strided_streamed(float* data, std::int64_t total, int bit, float scale,
                                    cudaStream_t stream) {
  constexpr int LogH = strided_streamed_log_h;
  using shape = strided_streamed_shape<LogH>;
  const std::int64_t tiles = total >> (LogH + shape::log_c);
  const std::int64_t slots = std::int64_t(current_device_limits().sm_count) * shape::blocks_per_sm;
  const std::int64_t blocks = tiles < slots ? tiles : slots;
  auto kernel = strided_streamed_kernel<LogH>;
  ensure_dynamic_smem(kernel, shape::smem_bytes);
  kernel<<<static_cast<unsigned>(blocks), shape::threads, shape::smem_bytes, stream>>>(
      data, bit, tiles, scale);
  WHAM_CHECK_LAUNCH("wham::detail::wht::strided_streamed_kernel");
}

}  // namespace wham::detail::wht
