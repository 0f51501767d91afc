/// \file wham/fmm.cuh
/// \brief The M2L operator as a fast multipole method uses it: interaction lists
/// translated into accumulated local expansions.
///
///     for i < num_pairs:  locals[tgt[i]] += M2L_p(multipoles[src[i]], delta_i)
///
/// M2L_p is exactly wham::m2l's operator (wham/m2l.cuh, docs/specs/m2l.md): complex
/// solid-harmonic expansions of order p, `(p+1)^2` coefficients, index(n, m) = n*n + n + m,
/// `delta = target centre - source centre`, truncation n + k <= p. The contracts of these
/// forms: docs/specs/fmm.md.
///
/// Layouts (row-major, device memory):
///   multipoles  [num_multipoles][(p+1)^2] cuda::std::complex<T>  (row src[i] read)
///   locals      [num_locals][(p+1)^2] cuda::std::complex<T>  (row tgt[i] added to, never
///               overwritten: zero it first for a fresh sum). Must not overlap any input.
///   src, tgt    [num_pairs] int32 row indices. A pair whose src is outside
///               0..num_multipoles-1 or whose tgt is outside 0..num_locals-1 contributes
///               nothing: no index, however wrong, reads or writes outside the buffers.
///               wham::check_interaction_list counts such pairs.
/// and the displacement of pair i from one of three sources:
///   m2l_accumulate          deltas [num_pairs][3] T
///   m2l_accumulate_centers  centers [max(num_multipoles, num_locals)][3] T:
///                           delta_i = centers[tgt[i]] - centers[src[i]]
///   m2l_accumulate_classes  class_deltas [num_classes][3] T and cls [num_pairs] int32:
///                           delta_i = class_deltas[cls[i]] (a uniform octree level has 316
///                           classes, wham/fmm_lists.hpp). Each block makes the rotation
///                           data of every class once in shared memory; nothing per pair or
///                           per class is written to device memory. A class id out of range
///                           gives NaN in that pair's target.
///   m2l_accumulate_class_groups  the class form for pairs grouped by class (the pairs of
///                           a class contiguous, wham::group_by_class): each class's
///                           operator is made once in shared memory and applied to many
///                           pairs at a time; atomic accumulation. Any order is correct;
///                           every change of class rebuilds the operator, so an ungrouped
///                           list is slow. On a level whose multipoles and locals outgrow
///                           the L2 cache (32^3 cells at p >= 8 in double), grouping by
///                           tiles of targets first (wham::group_by_tile_and_class, four to
///                           eight z-planes a tile) runs faster in double; float runs
///                           faster by class alone.
///
/// Accumulation (m2l_accumulate_method):
///   atomic         any pair order. Each block sums the pairs of its tile that share a
///                  target (runs of consecutive pairs) before one atomicAdd per real
///                  lane, so target-sorted lists need the fewest atomics. The summation
///                  order between blocks varies run to run: results agree to rounding.
///   deterministic  no atomics, bitwise-identical results run to run: each target's sum
///                  is formed in list order by one owner and added to locals once.
///                  Requires the pairs of each target to be contiguous in the list
///                  (grouped by target, e.g. wham::interaction_lists); a target split
///                  over two runs is a data race (caller's error).
///   automatic      atomic (faster than deterministic at every order measured).
///
/// Order p in 0..m2l_max_order<T>() (20 in double, 16 in float). `automatic`
/// (detail/fmm/dispatch.cuh): the accumulate forms run wham::m2l's choice of schedule by
/// order (one thread a pair, one lane a pair with its degrees over a block's warps, one
/// warp a pair), with the tensor-core schedule where wham::m2l takes it in double for the
/// atomic method; m2l_accumulate_class_groups runs, in double, a dense tensor-core product
/// per class from p = 1 to 10, the class operator as real matrices from p = 11 (on the
/// tensor cores from p = 13), in float those matrices from p = 10, up to p = 16; other
/// orders run m2l_accumulate_classes' atomic schedules. Where a schedule's block (with its
/// pairs' indices and class table) outgrows the device's shared memory (99 KB a block on
/// compute capability 8.6 and 8.9), the next that fits runs: split, then warp.
/// A zero or non-finite displacement is the caller's error: that pair's target gets
/// non-finite values (as wham::m2l), no other target is affected.
///
/// \code
///   // one octree level: 4096 cells, p = 4 (25 coefficients a cell)
///   auto list = wham::uniform_interaction_lists(4);     // host, 0.7M pairs
///   // ... copy list.src, list.tgt and the cell centres to the device ...
///   cudaMemsetAsync(d_L, 0, 4096 * 25 * sizeof(cuda::std::complex<double>), stream);
///   wham::m2l_accumulate_centers(d_M, d_centers, d_src, d_tgt, d_L, 4,
///                                std::int64_t(list.size()), 4096, 4096, stream);
/// \endcode
///
/// Conventions (wham/error.hpp): enqueued on `stream`, no allocation, no
/// synchronisation, capturable in a CUDA graph; bad arguments throw wham::error: null,
/// misaligned or host (not device-accessible) pointers, ranges, and a locals buffer that
/// shares a byte with any input.
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/check.hpp>
#include <wham/detail/fmm/check.cuh>
#include <wham/detail/fmm/count_out_of_range.cuh>
#include <wham/detail/fmm/dispatch.cuh>
#include <wham/detail/fmm/pair_list.cuh>
#include <wham/error.hpp>
#include <wham/m2l.cuh>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace wham {

// m2l_accumulate_method and the declarations with their default arguments: detail/api.hpp.

/// locals[tgt[i]] += M2L_p(multipoles[src[i]], deltas[i]) for i < num_pairs.
/// \param multipoles      device pointer, [num_multipoles][(p+1)^2]
/// \param deltas          device pointer, num_pairs * 3 values (target minus source centre)
/// \param src, tgt        device pointers, num_pairs row indices (out of range: see above)
/// \param locals          device pointer, [num_locals][(p+1)^2], added to
/// \param p               order, 0..m2l_max_order<T>()
/// \param num_pairs       >= 0 (0 enqueues nothing; the pointers may then be null)
/// \param num_multipoles  rows of multipoles, 1..2^31 (0 allowed without pairs)
/// \param num_locals      rows of locals, 1..2^31 (0 allowed without pairs)
template <class T>
void m2l_accumulate(const cuda::std::complex<T>* multipoles, const T* deltas,
                    const std::int32_t* src, const std::int32_t* tgt, cuda::std::complex<T>* locals,
                    int p, std::int64_t num_pairs, std::int64_t num_multipoles,
                    std::int64_t num_locals, cudaStream_t stream, m2l_accumulate_method method) {
  constexpr const char* f = "m2l_accumulate";
  detail::fmm::check_arguments(f, multipoles, deltas, "deltas", num_pairs * 3, nullptr, src, tgt,
                               locals, p, num_pairs, num_multipoles, num_locals, method);
  if (num_pairs == 0) return;
  detail::fmm::run_accumulate<T>(
      f,
      detail::fmm::make_list(multipoles, deltas, nullptr, src, tgt, locals, num_pairs,
                             num_multipoles, num_locals, 0, detail::fmm::geometry::pair_deltas),
      p, method == m2l_accumulate_method::deterministic, stream);
}

/// locals[tgt[i]] += M2L_p(multipoles[src[i]], centers[tgt[i]] - centers[src[i]]).
/// \param centers  device pointer, [max(num_multipoles, num_locals)][3] cell centres (a
///                 source row and a target row with one index are one cell)
template <class T>
void m2l_accumulate_centers(const cuda::std::complex<T>* multipoles, const T* centers,
                            const std::int32_t* src, const std::int32_t* tgt,
                            cuda::std::complex<T>* locals, int p, std::int64_t num_pairs,
                            std::int64_t num_multipoles, std::int64_t num_locals,
                            cudaStream_t stream, m2l_accumulate_method method) {
  constexpr const char* f = "m2l_accumulate_centers";
  detail::fmm::check_arguments(f, multipoles, centers, "centers",
                               std::max(num_multipoles, num_locals) * 3, nullptr, src, tgt, locals,
                               p, num_pairs, num_multipoles, num_locals, method);
  if (num_pairs == 0) return;
  detail::fmm::run_accumulate<T>(
      f,
      detail::fmm::make_list(multipoles, centers, nullptr, src, tgt, locals, num_pairs,
                             num_multipoles, num_locals, 0, detail::fmm::geometry::centers),
      p, method == m2l_accumulate_method::deterministic, stream);
}

/// Class form: locals[tgt[i]] += M2L_p(multipoles[src[i]], class_deltas[cls[i]]).
/// \param class_deltas  device pointer, [num_classes][3] distinct displacements
/// \param cls           device pointer, [num_pairs] class id of each pair
/// \param num_classes   1..1024
template <class T>
void m2l_accumulate_classes(const cuda::std::complex<T>* multipoles, const T* class_deltas,
                            const std::int32_t* cls, const std::int32_t* src,
                            const std::int32_t* tgt, cuda::std::complex<T>* locals, int p,
                            std::int64_t num_pairs, int num_classes, std::int64_t num_multipoles,
                            std::int64_t num_locals, cudaStream_t stream,
                            m2l_accumulate_method method) {
  constexpr const char* f = "m2l_accumulate_classes";
  detail::fmm::check_class_arguments(f, multipoles, class_deltas, cls, src, tgt, locals, p,
                                     num_pairs, num_classes, num_multipoles, num_locals, method);
  if (num_pairs == 0) return;
  detail::fmm::run_accumulate<T>(
      f,
      detail::fmm::make_list(multipoles, class_deltas, cls, src, tgt, locals, num_pairs,
                             num_multipoles, num_locals, num_classes,
                             detail::fmm::geometry::classes),
      p, method == m2l_accumulate_method::deterministic, stream);
}

/// Class form over pairs grouped by class: locals[tgt[i]] += M2L_p(multipoles[src[i]],
/// class_deltas[cls[i]]), atomics (results agree to rounding run to run). Arguments as
/// m2l_accumulate_classes; fastest when the pairs of each class are contiguous (on
/// large levels in double: within each tile of targets, wham::group_by_tile_and_class).
template <class T>
void m2l_accumulate_class_groups(const cuda::std::complex<T>* multipoles, const T* class_deltas,
                                 const std::int32_t* cls, const std::int32_t* src,
                                 const std::int32_t* tgt, cuda::std::complex<T>* locals, int p,
                                 std::int64_t num_pairs, int num_classes,
                                 std::int64_t num_multipoles, std::int64_t num_locals,
                                 cudaStream_t stream) {
  constexpr const char* f = "m2l_accumulate_class_groups";
  detail::fmm::check_class_arguments(f, multipoles, class_deltas, cls, src, tgt, locals, p,
                                     num_pairs, num_classes, num_multipoles, num_locals,
                                     m2l_accumulate_method::atomic);
  if (num_pairs == 0) return;
  detail::fmm::run_grouped<T>(f,
                              detail::fmm::make_list(multipoles, class_deltas, cls, src, tgt,
                                                     locals, num_pairs, num_multipoles, num_locals,
                                                     num_classes, detail::fmm::geometry::classes),
                              p, stream);
}

/// Counts the pairs that m2l_accumulate and its forms skip: src[i] outside
/// 0..num_multipoles-1, tgt[i] outside 0..num_locals-1, or (with cls given, num_classes >= 1)
/// cls[i] outside 0..num_classes-1. Writes the count to *out_of_range (a device pointer:
/// set, not added to), stream-ordered, without allocating or synchronising.
/// \param cls  null for the forms without classes
inline void check_interaction_list(const std::int32_t* src, const std::int32_t* tgt,
                                   const std::int32_t* cls, std::int64_t num_pairs,
                                   std::int64_t num_multipoles, std::int64_t num_locals,
                                   int num_classes, unsigned long long* out_of_range,
                                   cudaStream_t stream = 0) {
  constexpr const char* f = "check_interaction_list";
  detail::check_range(f, "num_pairs", num_pairs, 0, detail::fmm::max_pairs);
  detail::check_range(f, "num_multipoles", num_multipoles, 0, detail::fmm::max_rows);
  detail::check_range(f, "num_locals", num_locals, 0, detail::fmm::max_rows);
  if (cls != nullptr)
    detail::check_range(f, "num_classes", num_classes, 1, detail::fmm::max_classes);
  detail::check_buffer(f, "out_of_range", out_of_range);
  if (num_pairs > 0) {
    detail::check_buffer(f, "src", src);
    detail::check_buffer(f, "tgt", tgt);
    detail::check_optional_buffer(f, "cls", cls);
  }
  detail::fmm::run_count_out_of_range(f, src, tgt, cls, num_pairs, num_multipoles, num_locals,
                                      cls != nullptr ? num_classes : 0, out_of_range, stream);
}

}  // namespace wham
