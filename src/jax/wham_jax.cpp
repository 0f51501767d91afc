// XLA FFI handlers of the row transforms (wham_fwht_*, wham_hadamard_*, wham_iqp_encode_*)
// and the library's version. Row lengths and options are attributes; the number of rows
// comes from the buffers, so that a batch axis vmap adds in front folds into the rows.
#include "common.hpp"

namespace wham_jax {
namespace {

using ffi::AnyBuffer;
using ffi::DataType;
using ffi::Error;
using ffi::Result;

// The rows of `x` by 2^log_n (batch 0 where log_n is out of range: wham's own check then
// names it).
Error fwht(wham_stream stream, AnyBuffer x, Result<AnyBuffer> out, std::int64_t log_n, double scale,
           std::int64_t path) {
  constexpr const char* op = "fwht";
  WHAM_JAX_TRY(expect_type(op, "out", *out, x.element_type()));
  WHAM_JAX_TRY(expect_count(op, "out", *out, count(x)));
  std::int64_t batch = 0;
  if (log_n >= 0 && log_n <= 30) {
    if (last_dim(x) != (std::int64_t(1) << log_n)) {
      return invalid(op, "x's last dimension is " + std::to_string(last_dim(x)) +
                             "; log_n = " + std::to_string(log_n) + " needs " +
                             std::to_string(std::int64_t(1) << log_n));
    }
    batch = count(x) >> log_n;
  }
  const auto n = static_cast<std::int32_t>(log_n);
  const auto path32 = static_cast<std::int32_t>(path);
  void* o = out->untyped_data();
  const void* i = x.untyped_data();
  switch (x.element_type()) {
    case DataType::F32:
      return status_error(wham_fwht_f32(static_cast<const float*>(i), static_cast<float*>(o), n,
                                        batch, float(scale), path32, stream));
    case DataType::F64:
      return status_error(wham_fwht_f64(static_cast<const double*>(i), static_cast<double*>(o), n,
                                        batch, scale, path32, stream));
    case DataType::C64:
      return status_error(wham_fwht_c64(static_cast<const wham_complex64*>(i),
                                        static_cast<wham_complex64*>(o), n, batch, float(scale),
                                        path32, stream));
    case DataType::C128:
      return status_error(wham_fwht_c128(static_cast<const wham_complex128*>(i),
                                         static_cast<wham_complex128*>(o), n, batch, scale, path32,
                                         stream));
    case DataType::F16:
      return status_error(wham_fwht_f16(static_cast<const wham_float16*>(i),
                                        static_cast<wham_float16*>(o), n, batch, float(scale),
                                        path32, stream));
    case DataType::BF16:
      return status_error(wham_fwht_bf16(static_cast<const wham_bfloat16*>(i),
                                         static_cast<wham_bfloat16*>(o), n, batch, float(scale),
                                         path32, stream));
    default:
      return invalid(op, "x has element type " + dtype_text(x.element_type()) +
                             " (valid: float16, bfloat16, float32, float64, complex64, "
                             "complex128)");
  }
}

// Rows of m * 2^log_k by H_m (x) H_(2^log_k) (H_m^T where transpose != 0).
Error hadamard(wham_stream stream, AnyBuffer x, Result<AnyBuffer> out, std::int64_t m,
               std::int64_t log_k, double scale, std::int64_t matrices, std::int64_t transpose) {
  constexpr const char* op = "hadamard";
  WHAM_JAX_TRY(expect_type(op, "out", *out, x.element_type()));
  WHAM_JAX_TRY(expect_count(op, "out", *out, count(x)));
  std::int64_t batch = 0;
  if (m >= 1 && m <= 40 && log_k >= 0 && log_k <= 30) {
    const std::int64_t n = m << log_k;
    if (last_dim(x) != n) {
      return invalid(op, "x's last dimension is " + std::to_string(last_dim(x)) +
                             "; m = " + std::to_string(m) + ", log_k = " + std::to_string(log_k) +
                             " needs " + std::to_string(n));
    }
    batch = count(x) / n;
  }
  const auto m32 = static_cast<std::int32_t>(m);
  const auto k32 = static_cast<std::int32_t>(log_k);
  const auto set = static_cast<std::int32_t>(matrices);
  const auto t = static_cast<std::int32_t>(transpose != 0);
  void* o = out->untyped_data();
  const void* i = x.untyped_data();
  switch (x.element_type()) {
    case DataType::F32:
      return status_error(wham_hadamard_f32(static_cast<const float*>(i), static_cast<float*>(o),
                                            m32, k32, batch, float(scale), set, t, stream));
    case DataType::F64:
      return status_error(wham_hadamard_f64(static_cast<const double*>(i), static_cast<double*>(o),
                                            m32, k32, batch, scale, set, t, stream));
    case DataType::C64:
      return status_error(wham_hadamard_c64(static_cast<const wham_complex64*>(i),
                                            static_cast<wham_complex64*>(o), m32, k32, batch,
                                            float(scale), set, t, stream));
    case DataType::C128:
      return status_error(wham_hadamard_c128(static_cast<const wham_complex128*>(i),
                                             static_cast<wham_complex128*>(o), m32, k32, batch,
                                             scale, set, t, stream));
    case DataType::F16:
      return status_error(wham_hadamard_f16(static_cast<const wham_float16*>(i),
                                            static_cast<wham_float16*>(o), m32, k32, batch,
                                            float(scale), set, t, stream));
    case DataType::BF16:
      return status_error(wham_hadamard_bf16(static_cast<const wham_bfloat16*>(i),
                                             static_cast<wham_bfloat16*>(o), m32, k32, batch,
                                             float(scale), set, t, stream));
    default:
      return invalid(op, "x has element type " + dtype_text(x.element_type()) +
                             " (valid: float16, bfloat16, float32, float64, complex64, "
                             "complex128)");
  }
}

// states[b] = H^n diag(exp(i theta_b)) H^n |0>: params [batch][P] -> states [batch][2^n].
Error iqp_encode(wham_stream stream, AnyBuffer params, Result<AnyBuffer> states,
                 std::int64_t num_qubits, std::int64_t variant, std::int64_t path) {
  constexpr const char* op = "iqp_encode";
  const auto n = static_cast<std::int32_t>(num_qubits);
  const auto v = static_cast<std::int32_t>(variant);
  const auto path32 = static_cast<std::int32_t>(path);
  std::int64_t batch = 0;
  std::int64_t num_params = 0;
  // Out of range: batch 0, and the launcher's own check names the argument.
  if (num_qubits >= 1 && num_qubits <= 30 &&
      wham_iqp_num_params(n, v, &num_params) == WHAM_SUCCESS) {
    WHAM_JAX_TRY(rows_of(op, "params", params, num_params, &batch));
    WHAM_JAX_TRY(expect_count(op, "states", *states, batch << num_qubits));
  }
  const bool f32 = params.element_type() == DataType::F32;
  if (!f32 && params.element_type() != DataType::F64) {
    return invalid(op, "params has element type " + dtype_text(params.element_type()) +
                           " (valid: float32, float64)");
  }
  const void* p = params.untyped_data();
  switch (states->element_type()) {
    case DataType::C64: {
      auto* s = static_cast<wham_complex64*>(states->untyped_data());
      return status_error(f32 ? wham_iqp_encode_f32_c64(static_cast<const float*>(p), s, n, batch,
                                                        v, path32, stream)
                              : wham_iqp_encode_f64_c64(static_cast<const double*>(p), s, n, batch,
                                                        v, path32, stream));
    }
    case DataType::C128: {
      auto* s = static_cast<wham_complex128*>(states->untyped_data());
      return status_error(f32 ? wham_iqp_encode_f32_c128(static_cast<const float*>(p), s, n, batch,
                                                         v, path32, stream)
                              : wham_iqp_encode_f64_c128(static_cast<const double*>(p), s, n, batch,
                                                         v, path32, stream));
    }
    default:
      return invalid(op, "states has element type " + dtype_text(states->element_type()) +
                             " (valid: complex64, complex128)");
  }
}

}  // namespace
}  // namespace wham_jax

namespace ffi = xla::ffi;

XLA_FFI_DEFINE_HANDLER_SYMBOL(wham_jax_fwht, wham_jax::fwht,
                              ffi::Ffi::Bind()
                                  .Ctx<wham_jax::Stream>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<std::int64_t>("log_n")
                                  .Attr<double>("scale")
                                  .Attr<std::int64_t>("path"),
                              {wham_jax::kTraits});

XLA_FFI_DEFINE_HANDLER_SYMBOL(wham_jax_hadamard, wham_jax::hadamard,
                              ffi::Ffi::Bind()
                                  .Ctx<wham_jax::Stream>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<std::int64_t>("m")
                                  .Attr<std::int64_t>("log_k")
                                  .Attr<double>("scale")
                                  .Attr<std::int64_t>("matrices")
                                  .Attr<std::int64_t>("transpose"),
                              {wham_jax::kTraits});

XLA_FFI_DEFINE_HANDLER_SYMBOL(wham_jax_iqp_encode, wham_jax::iqp_encode,
                              ffi::Ffi::Bind()
                                  .Ctx<wham_jax::Stream>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<std::int64_t>("num_qubits")
                                  .Attr<std::int64_t>("variant")
                                  .Attr<std::int64_t>("path"),
                              {wham_jax::kTraits});

// The wham.h version these handlers were compiled against (WHAM_VERSION): the Python side
// refuses a libwham_jax.so of another version than its libwham.so.
extern "C" int32_t wham_jax_version_number(void) { return WHAM_VERSION; }
