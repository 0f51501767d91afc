// XLA FFI handlers of the FMM translations M2M and L2L (wham/translations.cuh): the
// pair-streaming forms (out[i] = X_p(in[i], deltas[i])) and the accumulate forms
// (targets[tgt[i]] += X_p(in[src[i]], deltas[i]), the targets aliased with the result).
#include "common.hpp"
#include <wham/wham.h>

namespace wham_jax {
namespace {

using ffi::AnyBuffer;
using ffi::DataType;
using ffi::Error;
using ffi::Result;

enum class Translation { m2m, l2l };

constexpr const char* input_name(Translation t) {
  return t == Translation::m2m ? "multipoles" : "locals";
}

/// The coefficient type's real type: F32 for C64, F64 for C128.
Error real_of(const char* op, const char* name, const AnyBuffer& b, DataType* real) {
  if (b.element_type() == DataType::C64) {
    *real = DataType::F32;
  } else if (b.element_type() == DataType::C128) {
    *real = DataType::F64;
  } else {
    return invalid(op, std::string(name) + " has element type " + dtype_text(b.element_type()) +
                           " (valid: complex64, complex128)");
  }
  return Error::Success();
}

template <Translation t>
Error translate(wham_stream stream, AnyBuffer in, AnyBuffer deltas, Result<AnyBuffer> out,
                std::int64_t p, std::int64_t path) {
  const char* op = t == Translation::m2m ? "m2m" : "l2l";
  DataType real;
  WHAM_JAX_TRY(real_of(op, input_name(t), in, &real));
  WHAM_JAX_TRY(expect_type(op, "deltas", deltas, real));
  WHAM_JAX_TRY(expect_type(op, "out", *out, in.element_type()));
  std::int64_t pairs = 0;
  if (coeffs(p) > 0) {
    WHAM_JAX_TRY(rows_of(op, input_name(t), in, coeffs(p), &pairs));
    WHAM_JAX_TRY(expect_count(op, "deltas", deltas, 3 * pairs));
    WHAM_JAX_TRY(expect_count(op, "out", *out, count(in)));
  }
  const auto p32 = static_cast<std::int32_t>(p);
  const auto path32 = static_cast<std::int32_t>(path);
  if (real == DataType::F32) {
    auto fn = t == Translation::m2m ? wham_m2m_f32 : wham_l2l_f32;
    return status_error(fn(static_cast<const wham_complex64*>(in.untyped_data()),
                           static_cast<const float*>(deltas.untyped_data()),
                           static_cast<wham_complex64*>(out->untyped_data()), p32, pairs, path32,
                           stream));
  }
  auto fn = t == Translation::m2m ? wham_m2m_f64 : wham_l2l_f64;
  return status_error(fn(static_cast<const wham_complex128*>(in.untyped_data()),
                         static_cast<const double*>(deltas.untyped_data()),
                         static_cast<wham_complex128*>(out->untyped_data()), p32, pairs, path32,
                         stream));
}

template <Translation t>
Error translate_accumulate(wham_stream stream, AnyBuffer in, AnyBuffer deltas, AnyBuffer src,
                           AnyBuffer tgt, AnyBuffer targets_in, Result<AnyBuffer> targets,
                           std::int64_t p, std::int64_t path) {
  const char* op = t == Translation::m2m ? "m2m_accumulate" : "l2l_accumulate";
  const char* target_name = t == Translation::m2m ? "parents" : "children";
  DataType real;
  WHAM_JAX_TRY(real_of(op, input_name(t), in, &real));
  WHAM_JAX_TRY(expect_type(op, "deltas", deltas, real));
  WHAM_JAX_TRY(expect_type(op, "src", src, DataType::S32));
  WHAM_JAX_TRY(expect_type(op, "tgt", tgt, DataType::S32));
  WHAM_JAX_TRY(expect_type(op, target_name, targets_in, in.element_type()));
  WHAM_JAX_TRY(expect_type(op, "the result", *targets, in.element_type()));
  WHAM_JAX_TRY(expect_count(op, "the result", *targets, count(targets_in)));
  WHAM_JAX_TRY(expect_aliased(op, target_name, targets_in, *targets));
  const std::int64_t pairs = count(src);
  WHAM_JAX_TRY(expect_count(op, "tgt", tgt, pairs));
  WHAM_JAX_TRY(expect_count(op, "deltas", deltas, 3 * pairs));
  std::int64_t rows_in = 0, rows_out = 0;
  if (coeffs(p) > 0) {
    WHAM_JAX_TRY(rows_of(op, input_name(t), in, coeffs(p), &rows_in));
    WHAM_JAX_TRY(rows_of(op, target_name, targets_in, coeffs(p), &rows_out));
  }
  const auto p32 = static_cast<std::int32_t>(p);
  const auto path32 = static_cast<std::int32_t>(path);
  const auto* s = static_cast<const std::int32_t*>(src.untyped_data());
  const auto* g = static_cast<const std::int32_t*>(tgt.untyped_data());
  if (real == DataType::F32) {
    auto fn = t == Translation::m2m ? wham_m2m_accumulate_f32 : wham_l2l_accumulate_f32;
    return status_error(fn(static_cast<const wham_complex64*>(in.untyped_data()),
                           static_cast<const float*>(deltas.untyped_data()), s, g,
                           static_cast<wham_complex64*>(targets->untyped_data()), p32, pairs,
                           rows_in, rows_out, path32, stream));
  }
  auto fn = t == Translation::m2m ? wham_m2m_accumulate_f64 : wham_l2l_accumulate_f64;
  return status_error(fn(static_cast<const wham_complex128*>(in.untyped_data()),
                         static_cast<const double*>(deltas.untyped_data()), s, g,
                         static_cast<wham_complex128*>(targets->untyped_data()), p32, pairs,
                         rows_in, rows_out, path32, stream));
}

}  // namespace
}  // namespace wham_jax

namespace ffi = xla::ffi;

#define WHAM_JAX_TRANSLATION(symbol, t)                                     \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(symbol, wham_jax::translate<t>,             \
                                ffi::Ffi::Bind()                            \
                                    .Ctx<wham_jax::Stream>()                \
                                    .Arg<ffi::AnyBuffer>() /* expansions */ \
                                    .Arg<ffi::AnyBuffer>() /* deltas */     \
                                    .Ret<ffi::AnyBuffer>() /* out */        \
                                    .Attr<std::int64_t>("p")                \
                                    .Attr<std::int64_t>("path"),            \
                                {wham_jax::kTraits})

#define WHAM_JAX_TRANSLATION_ACCUMULATE(symbol, t)                               \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(symbol, wham_jax::translate_accumulate<t>,       \
                                ffi::Ffi::Bind()                                 \
                                    .Ctx<wham_jax::Stream>()                     \
                                    .Arg<ffi::AnyBuffer>() /* expansions */      \
                                    .Arg<ffi::AnyBuffer>() /* deltas */          \
                                    .Arg<ffi::AnyBuffer>() /* src */             \
                                    .Arg<ffi::AnyBuffer>() /* tgt */             \
                                    .Arg<ffi::AnyBuffer>() /* targets */         \
                                    .Ret<ffi::AnyBuffer>() /* aliased targets */ \
                                    .Attr<std::int64_t>("p")                     \
                                    .Attr<std::int64_t>("path"),                 \
                                {wham_jax::kTraits})

WHAM_JAX_TRANSLATION(wham_jax_m2m, wham_jax::Translation::m2m);
WHAM_JAX_TRANSLATION(wham_jax_l2l, wham_jax::Translation::l2l);
WHAM_JAX_TRANSLATION_ACCUMULATE(wham_jax_m2m_accumulate, wham_jax::Translation::m2m);
WHAM_JAX_TRANSLATION_ACCUMULATE(wham_jax_l2l_accumulate, wham_jax::Translation::l2l);
