/// \file wham/detail/particles/check.cuh
/// \brief The particle operators' argument checks (wham/particles.cuh): the limits on the
/// counts, and the pointer checks in the order every operator runs them: null and
/// alignment, outputs apart from every other argument, then (a device query) whether the
/// device can address each pointer.
#pragma once

#include <wham/error.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>

namespace wham::detail::particles {

/// Largest point count: 3 values of T a point (points, gradient) within int64 bytes.
template <class T>
inline constexpr std::int64_t max_points = INT64_MAX / (3 * std::int64_t(sizeof(T)));

/// Largest cell count: cell ids are int32 (near_cells), and a cell is one block (P2M) or
/// one warp of a grid of at most 2^31 - 1 blocks.
inline constexpr std::int64_t max_cells = 0x7fffffff;

/// Largest near-list length: int32 entries within int64 bytes.
inline constexpr std::int64_t max_near = INT64_MAX / 4;

/// One argument's device range: its name, address and size in bytes.
struct span {
  const char* name;
  const void* p;
  std::uint64_t bytes;
};

/// A pointer the call reads or writes: not null, aligned to its element type.
template <class E>
inline void check_buffer(const char* f, const char* name, const E* p) {
  check_not_null(f, name, p);
  check_aligned(f, name, p);
}

/// Throws when the output `out` shares a byte with any of `others` (null ones skipped).
inline void check_apart(const char* f, const span& out, std::initializer_list<span> others) {
  if (out.p == nullptr || out.bytes == 0) return;
  for (const span& o : others) {
    if (o.p != nullptr && o.bytes != 0 && ranges_overlap(out.p, out.bytes, o.p, o.bytes)) {
      throw_invalid_argument(f, out.name, std::string("a range overlapping ") + o.name,
                             "a buffer apart from every other argument");
    }
  }
}

/// check_device_accessible for each non-null pointer, in order.
inline void check_accessible(const char* f, std::initializer_list<span> args) {
  for (const span& a : args) {
    if (a.p != nullptr) check_device_accessible(f, a.name, a.p);
  }
}

}  // namespace wham::detail::particles
