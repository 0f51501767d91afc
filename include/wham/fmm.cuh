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
///   multipoles  [num_cells][(p+1)^2] cuda::std::complex<T>  (indexed by src[i])
///   locals      [num_cells][(p+1)^2] cuda::std::complex<T>  (indexed by tgt[i]; added to,
///               never overwritten: zero it first for a fresh sum). Must not overlap
///               multipoles.
///   src, tgt    [num_pairs] int32 cell indices (the caller guarantees they are in range)
/// and the displacement of pair i from one of three sources:
///   m2l_accumulate          deltas [num_pairs][3] T
///   m2l_accumulate_centers  centers [num_cells][3] T: delta_i = centers[tgt[i]] - centers[src[i]]
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
/// orders run m2l_accumulate_classes' atomic schedules.
/// A zero or non-finite displacement is the caller's error: that pair's target gets
/// non-finite values (as wham::m2l), no other target is affected.
///
/// \code
///   // one octree level: 4096 cells, p = 4 (25 coefficients a cell)
///   auto list = wham::uniform_interaction_lists(4);     // host, 0.7M pairs
///   // ... copy list.src, list.tgt and the cell centres to the device ...
///   cudaMemsetAsync(d_L, 0, 4096 * 25 * sizeof(cuda::std::complex<double>), stream);
///   wham::m2l_accumulate_centers(d_M, d_centers, d_src, d_tgt, d_L, 4,
///                                std::int64_t(list.size()), stream);
/// \endcode
///
/// Conventions (wham/error.hpp): enqueued on `stream`, no allocation, no
/// synchronisation, capturable in a CUDA graph; bad arguments throw wham::error.
#pragma once

#include <wham/detail/fmm/dispatch.cuh>
#include <wham/detail/fmm/pair_list.cuh>
#include <wham/error.hpp>
#include <wham/m2l.cuh>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

namespace wham {

/// How the accumulate form sums the pairs of one target.
enum class m2l_accumulate_method {
  automatic,      ///< atomic
  atomic,         ///< any pair order; atomics; agrees to rounding run to run
  deterministic,  ///< pairs grouped by target; no atomics; bitwise reproducible
};

namespace detail::fmm {

template <class T>
void check_common(const char* f, int p, const cuda::std::complex<T>* multipoles,
                  const cuda::std::complex<T>* locals, const std::int32_t* src,
                  const std::int32_t* tgt, const T* geo, const char* geo_name,
                  std::int64_t num_pairs, m2l_accumulate_method method) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "wham::m2l_accumulate: T must be float or double");
  check_range(f, "p", p, 0, m2l_max_order<T>());
  // 32 pairs a warp unit and 64-bit coefficient offsets
  check_range(f, "num_pairs", num_pairs, 0, std::int64_t(0x7fffffff) * 32);
  check_range(f, "method", int(method), 0, 2);
  if (num_pairs == 0) return;
  check_not_null(f, "multipoles", multipoles);
  check_not_null(f, "locals", locals);
  check_not_null(f, "src", src);
  check_not_null(f, "tgt", tgt);
  check_not_null(f, geo_name, geo);
  if (static_cast<const void*>(multipoles) == static_cast<const void*>(locals)) {
    throw_invalid_argument(f, "locals", "the multipoles pointer", "a buffer apart from multipoles");
  }
}

/// The class forms' checks and pair list (num_pairs > 0 when `cls` is checked).
template <class T>
pair_list<T> class_list(const char* f, const cuda::std::complex<T>* multipoles,
                        const T* class_deltas, const std::int32_t* cls, const std::int32_t* src,
                        const std::int32_t* tgt, cuda::std::complex<T>* locals, int p,
                        std::int64_t num_pairs, int num_classes, m2l_accumulate_method method) {
  check_common(f, p, multipoles, locals, src, tgt, class_deltas, "class_deltas", num_pairs, method);
  check_range(f, "num_classes", num_classes, 1, max_classes);
  if (num_pairs > 0) check_not_null(f, "cls", cls);
  return {reinterpret_cast<const cpx<T>*>(multipoles),
          reinterpret_cast<cpx<T>*>(locals),
          src,
          tgt,
          cls,
          class_deltas,
          num_classes,
          geometry::classes,
          num_pairs};
}

/// The pair list of the forms without classes.
template <class T>
pair_list<T> plain_list(const cuda::std::complex<T>* multipoles, const T* geo,
                        const std::int32_t* src, const std::int32_t* tgt,
                        cuda::std::complex<T>* locals, std::int64_t num_pairs, geometry mode) {
  return {reinterpret_cast<const cpx<T>*>(multipoles),
          reinterpret_cast<cpx<T>*>(locals),
          src,
          tgt,
          nullptr,
          geo,
          0,
          mode,
          num_pairs};
}

}  // namespace detail::fmm

/// locals[tgt[i]] += M2L_p(multipoles[src[i]], deltas[i]) for i < num_pairs.
/// \param deltas     device pointer, num_pairs * 3 values (target minus source centre)
/// \param p          order, 0..m2l_max_order<T>()
/// \param num_pairs  >= 0 (0 enqueues nothing; the pointers may then be null)
template <class T>
void m2l_accumulate(const cuda::std::complex<T>* multipoles, const T* deltas,
                    const std::int32_t* src, const std::int32_t* tgt, cuda::std::complex<T>* locals,
                    int p, std::int64_t num_pairs, cudaStream_t stream = 0,
                    m2l_accumulate_method method = m2l_accumulate_method::automatic) {
  detail::fmm::check_common("m2l_accumulate", p, multipoles, locals, src, tgt, deltas, "deltas",
                            num_pairs, method);
  if (num_pairs == 0) return;
  detail::fmm::launch_accumulate<T>(
      detail::fmm::plain_list(multipoles, deltas, src, tgt, locals, num_pairs,
                              detail::fmm::geometry::pair_deltas),
      p, method == m2l_accumulate_method::deterministic, stream);
}

/// locals[tgt[i]] += M2L_p(multipoles[src[i]], centers[tgt[i]] - centers[src[i]]).
/// \param centers  device pointer, [num_cells][3] cell centres
template <class T>
void m2l_accumulate_centers(const cuda::std::complex<T>* multipoles, const T* centers,
                            const std::int32_t* src, const std::int32_t* tgt,
                            cuda::std::complex<T>* locals, int p, std::int64_t num_pairs,
                            cudaStream_t stream = 0,
                            m2l_accumulate_method method = m2l_accumulate_method::automatic) {
  detail::fmm::check_common("m2l_accumulate_centers", p, multipoles, locals, src, tgt, centers,
                            "centers", num_pairs, method);
  if (num_pairs == 0) return;
  detail::fmm::launch_accumulate<T>(
      detail::fmm::plain_list(multipoles, centers, src, tgt, locals, num_pairs,
                              detail::fmm::geometry::centers),
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
                            std::int64_t num_pairs, int num_classes, cudaStream_t stream = 0,
                            m2l_accumulate_method method = m2l_accumulate_method::automatic) {
  const auto l = detail::fmm::class_list("m2l_accumulate_classes", multipoles, class_deltas, cls,
                                         src, tgt, locals, p, num_pairs, num_classes, method);
  if (num_pairs == 0) return;
  detail::fmm::launch_accumulate<T>(l, p, method == m2l_accumulate_method::deterministic, stream);
}

/// Class form over pairs grouped by class: locals[tgt[i]] += M2L_p(multipoles[src[i]],
/// class_deltas[cls[i]]), atomics (results agree to rounding run to run). Arguments as
/// m2l_accumulate_classes; fastest when the pairs of each class are contiguous (on
/// large levels in double: within each tile of targets, wham::group_by_tile_and_class).
template <class T>
void m2l_accumulate_class_groups(const cuda::std::complex<T>* multipoles, const T* class_deltas,
                                 const std::int32_t* cls, const std::int32_t* src,
                                 const std::int32_t* tgt, cuda::std::complex<T>* locals, int p,
                                 std::int64_t num_pairs, int num_classes, cudaStream_t stream = 0) {
  const auto l = detail::fmm::class_list("m2l_accumulate_class_groups", multipoles, class_deltas,
                                         cls, src, tgt, locals, p, num_pairs, num_classes,
                                         m2l_accumulate_method::atomic);
  if (num_pairs == 0) return;
  detail::fmm::launch_grouped<T>(l, p, stream);
}

}  // namespace wham
