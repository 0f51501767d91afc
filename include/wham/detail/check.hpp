/// \file wham/detail/check.hpp
/// \brief The argument checks every entry point composes, in the order each runs them:
/// scalars (check_range, check_range_for, check_enum), then each pointer's null and
/// alignment (check_buffer, check_optional_buffer), then outputs apart from every other
/// argument (check_apart), and last, a device query, whether the device can address each
/// pointer (check_accessible). A pointer's device range is a `span` (span_of gives one
/// from an element count), so the overlap and accessibility checks read one list.
///
/// Plain C++17 (with the CUDA runtime's headers on the path): messages come from
/// wham/error.hpp's throw_invalid_argument, every valid range from the limits checked.
#pragma once

#include <wham/error.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>

namespace wham::detail {

/// One argument's device range: its name, address and size in bytes (null or 0 bytes:
/// an argument the call does not touch, skipped by check_apart and check_accessible).
struct span {
  const char* name;
  const void* p;
  std::uint64_t bytes;
};

/// The span of `count` elements of E at `p`.
template <class E>
constexpr span span_of(const char* name, const E* p, std::uint64_t count) {
  return {name, p, count * sizeof(E)};
}

/// "lo..hi": the text of a valid range, from the same limits as its check.
inline std::string range_text(long long lo, long long hi) {
  return std::to_string(lo) + ".." + std::to_string(hi);
}

/// Throws unless `lo <= value <= hi`, the range said with what it holds for
/// ("0..4 for translation_path::direct").
inline void check_range_for(const char* function, const char* argument, long long value,
                            long long lo, long long hi, const std::string& context) {
  if (value < lo || value > hi) {
    throw_invalid_argument(function, argument, value, range_text(lo, hi) + " for " + context);
  }
}

/// A pointer the call reads or writes: not null, aligned to its element type.
template <class E>
inline void check_buffer(const char* function, const char* argument, const E* p) {
  check_not_null(function, argument, p);
  check_aligned(function, argument, p);
}

/// A pointer the call may be given as null (an output not computed): aligned when given.
template <class E>
inline void check_optional_buffer(const char* function, const char* argument, const E* p) {
  if (p != nullptr) check_aligned(function, argument, p);
}

/// Throws when the output `out` shares a byte with any of `others`, naming both.
inline void check_apart(const char* function, const span& out, std::initializer_list<span> others) {
  if (out.p == nullptr || out.bytes == 0) return;
  for (const span& o : others) {
    if (o.p != nullptr && o.bytes != 0 && ranges_overlap(out.p, out.bytes, o.p, o.bytes)) {
      throw_invalid_argument(function, out.name, std::string("a range overlapping ") + o.name,
                             "a buffer apart from every other argument");
    }
  }
}

/// check_device_accessible for each given pointer, in order (a device query: after every
/// pure check).
inline void check_accessible(const char* function, std::initializer_list<span> args) {
  for (const span& a : args) {
    if (a.p != nullptr && a.bytes != 0) check_device_accessible(function, a.name, a.p);
  }
}

}  // namespace wham::detail
