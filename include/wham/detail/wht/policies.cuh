/// \file wham/detail/wht/policies.cuh
/// \brief The input and output policies of the Walsh-Hadamard family: the only thing
/// that differs between the FWHT (rows loaded from memory) and the IQP encoder (phases
/// made on chip), so that one set of schedules serves both.
///
///   input.load<E>(g0, v)          fills v with the E contiguous elements whose flat
///                                 index (row * 2^n + x) starts at g0
///   output.store<E>(g0, v, scale) writes them, multiplied by scale
/// g0 is always a multiple of E; E is a power of two, and the store's E need not be the
/// load's (the last shared-memory pass stores single elements, E = 1, so that
/// neighbouring lanes write neighbouring elements).
#pragma once

#include <wham/detail/wht/common.cuh>

#include <cuda/std/type_traits>

#include <cstddef>
#include <cstdint>

namespace wham::detail::wht {

/// Input policy: elements loaded from `in` (any type of the family), converted to V.
template <class In, class V>
struct loaded_input {
  const In* in;
  template <int E>
  __device__ __forceinline__ void load(std::int64_t g0, V (&v)[E]) const {
    if constexpr (cuda::std::is_same_v<In, V>) {
      load_contiguous<V, E>(in + g0, v);
    } else {
      In tmp[E];
      load_contiguous<In, E>(in + g0, tmp);
#pragma unroll
      for (int j = 0; j < E; ++j) v[j] = convert<V>(tmp[j]);
    }
  }
};

/// Whether an input policy makes per-warp tables before its loads (the IQP
/// phases' product form): `static constexpr bool warp_tables = true` and
///   table_bytes<E>(elements)           shared bytes for a block of that many elements
///                                      (0: not used for this E and row length)
///   warp_table_bytes<E>()              one warp's share of them (a multiple of 16)
///   prepare<E>(warp_table, g0)         every lane of a warp, g0 its first element:
///                                      the warp builds its table (synchronises the warp)
///   load<E>(g0, v, warp_table)         loads reading it
/// Every warp of a schedule that uses them lies within one segment.
template <class Input, class = void>
struct has_warp_tables : cuda::std::false_type {};
template <class Input>
struct has_warp_tables<Input, cuda::std::void_t<decltype(Input::warp_tables)>>
    : cuda::std::bool_constant<Input::warp_tables> {};
template <class Input>
inline constexpr bool has_warp_tables_v = has_warp_tables<Input>::value;
/// Whether an input with warp tables reads double parameters (`Input::double_params`):
/// the fused shape's register cap for per-element phase rows depends on it (tuning.cuh).
template <class Input, class = void>
struct has_double_params : cuda::std::false_type {};
template <class Input>
struct has_double_params<Input, cuda::std::void_t<decltype(Input::double_params)>>
    : cuda::std::bool_constant<Input::double_params> {};
template <class Input>
inline constexpr bool has_double_params_v = has_double_params<Input>::value;
/// Whether a schedule of TPS threads a segment takes its loads from the tables alone
/// (`load_product<E>(g0, v, warp_table)`, the table never null): TPS >= 32 (every warp
/// makes one), complex128 only. Without the per-element fallback beside the product form
/// the kernels shrink from 188 KB of SASS to 29 KB (their stalls were instruction-cache
/// misses). H200: IQP complex128 batch 64, n = 12: 11.1 -> 9.2 us; complex64 7% slower
/// at 512 MiB, so not there (bench_iqp).
template <class V, class Input, int TPS>
inline constexpr bool product_only_v = has_warp_tables_v<Input>&& TPS >= 32 && sizeof(V) == 16;
/// The fused kernel's tables_offset when the input makes no tables.
inline constexpr unsigned no_tables = 0xffffffffu;

/// One thread's E elements from the input, through its warp's table where the input
/// makes them (`table`: null where this schedule made none; never null under
/// product_only_v). The one place the fused and cluster kernels choose their load.
template <class V, int TPS, int E, class Input>
__device__ __forceinline__ void load_elements(const Input& input, std::int64_t g0, V (&v)[E],
                                              unsigned char* table) {
  if constexpr (product_only_v<V, Input, TPS>) {
    input.template load_product<E>(g0, v, table);
  } else if constexpr (has_warp_tables_v<Input>) {
    input.template load<E>(g0, v, table);
  } else {
    input.template load<E>(g0, v);
  }
}

/// Output policy: elements scaled, converted to Out, stored 16 bytes wide.
/// Scaled = false ignores the scale: for inputs that applied it already (the IQP
/// phases, whose 2^-n multiplies each thread's first phase, exactly, instead of
/// every element at the store).
template <class Out, class V, bool Scaled = true>
struct stored_output {
  Out* out;
  template <int E>
  __device__ __forceinline__ void store(std::int64_t g0, const V (&v)[E], real_t<V> scale) const {
    if constexpr (E == 1) {
      out[g0] = convert<Out>(scaled(v[0], scale));  // one element: its own natural-width store
    } else {
      alignas(16) Out tmp[E];
#pragma unroll
      for (int j = 0; j < E; ++j) tmp[j] = convert<Out>(scaled(v[j], scale));
      store_contiguous<Out, E>(out + g0, tmp);
    }
  }
  __device__ __forceinline__ static V scaled(const V& x, real_t<V> scale) {
    if constexpr (Scaled) {
      return x * scale;
    } else {
      return x;
    }
  }
};

/// Policies shifted by a flat offset (the Kronecker split's chunks of rows).
template <class Input>
struct offset_input {
  Input inner;
  std::int64_t offset;
  template <int E, class V>
  __device__ __forceinline__ void load(std::int64_t g0, V (&v)[E]) const {
    inner.template load<E>(g0 + offset, v);
  }
  // Warp tables (has_warp_tables), forwarded when the inner policy makes them.
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

}  // namespace wham::detail::wht
