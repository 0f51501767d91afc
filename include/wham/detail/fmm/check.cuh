/// \file wham/detail/fmm/check.cuh
/// \brief The argument checks of the accumulate forms (wham/fmm.cuh) that need no device, in
/// the order every form runs them: ranges and enumerations, null pointers, alignment,
/// overlaps.
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/check.hpp>
#include <wham/detail/fmm/pair_list.cuh>
#include <wham/error.hpp>

#include <cuda/std/complex>

#include <cstdint>
#include <type_traits>

namespace wham::detail::fmm {

/// Everything an accumulate form checks without the device, in order (detail/check.hpp):
/// ranges, enumerations, then (for a call that enqueues work) each pointer's null and
/// alignment, locals apart from every input. Whether the device can address each pointer
/// is run_accumulate's (dispatch.cuh).
/// geo_count: the number of T values `geo` holds; cls: null for the forms without classes.
template <class T>
void check_arguments(const char* f, const cuda::std::complex<T>* multipoles, const T* geo,
                     const char* geo_name, std::int64_t geo_count, const std::int32_t* cls,
                     const std::int32_t* src, const std::int32_t* tgt,
                     const cuda::std::complex<T>* locals, int p, std::int64_t num_pairs,
                     std::int64_t num_multipoles, std::int64_t num_locals,
                     m2l_accumulate_method method) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "wham::m2l_accumulate: T must be float or double");
  check_range(f, "p", p, 0, m2l_max_order<T>());
  check_range(f, "num_pairs", num_pairs, 0, max_pairs);
  const std::int64_t min_rows = num_pairs > 0 ? 1 : 0;
  check_range(f, "num_multipoles", num_multipoles, min_rows, max_rows);
  check_range(f, "num_locals", num_locals, min_rows, max_rows);
  check_enum(f, "method", method, method_count, "automatic, atomic or deterministic");
  if (num_pairs == 0) return;
  check_buffer(f, "multipoles", multipoles);
  check_buffer(f, geo_name, geo);
  check_optional_buffer(f, "cls", cls);
  check_buffer(f, "src", src);
  check_buffer(f, "tgt", tgt);
  check_buffer(f, "locals", locals);
  // locals is written: no input may share a byte with it
  const auto C = std::uint64_t(m2l_num_coeffs(p)), n = std::uint64_t(num_pairs);
  check_apart(f, span_of("locals", locals, std::uint64_t(num_locals) * C),
              {span_of("multipoles", multipoles, std::uint64_t(num_multipoles) * C),
               span_of(geo_name, geo, std::uint64_t(geo_count)),
               span_of("cls", cls, cls != nullptr ? n : 0), span_of("src", src, n),
               span_of("tgt", tgt, n)});
}

/// The class forms' checks: num_classes before any pointer, then check_arguments.
template <class T>
void check_class_arguments(const char* f, const cuda::std::complex<T>* multipoles,
                           const T* class_deltas, const std::int32_t* cls, const std::int32_t* src,
                           const std::int32_t* tgt, const cuda::std::complex<T>* locals, int p,
                           std::int64_t num_pairs, int num_classes, std::int64_t num_multipoles,
                           std::int64_t num_locals, m2l_accumulate_method method) {
  check_range(f, "num_classes", num_classes, 1, max_classes);
  if (num_pairs > 0) check_not_null(f, "cls", cls);
  check_arguments(f, multipoles, class_deltas, "class_deltas", std::int64_t(num_classes) * 3,
                  num_pairs > 0 ? cls : nullptr, src, tgt, locals, p, num_pairs, num_multipoles,
                  num_locals, method);
}

}  // namespace wham::detail::fmm
