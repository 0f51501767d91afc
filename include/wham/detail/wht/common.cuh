/// \file wham/detail/wht/common.cuh
/// \brief Thread-level building blocks of the Walsh-Hadamard kernel family:
/// value traits, 16-byte-wide contiguous loads and stores, register butterflies.
#pragma once

#include <wham/detail/api.hpp>

#include <cuda/std/complex>
#include <cuda/std/type_traits>

#include <cstdint>

namespace wham::detail::wht {

// real_of and real_t: wham/detail/api.hpp.

template <class T>
inline constexpr bool is_complex_v = !cuda::std::is_same_v<T, real_t<T>>;

/// Converts between the element types of the family (real -> complex, precision).
template <class To, class From>
__host__ __device__ __forceinline__ To convert(const From& v) {
  if constexpr (cuda::std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_complex_v<To> && is_complex_v<From>) {
    return To(static_cast<real_t<To>>(v.real()), static_cast<real_t<To>>(v.imag()));
  } else if constexpr (is_complex_v<To>) {
    return To(static_cast<real_t<To>>(v), real_t<To>(0));
  } else {
    static_assert(!is_complex_v<From>, "complex to real conversion is not part of the family");
    return static_cast<To>(v);
  }
}

/// E contiguous elements from p: 16-byte vector loads when size and alignment allow.
template <class T, int E>
__device__ __forceinline__ void load_contiguous(const T* p, T (&v)[E]) {
  constexpr int bytes = E * static_cast<int>(sizeof(T));
  if constexpr (bytes % 16 == 0) {
    if ((reinterpret_cast<std::uintptr_t>(p) & 15u) == 0) {
      const int4* src = reinterpret_cast<const int4*>(p);
      int4* dst = reinterpret_cast<int4*>(v);
#pragma unroll
      for (int k = 0; k < bytes / 16; ++k) dst[k] = src[k];
      return;
    }
  }
#pragma unroll
  for (int j = 0; j < E; ++j) v[j] = p[j];
}

/// E contiguous elements to p: 16-byte vector stores when size and alignment allow.
template <class T, int E>
__device__ __forceinline__ void store_contiguous(T* p, const T (&v)[E]) {
  constexpr int bytes = E * static_cast<int>(sizeof(T));
  if constexpr (bytes % 16 == 0) {
    if ((reinterpret_cast<std::uintptr_t>(p) & 15u) == 0) {
      const int4* src = reinterpret_cast<const int4*>(v);
      int4* dst = reinterpret_cast<int4*>(p);
#pragma unroll
      for (int k = 0; k < bytes / 16; ++k) dst[k] = src[k];
      return;
    }
  }
#pragma unroll
  for (int j = 0; j < E; ++j) p[j] = v[j];
}

/// In-register WHT over the bits of the register index j that lie in [0, G),
/// applied independently to each of the E / 2^G groups (j = r * 2^G + g).
/// Butterflies rather than a dense product with a Hadamard block, on CUDA cores or FP64
/// tensor cores: H100: double 488 Gfactor/s (butterflies) vs 316 (dense) vs 151
/// (mma.m8n8k4), 64 factors H_8 between one load and one store (bench_wht_factor).
template <int G, class V, int E>
__device__ __forceinline__ void register_butterflies(V (&v)[E]) {
  static_assert(E % (1 << G) == 0, "group larger than the register tile");
#pragma unroll
  for (int h = 1; h < (1 << G); h <<= 1) {
#pragma unroll
    for (int j = 0; j < E; ++j) {
      if ((j & h) == 0) {
        const V a = v[j];
        const V b = v[j + h];
        v[j] = a + b;
        v[j + h] = a - b;
      }
    }
  }
}

constexpr int ilog2(int v) { return v <= 1 ? 0 : 1 + ilog2(v / 2); }

}  // namespace wham::detail::wht
