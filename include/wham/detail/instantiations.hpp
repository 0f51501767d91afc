/// \file wham/detail/instantiations.hpp
/// \brief The one list of wham's prebuilt instantiations, as macros: wham/prebuilt.hpp
/// expands them as `extern template` declarations, the library's sources (src/) as
/// explicit instantiation definitions, so the two cannot drift apart.
#pragma once

#include <wham/detail/api.hpp>

// WHAM_INSTANTIATE_*(KIND, ...): KIND is `extern template` or `template`.

/// fwht<T> and its queries; T is float, double, cuda::std::complex<float|double>, __half or
/// __nv_bfloat16.
#define WHAM_INSTANTIATE_FWHT(KIND, T)                                                \
  KIND void ::wham::fwht<T>(const T*, T*, int, std::int64_t, ::wham::fwht_scale_t<T>, \
                            cudaStream_t, ::wham::fwht_path);                         \
  KIND bool ::wham::fwht_path_serves<T>(::wham::fwht_path, int);                      \
  KIND int ::wham::fwht_fused_max_log_n<T>();                                         \
  KIND void ::wham::detail::wht::fwht_checked<T>(const T*, T*, int, std::int64_t,      \
                                                 ::wham::fwht_scale_t<T>, cudaStream_t, \
                                                 ::wham::fwht_path);

/// hadamard<T> (rows of m * 2^k); T as for fwht.
#define WHAM_INSTANTIATE_HADAMARD(KIND, T)                                                   \
  KIND void ::wham::hadamard<T>(const T*, T*, int, int, std::int64_t, ::wham::fwht_scale_t<T>, \
                                cudaStream_t, ::wham::hadamard_matrices, bool);

/// The queries of an IQP output type Out, cuda::std::complex<float|double>.
#define WHAM_INSTANTIATE_IQP_QUERIES(KIND, Out)                                              \
  KIND int ::wham::iqp_fused_max_qubits<Out>();                                              \
  KIND wham::iqp_path wham::iqp_automatic_path<Out>(int, std::int64_t, ::wham::iqp_variant); \
  KIND bool ::wham::iqp_path_serves<Out>(::wham::iqp_path, int, ::wham::iqp_variant);

/// iqp_encode<Param, Out>; Param is float or double.
#define WHAM_INSTANTIATE_IQP_ENCODE(KIND, Param, Out)                             \
  KIND void ::wham::iqp_encode<Param, Out>(const Param*, Out*, int, std::int64_t, \
                                           ::wham::iqp_variant, cudaStream_t, ::wham::iqp_path);

/// m2l<T>; T is float or double.
#define WHAM_INSTANTIATE_M2L(KIND, T)                                                           \
  KIND void ::wham::m2l<T>(const cuda::std::complex<T>*, const T*, cuda::std::complex<T>*, int, \
                           std::int64_t, cudaStream_t, ::wham::m2l_path);

/// The accumulate forms of wham/fmm.cuh but the grouped one; T is float or double.
#define WHAM_INSTANTIATE_FMM(KIND, T)                                                              \
  KIND void ::wham::m2l_accumulate<T>(const cuda::std::complex<T>*, const T*, const std::int32_t*, \
                                      const std::int32_t*, cuda::std::complex<T>*, int,            \
                                      std::int64_t, std::int64_t, std::int64_t, cudaStream_t,      \
                                      ::wham::m2l_accumulate_method);                              \
  KIND void ::wham::m2l_accumulate_centers<T>(                                                     \
      const cuda::std::complex<T>*, const T*, const std::int32_t*, const std::int32_t*,            \
      cuda::std::complex<T>*, int, std::int64_t, std::int64_t, std::int64_t, cudaStream_t,         \
      ::wham::m2l_accumulate_method);                                                              \
  KIND void ::wham::m2l_accumulate_classes<T>(                                                     \
      const cuda::std::complex<T>*, const T*, const std::int32_t*, const std::int32_t*,            \
      const std::int32_t*, cuda::std::complex<T>*, int, std::int64_t, int, std::int64_t,           \
      std::int64_t, cudaStream_t, ::wham::m2l_accumulate_method);

/// m2l_accumulate_class_groups (kernels of its own); T is float or double.
#define WHAM_INSTANTIATE_FMM_GROUPS(KIND, T)                                             \
  KIND void ::wham::m2l_accumulate_class_groups<T>(                                      \
      const cuda::std::complex<T>*, const T*, const std::int32_t*, const std::int32_t*,  \
      const std::int32_t*, cuda::std::complex<T>*, int, std::int64_t, int, std::int64_t, \
      std::int64_t, cudaStream_t);

/// m2m, l2l and their accumulate forms (wham/translations.cuh); T is float or double.
#define WHAM_INSTANTIATE_TRANSLATIONS(KIND, T)                                                  \
  KIND void ::wham::m2m<T>(const cuda::std::complex<T>*, const T*, cuda::std::complex<T>*, int, \
                           std::int64_t, cudaStream_t, ::wham::translation_path);              \
  KIND void ::wham::l2l<T>(const cuda::std::complex<T>*, const T*, cuda::std::complex<T>*, int, \
                           std::int64_t, cudaStream_t, ::wham::translation_path);              \
  KIND void ::wham::m2m_accumulate<T>(const cuda::std::complex<T>*, const T*, const std::int32_t*, \
                                      const std::int32_t*, cuda::std::complex<T>*, int,            \
                                      std::int64_t, std::int64_t, std::int64_t, cudaStream_t,      \
                                      ::wham::translation_path);                                   \
  KIND void ::wham::l2l_accumulate<T>(const cuda::std::complex<T>*, const T*, const std::int32_t*, \
                                      const std::int32_t*, cuda::std::complex<T>*, int,            \
                                      std::int64_t, std::int64_t, std::int64_t, cudaStream_t,      \
                                      ::wham::translation_path);

/// p2m, l2p and p2p (wham/particles.cuh); T is float or double.
#define WHAM_INSTANTIATE_PARTICLES(KIND, T)                                                       \
  KIND void ::wham::p2m<T>(const T*, const T*, std::int64_t, const std::int64_t*, const T*,       \
                           std::int64_t, cuda::std::complex<T>*, int, cudaStream_t);              \
  KIND void ::wham::l2p<T>(const cuda::std::complex<T>*, const T*, const std::int64_t*,           \
                           std::int64_t, const T*, std::int64_t, T*, T*, int, cudaStream_t);      \
  KIND void ::wham::p2p<T>(const T*, const T*, std::int64_t, const std::int64_t*, std::int64_t,   \
                           const std::int64_t*, const std::int32_t*, std::int64_t, T*, T*,        \
                           cudaStream_t);
