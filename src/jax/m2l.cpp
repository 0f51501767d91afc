// XLA FFI handlers of M2L (wham_m2l_*) and its FMM accumulate forms
// (wham_m2l_accumulate*_*). The order p and the method are attributes; pair and row counts
// come from the buffers. The accumulate forms' locals is both the last operand and the
// result, aliased (input_output_aliases): the call adds into it in place.
#include "common.hpp"

namespace wham_jax {
namespace {

using ffi::AnyBuffer;
using ffi::DataType;
using ffi::Error;
using ffi::Result;

/// The real type of multipoles' coefficients, checked: F32 for C64, F64 for C128.
Error real_of(const char* op, const AnyBuffer& multipoles, DataType* real) {
  switch (multipoles.element_type()) {
    case DataType::C64:
      *real = DataType::F32;
      return Error::Success();
    case DataType::C128:
      *real = DataType::F64;
      return Error::Success();
    default:
      return invalid(op, "multipoles has element type " + dtype_text(multipoles.element_type()) +
                             " (valid: complex64, complex128)");
  }
}

// locals[i] = M2L_p(multipoles[i], deltas[i]).
Error m2l(wham_stream stream, AnyBuffer multipoles, AnyBuffer deltas, Result<AnyBuffer> locals,
          std::int64_t p, std::int64_t path) {
  constexpr const char* op = "m2l";
  DataType real;
  WHAM_JAX_TRY(real_of(op, multipoles, &real));
  WHAM_JAX_TRY(expect_type(op, "deltas", deltas, real));
  WHAM_JAX_TRY(expect_type(op, "out", *locals, multipoles.element_type()));
  std::int64_t pairs = 0;
  if (coeffs(p) > 0) {
    WHAM_JAX_TRY(rows_of(op, "multipoles", multipoles, coeffs(p), &pairs));
    WHAM_JAX_TRY(expect_count(op, "deltas", deltas, 3 * pairs));
    WHAM_JAX_TRY(expect_count(op, "out", *locals, count(multipoles)));
  }
  const auto p32 = static_cast<std::int32_t>(p);
  const auto path32 = static_cast<std::int32_t>(path);
  if (real == DataType::F32) {
    return status_error(wham_m2l_f32(static_cast<const wham_complex64*>(multipoles.untyped_data()),
                                     static_cast<const float*>(deltas.untyped_data()),
                                     static_cast<wham_complex64*>(locals->untyped_data()), p32,
                                     pairs, path32, stream));
  }
  return status_error(wham_m2l_f64(static_cast<const wham_complex128*>(multipoles.untyped_data()),
                                   static_cast<const double*>(deltas.untyped_data()),
                                   static_cast<wham_complex128*>(locals->untyped_data()), p32,
                                   pairs, path32, stream));
}

/// What every accumulate form shares: multipoles, src, tgt and locals checked, the counts.
struct List {
  DataType real;
  std::int64_t pairs = 0, num_multipoles = 0, num_locals = 0;
};

Error list_of(const char* op, const AnyBuffer& multipoles, const AnyBuffer& src,
              const AnyBuffer& tgt, const AnyBuffer& locals_in, const AnyBuffer& locals,
              std::int64_t p, List* list) {
  WHAM_JAX_TRY(real_of(op, multipoles, &list->real));
  WHAM_JAX_TRY(expect_type(op, "src", src, DataType::S32));
  WHAM_JAX_TRY(expect_type(op, "tgt", tgt, DataType::S32));
  WHAM_JAX_TRY(expect_type(op, "locals", locals_in, multipoles.element_type()));
  WHAM_JAX_TRY(expect_type(op, "the result", locals, multipoles.element_type()));
  WHAM_JAX_TRY(expect_count(op, "the result", locals, count(locals_in)));
  WHAM_JAX_TRY(expect_aliased(op, "locals", locals_in, locals));
  list->pairs = count(src);
  WHAM_JAX_TRY(expect_count(op, "tgt", tgt, list->pairs));
  if (coeffs(p) > 0) {
    WHAM_JAX_TRY(rows_of(op, "multipoles", multipoles, coeffs(p), &list->num_multipoles));
    WHAM_JAX_TRY(rows_of(op, "locals", locals_in, coeffs(p), &list->num_locals));
  }
  return Error::Success();
}

/// The pointer arguments of an accumulate call, typed for T's C functions.
template <class C, class R>
struct Pointers {
  const C* multipoles;
  const R* geometry;
  const std::int32_t* src;
  const std::int32_t* tgt;
  C* locals;
};

template <class C, class R>
Pointers<C, R> pointers(const AnyBuffer& multipoles, const AnyBuffer& geometry,
                        const AnyBuffer& src, const AnyBuffer& tgt, const AnyBuffer& locals) {
  return {static_cast<const C*>(multipoles.untyped_data()),
          static_cast<const R*>(geometry.untyped_data()),
          static_cast<const std::int32_t*>(src.untyped_data()),
          static_cast<const std::int32_t*>(tgt.untyped_data()),
          static_cast<C*>(locals.untyped_data())};
}

// locals[tgt[i]] += M2L_p(multipoles[src[i]], deltas[i]).
Error m2l_accumulate(wham_stream stream, AnyBuffer multipoles, AnyBuffer deltas, AnyBuffer src,
                     AnyBuffer tgt, AnyBuffer locals_in, Result<AnyBuffer> locals, std::int64_t p,
                     std::int64_t method) {
  constexpr const char* op = "m2l_accumulate";
  List l;
  WHAM_JAX_TRY(list_of(op, multipoles, src, tgt, locals_in, *locals, p, &l));
  WHAM_JAX_TRY(expect_type(op, "deltas", deltas, l.real));
  WHAM_JAX_TRY(expect_count(op, "deltas", deltas, 3 * l.pairs));
  const auto p32 = static_cast<std::int32_t>(p);
  const auto m32 = static_cast<std::int32_t>(method);
  if (l.real == DataType::F32) {
    auto a = pointers<wham_complex64, float>(multipoles, deltas, src, tgt, *locals);
    return status_error(wham_m2l_accumulate_f32(a.multipoles, a.geometry, a.src, a.tgt, a.locals,
                                                p32, l.pairs, l.num_multipoles, l.num_locals, m32,
                                                stream));
  }
  auto a = pointers<wham_complex128, double>(multipoles, deltas, src, tgt, *locals);
  return status_error(wham_m2l_accumulate_f64(a.multipoles, a.geometry, a.src, a.tgt, a.locals, p32,
                                              l.pairs, l.num_multipoles, l.num_locals, m32,
                                              stream));
}

// The same with delta = centers[tgt[i]] - centers[src[i]].
Error m2l_accumulate_centers(wham_stream stream, AnyBuffer multipoles, AnyBuffer centers,
                             AnyBuffer src, AnyBuffer tgt, AnyBuffer locals_in,
                             Result<AnyBuffer> locals, std::int64_t p, std::int64_t method) {
  constexpr const char* op = "m2l_accumulate_centers";
  List l;
  WHAM_JAX_TRY(list_of(op, multipoles, src, tgt, locals_in, *locals, p, &l));
  WHAM_JAX_TRY(expect_type(op, "centers", centers, l.real));
  std::int64_t rows = 0;
  WHAM_JAX_TRY(rows_of(op, "centers", centers, 3, &rows));
  if (rows < l.num_multipoles || rows < l.num_locals) {
    return invalid(op, "centers has " + std::to_string(rows) +
                           " rows; expected at least max(num_multipoles, num_locals) = " +
                           std::to_string(std::max(l.num_multipoles, l.num_locals)));
  }
  const auto p32 = static_cast<std::int32_t>(p);
  const auto m32 = static_cast<std::int32_t>(method);
  if (l.real == DataType::F32) {
    auto a = pointers<wham_complex64, float>(multipoles, centers, src, tgt, *locals);
    return status_error(wham_m2l_accumulate_centers_f32(a.multipoles, a.geometry, a.src, a.tgt,
                                                        a.locals, p32, l.pairs, l.num_multipoles,
                                                        l.num_locals, m32, stream));
  }
  auto a = pointers<wham_complex128, double>(multipoles, centers, src, tgt, *locals);
  return status_error(wham_m2l_accumulate_centers_f64(a.multipoles, a.geometry, a.src, a.tgt,
                                                      a.locals, p32, l.pairs, l.num_multipoles,
                                                      l.num_locals, m32, stream));
}

/// class_deltas [num_classes][3] and cls [num_pairs], checked.
Error classes_of(const char* op, const AnyBuffer& class_deltas, const AnyBuffer& cls, const List& l,
                 std::int64_t* num_classes) {
  WHAM_JAX_TRY(expect_type(op, "class_deltas", class_deltas, l.real));
  WHAM_JAX_TRY(rows_of(op, "class_deltas", class_deltas, 3, num_classes));
  WHAM_JAX_TRY(expect_type(op, "cls", cls, DataType::S32));
  return expect_count(op, "cls", cls, l.pairs);
}

// The same with delta = class_deltas[cls[i]]; grouped: each class's pairs contiguous
// (wham_m2l_accumulate_class_groups_*, atomic, no method).
template <bool grouped>
Error m2l_accumulate_classes(wham_stream stream, AnyBuffer multipoles, AnyBuffer class_deltas,
                             AnyBuffer cls, AnyBuffer src, AnyBuffer tgt, AnyBuffer locals_in,
                             Result<AnyBuffer> locals, std::int64_t p, std::int64_t method) {
  const char* op = grouped ? "m2l_accumulate_class_groups" : "m2l_accumulate_classes";
  List l;
  WHAM_JAX_TRY(list_of(op, multipoles, src, tgt, locals_in, *locals, p, &l));
  std::int64_t classes = 0;
  WHAM_JAX_TRY(classes_of(op, class_deltas, cls, l, &classes));
  const auto p32 = static_cast<std::int32_t>(p);
  const auto m32 = static_cast<std::int32_t>(method);
  // More classes than int32 holds: the launcher's range check (1..1024) names it.
  const auto c32 = static_cast<std::int32_t>(std::min<std::int64_t>(classes, INT32_MAX));
  const auto* k = static_cast<const std::int32_t*>(cls.untyped_data());
  if (l.real == DataType::F32) {
    auto a = pointers<wham_complex64, float>(multipoles, class_deltas, src, tgt, *locals);
    return status_error(grouped ? wham_m2l_accumulate_class_groups_f32(
                                      a.multipoles, a.geometry, k, a.src, a.tgt, a.locals, p32,
                                      l.pairs, c32, l.num_multipoles, l.num_locals, stream)
                                : wham_m2l_accumulate_classes_f32(
                                      a.multipoles, a.geometry, k, a.src, a.tgt, a.locals, p32,
                                      l.pairs, c32, l.num_multipoles, l.num_locals, m32, stream));
  }
  auto a = pointers<wham_complex128, double>(multipoles, class_deltas, src, tgt, *locals);
  return status_error(grouped ? wham_m2l_accumulate_class_groups_f64(
                                    a.multipoles, a.geometry, k, a.src, a.tgt, a.locals, p32,
                                    l.pairs, c32, l.num_multipoles, l.num_locals, stream)
                              : wham_m2l_accumulate_classes_f64(
                                    a.multipoles, a.geometry, k, a.src, a.tgt, a.locals, p32,
                                    l.pairs, c32, l.num_multipoles, l.num_locals, m32, stream));
}

// class_groups takes no method: its binding has none, and this passes the atomic one.
Error m2l_accumulate_class_groups(wham_stream stream, AnyBuffer multipoles, AnyBuffer class_deltas,
                                  AnyBuffer cls, AnyBuffer src, AnyBuffer tgt, AnyBuffer locals_in,
                                  Result<AnyBuffer> locals, std::int64_t p) {
  return m2l_accumulate_classes<true>(stream, multipoles, class_deltas, cls, src, tgt, locals_in,
                                      locals, p, WHAM_ACCUMULATE_ATOMIC);
}

}  // namespace
}  // namespace wham_jax

namespace ffi = xla::ffi;

XLA_FFI_DEFINE_HANDLER_SYMBOL(wham_jax_m2l, wham_jax::m2l,
                              ffi::Ffi::Bind()
                                  .Ctx<wham_jax::Stream>()
                                  .Arg<ffi::AnyBuffer>()  // multipoles
                                  .Arg<ffi::AnyBuffer>()  // deltas
                                  .Ret<ffi::AnyBuffer>()  // locals
                                  .Attr<std::int64_t>("p")
                                  .Attr<std::int64_t>("path"),
                              {wham_jax::kTraits});

XLA_FFI_DEFINE_HANDLER_SYMBOL(wham_jax_m2l_accumulate, wham_jax::m2l_accumulate,
                              ffi::Ffi::Bind()
                                  .Ctx<wham_jax::Stream>()
                                  .Arg<ffi::AnyBuffer>()  // multipoles
                                  .Arg<ffi::AnyBuffer>()  // deltas
                                  .Arg<ffi::AnyBuffer>()  // src
                                  .Arg<ffi::AnyBuffer>()  // tgt
                                  .Arg<ffi::AnyBuffer>()  // locals (aliased with the result)
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<std::int64_t>("p")
                                  .Attr<std::int64_t>("method"),
                              {wham_jax::kTraits});

XLA_FFI_DEFINE_HANDLER_SYMBOL(wham_jax_m2l_accumulate_centers, wham_jax::m2l_accumulate_centers,
                              ffi::Ffi::Bind()
                                  .Ctx<wham_jax::Stream>()
                                  .Arg<ffi::AnyBuffer>()  // multipoles
                                  .Arg<ffi::AnyBuffer>()  // centers
                                  .Arg<ffi::AnyBuffer>()  // src
                                  .Arg<ffi::AnyBuffer>()  // tgt
                                  .Arg<ffi::AnyBuffer>()  // locals (aliased with the result)
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<std::int64_t>("p")
                                  .Attr<std::int64_t>("method"),
                              {wham_jax::kTraits});

XLA_FFI_DEFINE_HANDLER_SYMBOL(wham_jax_m2l_accumulate_classes,
                              wham_jax::m2l_accumulate_classes<false>,
                              ffi::Ffi::Bind()
                                  .Ctx<wham_jax::Stream>()
                                  .Arg<ffi::AnyBuffer>()  // multipoles
                                  .Arg<ffi::AnyBuffer>()  // class_deltas
                                  .Arg<ffi::AnyBuffer>()  // cls
                                  .Arg<ffi::AnyBuffer>()  // src
                                  .Arg<ffi::AnyBuffer>()  // tgt
                                  .Arg<ffi::AnyBuffer>()  // locals (aliased with the result)
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<std::int64_t>("p")
                                  .Attr<std::int64_t>("method"),
                              {wham_jax::kTraits});

XLA_FFI_DEFINE_HANDLER_SYMBOL(wham_jax_m2l_accumulate_class_groups,
                              wham_jax::m2l_accumulate_class_groups,
                              ffi::Ffi::Bind()
                                  .Ctx<wham_jax::Stream>()
                                  .Arg<ffi::AnyBuffer>()  // multipoles
                                  .Arg<ffi::AnyBuffer>()  // class_deltas
                                  .Arg<ffi::AnyBuffer>()  // cls
                                  .Arg<ffi::AnyBuffer>()  // src
                                  .Arg<ffi::AnyBuffer>()  // tgt
                                  .Arg<ffi::AnyBuffer>()  // locals (aliased with the result)
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<std::int64_t>("p"),
                              {wham_jax::kTraits});
