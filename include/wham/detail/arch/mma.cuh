/// \file wham/detail/arch/mma.cuh
/// \brief FP64 tensor-core atoms (warp-wide `mma.sync`), written once for every kernel.
///
/// Fragments follow the PTX ISA's layouts for `.f64` operands: each lane holds one
/// element of A per row tile, one of B and two of C/D per row tile. A build for an
/// architecture without the instruction traps rather than run such code silently.
#pragma once

namespace wham::detail::arch {

/// D += A B with A 8 x 4 (row lane / 4, column lane % 4), B 4 x 8, D 8 x 8 (sm_80).
__device__ __forceinline__ void mma_m8n8k4_f64(double& d0, double& d1, double a, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
               : "+d"(d0), "+d"(d1)
               : "d"(a), "d"(b));
#else
  (void)d0;
  (void)d1;
  (void)a;
  (void)b;
  __trap();
#endif
}

/// D += A B with A 16 x 4 (a0: row lane / 4, a1: row lane / 4 + 8; column lane % 4),
/// B 4 x 8, D 16 x 8 (d0, d1 the upper row tile, d2, d3 the lower) (sm_90).
__device__ __forceinline__ void mma_m16n8k4_f64(double& d0, double& d1, double& d2, double& d3,
                                                double a0, double a1, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
      "{%0, %1, %2, %3};"
      : "+d"(d0), "+d"(d1), "+d"(d2), "+d"(d3)
      : "d"(a0), "d"(a1), "d"(b));
#else
  (void)d0;
  (void)d1;
  (void)d2;
  (void)d3;
  (void)a0;
  (void)a1;
  (void)b;
  __trap();
#endif
}

}  // namespace wham::detail::arch
