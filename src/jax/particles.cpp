// XLA FFI handlers of the FMM's particle operators (wham/particles.cuh): P2M (multipoles
// overwritten), L2P and P2P (added to potential and gradient, which are aliased with the
// results). The "_potential" forms leave the gradient out (the C functions' NULL gradient).
#include "common.hpp"
#include <wham/wham.h>

namespace wham_jax {
namespace {

using ffi::AnyBuffer;
using ffi::DataType;
using ffi::Error;
using ffi::Result;

Error real_type(const char* op, const char* name, const AnyBuffer& b) {
  if (b.element_type() == DataType::F32 || b.element_type() == DataType::F64) {
    return Error::Success();
  }
  return invalid(op, std::string(name) + " has element type " + dtype_text(b.element_type()) +
                         " (valid: float32, float64)");
}

constexpr DataType complex_of(DataType real) {
  return real == DataType::F32 ? DataType::C64 : DataType::C128;
}

/// Cells from cell_offsets ([num_cells + 1]), checked against `rows` where rows >= 0.
Error cells_of(const char* op, const AnyBuffer& offsets, std::int64_t rows,
               const std::int64_t** data, std::int64_t* num_cells) {
  std::int64_t n = 0;
  WHAM_JAX_TRY(offsets_of(op, "cell_offsets", offsets, data, &n));
  if (n < 1 || (rows >= 0 && n != rows + 1)) {
    return invalid(op, "cell_offsets has " + std::to_string(n) + " offsets; expected " +
                           (rows >= 0 ? std::to_string(rows + 1) : std::string("at least 1")) +
                           " (num_cells + 1)");
  }
  *num_cells = n - 1;
  return Error::Success();
}

// multipoles[c] = sum_{i in cell c} q_i R(x_i - centers[c]).
Error p2m(wham_stream stream, AnyBuffer points, AnyBuffer charges, AnyBuffer cell_offsets,
          AnyBuffer centers, Result<AnyBuffer> multipoles, std::int64_t p) {
  constexpr const char* op = "p2m";
  WHAM_JAX_TRY(real_type(op, "points", points));
  const DataType real = points.element_type();
  WHAM_JAX_TRY(expect_type(op, "charges", charges, real));
  WHAM_JAX_TRY(expect_type(op, "centers", centers, real));
  WHAM_JAX_TRY(expect_type(op, "multipoles", *multipoles, complex_of(real)));
  const std::int64_t num_points = count(charges);
  WHAM_JAX_TRY(expect_count(op, "points", points, 3 * num_points));
  std::int64_t num_cells = 0;
  WHAM_JAX_TRY(rows_of(op, "centers", centers, 3, &num_cells));
  const std::int64_t* offsets = nullptr;
  WHAM_JAX_TRY(cells_of(op, cell_offsets, num_cells, &offsets, &num_cells));
  if (coeffs(p) > 0) {
    WHAM_JAX_TRY(expect_count(op, "multipoles", *multipoles, num_cells * coeffs(p)));
  }
  const auto p32 = static_cast<std::int32_t>(p);
  if (real == DataType::F32) {
    return status_error(
        wham_p2m_f32(static_cast<const float*>(points.untyped_data()),
                     static_cast<const float*>(charges.untyped_data()), num_points, offsets,
                     static_cast<const float*>(centers.untyped_data()), num_cells,
                     static_cast<wham_complex64*>(multipoles->untyped_data()), p32, stream));
  }
  return status_error(
      wham_p2m_f64(static_cast<const double*>(points.untyped_data()),
                   static_cast<const double*>(charges.untyped_data()), num_points, offsets,
                   static_cast<const double*>(centers.untyped_data()), num_cells,
                   static_cast<wham_complex128*>(multipoles->untyped_data()), p32, stream));
}

/// potential (and gradient, where given) checked against num_points and their aliases.
Error fields_of(const char* op, DataType real, std::int64_t num_points,
                const AnyBuffer& potential_in, const AnyBuffer& potential,
                const AnyBuffer* gradient_in, const AnyBuffer* gradient) {
  WHAM_JAX_TRY(expect_type(op, "potential", potential_in, real));
  WHAM_JAX_TRY(expect_type(op, "potential's result", potential, real));
  WHAM_JAX_TRY(expect_count(op, "potential", potential_in, num_points));
  WHAM_JAX_TRY(expect_count(op, "potential's result", potential, num_points));
  WHAM_JAX_TRY(expect_aliased(op, "potential", potential_in, potential));
  if (gradient_in != nullptr) {
    WHAM_JAX_TRY(expect_type(op, "gradient", *gradient_in, real));
    WHAM_JAX_TRY(expect_type(op, "gradient's result", *gradient, real));
    WHAM_JAX_TRY(expect_count(op, "gradient", *gradient_in, 3 * num_points));
    WHAM_JAX_TRY(expect_count(op, "gradient's result", *gradient, 3 * num_points));
    WHAM_JAX_TRY(expect_aliased(op, "gradient", *gradient_in, *gradient));
  }
  return Error::Success();
}

template <class T>
T* data_or_null(const AnyBuffer* b) {
  return b == nullptr ? nullptr : static_cast<T*>(b->untyped_data());
}

// potential[j] += Re sum conj(L) R(centers[c] - x_j), gradient[j] += its gradient.
Error l2p(const char* op, wham_stream stream, const AnyBuffer& locals, const AnyBuffer& centers,
          const AnyBuffer& cell_offsets, const AnyBuffer& points, const AnyBuffer& potential_in,
          const AnyBuffer& potential, const AnyBuffer* gradient_in, const AnyBuffer* gradient,
          std::int64_t p) {
  WHAM_JAX_TRY(real_type(op, "points", points));
  const DataType real = points.element_type();
  WHAM_JAX_TRY(expect_type(op, "locals", locals, complex_of(real)));
  WHAM_JAX_TRY(expect_type(op, "centers", centers, real));
  std::int64_t num_points = 0, num_cells = 0;
  WHAM_JAX_TRY(rows_of(op, "points", points, 3, &num_points));
  WHAM_JAX_TRY(rows_of(op, "centers", centers, 3, &num_cells));
  const std::int64_t* offsets = nullptr;
  WHAM_JAX_TRY(cells_of(op, cell_offsets, num_cells, &offsets, &num_cells));
  if (coeffs(p) > 0) WHAM_JAX_TRY(expect_count(op, "locals", locals, num_cells * coeffs(p)));
  WHAM_JAX_TRY(fields_of(op, real, num_points, potential_in, potential, gradient_in, gradient));
  const auto p32 = static_cast<std::int32_t>(p);
  if (real == DataType::F32) {
    return status_error(wham_l2p_f32(static_cast<const wham_complex64*>(locals.untyped_data()),
                                     static_cast<const float*>(centers.untyped_data()), offsets,
                                     num_cells, static_cast<const float*>(points.untyped_data()),
                                     num_points, static_cast<float*>(potential.untyped_data()),
                                     data_or_null<float>(gradient), p32, stream));
  }
  return status_error(wham_l2p_f64(static_cast<const wham_complex128*>(locals.untyped_data()),
                                   static_cast<const double*>(centers.untyped_data()), offsets,
                                   num_cells, static_cast<const double*>(points.untyped_data()),
                                   num_points, static_cast<double*>(potential.untyped_data()),
                                   data_or_null<double>(gradient), p32, stream));
}

Error l2p_gradient(wham_stream stream, AnyBuffer locals, AnyBuffer centers, AnyBuffer cell_offsets,
                   AnyBuffer points, AnyBuffer potential_in, AnyBuffer gradient_in,
                   Result<AnyBuffer> potential, Result<AnyBuffer> gradient, std::int64_t p) {
  return l2p("l2p", stream, locals, centers, cell_offsets, points, potential_in, *potential,
             &gradient_in, &*gradient, p);
}

Error l2p_potential(wham_stream stream, AnyBuffer locals, AnyBuffer centers, AnyBuffer cell_offsets,
                    AnyBuffer points, AnyBuffer potential_in, Result<AnyBuffer> potential,
                    std::int64_t p) {
  return l2p("l2p", stream, locals, centers, cell_offsets, points, potential_in, *potential,
             nullptr, nullptr, p);
}

// For each target cell t, source cell s near t, points j of t and i of s, r > 0:
// potential[j] += q_i / r, gradient[j] += -q_i (x_j - x_i) / r^3.
Error p2p(const char* op, wham_stream stream, const AnyBuffer& points, const AnyBuffer& charges,
          const AnyBuffer& cell_offsets, const AnyBuffer& near_offsets, const AnyBuffer& near_cells,
          const AnyBuffer& potential_in, const AnyBuffer& potential, const AnyBuffer* gradient_in,
          const AnyBuffer* gradient) {
  WHAM_JAX_TRY(real_type(op, "points", points));
  const DataType real = points.element_type();
  WHAM_JAX_TRY(expect_type(op, "charges", charges, real));
  const std::int64_t num_points = count(charges);
  WHAM_JAX_TRY(expect_count(op, "points", points, 3 * num_points));
  std::int64_t num_cells = 0;
  const std::int64_t* offsets = nullptr;
  WHAM_JAX_TRY(cells_of(op, cell_offsets, -1, &offsets, &num_cells));
  const std::int64_t* near = nullptr;
  std::int64_t num_near_offsets = 0;
  WHAM_JAX_TRY(offsets_of(op, "near_offsets", near_offsets, &near, &num_near_offsets));
  if (num_near_offsets != num_cells + 1) {
    return invalid(op, "near_offsets has " + std::to_string(num_near_offsets) +
                           " offsets; expected num_cells + 1 = " + std::to_string(num_cells + 1));
  }
  WHAM_JAX_TRY(expect_type(op, "near_cells", near_cells, DataType::S32));
  const std::int64_t num_near = count(near_cells);
  WHAM_JAX_TRY(fields_of(op, real, num_points, potential_in, potential, gradient_in, gradient));
  const auto* ids = static_cast<const std::int32_t*>(near_cells.untyped_data());
  if (real == DataType::F32) {
    return status_error(wham_p2p_f32(static_cast<const float*>(points.untyped_data()),
                                     static_cast<const float*>(charges.untyped_data()), num_points,
                                     offsets, num_cells, near, ids, num_near,
                                     static_cast<float*>(potential.untyped_data()),
                                     data_or_null<float>(gradient), stream));
  }
  return status_error(wham_p2p_f64(static_cast<const double*>(points.untyped_data()),
                                   static_cast<const double*>(charges.untyped_data()), num_points,
                                   offsets, num_cells, near, ids, num_near,
                                   static_cast<double*>(potential.untyped_data()),
                                   data_or_null<double>(gradient), stream));
}

Error p2p_gradient(wham_stream stream, AnyBuffer points, AnyBuffer charges, AnyBuffer cell_offsets,
                   AnyBuffer near_offsets, AnyBuffer near_cells, AnyBuffer potential_in,
                   AnyBuffer gradient_in, Result<AnyBuffer> potential, Result<AnyBuffer> gradient) {
  return p2p("p2p", stream, points, charges, cell_offsets, near_offsets, near_cells, potential_in,
             *potential, &gradient_in, &*gradient);
}

Error p2p_potential(wham_stream stream, AnyBuffer points, AnyBuffer charges, AnyBuffer cell_offsets,
                    AnyBuffer near_offsets, AnyBuffer near_cells, AnyBuffer potential_in,
                    Result<AnyBuffer> potential) {
  return p2p("p2p", stream, points, charges, cell_offsets, near_offsets, near_cells, potential_in,
             *potential, nullptr, nullptr);
}

}  // namespace
}  // namespace wham_jax

namespace ffi = xla::ffi;

XLA_FFI_DEFINE_HANDLER_SYMBOL(wham_jax_p2m, wham_jax::p2m,
                              ffi::Ffi::Bind()
                                  .Ctx<wham_jax::Stream>()
                                  .Arg<ffi::AnyBuffer>()  // points
                                  .Arg<ffi::AnyBuffer>()  // charges
                                  .Arg<ffi::AnyBuffer>()  // cell_offsets
                                  .Arg<ffi::AnyBuffer>()  // centers
                                  .Ret<ffi::AnyBuffer>()  // multipoles
                                  .Attr<std::int64_t>("p"),
                              {wham_jax::kTraits});

XLA_FFI_DEFINE_HANDLER_SYMBOL(wham_jax_l2p, wham_jax::l2p_gradient,
                              ffi::Ffi::Bind()
                                  .Ctx<wham_jax::Stream>()
                                  .Arg<ffi::AnyBuffer>()  // locals
                                  .Arg<ffi::AnyBuffer>()  // centers
                                  .Arg<ffi::AnyBuffer>()  // cell_offsets
                                  .Arg<ffi::AnyBuffer>()  // points
                                  .Arg<ffi::AnyBuffer>()  // potential (aliased with result 0)
                                  .Arg<ffi::AnyBuffer>()  // gradient (aliased with result 1)
                                  .Ret<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<std::int64_t>("p"),
                              {wham_jax::kTraits});

XLA_FFI_DEFINE_HANDLER_SYMBOL(wham_jax_l2p_potential, wham_jax::l2p_potential,
                              ffi::Ffi::Bind()
                                  .Ctx<wham_jax::Stream>()
                                  .Arg<ffi::AnyBuffer>()  // locals
                                  .Arg<ffi::AnyBuffer>()  // centers
                                  .Arg<ffi::AnyBuffer>()  // cell_offsets
                                  .Arg<ffi::AnyBuffer>()  // points
                                  .Arg<ffi::AnyBuffer>()  // potential (aliased with the result)
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<std::int64_t>("p"),
                              {wham_jax::kTraits});

XLA_FFI_DEFINE_HANDLER_SYMBOL(wham_jax_p2p, wham_jax::p2p_gradient,
                              ffi::Ffi::Bind()
                                  .Ctx<wham_jax::Stream>()
                                  .Arg<ffi::AnyBuffer>()  // points
                                  .Arg<ffi::AnyBuffer>()  // charges
                                  .Arg<ffi::AnyBuffer>()  // cell_offsets
                                  .Arg<ffi::AnyBuffer>()  // near_offsets
                                  .Arg<ffi::AnyBuffer>()  // near_cells
                                  .Arg<ffi::AnyBuffer>()  // potential (aliased with result 0)
                                  .Arg<ffi::AnyBuffer>()  // gradient (aliased with result 1)
                                  .Ret<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>(),
                              {wham_jax::kTraits});

XLA_FFI_DEFINE_HANDLER_SYMBOL(wham_jax_p2p_potential, wham_jax::p2p_potential,
                              ffi::Ffi::Bind()
                                  .Ctx<wham_jax::Stream>()
                                  .Arg<ffi::AnyBuffer>()  // points
                                  .Arg<ffi::AnyBuffer>()  // charges
                                  .Arg<ffi::AnyBuffer>()  // cell_offsets
                                  .Arg<ffi::AnyBuffer>()  // near_offsets
                                  .Arg<ffi::AnyBuffer>()  // near_cells
                                  .Arg<ffi::AnyBuffer>()  // potential (aliased with the result)
                                  .Ret<ffi::AnyBuffer>(),
                              {wham_jax::kTraits});
