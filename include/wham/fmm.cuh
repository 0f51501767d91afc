/// \file wham/fmm.cuh
/// \brief The M2L operator as a fast multipole method uses it: interaction lists
/// translated into accumulated local expansions.
///
///     for i < num_pairs:  locals[tgt[i]] += M2L_p(multipoles[src[i]], delta_i)
///
/// M2L_p is exactly wham::m2l's operator (wham/m2l.cuh, shared/specs/m2l.md): complex
/// solid-harmonic expansions of order p, `(p+1)^2` coefficients, index(n, m) = n*n + n + m,
/// `delta = target centre - source centre`, truncation n + k <= p.
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
///                           classes, wham/reference/fmm.hpp). The rotation data of every
///                           class (e^{i alpha}, e^{i beta}, 1/r) is made once per block in
///                           shared memory and shared by the block's pairs of that class;
///                           nothing per pair or per class is written to device memory. A
///                           class id out of range gives NaN in that pair's target.
///   m2l_accumulate_class_groups  the class form for pairs grouped by class (the pairs of
///                           a class contiguous, wham::reference::group_by_class): the
///                           class's whole operator is made once as real matrices in
///                           shared memory (detail/m2l/class_operator.cuh) and applied
///                           to 32 pairs at a time; atomic accumulation. Any order is
///                           correct; every change of class rebuilds the tables, so an
///                           ungrouped list is slow. In double, a level whose
///                           multipoles and locals outgrow the L2 cache (32^3 cells at
///                           p >= 8) runs faster grouped by tiles of targets first
///                           (wham::reference::group_by_tile_and_class, four to eight
///                           z-planes a tile: docs/results/log.md); float does not (there the
///                           extra table rebuilds cost more than the cache saves). In
///                           double from p = 1 to 10 each run of a class is one dense
///                           product on the FP64 tensor cores instead: the class's
///                           direct operator ((-1)^l S_{n+k}^{m-l}) made once in shared
///                           memory from its (p+1)^2 singular harmonics, eight pairs a
///                           product, each pair's result added to its target by one
///                           bulk reduction (except p = 1, 5: atomics), the blocks
///                           taking spans of at most 4096 pairs in turn, so that a list
///                           grouped by tiles of targets keeps its pairs in flight in
///                           the L2 (a 32^3 level by tiles of four z-planes: 1.2-1.35x
///                           faster than without spans from p = 7;
///                           detail/fmm/class_dense.cuh); from p = 11 to 16 the
///                           real matrices above, on the tensor cores from p = 13
///                           (mma.m8n8k4, four pairs a tile; detail/m2l/class_tensor.cuh).
///                           float runs them from p = 10 to 16; other orders run
///                           m2l_accumulate_classes' schedules (atomic).
///
/// Accumulation (m2l_accumulate_method):
///   atomic         any pair order. Each block sums the pairs of its tile that share a
///                  target (runs of consecutive pairs) before one atomicAdd per real
///                  lane, so target-sorted lists need the fewest atomics. The summation
///                  order between blocks varies run to run: results agree to rounding.
///   deterministic  no atomics, bitwise-identical results run to run: each target's sum
///                  is formed in list order by one owner and added to locals once.
///                  Requires the pairs of each target to be contiguous in the list
///                  (grouped by target, e.g. wham::reference::interaction_lists); a
///                  target split over two runs is a data race (caller's error).
///   automatic      atomic: measured faster than deterministic at every order on an
///                  H200 (bench_fmm, 16^3 uniform list, double: p = 4 118 vs 190 us,
///                  p = 8 1.64 vs 1.87 ms, p = 12 6.3 vs 20.6 ms).
///
/// Order p in 0..m2l_max_order<T>() (20 in double, 16 in float); the schedules and
/// their crossovers are wham::m2l's (detail/m2l/fused.cuh): one thread a pair to
/// p = 6 (double) / 8 (float), one lane a pair with its degrees over a block's warps
/// to p = 12 (2 warps to p = 10, 4 above: detail/fmm/accumulate.cuh), one warp a pair
/// above; in double from p = 13 the atomic method runs the tensor-core schedule
/// (detail/m2l/tensor.cuh: four pairs a warp, each run of equal targets among them
/// summed before its atomics), the deterministic one the warp schedule.
/// A zero or non-finite displacement is the caller's error: that pair's target gets
/// non-finite values (as wham::m2l), no other target is affected.
///
/// \code
///   // one octree level: 4096 cells, p = 4 (25 coefficients a cell)
///   auto list = wham::reference::uniform_interaction_lists(4);     // host, 0.7M pairs
///   // ... copy list.src, list.tgt and the cell centres to the device ...
///   cudaMemsetAsync(d_L, 0, 4096 * 25 * sizeof(cuda::std::complex<double>), stream);
///   wham::m2l_accumulate_centers(4, d_M, d_L, d_centers, d_src, d_tgt,
///                                std::int64_t(list.size()), stream);
/// \endcode
///
/// Conventions (wham/error.hpp): enqueued on `stream`, no allocation, no
/// synchronisation, capturable in a CUDA graph; bad arguments throw wham::error.
#pragma once

#include <wham/detail/fmm/accumulate.cuh>
#include <wham/detail/fmm/class_groups.cuh>
#include <wham/error.hpp>
#include <wham/m2l.cuh>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace wham {

/// How the accumulate form sums the pairs of one target.
enum class m2l_accumulate_method {
  automatic,      ///< atomic (the faster of the two on an H200 at every order measured)
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

template <class T>
void run(pair_list<T> l, int p, m2l_accumulate_method method, cudaStream_t stream) {
  const bool deterministic = method == m2l_accumulate_method::deterministic;
  launch_accumulate<T>(l, p, deterministic, pick_schedule<T>(p), stream);
}

/// The class forms' checks and pair list (num_pairs > 0 when `cls` is checked).
template <class T>
pair_list<T> class_list(const char* f, int p, const cuda::std::complex<T>* multipoles,
                        cuda::std::complex<T>* locals, const T* class_deltas, int num_classes,
                        const std::int32_t* cls, const std::int32_t* src,
                        const std::int32_t* tgt, std::int64_t num_pairs,
                        m2l_accumulate_method method) {
  check_common(f, p, multipoles, locals, src, tgt, class_deltas, "class_deltas", num_pairs,
               method);
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

}  // namespace detail::fmm

/// locals[tgt[i]] += M2L_p(multipoles[src[i]], deltas[i]) for i < num_pairs.
/// \param p          order, 0..m2l_max_order<T>()
/// \param deltas     device pointer, num_pairs * 3 values (target minus source centre)
/// \param num_pairs  >= 0 (0 enqueues nothing; the pointers may then be null)
template <class T>
void m2l_accumulate(int p, const cuda::std::complex<T>* multipoles, cuda::std::complex<T>* locals,
                    const std::int32_t* src, const std::int32_t* tgt, const T* deltas,
                    std::int64_t num_pairs, cudaStream_t stream = 0,
                    m2l_accumulate_method method = m2l_accumulate_method::automatic) {
  detail::fmm::check_common("m2l_accumulate", p, multipoles, locals, src, tgt, deltas, "deltas",
                            num_pairs, method);
  if (num_pairs == 0) return;
  using detail::fmm::cpx;
  detail::fmm::pair_list<T> l{reinterpret_cast<const cpx<T>*>(multipoles),
                              reinterpret_cast<cpx<T>*>(locals),
                              src,
                              tgt,
                              nullptr,
                              deltas,
                              0,
                              detail::fmm::geometry::pair_deltas,
                              num_pairs};
  detail::fmm::run(l, p, method, stream);
}

/// locals[tgt[i]] += M2L_p(multipoles[src[i]], centers[tgt[i]] - centers[src[i]]).
/// \param centers  device pointer, [num_cells][3] cell centres
template <class T>
void m2l_accumulate_centers(int p, const cuda::std::complex<T>* multipoles,
                            cuda::std::complex<T>* locals, const T* centers,
                            const std::int32_t* src, const std::int32_t* tgt,
                            std::int64_t num_pairs, cudaStream_t stream = 0,
                            m2l_accumulate_method method = m2l_accumulate_method::automatic) {
  detail::fmm::check_common("m2l_accumulate_centers", p, multipoles, locals, src, tgt, centers,
                            "centers", num_pairs, method);
  if (num_pairs == 0) return;
  using detail::fmm::cpx;
  detail::fmm::pair_list<T> l{reinterpret_cast<const cpx<T>*>(multipoles),
                              reinterpret_cast<cpx<T>*>(locals),
                              src,
                              tgt,
                              nullptr,
                              centers,
                              0,
                              detail::fmm::geometry::centers,
                              num_pairs};
  detail::fmm::run(l, p, method, stream);
}

/// Class form: locals[tgt[i]] += M2L_p(multipoles[src[i]], class_deltas[cls[i]]).
/// \param class_deltas  device pointer, [num_classes][3] distinct displacements
/// \param num_classes   1..1024
/// \param cls           device pointer, [num_pairs] class id of each pair
template <class T>
void m2l_accumulate_classes(int p, const cuda::std::complex<T>* multipoles,
                            cuda::std::complex<T>* locals, const T* class_deltas,
                            int num_classes, const std::int32_t* cls, const std::int32_t* src,
                            const std::int32_t* tgt, std::int64_t num_pairs,
                            cudaStream_t stream = 0,
                            m2l_accumulate_method method = m2l_accumulate_method::automatic) {
  const auto l = detail::fmm::class_list("m2l_accumulate_classes", p, multipoles, locals,
                                         class_deltas, num_classes, cls, src, tgt, num_pairs,
                                         method);
  if (num_pairs == 0) return;
  detail::fmm::run(l, p, method, stream);
}

/// Class form over pairs grouped by class: locals[tgt[i]] += M2L_p(multipoles[src[i]],
/// class_deltas[cls[i]]), atomics (results agree to rounding run to run). Arguments as
/// m2l_accumulate_classes; fastest when the pairs of each class are contiguous (on
/// large levels in double: within each tile of targets, group_by_tile_and_class).
/// Orders the grouped schedules do not take (p = 0, double above 16, float outside
/// 10..16) run m2l_accumulate_classes' atomic schedules.
template <class T>
void m2l_accumulate_class_groups(int p, const cuda::std::complex<T>* multipoles,
                                 cuda::std::complex<T>* locals, const T* class_deltas,
                                 int num_classes, const std::int32_t* cls,
                                 const std::int32_t* src, const std::int32_t* tgt,
                                 std::int64_t num_pairs, cudaStream_t stream = 0) {
  const auto l = detail::fmm::class_list("m2l_accumulate_class_groups", p, multipoles, locals,
                                         class_deltas, num_classes, cls, src, tgt, num_pairs,
                                         m2l_accumulate_method::atomic);
  if (num_pairs == 0) return;
  if (detail::fmm::class_groups_serve<T>(p)) {
    detail::fmm::launch_class_groups<T>(l, p, stream);
  } else {
    detail::fmm::run(l, p, m2l_accumulate_method::atomic, stream);
  }
}

}  // namespace wham
