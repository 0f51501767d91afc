// What every XLA FFI handler of libwham_jax.so shares: the status -> ffi::Error mapping,
// the shape checks and the element-type switches. The handlers are host code over the C
// interface (wham/wham.h): they enqueue on the stream XLA hands them, allocate nothing and
// synchronise nothing, so XLA may record them in a command buffer (CUDA graph).
//
// Devices: XLA makes the executing device's context current for the whole execution, so
// wham's "calling thread's current device" is the device XLA runs the handler on.
#pragma once

#include <wham/wham.h>

#include "xla/ffi/api/ffi.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace wham_jax {

namespace ffi = xla::ffi;

// cudaStream_t is struct CUstream_st*, as wham_stream: no CUDA header needed.
using Stream = ffi::PlatformStream<wham_stream>;

// Every handler is recordable in a CUDA graph: wham's launchers are capturable.
inline constexpr ffi::Traits kTraits = ffi::Traits::kCmdBufferCompatible;

/// ffi::Error of a wham_status: wham_last_error()'s message, the status's name where the
/// library left none.
inline ffi::Error status_error(wham_status status) {
  if (status == WHAM_SUCCESS) return ffi::Error::Success();
  const char* message = wham_last_error();
  std::string text =
      (message != nullptr && *message != '\0') ? message : wham_status_string(status);
  switch (status) {
    case WHAM_ERROR_INVALID_ARGUMENT:
      return ffi::Error(ffi::ErrorCode::kInvalidArgument, std::move(text));
    case WHAM_ERROR_NOT_SUPPORTED:
      return ffi::Error(ffi::ErrorCode::kUnimplemented, std::move(text));
    case WHAM_ERROR_NO_DEVICE:
      return ffi::Error(ffi::ErrorCode::kFailedPrecondition, std::move(text));
    default:
      return ffi::Error(ffi::ErrorCode::kInternal, std::move(text));
  }
}

/// An invalid-argument error naming the operator ("wham.jax.<op>: ...").
inline ffi::Error invalid(const char* op, const std::string& what) {
  return ffi::Error::InvalidArgument(std::string("wham.jax.") + op + ": " + what);
}

inline std::string dtype_text(ffi::DataType t) {
  switch (t) {
    case ffi::DataType::F16:
      return "float16";
    case ffi::DataType::BF16:
      return "bfloat16";
    case ffi::DataType::F32:
      return "float32";
    case ffi::DataType::F64:
      return "float64";
    case ffi::DataType::C64:
      return "complex64";
    case ffi::DataType::C128:
      return "complex128";
    case ffi::DataType::S32:
      return "int32";
    case ffi::DataType::S64:
      return "int64";
    default:
      return "XLA_FFI_DataType " + std::to_string(static_cast<int>(t));
  }
}

/// Elements of a buffer as int64_t.
inline std::int64_t count(const ffi::AnyBuffer& b) {
  return static_cast<std::int64_t>(b.element_count());
}

/// The last dimension (0 for a rank-0 buffer).
inline std::int64_t last_dim(const ffi::AnyBuffer& b) {
  auto dims = b.dimensions();
  return dims.size() == 0 ? 0 : dims.back();
}

/// Checks that `b` has element type `t`.
inline ffi::Error expect_type(const char* op, const char* name, const ffi::AnyBuffer& b,
                              ffi::DataType t) {
  if (b.element_type() == t) return ffi::Error::Success();
  return invalid(op, std::string(name) + " has element type " + dtype_text(b.element_type()) +
                         "; expected " + dtype_text(t));
}

/// Checks that `b` holds `n` elements.
inline ffi::Error expect_count(const char* op, const char* name, const ffi::AnyBuffer& b,
                               std::int64_t n) {
  if (count(b) == n) return ffi::Error::Success();
  return invalid(op, std::string(name) + " has " + std::to_string(count(b)) +
                         " elements; expected " + std::to_string(n));
}

/// Rows of `width` elements in `b` (checked: a whole number of them).
inline ffi::Error rows_of(const char* op, const char* name, const ffi::AnyBuffer& b,
                          std::int64_t width, std::int64_t* rows) {
  const std::int64_t n = count(b);
  if (width <= 0 || n % width != 0) {
    return invalid(op, std::string(name) + " has " + std::to_string(n) +
                           " elements, not a whole number of rows of " + std::to_string(width));
  }
  *rows = n / width;
  return ffi::Error::Success();
}

/// An accumulate form's target: the result aliases the operand (input_output_aliases), so
/// the call adds to the operand's values in the result's memory.
inline ffi::Error expect_aliased(const char* op, const char* name, const ffi::AnyBuffer& in,
                                 const ffi::AnyBuffer& out) {
  if (in.untyped_data() == out.untyped_data() || count(in) == 0) return ffi::Error::Success();
  return ffi::Error::Internal(std::string("wham.jax.") + op + ": the result does not alias " +
                              name + " (call it with input_output_aliases)");
}

/// (p+1)^2 for an order attribute; 0 (which no buffer matches) outside 0..46339.
inline std::int64_t coeffs(std::int64_t p) {
  return (p >= 0 && p <= 46339) ? (p + 1) * (p + 1) : 0;
}

/// Cell offsets as int64_t: an int64 [num_cells + 1] array, or, where JAX runs without
/// 64-bit types, int32 [num_cells + 1, 2] (low word, high word) pairs, the same bytes.
inline ffi::Error offsets_of(const char* op, const char* name, const ffi::AnyBuffer& b,
                             const std::int64_t** data, std::int64_t* n) {
  if (b.element_type() == ffi::DataType::S64) {
    *n = count(b);
  } else if (b.element_type() == ffi::DataType::S32 && last_dim(b) == 2) {
    *n = count(b) / 2;
  } else {
    return invalid(op, std::string(name) +
                           " must be int64 [num_cells + 1], or int32 [num_cells + 1, 2] "
                           "(low, high) words; got element type " +
                           dtype_text(b.element_type()));
  }
  *data = static_cast<const std::int64_t*>(b.untyped_data());
  return ffi::Error::Success();
}

#define WHAM_JAX_TRY(expr)                                 \
  do {                                                     \
    ::xla::ffi::Error wham_jax_error_ = (expr);            \
    if (wham_jax_error_.failure()) return wham_jax_error_; \
  } while (0)

}  // namespace wham_jax
