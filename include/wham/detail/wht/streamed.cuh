/// \file wham/detail/wht/streamed.cuh
/// \brief The streamed schedule of the Walsh-Hadamard family (sm_90 and later): rows
/// that fill one block's shared memory, one persistent block an SM, each block
/// fetching its next row with bulk copies (the Tensor Memory Accelerator's
/// `cp.async.bulk`) while it transforms the current one.
///
/// Why: a row of 2^15 floats (128 KiB) takes a block's whole shared memory and half
/// the register file, so the fused kernel (fused.cuh) runs one block an SM, and each
/// SM alternates between loading a row, transforming it (no memory traffic) and
/// storing it (tuning.cuh, streamed_log_n_max, has the figures).
/// Float rows of 2^13 (32 KiB) run three such blocks an SM (streamed_shape::blocks_per_sm);
/// double and complex<float> rows of 2^13 (64 KiB) one, complex<double> rows of 2^13
/// (128 KiB, 256 threads) one.
///
/// Layout of a block's shared memory: X, the row being transformed (2^LogN elements,
/// one pad element after every 2^LogE, so that every access of the schedule is
/// bank-conflict free and addressed as base + constant), then S, the staging area
/// for the first `head` elements of the next row. The rest of the next row lands in
/// X as soon as the current row's last exchange has read X. Two transaction
/// barriers (mbarrier) count the bytes in.
///
/// Per row (T = 2^LogN / 32 threads, E = 32 elements a thread):
///   1. wait for the row; thread t takes x = t + T j (j < E) from S or X;
///   2. block barrier; thread 0 starts the copy of the next row's head into S;
///   3. register butterflies over j (index bits [LogN - LogE, LogN));
///   4. shared-memory exchanges over bits [0, LogN - LogE) in groups of at most
///      LogE bits (first [0, LogE), neighbouring lanes 2^LogE + 1 elements apart;
///      then groups whose neighbouring lanes hold neighbouring elements);
///   5. after the last exchange has read X: a block barrier, the copy of the next
///      row's tail into X, the butterflies, the stores (neighbouring lanes,
///      neighbouring elements, scaled).
/// Input and output are raw rows of V (the FWHT's loaded input, stored output);
/// in place works: a row is prefetched only by the block that later overwrites it.
#pragma once

#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/device.cuh>
#include <wham/detail/wht/cluster_launch.cuh>
#include <wham/detail/wht/common.cuh>
#include <wham/detail/wht/kronecker_index.hpp>
#include <wham/detail/wht/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace wham::detail::wht {

/// Shared memory a block of the streamed schedule may use: the opt-in limit of the
/// H100 and H200 (227 KiB). The launcher checks the device's own limit.
inline constexpr std::size_t streamed_smem_budget = 227 * 1024;

template <class V, int LogN>
struct streamed_shape {
  static constexpr int n = 1 << LogN;
  /// streamed_items elements a thread, at most streamed_max_threads threads (tuning.cuh).
  static constexpr int threads =
      n / streamed_items < streamed_max_threads ? n / streamed_items : streamed_max_threads;
  static constexpr int items = n / threads;
  static constexpr int log_items = ilog2(items);
  static constexpr int padded = n + n / items;
  /// Bytes of one bulk copy (a multiple of 16; the row head and tail are multiples).
  static constexpr int chunk_bytes = 16 * 1024;
  static constexpr std::size_t x_bytes = std::size_t(padded) * sizeof(V);
  static constexpr std::size_t barrier_bytes = 16;
  /// Elements of the next row staged in S: the whole row where it fits beside X, else
  /// the most whole chunks that fit.
  static constexpr int head = [] {
    const std::size_t room = streamed_smem_budget - x_bytes - barrier_bytes;
    const std::size_t row = std::size_t(n) * sizeof(V);
    const std::size_t bytes = room >= row ? row : room / chunk_bytes * chunk_bytes;
    return static_cast<int>(bytes / sizeof(V));
  }();
  static constexpr std::size_t smem_bytes = x_bytes + std::size_t(head) * sizeof(V) + barrier_bytes;
  /// Blocks an SM holds (228 KiB an SM on the H100 and H200, 1 KiB of it reserved a
  /// block): one for rows of 128 KiB (226 KiB a block) and 64 KiB (130 KiB), three for
  /// float rows of 2^13 (65 KiB a block), so that three rows an SM are in flight where
  /// one would leave DRAM idle.
  static constexpr int blocks_per_sm = [] {
    const int b = int((streamed_smem_budget + 1024) / (smem_bytes + 1024));
    return b < 1 ? 1 : b;
  }();
  /// Where the schedule is defined: at least 32 elements a thread (the exchanges'
  /// bank analysis), the head a multiple of T (each thread's source is known at
  /// compile time) and a multiple of the chunk.
  static constexpr bool valid = LogN <= 15 && items >= 32 && items <= 64 && head > 0 &&
                                x_bytes % 16 == 0 && head % threads == 0 &&
                                (std::size_t(head) * sizeof(V)) % chunk_bytes == 0 &&
                                ((std::size_t(n) - head) * sizeof(V)) % chunk_bytes == 0 &&
                                smem_bytes <= streamed_smem_budget;
};

namespace streamed_ptx {
__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void barrier_init(std::uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(bar)) : "memory");
}
/// Arrives once and expects `bytes` of asynchronous copies on the barrier's phase.
__device__ __forceinline__ void barrier_expect(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void barrier_wait(std::uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred done;\n WHAM_WAIT_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra WHAM_WAIT_%=;\n}" ::"r"(smem_address(bar)),
      "r"(parity)
      : "memory");
}
/// `bytes` (a multiple of 16, 16-byte aligned ends) from global to shared memory in
/// pieces of `chunk` bytes, piece k read from src + k * src_stride bytes and written
/// contiguously, completing on `bar`. Preceded by a proxy fence: the generic proxy's
/// accesses to the destination (ordered before by a block barrier) come first.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes,
                                          unsigned chunk, std::int64_t src_stride,
                                          std::uint64_t* bar) {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  barrier_expect(bar, bytes);
  const unsigned char* from = static_cast<const unsigned char*>(src);
  for (unsigned off = 0; off < bytes; off += chunk, from += src_stride) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
            "r"(smem_address(static_cast<unsigned char*>(dst) + off)),
        "l"(from), "r"(chunk), "r"(smem_address(bar))
        : "memory");
  }
}
}  // namespace streamed_ptx

/// Position of element x of the row in X (one pad element after every 2^LogE).
template <int LogE>
__device__ __forceinline__ unsigned streamed_pad(unsigned x) {
  return x + (x >> LogE);
}

/// Element j of thread t in the exchange over index bits [B, B + G): the same
/// mapping as the fused schedule's passes (fused_passes).
template <int B, int G, int T>
__device__ __forceinline__ unsigned streamed_position(int t, int j) {
  const unsigned o = unsigned((j >> G) * T + t);
  return (o & ((1u << B) - 1u)) | (unsigned(j & ((1 << G) - 1)) << B) | ((o >> B) << (B + G));
}

/// The exchanges over bits [B, Rem) (Rem = LogN - LogE), the last one ending in the
/// stores (element x of the row to out_row[rows.offset(x)]); `tail` starts the next
/// row's tail copy once X has been read.
template <class V, int LogN, int B, class Rows, class Tail>
__device__ __forceinline__ void streamed_exchanges(V* X, int t,
                                                   V (&v)[streamed_shape<V, LogN>::items],
                                                   V* out_row, const Rows& rows, real_t<V> scale,
                                                   const Tail& tail) {
  using shape = streamed_shape<V, LogN>;
  constexpr int T = shape::threads;
  constexpr int E = shape::items;
  constexpr int LogE = shape::log_items;
  constexpr int Rem = LogN - LogE;
  constexpr int G = Rem - B < LogE ? Rem - B : LogE;
#pragma unroll
  for (int j = 0; j < E; ++j) v[j] = X[streamed_pad<LogE>(streamed_position<B, G, T>(t, j))];
  if constexpr (B + G < Rem) {
    register_butterflies<G>(v);
#pragma unroll
    for (int j = 0; j < E; ++j) X[streamed_pad<LogE>(streamed_position<B, G, T>(t, j))] = v[j];
    __syncthreads();
    streamed_exchanges<V, LogN, B + G>(X, t, v, out_row, rows, scale, tail);
  } else {
    __syncthreads();  // every thread has read X
    tail();
    register_butterflies<G>(v);
#pragma unroll
    for (int j = 0; j < E; ++j)
      out_row[rows.offset(streamed_position<B, G, T>(t, j))] = v[j] * scale;
  }
}

/// Where a streamed row's elements lie: rows of 2^LogN consecutive elements (the
/// fused rows of the FWHT, the Kronecker split's stage 0).
template <class V, int LogN>
struct streamed_contiguous_rows {
  /// Bytes of one bulk copy, and the distance between the sources of two copies.
  static constexpr unsigned piece_bytes = streamed_shape<V, LogN>::chunk_bytes;
  __device__ __forceinline__ std::int64_t piece_stride() const { return piece_bytes; }
  /// Flat index of the row's element 0, and of element x from there.
  __device__ __forceinline__ std::int64_t base(std::int64_t row) const { return row << LogN; }
  __device__ __forceinline__ unsigned offset(unsigned x) const { return x; }
};

/// The Kronecker split's gathered stage (kronecker_plan.cuh, kronecker_middle_serves): for
/// FWHT rows of 2^LogRow, a streamed row takes flat-index bits [0, 10) and the top
/// LogN - 10 bits [LogRow - LogN + 10, LogRow); the rows enumerate the sample and the
/// middle bits [10, LogRow - LogN + 10), which a strided stage takes afterwards (tile rows
/// 2^10 apart, closer to a copy than rows 2^LogN apart). Element x of a row: run x >> 10
/// of 2^10 consecutive elements (4 KiB of float, one bulk copy), runs 2^high_shift
/// apart. The shifts are compile-time constants: as kernel arguments the kernel spilled
/// at its 64 registers (H200: float rows of 2^25 0.85 of a copy vs 0.90, bench_fwht).
template <class V, int LogN, int LogRow>
struct streamed_gathered_rows {
  static constexpr int log_run = 10;
  static constexpr int high_shift = LogRow - (LogN - log_run);
  static constexpr int mid_bits = high_shift - log_run;
  static_assert(mid_bits >= 1 && LogRow <= 31,
                "rows longer than the streamed row, offsets in 32 bits");
  static constexpr unsigned piece_bytes = (1u << log_run) * sizeof(V);
  __device__ __forceinline__ std::int64_t piece_stride() const {
    return (std::int64_t(1) << high_shift) * std::int64_t(sizeof(V));
  }
  /// The index arithmetic of kronecker_index.hpp (which the CPU tests replay), here
  /// with compile-time arguments.
  __device__ __forceinline__ std::int64_t base(std::int64_t row) const {
    return kron::gathered_base(LogRow, LogN, log_run, row);
  }
  /// 32 bits: below 2^LogRow (64-bit offsets made complex<float> rows spill).
  __device__ __forceinline__ unsigned offset(unsigned x) const {
    return kron::gathered_offset(LogRow, LogN, log_run, x);
  }
};

template <class V, int LogN, class Rows>
__global__ void __launch_bounds__(streamed_shape<V, LogN>::threads,
                                  streamed_shape<V, LogN>::blocks_per_sm)
    streamed_kernel(const V* in, V* out, std::int64_t rows, real_t<V> scale, Rows lay) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using shape = streamed_shape<V, LogN>;
  static_assert(shape::valid, "no streamed schedule for this row");
  constexpr int N = shape::n;
  constexpr int T = shape::threads;
  constexpr int E = shape::items;
  constexpr int LogE = shape::log_items;
  constexpr int Head = shape::head;
  constexpr bool has_tail = Head < N;
  constexpr unsigned head_bytes = unsigned(Head) * sizeof(V);
  constexpr unsigned tail_bytes = unsigned(N - Head) * sizeof(V);
  constexpr unsigned chunk = Rows::piece_bytes;
  static_assert(head_bytes % chunk == 0 && tail_bytes % chunk == 0, "whole pieces");
  namespace ptx = streamed_ptx;

  extern __shared__ __align__(16) unsigned char smem_raw[];  // 16: the bulk copies
  V* const X = reinterpret_cast<V*>(smem_raw);
  V* const S = reinterpret_cast<V*>(smem_raw + shape::x_bytes);
  std::uint64_t* const bars =
      reinterpret_cast<std::uint64_t*>(smem_raw + shape::x_bytes + std::size_t(Head) * sizeof(V));
  const int t = static_cast<int>(threadIdx.x);

  if (t == 0) {
    ptx::barrier_init(&bars[0]);
    ptx::barrier_init(&bars[1]);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  std::int64_t row = blockIdx.x;
  const std::int64_t stride = lay.piece_stride();
  if (t == 0 && row < rows) {
    const V* src = in + lay.base(row);
    ptx::bulk_load(S, src, head_bytes, chunk, stride, &bars[0]);
    if constexpr (has_tail)
      ptx::bulk_load(X, src + lay.offset(Head), tail_bytes, chunk, stride, &bars[1]);
  }
  unsigned parity = 0;
  for (; row < rows; row += gridDim.x) {
    ptx::barrier_wait(&bars[0], parity);
    if constexpr (has_tail) ptx::barrier_wait(&bars[1], parity);
    parity ^= 1u;
    V v[E];
#pragma unroll
    for (int j = 0; j < E; ++j) {
      if constexpr (has_tail) {
        v[j] = j < Head / T ? S[t + T * j] : X[t + T * j - Head];
      } else {
        v[j] = S[t + T * j];
      }
    }
    __syncthreads();  // S, and the tail in X, read by every thread
    const std::int64_t next = row + gridDim.x;
    const V* const next_src = in + lay.base(next);
    if (t == 0 && next < rows) ptx::bulk_load(S, next_src, head_bytes, chunk, stride, &bars[0]);
    register_butterflies<LogE>(v);  // x = t + T j: bits [LogN - LogE, LogN)
#pragma unroll
    for (int j = 0; j < E; ++j) X[streamed_pad<LogE>(unsigned(t + T * j))] = v[j];
    __syncthreads();
    const auto tail = [&] {
      if constexpr (has_tail) {
        if (t == 0 && next < rows) {
          ptx::bulk_load(X, next_src + lay.offset(Head), tail_bytes, chunk, stride, &bars[1]);
        }
      }
    };
    streamed_exchanges<V, LogN, 0>(X, t, v, out + lay.base(row), lay, scale, tail);
  }
#endif
}

/// Calls f(std::integral_constant<int, log_n>) where the streamed schedule is built
/// for rows of 2^log_n elements of V (tuning.cuh, streamed_log_n_min..max); returns
/// whether it is.
template <class V, class F>
inline bool streamed_visit(int log_n, F&& f) {
  if constexpr (streamed_log_n_max < V >> 0) {
    return arch::dispatch_int<streamed_log_n_min<V>, streamed_log_n_max<V> + 1>(log_n,
                                                                                std::forward<F>(f));
  } else {
    (void)log_n;
    (void)f;
    return false;
  }
}

/// Shared memory a block of the streamed schedule takes for rows of 2^log_n (0 where
/// it is not built).
template <class V>
inline std::size_t streamed_smem_bytes(int log_n) {
  std::size_t bytes = 0;
  streamed_visit<V>(
      log_n, [&](auto size) { bytes = streamed_shape<V, decltype(size)::value>::smem_bytes; });
  return bytes;
}

/// Whether the streamed schedule serves rows of 2^log_n elements of V from `in` on
/// the current device: the sizes of streamed_log_n_max, compute capability 9.0+
/// with code for it (clusters_supported: the same requirement), `in` 16-byte aligned
/// (the bulk copies), and the device's shared memory.
template <class V>
inline bool streamed_serves(int log_n, const void* in) {
  const std::size_t need = streamed_smem_bytes<V>(log_n);
  if (need == 0) return false;
  if (reinterpret_cast<std::uintptr_t>(in) % 16 != 0) return false;
  if (!clusters_supported()) return false;
  return current_device_limits().smem_per_block_optin >= need;
}

/// Blocks launch_streamed runs for `rows` rows of 2^log_n (built sizes only): as many
/// persistent blocks as the device holds at once, at most one a row. On a device with
/// less shared memory an SM than the H200 they take turns, which stays correct.
template <class V>
inline std::int64_t streamed_grid(int log_n, std::int64_t rows) {
  std::int64_t slots = 0;
  streamed_visit<V>(log_n, [&](auto size) {
    slots = std::int64_t(current_device_limits().sm_count) *
            streamed_shape<V, decltype(size)::value>::blocks_per_sm;
  });
  return rows < slots ? rows : slots;
}

template <class V, int LogN, class Rows = streamed_contiguous_rows<V, LogN>>
inline void launch_streamed_n(const V* in, V* out, std::int64_t rows, real_t<V> scale,
                              cudaStream_t stream, Rows lay = {}) {
  using shape = streamed_shape<V, LogN>;
  auto kernel = streamed_kernel<V, LogN, Rows>;
  ensure_dynamic_smem(kernel, shape::smem_bytes);
  const std::int64_t blocks = streamed_grid<V>(LogN, rows);
  kernel<<<static_cast<unsigned>(blocks), shape::threads, shape::smem_bytes, stream>>>(
      in, out, rows, scale, lay);
  WHAM_CHECK_LAUNCH("wham::detail::wht::streamed_kernel");
}

/// Rows of 2^log_n (streamed_serves must hold).
template <class V>
inline void launch_streamed(int log_n, const V* in, V* out, std::int64_t rows, real_t<V> scale,
                            cudaStream_t stream) {
  const bool built = streamed_visit<V>(log_n, [&](auto size) {
    launch_streamed_n<V, decltype(size)::value>(in, out, rows, scale, stream);
  });
  if (!built) {
    throw_invalid_argument(
        "fwht (streamed schedule)", "log_n", log_n,
        "13..15 for float rows, 13..14 for 8-byte elements, 13 for complex<double>");
  }
}

/// Middle bits the gathered layout is built for (kronecker_middle_serves): FWHT rows of
/// 2^(streamed_log_n_max + 7) to 2^(streamed_log_n_max + 13) elements (float 2^22 to
/// 2^28, double and complex<float> 2^21 to 2^27, complex<double> 2^20 to 2^26).
inline constexpr int streamed_gathered_mid_min = 7;
inline constexpr int streamed_gathered_mid_max = 13;

/// The streamed schedule over the gathered rows (streamed_gathered_rows) of `batch` FWHT
/// rows of 2^log_n elements of V, from `in` to `out` (streamed_serves<V>(
/// streamed_log_n_max<V>, in) must hold; log_n - streamed_log_n_max<V> within the
/// built middle bits).
template <class V>
inline void launch_streamed_gathered(int log_n, const V* in, V* out, std::int64_t batch,
                                     real_t<V> scale, cudaStream_t stream) {
  constexpr int LogN = streamed_log_n_max<V>;
  bool built = false;
  if constexpr (LogN > 0) {
    built = arch::dispatch_int<streamed_gathered_mid_min, streamed_gathered_mid_max + 1>(
        log_n - LogN, [&](auto mid) {
          constexpr int M = decltype(mid)::value;
          using rows_t = streamed_gathered_rows<V, LogN, LogN + M>;
          launch_streamed_n<V, LogN>(in, out, batch << M, scale, stream, rows_t{});
        });
  }
  if (!built) {
    throw_invalid_argument("fwht (gathered streamed stage)", "log_n", log_n,
                           LogN > 0 ? std::to_string(LogN + streamed_gathered_mid_min) + ".." +
                                          std::to_string(LogN + streamed_gathered_mid_max)
                                    : std::string("none for this element type"));
  }
}

}  // namespace wham::detail::wht
