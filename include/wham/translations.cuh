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
/// Paths (translation_path; detail/translations/dispatch.cuh, tuning.cuh):
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
///            fits. An explicit path outside its orders is an invalid argument; one whose
///            block the device cannot hold throws wham::error of kind not_supported.
/// The accumulate forms sum each run of consecutive pairs that share a target on chip and
/// add it with one atomic a coefficient (block paths): list children by parent.
/// Accuracy (relative, the coefficient vector's 2-norm, worst over the polar angle of
/// delta, poles included): double 1.2e-14 at p <= 8, 1.2e-13 at p = 12, 1.5e-12 at p = 16,
/// 1.2e-11 at p = 20; float 1.2e-5 at p <= 8, 8e-5 at p = 12, 6e-4 at p = 16 (the
/// rotations' swap matrices grow like 2^l); the direct form 1e-16 / 1e-7.
/// Orders 0..m2l_max_order<T>() (20 double, 16 float).
///
/// Conventions (wham/error.hpp): enqueued on `stream`, no allocation, no synchronisation,
/// capturable in a CUDA graph; bad arguments throw wham::error before the device is
/// touched: ranges, the path, null, misaligned or host pointers, an output sharing a byte
/// with an input. Prebuilt for float and double (wham/prebuilt.hpp; C: wham_m2m_f32 ...
/// wham_l2l_accumulate_f64 in wham/wham.h).
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/check.hpp>
#include <wham/detail/translations/dispatch.cuh>
#include <wham/error.hpp>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace wham {

// translation_path and the declarations with their default arguments: detail/api.hpp.

namespace detail::translations {

/// Largest row count of an accumulate form's input or output: int32 indices reach rows
/// 0..2^31 - 1.
inline constexpr std::int64_t max_rows = std::int64_t(1) << 31;

/// Largest pair count: 32 pairs a warp unit of a grid of at most 2^31 - 1 blocks.
inline constexpr std::int64_t max_pairs = std::int64_t(0x7fffffff) * 32;

/// The name of a path (not `automatic`), for messages.
inline const char* path_name(translation_path path) {
  switch (path) {
    case translation_path::direct:
      return "translation_path::direct";
    case translation_path::thread:
      return "translation_path::thread";
    case translation_path::split:
      return "translation_path::split";
    default:
      return "translation_path::warp";
  }
}

/// Every check that needs no device, in order: ranges, the path and the orders it serves,
/// then (for a call that enqueues work) null and alignment, and the output apart from every
/// input. indexed = false: the pair-streaming form (src, tgt, num_in, num_out unused).
template <class T>
void check_arguments(bool indexed, const char* f, const char* in_name, const char* out_name,
                     const cuda::std::complex<T>* in, const T* deltas, const std::int32_t* src,
                     const std::int32_t* tgt, const cuda::std::complex<T>* out, int p,
                     std::int64_t num_pairs, std::int64_t num_in, std::int64_t num_out,
                     translation_path path) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "wham::m2m / l2l: T must be float or double");
  check_range(f, "p", p, 0, m2l_max_order<T>());
  check_enum(f, "path", path, path_count, "automatic, direct, thread, split or warp");
  const std::int64_t C = m2l_num_coeffs(p);
  // 32 pairs a warp unit (the coefficients' byte offsets stay far within int64)
  check_range(f, "num_pairs", num_pairs, 0, max_pairs);
  if (indexed) {
    const std::int64_t min_rows = num_pairs > 0 ? 1 : 0;
    // named as the caller's arguments: num_multipoles / num_parents, num_locals / num_children
    check_range(f, ("num_" + std::string(in_name)).c_str(), num_in, min_rows, max_rows);
    check_range(f, ("num_" + std::string(out_name)).c_str(), num_out, min_rows, max_rows);
  }
  if (path != translation_path::automatic) {
    check_range_for(f, "p", p, path_min_order(path), path_max_order<T>(path), path_name(path));
  }
  if (num_pairs == 0) return;
  check_buffer(f, in_name, in);
  check_buffer(f, "deltas", deltas);
  if (indexed) {
    check_buffer(f, "src", src);
    check_buffer(f, "tgt", tgt);
  }
  check_buffer(f, out_name, out);
  const auto n = std::uint64_t(num_pairs), Cu = std::uint64_t(C);
  const auto idx = indexed ? n : 0;  // the pair-streaming forms read no index
  check_apart(f, span_of(out_name, out, Cu * (indexed ? std::uint64_t(num_out) : n)),
              {span_of(in_name, in, Cu * (indexed ? std::uint64_t(num_in) : n)),
               span_of("deltas", deltas, 3 * n), span_of("src", src, idx),
               span_of("tgt", tgt, idx)});
}

}  // namespace detail::translations

/// out[i] = M2M_p(multipoles[i], deltas[i]), i < num_pairs (child to parent).
/// \param multipoles  device pointer, num_pairs * (p+1)^2 coefficients
/// \param deltas      device pointer, num_pairs * 3 values (parent minus child centre)
/// \param out         device pointer, num_pairs * (p+1)^2 coefficients, overwritten; must
///                    not overlap multipoles or deltas
/// \param p           order, 0..m2l_max_order<T>() (the path's orders: see the file comment)
/// \param num_pairs   >= 0 (0 enqueues nothing; the pointers may then be null)
template <class T>
void m2m(const cuda::std::complex<T>* multipoles, const T* deltas, cuda::std::complex<T>* out,
         int p, std::int64_t num_pairs, cudaStream_t stream, translation_path path) {
  namespace tr = detail::translations;
  constexpr const char* f = "m2m";
  tr::check_arguments<T>(false, f, "multipoles", "out", multipoles, deltas, nullptr, nullptr, out,
                         p, num_pairs, 0, 0, path);
  if (num_pairs == 0) return;
  tr::run<tr::kind::m2m, T>(f, "multipoles", "out", reinterpret_cast<const tr::cpx<T>*>(multipoles),
                            deltas, nullptr, nullptr, reinterpret_cast<tr::cpx<T>*>(out), p,
                            num_pairs, 0, 0, path, stream);
}

/// out[i] = L2L_p(locals[i], deltas[i]), i < num_pairs (parent to child). Arguments as m2m,
/// locals for multipoles (deltas: child minus parent centre).
template <class T>
void l2l(const cuda::std::complex<T>* locals, const T* deltas, cuda::std::complex<T>* out, int p,
         std::int64_t num_pairs, cudaStream_t stream, translation_path path) {
  namespace tr = detail::translations;
  constexpr const char* f = "l2l";
  tr::check_arguments<T>(false, f, "locals", "out", locals, deltas, nullptr, nullptr, out, p,
                         num_pairs, 0, 0, path);
  if (num_pairs == 0) return;
  tr::run<tr::kind::l2l, T>(f, "locals", "out", reinterpret_cast<const tr::cpx<T>*>(locals),
                            deltas, nullptr, nullptr, reinterpret_cast<tr::cpx<T>*>(out), p,
                            num_pairs, 0, 0, path, stream);
}

/// parents[tgt[i]] += M2M_p(multipoles[src[i]], deltas[i]), i < num_pairs.
/// \param multipoles     device pointer, [num_multipoles][(p+1)^2]
/// \param deltas         device pointer, num_pairs * 3 values
/// \param src, tgt       device pointers, num_pairs row indices (out of range: skipped)
/// \param parents        device pointer, [num_parents][(p+1)^2], added to; must not overlap
///                       any input
/// \param num_multipoles rows of multipoles, 1..2^31 (0 allowed without pairs)
/// \param num_parents    rows of parents, 1..2^31 (0 allowed without pairs)
template <class T>
void m2m_accumulate(const cuda::std::complex<T>* multipoles, const T* deltas,
                    const std::int32_t* src, const std::int32_t* tgt,
                    cuda::std::complex<T>* parents, int p, std::int64_t num_pairs,
                    std::int64_t num_multipoles, std::int64_t num_parents, cudaStream_t stream,
                    translation_path path) {
  namespace tr = detail::translations;
  constexpr const char* f = "m2m_accumulate";
  tr::check_arguments<T>(true, f, "multipoles", "parents", multipoles, deltas, src, tgt, parents,
                         p, num_pairs, num_multipoles, num_parents, path);
  if (num_pairs == 0) return;
  tr::run<tr::kind::m2m, T>(f, "multipoles", "parents",
                            reinterpret_cast<const tr::cpx<T>*>(multipoles), deltas, src, tgt,
                            reinterpret_cast<tr::cpx<T>*>(parents), p, num_pairs, num_multipoles,
                            num_parents, path, stream);
}

/// children[tgt[i]] += L2L_p(locals[src[i]], deltas[i]), i < num_pairs. Arguments as
/// m2m_accumulate: locals [num_locals][(p+1)^2], children [num_children][(p+1)^2].
template <class T>
void l2l_accumulate(const cuda::std::complex<T>* locals, const T* deltas, const std::int32_t* src,
                    const std::int32_t* tgt, cuda::std::complex<T>* children, int p,
                    std::int64_t num_pairs, std::int64_t num_locals, std::int64_t num_children,
                    cudaStream_t stream, translation_path path) {
  namespace tr = detail::translations;
  constexpr const char* f = "l2l_accumulate";
  tr::check_arguments<T>(true, f, "locals", "children", locals, deltas, src, tgt, children, p,
                         num_pairs, num_locals, num_children, path);
  if (num_pairs == 0) return;
  tr::run<tr::kind::l2l, T>(f, "locals", "children", reinterpret_cast<const tr::cpx<T>*>(locals),
                            deltas, src, tgt, reinterpret_cast<tr::cpx<T>*>(children), p,
                            num_pairs, num_locals, num_children, path, stream);
}

}  // namespace wham
