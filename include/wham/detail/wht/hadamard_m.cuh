/// \file wham/detail/wht/hadamard_m.cuh
/// \brief The transform by H_m (x) H_(2^k), m in {12, 20, 28, 40}, of rows of m * 2^k
/// elements: element a * 2^k + b of a row (a < m, the high index) is entry (a, b) of an
/// m x 2^k matrix X, and the row becomes H_m X H_(2^k) (H_(2^k) symmetric), times a scale.
///
/// Two schedules:
///   - fused: a block holds whole rows in shared memory (compute type, padded): H_m mixes
///     each column from global memory into shared memory, butterfly passes of up to 4 bits
///     transform the segments of 2^k, and the last pass (bits 0..3) stores 16 contiguous
///     elements a thread, scaled. One read and one write of the rows.
///   - split: rows beyond one block's shared memory: wham::fwht's dispatch over the
///     batch * m segments of 2^k (scaled), then one pass mixing the columns in place.
/// H_m is applied with the signs as compile-time constants: each output is the column's
/// sum less twice the sum of the entries of its row's minority sign (or the reverse), about
/// m / 2 + 1 additions an element instead of m. That is inf - inf where an input is
/// infinite, so a column whose sum is not finite takes the signed sums instead (a check a
/// column: the exact sum's +-inf, NaN only where +inf and -inf meet).
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/detail/wht/hadamard_matrices.hpp>
#include <wham/detail/wht/policies.cuh>
#include <wham/detail/wht/tuning.cuh>
#include <wham/error.hpp>

#include <cuda/std/type_traits>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace wham::detail::wht {

/// The common path of H_m over one column (hadamard_m_mix_finite, hadamard_matrices.hpp):
/// whether the column's sum is finite; where it is not, KeepInputs stores the column's own
/// values (the in-place column pass, whose inputs must stay to be read again).
template <int M, int Set, bool Transpose, bool KeepInputs, class V, class Store>
__device__ __forceinline__ bool hadamard_m_apply(const V (&x)[M], const Store& store) {
  return hadamard_m_mix_finite<M, Set, Transpose, KeepInputs, real_t<V>>(x, store);
}

/// Shared-memory slot of element i of the fused schedule's rows: 4 empty slots after every
/// 16, so that the last pass's 16 contiguous elements a thread (four 16-byte loads of float)
/// meet no bank conflicts.
__device__ __forceinline__ int hadamard_m_slot(int i) { return i + ((i >> 4) << 2); }
inline std::size_t hadamard_m_slots(std::int64_t elements) {
  return std::size_t(elements + ((elements >> 4) << 2) + 4);
}

/// One shared-memory pass of the fused schedule over segment bits [bit, bit + G).
template <int G, class V>
__device__ __forceinline__ void hadamard_m_pass(V* tile, int elements, int bit) {
  const int groups = elements >> G;
  const int low_mask = (1 << bit) - 1;
  for (int g = static_cast<int>(threadIdx.x); g < groups; g += static_cast<int>(blockDim.x)) {
    const int base = ((g >> bit) << (bit + G)) | (g & low_mask);
    V v[1 << G];
#pragma unroll
    for (int j = 0; j < (1 << G); ++j) v[j] = tile[hadamard_m_slot(base + (j << bit))];
    register_butterflies<G>(v);
#pragma unroll
    for (int j = 0; j < (1 << G); ++j) tile[hadamard_m_slot(base + (j << bit))] = v[j];
  }
}

/// The last pass over segment bits [0, G), from shared memory to `out`, scaled.
template <int G, class T, class V>
__device__ __forceinline__ void hadamard_m_last_pass(const V* tile, T* out, int elements,
                                                     scale_t<T> scale) {
  constexpr int E = 1 << G;
  const stored_output<T, V> output{out};
  for (int g = static_cast<int>(threadIdx.x); g < (elements >> G);
       g += static_cast<int>(blockDim.x)) {
    V v[E];
    load_contiguous<V, E>(tile + hadamard_m_slot(g << G), v);
    register_butterflies<G>(v);
    output.template store<E>(std::int64_t(g) << G, v, scale);
  }
}

/// Most threads a fused block: a thread holds a column's m elements, 80 registers of
/// complex<double> at m = 40 (within the 255 of 256 threads), 80 of float and double.
template <class V>
inline constexpr int hadamard_m_threads = sizeof(V) >= 16 ? 256 : 512;

/// The rare path of the fused schedule, inline (hadamard_m_rare_inline): the thread's
/// columns (of the block's rows at src) whose sum is not finite, read again from `src` and
/// stored over in the tile by signed sums, one output at a time, holding no column in
/// registers and unrolling nothing.
template <class T, int M, int Set, bool Transpose, class V, int... A>
__device__ __forceinline__ void hadamard_m_fused_rare_inline(const T* src, V* tile, int log_k,
                                                      int columns,
                                                      cuda::std::integer_sequence<int, A...>) {
  const int seg = 1 << log_k;
  const int row_len = M << log_k;
  for (int c = static_cast<int>(threadIdx.x); c < columns; c += static_cast<int>(blockDim.x)) {
    const int at = (c >> log_k) * row_len + (c & (seg - 1));
    V sum = convert<V>(src[at]);
#pragma unroll 1
    for (int j = 1; j < M; ++j) sum += convert<V>(src[at + j * seg]);
    if (hadamard_finite<real_t<V>>(sum)) continue;
#pragma unroll 1
    for (int a = 0; a < M; ++a) {
      std::uint64_t minus = 0;
      ((minus = a == A ? hadamard_minus_row<M, Set>(A, Transpose) : minus), ...);
      V acc = V(0);
#pragma unroll 1
      for (int j = 0; j < M; ++j) {
        const V v = convert<V>(src[at + j * seg]);
        if ((minus >> j) & 1u) {
          acc -= v;
        } else {
          acc += v;
        }
      }
      tile[hadamard_m_slot(at + a * seg)] = acc;
    }
  }
}

/// The rare path of the fused schedule, out of line (hadamard_m_rare_inline): the thread's
/// columns (of the block's rows at src) whose sum is not finite
/// read again and stored over in the tile by signed sums (hadamard_m_mix_signed).
template <class T, int M, int Set, bool Transpose, class V>
__device__ __noinline__ void hadamard_m_fused_rare_call(const T* src, V* tile, int log_k,
                                                   int columns) {
  const int seg = 1 << log_k;
  const int row_len = M << log_k;
  for (int c = static_cast<int>(threadIdx.x); c < columns; c += static_cast<int>(blockDim.x)) {
    const int at = (c >> log_k) * row_len + (c & (seg - 1));
    V x[M];
#pragma unroll
    for (int a = 0; a < M; ++a) x[a] = convert<V>(src[at + a * seg]);
    V sum = x[0];
#pragma unroll
    for (int a = 1; a < M; ++a) sum += x[a];
    if (hadamard_finite<real_t<V>>(sum)) continue;
    hadamard_m_mix_signed<M, Set, Transpose>(
        x, [&](int a, const V& y) { tile[hadamard_m_slot(at + a * seg)] = y; });
  }
}

/// The rare path of the split schedule's column pass, out of line so that it takes no
/// registers from the common one: the column at `at` (left as it was by the common path,
/// its sum not finite) by signed sums, in place.
template <class T, int M, int Set, bool Transpose>
__device__ __noinline__ void hadamard_m_column_rare(T* at, std::int64_t seg) {
  using V = compute_t<T>;
  V x[M];
#pragma unroll
  for (int a = 0; a < M; ++a) x[a] = convert<V>(at[a * seg]);
  hadamard_m_mix_signed<M, Set, Transpose>(x, [&](int a, const V& y) { at[a * seg] = convert<T>(y); });
}

/// The fused schedule: block x transforms rows [x * rows_per_block, ...) of `rows`.
template <class T, int M, int Set, bool Transpose>
__global__ void __launch_bounds__(hadamard_m_threads<compute_t<T>>)
    hadamard_m_fused_kernel(const T* in, T* out, int log_k, std::int64_t rows, int rows_per_block,
                            scale_t<T> scale) {
  using V = compute_t<T>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  V* const tile = reinterpret_cast<V*>(smem_raw);
  const int seg = 1 << log_k;
  const int row_len = M << log_k;
  const std::int64_t row0 = std::int64_t(blockIdx.x) * rows_per_block;
  const int rows_here =
      rows - row0 < rows_per_block ? static_cast<int>(rows - row0) : rows_per_block;
  const T* const src = in + row0 * row_len;
  const int columns = rows_here << log_k;
  bool rare = false;  // a column whose sum is not finite: stored over by the rare path
  for (int c = static_cast<int>(threadIdx.x); c < columns; c += static_cast<int>(blockDim.x)) {
    const int at = (c >> log_k) * row_len + (c & (seg - 1));
    V x[M];
#pragma unroll
    for (int a = 0; a < M; ++a) x[a] = convert<V>(src[at + a * seg]);
    rare |= !hadamard_m_apply<M, Set, Transpose, false>(
        x, [&](int a, const V& y) { tile[hadamard_m_slot(at + a * seg)] = y; });
  }
  if (rare) {
    if constexpr (hadamard_m_rare_inline<T, M>) {
      hadamard_m_fused_rare_inline<T, M, Set, Transpose, V>(
          src, tile, log_k, columns, cuda::std::make_integer_sequence<int, M>{});
    } else {
      hadamard_m_fused_rare_call<T, M, Set, Transpose>(src, tile, log_k, columns);
    }
  }
  __syncthreads();
  const int elements = rows_here * row_len;
  const int low = log_k < 4 ? log_k : 4;
  for (int top = log_k; top > low;) {
    const int g = top - low >= 4 ? 4 : top - low;
    top -= g;
    switch (g) {
      case 1:
        hadamard_m_pass<1>(tile, elements, top);
        break;
      case 2:
        hadamard_m_pass<2>(tile, elements, top);
        break;
      case 3:
        hadamard_m_pass<3>(tile, elements, top);
        break;
      default:
        hadamard_m_pass<4>(tile, elements, top);
        break;
    }
    __syncthreads();
  }
  T* const dst = out + row0 * row_len;
  switch (low) {
    case 0:
      return hadamard_m_last_pass<0>(tile, dst, elements, scale);
    case 1:
      return hadamard_m_last_pass<1>(tile, dst, elements, scale);
    case 2:
      return hadamard_m_last_pass<2>(tile, dst, elements, scale);
    case 3:
      return hadamard_m_last_pass<3>(tile, dst, elements, scale);
    default:
      return hadamard_m_last_pass<4>(tile, dst, elements, scale);
  }
}

/// The split schedule's second pass: H_m over the columns of `rows` rows of `data`, in place.
template <class T, int M, int Set, bool Transpose>
__global__ void __launch_bounds__(hadamard_m_threads<compute_t<T>>)
    hadamard_m_columns_kernel(T* data, int log_k, std::int64_t columns) {
  using V = compute_t<T>;
  const std::int64_t seg = std::int64_t(1) << log_k;
  for (std::int64_t c = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; c < columns;
       c += std::int64_t(gridDim.x) * blockDim.x) {
    T* const at = data + (c >> log_k) * (M * seg) + (c & (seg - 1));
    V x[M];
#pragma unroll
    for (int a = 0; a < M; ++a) x[a] = convert<V>(at[a * seg]);
    // A column whose sum is not finite is stored back as it was, then done by signed sums
    // (in place, so at once: a later look could not tell it from a transformed column).
    if (!hadamard_m_apply<M, Set, Transpose, true>(
            x, [&](int a, const V& y) { at[a * seg] = convert<T>(y); })) {
      hadamard_m_column_rare<T, M, Set, Transpose>(at, seg);
    }
  }
}

/// Rows the fused schedule puts in a block: enough for about hadamard_m_block_elements
/// elements, within the device's shared memory; 0 where one row does not fit.
template <class T>
inline int hadamard_m_rows_per_block(int m, int log_k, std::int64_t rows) {
  using V = compute_t<T>;
  const std::int64_t row_len = std::int64_t(m) << log_k;
  const std::size_t smem = current_device_limits().smem_per_block_optin;
  if (hadamard_m_slots(row_len) * sizeof(V) > smem) return 0;
  std::int64_t r = hadamard_m_block_elements / row_len;
  r = r < 1 ? 1 : r;
  // Keep every SM busy at small batch.
  const std::int64_t sms = current_device_limits().sm_count;
  if (rows < r * sms) r = (rows + sms - 1) / sms;
  r = r < 1 ? 1 : r;
  while (r > 1 && hadamard_m_slots(r * row_len) * sizeof(V) > smem) --r;
  return static_cast<int>(r);
}

template <class T, int M, int Set, bool Transpose>
inline void launch_hadamard_m_fused(const T* in, T* out, int log_k, std::int64_t rows,
                                    int rows_per_block, scale_t<T> scale, cudaStream_t stream) {
  using V = compute_t<T>;
  const std::int64_t row_len = std::int64_t(M) << log_k;
  const std::int64_t blocks = (rows + rows_per_block - 1) / rows_per_block;
  if (blocks > 0x7fffffff) {
    throw_invalid_argument("hadamard", "batch", rows,
                           "at most " + std::to_string(0x7fffffffLL * rows_per_block));
  }
  const std::size_t bytes = hadamard_m_slots(row_len * rows_per_block) * sizeof(V);
  // Threads: a column each in the H_m phase, up to the block's maximum.
  std::int64_t threads = (std::int64_t(rows_per_block) << log_k);
  threads = (threads + 31) / 32 * 32;
  constexpr int most = hadamard_m_threads<V>;
  threads = threads < 128 ? 128 : threads > most ? most : threads;
  auto kernel = hadamard_m_fused_kernel<T, M, Set, Transpose>;
  ensure_dynamic_smem(kernel, bytes);
  kernel<<<static_cast<unsigned>(blocks), static_cast<unsigned>(threads), bytes, stream>>>(
      in, out, log_k, rows, rows_per_block, scale);
  WHAM_CHECK_LAUNCH("wham::detail::wht::hadamard_m_fused_kernel");
}

template <class T, int M, int Set, bool Transpose>
inline void launch_hadamard_m_columns(T* data, int log_k, std::int64_t rows, cudaStream_t stream) {
  const std::int64_t columns = rows << log_k;
  constexpr int threads = hadamard_m_threads<compute_t<T>>;
  const std::int64_t cap = std::int64_t(current_device_limits().sm_count) * 8;
  std::int64_t blocks = (columns + threads - 1) / threads;
  blocks = blocks > cap ? cap : blocks;
  hadamard_m_columns_kernel<T, M, Set, Transpose>
      <<<static_cast<unsigned>(blocks), threads, 0, stream>>>(data, log_k, columns);
  WHAM_CHECK_LAUNCH("wham::detail::wht::hadamard_m_columns_kernel");
}

/// Calls f with the compile-time (M, Set, Transpose) of the runtime arguments.
template <class F>
inline void with_hadamard_m(int m, int set, bool transpose, F&& f) {
  const auto by_set = [&](auto mc) {
    const auto by_transpose = [&](auto sc) {
      if (transpose) {
        f(mc, sc, cuda::std::true_type{});
      } else {
        f(mc, sc, cuda::std::false_type{});
      }
    };
    if (set == 0) {
      by_transpose(cuda::std::integral_constant<int, 0>{});
    } else {
      by_transpose(cuda::std::integral_constant<int, 1>{});
    }
  };
  switch (m) {
    case 12:
      return by_set(cuda::std::integral_constant<int, 12>{});
    case 20:
      return by_set(cuda::std::integral_constant<int, 20>{});
    case 28:
      return by_set(cuda::std::integral_constant<int, 28>{});
    default:
      return by_set(cuda::std::integral_constant<int, 40>{});
  }
}

}  // namespace wham::detail::wht
