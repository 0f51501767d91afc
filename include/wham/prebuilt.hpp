/// \file wham/prebuilt.hpp
/// \brief Calls into the prebuilt library (CMake target wham::wham_kernels) instead of
/// compiling wham's kernels in your translation unit.
///
/// Declares every public entry point for the standard types and marks each instantiation
/// `extern template`, so the compiler emits a call and the linker finds the body in
/// wham::wham_kernels:
///
///   - fwht, fwht_path_serves, fwht_fused_max_log_n: float, double,
///     cuda::std::complex<float>, cuda::std::complex<double>, __half, __nv_bfloat16
///   - hadamard: the same six element types
///   - iqp_encode: parameters float or double x states cuda::std::complex<float|double>;
///     iqp_fused_max_qubits, iqp_automatic_path, iqp_path_serves: both state types
///   - m2l, m2l_accumulate, m2l_accumulate_centers, m2l_accumulate_classes,
///     m2l_accumulate_class_groups: float and double
///   - m2m, l2l, m2m_accumulate, l2l_accumulate (wham/translations.cuh): float and double
///   - p2m, l2p, p2p (wham/particles.cuh): float and double
///
/// Plain C++17: g++ or clang++ compile it without nvcc (the CUDA and CCCL include
/// directories on the path, as wham::wham gives them). It may also follow the public .cuh
/// headers in a CUDA translation unit; the instantiations above are then still taken from
/// the library, and other types are compiled from the headers as usual. Without the .cuh
/// headers only the instantiations above link. wham::check_interaction_list stays in
/// wham/fmm.cuh (or call wham_check_interaction_list of wham/wham.h, in wham::wham_c).
///
/// \code
///   #include <wham/prebuilt.hpp>    // g++ app.cpp ... -lwham_kernels -lcudart_static
///   wham::fwht(d_rows, d_rows, 10, batch, 1.0f / 32.0f, stream);
/// \endcode
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/instantiations.hpp>

WHAM_INSTANTIATE_FWHT(extern template, float)
WHAM_INSTANTIATE_FWHT(extern template, double)
WHAM_INSTANTIATE_FWHT(extern template, cuda::std::complex<float>)
WHAM_INSTANTIATE_FWHT(extern template, cuda::std::complex<double>)
WHAM_INSTANTIATE_FWHT(extern template, __half)
WHAM_INSTANTIATE_FWHT(extern template, __nv_bfloat16)
WHAM_INSTANTIATE_HADAMARD(extern template, float)
WHAM_INSTANTIATE_HADAMARD(extern template, double)
WHAM_INSTANTIATE_HADAMARD(extern template, cuda::std::complex<float>)
WHAM_INSTANTIATE_HADAMARD(extern template, cuda::std::complex<double>)
WHAM_INSTANTIATE_HADAMARD(extern template, __half)
WHAM_INSTANTIATE_HADAMARD(extern template, __nv_bfloat16)

WHAM_INSTANTIATE_IQP_QUERIES(extern template, cuda::std::complex<float>)
WHAM_INSTANTIATE_IQP_QUERIES(extern template, cuda::std::complex<double>)
WHAM_INSTANTIATE_IQP_ENCODE(extern template, float, cuda::std::complex<float>)
WHAM_INSTANTIATE_IQP_ENCODE(extern template, float, cuda::std::complex<double>)
WHAM_INSTANTIATE_IQP_ENCODE(extern template, double, cuda::std::complex<float>)
WHAM_INSTANTIATE_IQP_ENCODE(extern template, double, cuda::std::complex<double>)

WHAM_INSTANTIATE_M2L(extern template, float)
WHAM_INSTANTIATE_M2L(extern template, double)

WHAM_INSTANTIATE_FMM(extern template, float)
WHAM_INSTANTIATE_FMM(extern template, double)
WHAM_INSTANTIATE_FMM_GROUPS(extern template, float)
WHAM_INSTANTIATE_FMM_GROUPS(extern template, double)

WHAM_INSTANTIATE_TRANSLATIONS(extern template, float)
WHAM_INSTANTIATE_TRANSLATIONS(extern template, double)

WHAM_INSTANTIATE_PARTICLES(extern template, float)
WHAM_INSTANTIATE_PARTICLES(extern template, double)
