// The C interface (wham/wham.h) over the prebuilt instantiations: plain C++, compiled
// against the declarations of wham/prebuilt.hpp only.
#pragma GCC visibility push(default)
#include <wham/wham.h>
#pragma GCC visibility pop

#include <wham/prebuilt.hpp>
#include <wham/detail/wht/hadamard_matrices.hpp>

#include "c_complex.hpp"
#include "c_guard.hpp"

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <string>
#include <type_traits>

namespace {

using wham::c::c128;
using wham::c::c64;
using wham::c::cpp;

static_assert(WHAM_FWHT_BASELINE == int(wham::fwht_path::baseline) &&
                  WHAM_IQP_Z == int(wham::iqp_variant::iqp_z) &&
                  WHAM_IQP_PRODUCT == int(wham::iqp_path::product) &&
                  WHAM_M2L_TENSOR == int(wham::m2l_path::tensor) &&
                  WHAM_ACCUMULATE_DETERMINISTIC == int(wham::m2l_accumulate_method::deterministic),
              "wham.h's enumerations must match the C++ enums");

static_assert(sizeof(wham_float16) == sizeof(__half) &&
                  sizeof(wham_bfloat16) == sizeof(__nv_bfloat16),
              "wham_float16 and wham_bfloat16 must have __half's and __nv_bfloat16's layout");
static_assert(WHAM_HADAMARD_QUAROT == int(wham::hadamard_matrices::quarot),
              "wham.h's enumerations must match the C++ enums");

constexpr bool same_text(const char* a, const char* b) {
  return *a == *b && (*a == '\0' || same_text(a + 1, b + 1));
}
// wham_version() comes from CMake, wham_version_number() from wham.h: they must agree.
static_assert(same_text(WHAM_LIBRARY_VERSION, WHAM_VERSION_STRING),
              "CMake's project version and wham.h's WHAM_VERSION_* differ");

const __half* cpp(const wham_float16* p) { return reinterpret_cast<const __half*>(p); }
__half* cpp(wham_float16* p) { return reinterpret_cast<__half*>(p); }
const __nv_bfloat16* cpp(const wham_bfloat16* p) {
  return reinterpret_cast<const __nv_bfloat16*>(p);
}
__nv_bfloat16* cpp(wham_bfloat16* p) { return reinterpret_cast<__nv_bfloat16*>(p); }
wham::hadamard_matrices matrices_of(int32_t v) { return static_cast<wham::hadamard_matrices>(v); }

// Out-of-range values stay out of range through the cast; the C++ side's check_enum names them.
wham::fwht_path fwht_path_of(int32_t v) { return static_cast<wham::fwht_path>(v); }
wham::iqp_variant variant_of(int32_t v) { return static_cast<wham::iqp_variant>(v); }
wham::iqp_path iqp_path_of(int32_t v) { return static_cast<wham::iqp_path>(v); }
wham::m2l_path m2l_path_of(int32_t v) { return static_cast<wham::m2l_path>(v); }
wham::m2l_accumulate_method method_of(int32_t v) {
  return static_cast<wham::m2l_accumulate_method>(v);
}

}  // namespace

namespace wham::c {
std::string& last_error() noexcept {
  thread_local std::string message;
  return message;
}
}  // namespace wham::c

using wham::c::guarded;

extern "C" {

const char* wham_last_error(void) { return wham::c::last_error().c_str(); }

const char* wham_version(void) { return WHAM_LIBRARY_VERSION; }

int32_t wham_version_number(void) { return WHAM_VERSION; }

const char* wham_status_string(wham_status status) {
  switch (status) {
    case WHAM_SUCCESS:
      return "success";
    case WHAM_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case WHAM_ERROR_CUDA:
      return "CUDA error";
    case WHAM_ERROR_INTERNAL:
      return "internal error";
    case WHAM_ERROR_NOT_SUPPORTED:
      return "not supported on this device or build";
    case WHAM_ERROR_NO_DEVICE:
      return "no CUDA device or driver available";
  }
  return "unknown wham_status";
}

// ---- Walsh-Hadamard transform ----------------------------------------------------------

wham_status wham_fwht_f32(const float* in, float* out, int32_t log_n, int64_t batch, float scale,
                          int32_t path, wham_stream stream) {
  return guarded([&] { wham::fwht(in, out, log_n, batch, scale, stream, fwht_path_of(path)); });
}
wham_status wham_fwht_f64(const double* in, double* out, int32_t log_n, int64_t batch, double scale,
                          int32_t path, wham_stream stream) {
  return guarded([&] { wham::fwht(in, out, log_n, batch, scale, stream, fwht_path_of(path)); });
}
wham_status wham_fwht_c64(const wham_complex64* in, wham_complex64* out, int32_t log_n,
                          int64_t batch, float scale, int32_t path, wham_stream stream) {
  return guarded(
      [&] { wham::fwht(cpp(in), cpp(out), log_n, batch, scale, stream, fwht_path_of(path)); });
}
wham_status wham_fwht_c128(const wham_complex128* in, wham_complex128* out, int32_t log_n,
                           int64_t batch, double scale, int32_t path, wham_stream stream) {
  return guarded(
      [&] { wham::fwht(cpp(in), cpp(out), log_n, batch, scale, stream, fwht_path_of(path)); });
}

wham_status wham_fwht_f16(const wham_float16* in, wham_float16* out, int32_t log_n, int64_t batch,
                          float scale, int32_t path, wham_stream stream) {
  return guarded(
      [&] { wham::fwht(cpp(in), cpp(out), log_n, batch, scale, stream, fwht_path_of(path)); });
}
wham_status wham_fwht_bf16(const wham_bfloat16* in, wham_bfloat16* out, int32_t log_n,
                           int64_t batch, float scale, int32_t path, wham_stream stream) {
  return guarded(
      [&] { wham::fwht(cpp(in), cpp(out), log_n, batch, scale, stream, fwht_path_of(path)); });
}

// ---- Hadamard transform of m * 2^k rows ------------------------------------------------

wham_status wham_hadamard_matrix(int32_t m, int32_t matrices, int8_t* entries) {
  return guarded([&] {
    if (m != 12 && m != 20 && m != 28 && m != 40) {
      wham::detail::throw_invalid_argument("hadamard_matrix", "m", m, "12, 20, 28 or 40");
    }
    wham::detail::check_enum(
        "hadamard_matrix", "matrices", matrices_of(matrices), wham::detail::hadamard_matrices_count,
        "WHAM_HADAMARD_FAST_HADAMARD_TRANSFORM (0) or WHAM_HADAMARD_QUAROT (1)");
    wham::c::check_out("hadamard_matrix", "entries", entries);
    for (int a = 0; a < m; ++a) {
      for (int j = 0; j < m; ++j) {
        entries[a * m + j] =
            static_cast<int8_t>(wham::detail::wht::hadamard_entry(m, matrices_of(matrices), a, j));
      }
    }
  });
}

wham_status wham_hadamard_f32(const float* in, float* out, int32_t m, int32_t log_k, int64_t batch,
                              float scale, int32_t matrices, int32_t transpose,
                              wham_stream stream) {
  return guarded([&] {
    wham::hadamard(in, out, m, log_k, batch, scale, stream, matrices_of(matrices), transpose != 0);
  });
}
wham_status wham_hadamard_f64(const double* in, double* out, int32_t m, int32_t log_k,
                              int64_t batch, double scale, int32_t matrices, int32_t transpose,
                              wham_stream stream) {
  return guarded([&] {
    wham::hadamard(in, out, m, log_k, batch, scale, stream, matrices_of(matrices), transpose != 0);
  });
}
wham_status wham_hadamard_c64(const wham_complex64* in, wham_complex64* out, int32_t m,
                              int32_t log_k, int64_t batch, float scale, int32_t matrices,
                              int32_t transpose, wham_stream stream) {
  return guarded([&] {
    wham::hadamard(cpp(in), cpp(out), m, log_k, batch, scale, stream, matrices_of(matrices),
                   transpose != 0);
  });
}
wham_status wham_hadamard_c128(const wham_complex128* in, wham_complex128* out, int32_t m,
                               int32_t log_k, int64_t batch, double scale, int32_t matrices,
                               int32_t transpose, wham_stream stream) {
  return guarded([&] {
    wham::hadamard(cpp(in), cpp(out), m, log_k, batch, scale, stream, matrices_of(matrices),
                   transpose != 0);
  });
}
wham_status wham_hadamard_f16(const wham_float16* in, wham_float16* out, int32_t m, int32_t log_k,
                              int64_t batch, float scale, int32_t matrices, int32_t transpose,
                              wham_stream stream) {
  return guarded([&] {
    wham::hadamard(cpp(in), cpp(out), m, log_k, batch, scale, stream, matrices_of(matrices),
                   transpose != 0);
  });
}
wham_status wham_hadamard_bf16(const wham_bfloat16* in, wham_bfloat16* out, int32_t m,
                               int32_t log_k, int64_t batch, float scale, int32_t matrices,
                               int32_t transpose, wham_stream stream) {
  return guarded([&] {
    wham::hadamard(cpp(in), cpp(out), m, log_k, batch, scale, stream, matrices_of(matrices),
                   transpose != 0);
  });
}

// ---- IQP encoding ----------------------------------------------------------------------

wham_status wham_iqp_num_params(int32_t num_qubits, int32_t variant, int64_t* num_params) {
  return guarded([&] {
    wham::c::check_out("iqp_num_params", "num_params", num_params);
    wham::detail::check_enum("iqp_num_params", "variant", variant_of(variant),
                             wham::detail::iqp_variant_count, "WHAM_IQP (0) or WHAM_IQP_Z (1)");
    *num_params = wham::iqp_num_params(num_qubits, variant_of(variant));
  });
}

wham_status wham_iqp_encode_f32_c64(const float* params, wham_complex64* states, int32_t num_qubits,
                                    int64_t batch, int32_t variant, int32_t path,
                                    wham_stream stream) {
  return guarded([&] {
    wham::iqp_encode(params, cpp(states), num_qubits, batch, variant_of(variant), stream,
                     iqp_path_of(path));
  });
}
wham_status wham_iqp_encode_f32_c128(const float* params, wham_complex128* states,
                                     int32_t num_qubits, int64_t batch, int32_t variant,
                                     int32_t path, wham_stream stream) {
  return guarded([&] {
    wham::iqp_encode(params, cpp(states), num_qubits, batch, variant_of(variant), stream,
                     iqp_path_of(path));
  });
}
wham_status wham_iqp_encode_f64_c64(const double* params, wham_complex64* states,
                                    int32_t num_qubits, int64_t batch, int32_t variant,
                                    int32_t path, wham_stream stream) {
  return guarded([&] {
    wham::iqp_encode(params, cpp(states), num_qubits, batch, variant_of(variant), stream,
                     iqp_path_of(path));
  });
}
wham_status wham_iqp_encode_f64_c128(const double* params, wham_complex128* states,
                                     int32_t num_qubits, int64_t batch, int32_t variant,
                                     int32_t path, wham_stream stream) {
  return guarded([&] {
    wham::iqp_encode(params, cpp(states), num_qubits, batch, variant_of(variant), stream,
                     iqp_path_of(path));
  });
}

// ---- M2L and its FMM forms -------------------------------------------------------------

wham_status wham_m2l_num_coeffs(int32_t p, int64_t* num_coeffs) {
  return guarded([&] {
    wham::c::check_out("m2l_num_coeffs", "num_coeffs", num_coeffs);
    *num_coeffs = wham::m2l_num_coeffs(p);
  });
}
int32_t wham_m2l_max_order_f32(void) { return wham::m2l_max_order<float>(); }
int32_t wham_m2l_max_order_f64(void) { return wham::m2l_max_order<double>(); }

wham_status wham_m2l_f32(const wham_complex64* multipoles, const float* deltas,
                         wham_complex64* locals, int32_t p, int64_t num_pairs, int32_t path,
                         wham_stream stream) {
  return guarded([&] {
    wham::m2l(cpp(multipoles), deltas, cpp(locals), p, num_pairs, stream, m2l_path_of(path));
  });
}
wham_status wham_m2l_f64(const wham_complex128* multipoles, const double* deltas,
                         wham_complex128* locals, int32_t p, int64_t num_pairs, int32_t path,
                         wham_stream stream) {
  return guarded([&] {
    wham::m2l(cpp(multipoles), deltas, cpp(locals), p, num_pairs, stream, m2l_path_of(path));
  });
}

wham_status wham_m2l_accumulate_f32(const wham_complex64* multipoles, const float* deltas,
                                    const int32_t* src, const int32_t* tgt, wham_complex64* locals,
                                    int32_t p, int64_t num_pairs, int64_t num_multipoles,
                                    int64_t num_locals, int32_t method, wham_stream stream) {
  return guarded([&] {
    wham::m2l_accumulate(cpp(multipoles), deltas, src, tgt, cpp(locals), p, num_pairs,
                         num_multipoles, num_locals, stream, method_of(method));
  });
}
wham_status wham_m2l_accumulate_f64(const wham_complex128* multipoles, const double* deltas,
                                    const int32_t* src, const int32_t* tgt, wham_complex128* locals,
                                    int32_t p, int64_t num_pairs, int64_t num_multipoles,
                                    int64_t num_locals, int32_t method, wham_stream stream) {
  return guarded([&] {
    wham::m2l_accumulate(cpp(multipoles), deltas, src, tgt, cpp(locals), p, num_pairs,
                         num_multipoles, num_locals, stream, method_of(method));
  });
}

wham_status wham_m2l_accumulate_centers_f32(const wham_complex64* multipoles, const float* centers,
                                            const int32_t* src, const int32_t* tgt,
                                            wham_complex64* locals, int32_t p, int64_t num_pairs,
                                            int64_t num_multipoles, int64_t num_locals,
                                            int32_t method, wham_stream stream) {
  return guarded([&] {
    wham::m2l_accumulate_centers(cpp(multipoles), centers, src, tgt, cpp(locals), p, num_pairs,
                                 num_multipoles, num_locals, stream, method_of(method));
  });
}
wham_status wham_m2l_accumulate_centers_f64(const wham_complex128* multipoles,
                                            const double* centers, const int32_t* src,
                                            const int32_t* tgt, wham_complex128* locals, int32_t p,
                                            int64_t num_pairs, int64_t num_multipoles,
                                            int64_t num_locals, int32_t method,
                                            wham_stream stream) {
  return guarded([&] {
    wham::m2l_accumulate_centers(cpp(multipoles), centers, src, tgt, cpp(locals), p, num_pairs,
                                 num_multipoles, num_locals, stream, method_of(method));
  });
}

wham_status wham_m2l_accumulate_classes_f32(const wham_complex64* multipoles,
                                            const float* class_deltas, const int32_t* cls,
                                            const int32_t* src, const int32_t* tgt,
                                            wham_complex64* locals, int32_t p, int64_t num_pairs,
                                            int32_t num_classes, int64_t num_multipoles,
                                            int64_t num_locals, int32_t method,
                                            wham_stream stream) {
  return guarded([&] {
    wham::m2l_accumulate_classes(cpp(multipoles), class_deltas, cls, src, tgt, cpp(locals), p,
                                 num_pairs, num_classes, num_multipoles, num_locals, stream,
                                 method_of(method));
  });
}
wham_status wham_m2l_accumulate_classes_f64(const wham_complex128* multipoles,
                                            const double* class_deltas, const int32_t* cls,
                                            const int32_t* src, const int32_t* tgt,
                                            wham_complex128* locals, int32_t p, int64_t num_pairs,
                                            int32_t num_classes, int64_t num_multipoles,
                                            int64_t num_locals, int32_t method,
                                            wham_stream stream) {
  return guarded([&] {
    wham::m2l_accumulate_classes(cpp(multipoles), class_deltas, cls, src, tgt, cpp(locals), p,
                                 num_pairs, num_classes, num_multipoles, num_locals, stream,
                                 method_of(method));
  });
}

wham_status wham_m2l_accumulate_class_groups_f32(
    const wham_complex64* multipoles, const float* class_deltas, const int32_t* cls,
    const int32_t* src, const int32_t* tgt, wham_complex64* locals, int32_t p, int64_t num_pairs,
    int32_t num_classes, int64_t num_multipoles, int64_t num_locals, wham_stream stream) {
  return guarded([&] {
    wham::m2l_accumulate_class_groups(cpp(multipoles), class_deltas, cls, src, tgt, cpp(locals), p,
                                      num_pairs, num_classes, num_multipoles, num_locals, stream);
  });
}
wham_status wham_m2l_accumulate_class_groups_f64(
    const wham_complex128* multipoles, const double* class_deltas, const int32_t* cls,
    const int32_t* src, const int32_t* tgt, wham_complex128* locals, int32_t p, int64_t num_pairs,
    int32_t num_classes, int64_t num_multipoles, int64_t num_locals, wham_stream stream) {
  return guarded([&] {
    wham::m2l_accumulate_class_groups(cpp(multipoles), class_deltas, cls, src, tgt, cpp(locals), p,
                                      num_pairs, num_classes, num_multipoles, num_locals, stream);
  });
}

}  // extern "C"
