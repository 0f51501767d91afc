/// \file wham/detail/fmm/bulk.cuh
/// \brief Hopper's bulk copies and their mbarriers (sm_90), as the dense class schedule
/// uses them: one request moves a whole expansion between shared and global memory. Below
/// sm_90 the reduction falls back to atomics, the fences and mbarriers do nothing, and
/// bulk_load traps (its callers take cp.async there).
#pragma once

namespace wham::detail::fmm {

/// dst[0, bytes / 8) += src[...] as one asynchronous bulk reduction (sm_90; each element
/// added atomically in the L2, so blocks adding to one target concurrently is fine): one
/// request for a whole expansion instead of a red.f64 per value. Both 16-byte aligned,
/// bytes a multiple of 16. The writes to src must be fenced for the async proxy first.
__device__ __forceinline__ void bulk_reduce_add(double* dst, const double* src, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned s = unsigned(__cvta_generic_to_shared(src));
  asm volatile(
      "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f64 [%0], [%1], %2;\n\t"
      "cp.async.bulk.commit_group;" ::"l"(dst),
      "r"(s), "r"(bytes)
      : "memory");
#else  // no bulk copies before sm_90: the same sums by atomics, one lane a target
  for (unsigned i = 0; i < bytes / sizeof(double); ++i) atomicAdd(dst + i, src[i]);
#endif
}

/// Makes this thread's shared-memory writes visible to its later bulk operations.
__device__ __forceinline__ void bulk_fence() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

/// Waits until this thread's bulk reductions have read their shared-memory source
/// (READ) or completed.
template <bool READ>
__device__ __forceinline__ void bulk_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (READ) {
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  } else {
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
#endif
}

/// Initialises the mbarrier at `bar` (shared memory) for `count` arrivals a phase.
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned a = unsigned(__cvta_generic_to_shared(bar));
  asm volatile(
      "mbarrier.init.shared::cta.b64 [%0], %1;\n\t"
      "fence.mbarrier_init.release.cluster;" ::"r"(a),
      "r"(count)
      : "memory");
#else
  (void)bar;
  (void)count;
#endif
}

/// Invalidates the mbarrier at `bar` (its memory is free for other uses after this).
__device__ __forceinline__ void mbar_inval(unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned a = unsigned(__cvta_generic_to_shared(bar));
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(a) : "memory");
#else
  (void)bar;
#endif
}

/// Arrives on `bar`, first adding `bytes` to the transfers its phase waits for.
__device__ __forceinline__ void mbar_arrive_expect(unsigned long long* bar, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned a = unsigned(__cvta_generic_to_shared(bar));
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(a), "r"(bytes)
               : "memory");
#else
  (void)bar;
  (void)bytes;
#endif
}

/// Waits until the phase of `bar` with this parity has completed.
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned a = unsigned(__cvta_generic_to_shared(bar));
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "WHAM_MBAR_WAIT:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra WHAM_MBAR_WAIT;\n\t}" ::"r"(a),
      "r"(parity)
      : "memory");
#else
  (void)bar;
  (void)parity;
#endif
}

/// dst[0, bytes) = src[0, bytes) as one bulk copy into shared memory, counted on `bar`
/// (sm_90; both 16-byte aligned, bytes a multiple of 16).
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes,
                                          unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned d = unsigned(__cvta_generic_to_shared(dst));
  const unsigned b = unsigned(__cvta_generic_to_shared(bar));
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(d),
      "l"(src), "r"(bytes), "r"(b)
      : "memory");
#else
  (void)dst;
  (void)src;
  (void)bytes;
  (void)bar;
  __trap();
#endif
}

}  // namespace wham::detail::fmm
