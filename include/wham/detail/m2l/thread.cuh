/// \file wham/detail/m2l/thread.cuh
/// \brief The thread schedule of the pair-streaming M2L: one thread per pair, compile-time
/// order P (0..thread_max_order), the building blocks of blocks.cuh fully unrolled.
///
/// A block stages its pairs' multipoles through shared memory so that global loads and
/// stores are coalesced (a pair's record is (P+1)^2 * 2 sizeof(T) bytes), then each thread
/// works on its record either in registers (low P) or in its shared-memory slot (slot
/// stride (P+1)^2 rounded up to odd: no bank conflicts). Everything on chip, no
/// trigonometry, nothing per pair in device memory but the pair's own input and output.
#pragma once

#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/device.cuh>
#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/staging.cuh>
#include <wham/detail/m2l/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace wham::detail::m2l {

/// A thread's slot in shared memory, in cpx<T> units, rounded up to odd (no bank
/// conflicts): the record, and in shared-memory mode also the direction's powers.
template <int P, class T, bool Registers>
inline constexpr int slot_stride =
    ((P + 1) * (P + 1) + (Registers ? 0 : int(sizeof(direction<P, T>) / sizeof(cpx<T>)))) | 1;

template <int P, class T, int NT, bool Registers>
constexpr std::size_t thread_smem_bytes() {
  return std::size_t(NT) * slot_stride<P, T, Registers> * sizeof(cpx<T>);
}

template <int P, class T, int NT, bool Registers>
__global__ void __launch_bounds__(NT)
    m2l_thread_kernel(const cpx<T>* __restrict__ multipoles, const T* __restrict__ deltas,
                      cpx<T>* __restrict__ locals, std::int64_t num_pairs) {
  constexpr int C = (P + 1) * (P + 1);
  constexpr int S = slot_stride<P, T, Registers>;
  extern __shared__ __align__(16) unsigned char m2l_smem_raw[];
  cpx<T>* sm = reinterpret_cast<cpx<T>*>(m2l_smem_raw);
  const std::int64_t first = std::int64_t(blockIdx.x) * NT;
  const int count = int(min(std::int64_t(NT), num_pairs - first));
  stage_records<C, S, NT>(sm, multipoles + first * C, count);
  const int t = threadIdx.x;
  T x = T(0), y = T(0), z = T(1);
  if (t < count) {  // in flight with the records
    const T* d = deltas + 3 * (first + t);
    x = d[0];
    y = d[1];
    z = d[2];
  }
  stage_records_wait();
  __syncthreads();
  if (t < count) {
    const T inv_r = inverse_distance(x, y, z);
    cpx<T>* slot = sm + t * S;
    if constexpr (Registers) {
      const direction<P, T> dir = make_direction<P>(x, y, z);
      cpx<T> a[C];
#pragma unroll
      for (int i = 0; i < C; ++i) a[i] = slot[i];
      m2l_inplace<P>(a, dir, inv_r);
#pragma unroll
      for (int i = 0; i < C; ++i) slot[i] = a[i];
    } else {
      // the powers beside the record, in shared memory: registers go to the swaps
      auto* dir = reinterpret_cast<direction<P, T>*>(slot + C);
      *dir = make_direction<P>(x, y, z);
      m2l_inplace<P>(slot, *dir, inv_r);
    }
  }
  __syncthreads();
  cpx<T>* dst = locals + first * C;
  if (count == NT) {
#pragma unroll 8
    for (int r = 0; r < C; ++r) {
      const int j = r * NT + threadIdx.x;
      const int q = j / C;
      dst[j] = sm[q * S + (j - q * C)];
    }
  } else {
    for (int j = threadIdx.x; j < count * C; j += NT) {
      const int q = j / C;
      dst[j] = sm[q * S + (j - q * C)];
    }
  }
}

template <int P, class T, int NT, bool Registers>
void launch_thread_variant(const cpx<T>* multipoles, const T* deltas, cpx<T>* locals,
                           std::int64_t num_pairs, cudaStream_t stream) {
  constexpr std::size_t smem = thread_smem_bytes<P, T, NT, Registers>();
  auto kernel = m2l_thread_kernel<P, T, NT, Registers>;
  ensure_dynamic_smem(kernel, smem);
  const std::int64_t blocks = (num_pairs + NT - 1) / NT;
  kernel<<<dim3(unsigned(blocks)), NT, smem, stream>>>(multipoles, deltas, locals, num_pairs);
  WHAM_CHECK_LAUNCH("m2l_thread_kernel");
}

template <int P, class T>
void launch_thread_order(const cpx<T>* multipoles, const T* deltas, cpx<T>* locals,
                         std::int64_t num_pairs, cudaStream_t stream) {
  constexpr thread_config cfg = thread_schedule_config<T>(P);
  launch_thread_variant<P, T, cfg.threads, cfg.registers>(multipoles, deltas, locals, num_pairs,
                                                          stream);
}

/// Dynamic shared memory of one block of the thread schedule at order p
/// (0..thread_max_order): double p = 12 takes 199,680 bytes, more than compute
/// capability 8.x gives a block.
template <class T>
std::size_t thread_schedule_smem_bytes(int p) {
  std::size_t bytes = 0;
  arch::dispatch_int<0, thread_max_order + 1>(p, [&](auto Pc) {
    constexpr int P = decltype(Pc)::value;
    constexpr thread_config cfg = thread_schedule_config<T>(P);
    bytes = thread_smem_bytes<P, T, cfg.threads, cfg.registers>();
  });
  return bytes;
}

/// One thread per pair, order p in 0..thread_max_order (checked by the caller).
template <class T>
void launch_thread(int p, const cpx<T>* multipoles, const T* deltas, cpx<T>* locals,
                   std::int64_t num_pairs, cudaStream_t stream) {
  const bool done = arch::dispatch_int<0, thread_max_order + 1>(p, [&](auto Pc) {
    launch_thread_order<decltype(Pc)::value, T>(multipoles, deltas, locals, num_pairs, stream);
  });
  if (!done) {
    throw_invalid_argument("m2l", "p", p,
                           "0.." + std::to_string(thread_max_order) + " for the thread schedule");
  }
}

}  // namespace wham::detail::m2l
