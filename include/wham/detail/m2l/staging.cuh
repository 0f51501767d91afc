/// \file wham/detail/m2l/staging.cuh
/// \brief Records from global into shared memory, asynchronously where the device can
/// (cp.async, sm_80+), so a thread has all its loads in flight at once. Used by every
/// schedule that stages its pairs' records through shared memory.
#pragma once

#include <wham/detail/m2l/blocks.cuh>

namespace wham::detail::m2l {

/// One coefficient, global to shared memory (cp.async on sm_80+; the shared address is
/// the destination's own, so any slot layout works); complete after `stage_records_wait()`.
template <class T>
__device__ __forceinline__ void copy_async(cpx<T>* dst, const cpx<T>* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if constexpr (sizeof(cpx<T>) == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(addr), "l"(src) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(addr), "l"(src) : "memory");
  }
#else
  *dst = *src;
#endif
}

/// A float coefficient into a double slot (the tensor schedules compute in double for
/// float callers too): a plain load, widened, and a plain store, complete before the
/// block barrier that follows the staging as the asynchronous copies are.
__device__ __forceinline__ void copy_async(cpx<double>* dst, const cpx<float>* src) {
  const cpx<float> v = *src;
  *dst = cpx<double>{double(v.re), double(v.im)};
}

/// Copies `count` records of C coefficients (contiguous in global memory) into slots of
/// stride S, the whole block, without waiting. Follow with `stage_records_wait()` and a
/// block barrier.
template <int C, int S, int NT, class T>
__device__ __forceinline__ void stage_records(cpx<T>* sm, const cpx<T>* __restrict__ src,
                                              int count) {
  for (int j = threadIdx.x; j < count * C; j += NT) {
    const int q = j / C;
    copy_async(sm + q * S + (j - q * C), src + j);
  }
}

__device__ __forceinline__ void stage_records_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

}  // namespace wham::detail::m2l
