/// \file wham/detail/particles/dispatch.cuh
/// \brief The one call each particle operator (wham/particles.cuh) makes once its
/// arguments have passed the checks that need no device: whether the device can address
/// each pointer (a device query), then the launch. The counts' limits, which the public
/// functions check, live here beside the launches whose grids and offsets they bound.
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/check.hpp>
#include <wham/detail/particles/l2p.cuh>
#include <wham/detail/particles/p2m.cuh>
#include <wham/detail/particles/p2p.cuh>

#include <cuda_runtime_api.h>

#include <cstdint>

namespace wham::detail::particles {

/// Largest point count: 3 values of T a point (points, gradient) within int64 bytes.
template <class T>
inline constexpr std::int64_t max_points = INT64_MAX / (3 * std::int64_t(sizeof(T)));

/// Largest cell count: cell ids are int32 (near_cells), and a cell is one block (P2M) or
/// one warp of a grid of at most 2^31 - 1 blocks.
inline constexpr std::int64_t max_cells = 0x7fffffff;

/// Largest near-list length: int32 entries within int64 bytes.
inline constexpr std::int64_t max_near = INT64_MAX / 4;

/// wham::p2m after its pure checks (num_cells >= 1; points and charges null without points).
template <class T>
void run_p2m(int p, const T* points, const T* charges, std::int64_t num_points,
             const std::int64_t* cell_offsets, const T* centers, std::int64_t num_cells,
             cpx<T>* multipoles, cudaStream_t stream) {
  const auto np = std::uint64_t(num_points), nc = std::uint64_t(num_cells);
  check_accessible("p2m", {span_of("points", points, 3 * np), span_of("charges", charges, np),
                           span_of("cell_offsets", cell_offsets, nc + 1),
                           span_of("centers", centers, 3 * nc),
                           span_of("multipoles", multipoles, nc * m2l_num_coeffs(p))});
  launch_p2m<T>(p, points, charges, num_points, cell_offsets, centers, num_cells, multipoles,
                stream);
}

/// wham::l2p after its pure checks (num_cells, num_points >= 1; gradient may be null).
template <class T>
void run_l2p(int p, const cpx<T>* locals, const T* centers, const std::int64_t* cell_offsets,
             std::int64_t num_cells, const T* points, std::int64_t num_points, T* potential,
             T* gradient, cudaStream_t stream) {
  const auto np = std::uint64_t(num_points), nc = std::uint64_t(num_cells);
  check_accessible("l2p", {span_of("locals", locals, nc * m2l_num_coeffs(p)),
                           span_of("centers", centers, 3 * nc),
                           span_of("cell_offsets", cell_offsets, nc + 1),
                           span_of("points", points, 3 * np), span_of("potential", potential, np),
                           span_of("gradient", gradient, 3 * np)});
  launch_l2p<T>(p, locals, centers, cell_offsets, num_cells, points, num_points, potential,
                gradient, stream);
}

/// wham::p2p after its pure checks (num_cells, num_points, num_near >= 1; gradient may be
/// null).
template <class T>
void run_p2p(const T* points, const T* charges, std::int64_t num_points,
             const std::int64_t* cell_offsets, std::int64_t num_cells,
             const std::int64_t* near_offsets, const std::int32_t* near_cells,
             std::int64_t num_near, T* potential, T* gradient, cudaStream_t stream) {
  const auto np = std::uint64_t(num_points), nc = std::uint64_t(num_cells);
  check_accessible("p2p", {span_of("points", points, 3 * np), span_of("charges", charges, np),
                           span_of("cell_offsets", cell_offsets, nc + 1),
                           span_of("near_offsets", near_offsets, nc + 1),
                           span_of("near_cells", near_cells, std::uint64_t(num_near)),
                           span_of("potential", potential, np),
                           span_of("gradient", gradient, 3 * np)});
  launch_p2p<T>(points, charges, num_points, cell_offsets, num_cells, near_offsets, near_cells,
                num_near, potential, gradient, stream);
}

}  // namespace wham::detail::particles
