/// \file wham/detail/wht/strided.cuh
/// \brief The Kronecker split's strided stage in one block a tile: a pass over the
/// output buffer in place that transforms row bits [bit, bit + LogH) of the flat index.
///
/// A block loads a tile of 2^LogH rows x C adjacent columns with coalesced loads (C
/// contiguous elements a row: 128 bytes, 64 at 2^11 rows), transforms the rows'
/// direction on chip (register butterflies, shared-memory exchanges between rounds),
/// scales on the plan's last stage and stores the tile back. The index arithmetic is
/// kronecker_index.hpp's, which the CPU tests replay.
///
/// Precision: the intermediate between stages is stored in the output's element type,
/// and the strided stages compute in its compute type (compute_t: float for the 16-bit
/// floats, which round once a stage; complex64 output from a complex128 stage 0 rounds
/// once to float between stages: far inside the complex64 tolerance). The tile in shared
/// memory holds the compute type.
#pragma once

#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/device.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/detail/wht/kronecker_index.hpp>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace wham::detail::wht {

/// One strided stage over row bits [bit, bit + LogH) of the flat index, in place.
template <class T, int LogH>
struct strided_kernel_shape {
  using W = compute_t<T>;
  static constexpr kron::strided_shape_t s = kron::strided_shape(LogH, int(sizeof(W)));
  static constexpr int log_e = s.log_e;
  static constexpr int log_c = s.log_c;
  static constexpr int threads = s.threads;
  static constexpr int E = 1 << log_e;
  static constexpr int C = 1 << log_c;
  static constexpr int P = threads / C;  // threads per column
  static constexpr std::size_t tile_elems = std::size_t(1) << (LogH + log_c);
  static constexpr std::size_t smem_bytes = LogH > log_e ? tile_elems * sizeof(W) : 0;
};

/// Round over row bits [B, Top) (Top - B <= log_e) from shared memory; the last
/// round (B == 0) stores to global memory with the scale, or, ToShared, leaves the
/// result in the tile (unscaled) for the cluster stage.
template <class T, int LogH, int Top, int E, bool ToShared = false>
__device__ __forceinline__ void strided_rounds(compute_t<T>* tile, int c, int p,
                                               compute_t<T> (&v)[E], T* gbase, std::int64_t stride,
                                               scale_t<T> scale) {
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
        gbase[std::int64_t(h) * stride] = convert<T>(v[r * (1 << G) + g] * scale);
      }
  }
}

/// One tile of a strided stage by the block's first strided_kernel_shape::threads
/// threads (`smem_raw`: its smem_bytes of shared memory), the tile whose row 0,
/// column 0 is `base` (rows `stride` elements apart). ToShared: the result stays in
/// shared memory, row-major (row * C + column), unscaled.
template <class T, int LogH, bool ToShared = false>
__device__ __forceinline__ void strided_tile_at(T* base, std::int64_t stride, scale_t<T> scale,
                                                unsigned char* smem_raw) {
  using W = compute_t<T>;
  using shape = strided_kernel_shape<T, LogH>;
  constexpr int E = shape::E;
  constexpr int C = shape::C;
  constexpr int B0 = LogH - shape::log_e;  // round 0: the top log_e row bits, from global
  static_assert(!ToShared || B0 > 0, "a tile left in shared memory spans several rounds");
  const int c = static_cast<int>(threadIdx.x) % C;
  const int p = static_cast<int>(threadIdx.x) / C;
  T* gbase = base + c;

  W v[E];
#pragma unroll
  for (int j = 0; j < E; ++j) v[j] = convert<W>(gbase[std::int64_t(p | (j << B0)) * stride]);
  register_butterflies<shape::log_e>(v);
  if constexpr (B0 > 0) {
    W* tile = reinterpret_cast<W*>(smem_raw);
#pragma unroll
    for (int j = 0; j < E; ++j) tile[(p | (j << B0)) * C + c] = v[j];
    __syncthreads();
    strided_rounds<T, LogH, B0, E, ToShared>(tile, c, p, v, gbase, stride, scale);
  } else {
#pragma unroll
    for (int j = 0; j < E; ++j) gbase[std::int64_t(j) * stride] = convert<T>(v[j] * scale);
  }
}

/// Tile `tile_index` of the stage over row bits [bit, bit + LogH): the body of
/// strided_kernel, and of kernels that run several tiles in turn.
template <class T, int LogH>
__device__ __forceinline__ void strided_tile(T* data, int bit, scale_t<T> scale,
                                             std::int64_t tile_index, unsigned char* smem_raw) {
  using shape = strided_kernel_shape<T, LogH>;
  strided_tile_at<T, LogH>(data + kron::tile_base(bit, LogH, shape::log_c, tile_index),
                           std::int64_t(1) << bit, scale, smem_raw);
}

template <class T, int LogH>
__global__ void __launch_bounds__(strided_kernel_shape<T, LogH>::threads)
    strided_kernel(T* data, int bit, scale_t<T> scale) {
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
inline void launch_strided_n(T* data, std::int64_t total, int bit, scale_t<T> scale,
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
inline void launch_strided(int log_h, T* data, std::int64_t total, int bit, scale_t<T> scale,
                           cudaStream_t stream) {
  const bool built = arch::dispatch_int<1, 12>(log_h, [&](auto bits) {
    launch_strided_n<T, decltype(bits)::value>(data, total, bit, scale, stream);
  });
  if (!built) throw_invalid_argument("kronecker path", "strided stage bits", log_h, "1..11");
}

}  // namespace wham::detail::wht
