/// \file wham/translations.cuh
/// \brief The FMM's translations between expansions other than M2L: multipoles up the tree
/// (M2M, child to parent) and locals down it (L2L, parent to child), batched.
///
///     m2m:             out[i] = M2M_p(multipoles[i], deltas[i])
///     l2l:             out[i] = L2L_p(locals[i], deltas[i])
///     m2m_accumulate:  parents[tgt[i]] += M2M_p(multipoles[src[i]], deltas[i])
///     l2l_accumulate:  children[tgt[i]] += L2L_p(locals[src[i]], deltas[i])
///
/// Conventions are wham::m2l's (docs/specs/m2l.md): solidfmm's solid harmonics, (p+1)^2
/// general complex coefficients, index(n, m) = n*n + n + m, delta = target centre - source
/// centre. With R the regular harmonics (docs/specs/translations.md):
///
///     M2M  M'_n^m = sum_{k=0}^{n} sum_l M_k^l R_{n-k}^{m-l}(-delta)        (exact)
///     L2L  L'_k^l = sum_{n=k}^{p} sum_m L_n^m conj(R_{n-k}^{m-l}(-delta))  (exact)
///
/// Both are exact for the orders kept (no truncation error). delta = 0 is the identity.
///
/// Layouts (row-major, device memory):
///   multipoles / locals   [rows][(p+1)^2] cuda::std::complex<T>
///   deltas                [num_pairs][3] T, one per pair (x, y, z)
///   out                   [num_pairs][(p+1)^2], overwritten (pair-streaming forms)
///   parents / children    [num_parents / num_children][(p+1)^2], added to by atomics
///                         (accumulate forms: zero them first for a fresh sum; the order of
///                         the additions varies, so results agree to rounding run to run)
///   src, tgt              [num_pairs] int32 rows; a pair whose src is outside the rows of
///                         multipoles / locals (num_multipoles / num_locals) or whose tgt is
///                         outside those of parents / children contributes nothing: no
///                         index, however wrong, reads or writes outside the buffers.
///
/// Schedules (translation_path; detail/translations/dispatch.cuh, tuning.cuh):
///   direct   one thread a pair, the harmonics of -delta made on chip and the double sum:
///            O(p^4), fewer operations than two rotations up to p = 4; orders 0..4;
///   thread   one thread a pair, rotate so that delta lies on z (M2L's swap matrices and
///            angle powers), translate along z (one triangular Toeplitz product an order
///            m, (-r)^j / j!), rotate back: O(p^3); orders 0..12;
///   split    the same, one pair a lane, the degrees over a block's warps (M2L's split
///            schedule); orders 7..12;
///   warp     the same, one warp a pair, every order;
///   automatic  direct to p = 4 (double) or 3 (float), thread to 6, split to 12, warp
///            above; where a block outgrows the device's shared memory, the next that
///            fits. An explicit path that does not fit throws.
/// The accumulate forms sum each run of consecutive pairs that share a target on chip and
/// add it with one atomic a coefficient (block schedules): list children by parent.
/// Accuracy (relative, the coefficient vector's 2-norm, worst over the polar angle of
/// delta, poles included): double 1.2e-14 at p <= 8, 1.2e-13 at p = 12, 1.5e-12 at p = 16,
/// 1.2e-11 at p = 20; float 1.2e-5 at p <= 8, 8e-5 at p = 12, 6e-4 at p = 16 (the
/// rotations' swap matrices grow like 2^l); the direct form 1e-16 / 1e-7.
/// Orders 0..m2l_max_order<T>() (20 double, 16 float).
///
/// Conventions (wham/error.hpp): enqueued on `stream`, no allocation, no synchronisation,
/// capturable in a CUDA graph; bad arguments throw wham::error before the device is
/// touched: ranges, the path, null, misaligned or host pointers, an output sharing a byte
/// with an input.
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/translations/dispatch.cuh>
#include <wham/error.hpp>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace wham {

/// Which schedule an M2M / L2L call runs (see the file comment).
enum class translation_path { automatic, direct, thread, split, warp };

namespace detail::translations {

inline constexpr int path_count = 5;
inline constexpr std::int64_t max_rows = std::int64_t(1) << 31;

inline schedule requested_schedule(translation_path path) {
  switch (path) {
    case translation_path::direct:
      return schedule::direct;
    case translation_path::thread:
      return schedule::thread;
    case translation_path::split:
      return schedule::split;
    default:
      return schedule::warp;
  }
}

/// Checks everything a call can check without the device, then the pointers' memory
/// types, then launches. indexed = false: the pair-streaming form (src, tgt unused).
template <kind K, class T>
void run(bool indexed, const char* f, const char* in_name, const char* out_name,
         const cuda::std::complex<T>* in, const T* deltas, const std::int32_t* src,
         const std::int32_t* tgt, cuda::std::complex<T>* out, int p, std::int64_t num_pairs,
         std::int64_t num_in, std::int64_t num_out, cudaStream_t stream, translation_path path) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "wham::m2m / l2l: T must be float or double");
  check_range(f, "p", p, 0, m2l_max_order<T>());
  check_enum(f, "path", path, path_count, "automatic, direct, thread, split or warp");
  const std::int64_t C = m2l_num_coeffs(p);
  check_range(f, "num_pairs", num_pairs, 0, std::int64_t(0x7fffffff) * 32);
  if (indexed) {
    const std::int64_t min_rows = num_pairs > 0 ? 1 : 0;
    // named as the caller's arguments: num_multipoles / num_parents, num_locals / num_children
    check_range(f, ("num_" + std::string(in_name)).c_str(), num_in, min_rows, max_rows);
    check_range(f, ("num_" + std::string(out_name)).c_str(), num_out, min_rows, max_rows);
  }
  const bool chosen_by_caller = path != translation_path::automatic;
  const schedule requested = chosen_by_caller ? requested_schedule(path) : automatic_schedule<T>(p);
  if (p < schedule_min_order(requested) || p > schedule_max_order<T>(requested)) {
    throw_invalid_argument(f, "p", p,
                           std::to_string(schedule_min_order(requested)) + ".." +
                               std::to_string(schedule_max_order<T>(requested)) +
                               " for that path");
  }
  if (num_pairs == 0) return;
  check_not_null(f, in_name, in);
  check_not_null(f, "deltas", deltas);
  check_not_null(f, out_name, out);
  check_aligned(f, in_name, in);
  check_aligned(f, "deltas", deltas);
  check_aligned(f, out_name, out);
  const std::uint64_t cb = sizeof(cuda::std::complex<T>) * std::uint64_t(C);
  const std::uint64_t in_bytes = cb * std::uint64_t(indexed ? num_in : num_pairs);
  const std::uint64_t out_bytes = cb * std::uint64_t(indexed ? num_out : num_pairs);
  const std::uint64_t idx_bytes = sizeof(std::int32_t) * std::uint64_t(num_pairs);
  if (indexed) {
    check_not_null(f, "src", src);
    check_not_null(f, "tgt", tgt);
    check_aligned(f, "src", src);
    check_aligned(f, "tgt", tgt);
  }
  if (ranges_overlap(out, out_bytes, in, in_bytes) ||
      ranges_overlap(out, out_bytes, deltas, sizeof(T) * 3 * std::uint64_t(num_pairs)) ||
      (indexed && (ranges_overlap(out, out_bytes, src, idx_bytes) ||
                   ranges_overlap(out, out_bytes, tgt, idx_bytes)))) {
    throw_invalid_argument(f, out_name, "an overlapping range", "a buffer apart from every input");
  }
  const schedule s = fitting_schedule<T>(f, requested, chosen_by_caller, p);
  check_device_accessible(f, in_name, in);
  check_device_accessible(f, "deltas", deltas);
  if (indexed) {
    check_device_accessible(f, "src", src);
    check_device_accessible(f, "tgt", tgt);
  }
  check_device_accessible(f, out_name, out);
  const pair_rows<T> pr{indexed ? src : nullptr, indexed ? tgt : nullptr, num_in, num_out};
  launch<K, T>(s, p, reinterpret_cast<const cpx<T>*>(in), deltas, pr, reinterpret_cast<cpx<T>*>(out),
               num_pairs, stream);
}

}  // namespace detail::translations

/// out[i] = M2M_p(multipoles[i], deltas[i]), i < num_pairs (child to parent).
template <class T>
void m2m(const cuda::std::complex<T>* multipoles, const T* deltas, cuda::std::complex<T>* out,
         int p, std::int64_t num_pairs, cudaStream_t stream = 0,
         translation_path path = translation_path::automatic) {
  detail::translations::run<detail::translations::kind::m2m>(
      false, "m2m", "multipoles", "out", multipoles, deltas, nullptr, nullptr, out, p, num_pairs, 0, 0,
      stream, path);
}

/// out[i] = L2L_p(locals[i], deltas[i]), i < num_pairs (parent to child).
template <class T>
void l2l(const cuda::std::complex<T>* locals, const T* deltas, cuda::std::complex<T>* out, int p,
         std::int64_t num_pairs, cudaStream_t stream = 0,
         translation_path path = translation_path::automatic) {
  detail::translations::run<detail::translations::kind::l2l>(false, "l2l", "locals", "out", locals,
                                                             deltas, nullptr, nullptr, out, p,
                                                             num_pairs, 0, 0, stream, path);
}

/// parents[tgt[i]] += M2M_p(multipoles[src[i]], deltas[i]), i < num_pairs.
template <class T>
void m2m_accumulate(const cuda::std::complex<T>* multipoles, const T* deltas,
                    const std::int32_t* src, const std::int32_t* tgt,
                    cuda::std::complex<T>* parents, int p, std::int64_t num_pairs,
                    std::int64_t num_multipoles, std::int64_t num_parents,
                    cudaStream_t stream = 0,
                    translation_path path = translation_path::automatic) {
  detail::translations::run<detail::translations::kind::m2m>(
      true, "m2m_accumulate", "multipoles", "parents", multipoles, deltas, src, tgt, parents, p,
      num_pairs, num_multipoles, num_parents, stream, path);
}

/// children[tgt[i]] += L2L_p(locals[src[i]], deltas[i]), i < num_pairs.
template <class T>
void l2l_accumulate(const cuda::std::complex<T>* locals, const T* deltas, const std::int32_t* src,
                    const std::int32_t* tgt, cuda::std::complex<T>* children, int p,
                    std::int64_t num_pairs, std::int64_t num_locals, std::int64_t num_children,
                    cudaStream_t stream = 0,
                    translation_path path = translation_path::automatic) {
  detail::translations::run<detail::translations::kind::l2l>(
      true, "l2l_accumulate", "locals", "children", locals, deltas, src, tgt, children, p, num_pairs,
      num_locals, num_children, stream, path);
}

}  // namespace wham
