/// \file wham/m2l.cuh
/// \brief The complex multipole-to-local (M2L) operator of the 3D Laplace FMM,
/// pair-streaming form:
///
///     locals[i] = M2L_p(multipoles[i], deltas[i]),   i = 0..num_pairs-1
///
/// Convention (docs/specs/m2l.md): solidfmm's solid harmonics (Dehnen's normalisation, no
/// Condon-Shortley phase), single-height truncation n + k <= p:
///
///     L_n^m = sum_{k=0}^{p-n} sum_{l=-k}^{k} (-1)^l M_k^l S_{n+k}^{m-l}(delta)
///
/// Layouts (row-major, contiguous):
///   multipoles  [num_pairs][(p+1)^2] cuda::std::complex<T>, index(n, m) = n*n + n + m
///   deltas      [num_pairs][3] T: target centre - source centre (x, y, z)
///   locals      [num_pairs][(p+1)^2] cuda::std::complex<T>
/// Coefficients are general complex (no conjugate symmetry is assumed). T is float or
/// double; arithmetic is in T (the tensor schedules compute in double). Orders 0..20 in
/// double, 0..16 in float (float holds 0! .. 34!; the swap matrices' entries grow like
/// 2^l, so accuracy degrades with p: worst relative errors measured near the z axis
/// 2.4e-6 at p <= 8, 1.4e-5 at p = 12, 1.2e-4 at p = 16 in float; 7e-15 at p = 8, 3e-14
/// at p = 12, 3e-13 at p = 16, 4e-12 at p = 20 in double; docs/specs/m2l.md, Accuracy).
///
/// Displacements: a zero or non-finite delta is the caller's error. It is not checked
/// (that would need a pass over device data); that pair's local comes out non-finite
/// (every coefficient NaN or inf; an infinite but otherwise valid delta may instead give
/// the limit 0 in some coefficients), every other pair is unaffected. Accuracy holds on
/// and near the axes and for p! mu (4 / |delta|)^(p+1) <= T's largest, |delta| <= 1 / T's
/// smallest normal (mu = largest |M_k^l|; docs/specs/m2l.md, "Range of |delta|").
///
/// Every schedule rotates each multipole so that delta lies on z (Dehnen's swap matrices,
/// compile-time constants, angle powers by complex multiplication), translates along z
/// with one Hankel block per m, and rotates back, all on chip: O(p^3) per pair, no
/// workspace. `automatic` takes, by order (detail/m2l/dispatch.cuh, thresholds in
/// detail/m2l/tuning.cuh): one thread a pair to p = 6 (double) / 8 (float); then in
/// double the FP64 tensor-core schedule from p = 11 on sm_90 (tiles of eight pairs) or
/// from p = 13 below (tiles of four), in float the same sm_90 schedule from p = 13;
/// otherwise one lane a pair with its degrees split over a block's warps to p = 12, one
/// warp a pair above.
///
/// \code
///   // d_M, d_L: n * 36 cuda::std::complex<double>; d_delta: n * 3 double (p = 5)
///   wham::m2l(d_M, d_delta, d_L, 5, n, stream);
/// \endcode
///
/// Conventions (wham/error.hpp): enqueued on `stream`, no allocation, no
/// synchronisation, capturable in a CUDA graph; bad arguments throw wham::error.
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/check.hpp>
#include <wham/detail/m2l/dispatch.cuh>
#include <wham/error.hpp>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace wham {

// m2l_path, m2l_max_order<T>(), m2l_num_coeffs(p) and the declarations with their default
// arguments: detail/api.hpp.

/// locals[i] = M2L_p(multipoles[i], deltas[i]) for i < num_pairs (see the file comment).
/// \param multipoles  device pointer, num_pairs * (p+1)^2 coefficients
/// \param deltas      device pointer, num_pairs * 3 values
/// \param locals      device pointer, num_pairs * (p+1)^2 coefficients; must not overlap
///                    multipoles or deltas
/// \param p           order, 0..m2l_max_order<T>()
/// \param num_pairs   >= 0 (0 enqueues nothing; the pointers may then be null)
template <class T>
void m2l(const cuda::std::complex<T>* multipoles, const T* deltas, cuda::std::complex<T>* locals,
         int p, std::int64_t num_pairs, cudaStream_t stream, m2l_path path) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "wham::m2l: T must be float or double");
  constexpr const char* f = "m2l";
  detail::check_range(f, "p", p, 0, m2l_max_order<T>());
  detail::check_enum(f, "path", path, detail::m2l_path_count,
                     "automatic, thread, warp, split, direct or tensor");
  const std::int64_t C = m2l_num_coeffs(p);
  // pair counts whose byte sizes, or whose thread grids, pass the 64-bit / grid limits
  detail::check_range(f, "num_pairs", num_pairs, 0,
                      std::min<std::int64_t>(INT64_MAX / (C * 2 * std::int64_t(sizeof(T))),
                                             std::int64_t(0x7fffffff) * 32));
  if (num_pairs == 0) return;
  detail::check_buffer(f, "multipoles", multipoles);
  detail::check_buffer(f, "deltas", deltas);
  detail::check_buffer(f, "locals", locals);
  const auto n = std::uint64_t(num_pairs), Cu = std::uint64_t(C);
  detail::check_apart(f, detail::span_of("locals", locals, n * Cu),
                      {detail::span_of("multipoles", multipoles, n * Cu),
                       detail::span_of("deltas", deltas, 3 * n)});
  // the orders of a path the caller names (automatic's choices serve every order)
  namespace m = detail::m2l;
  if (path == m2l_path::thread) {
    detail::check_range_for(f, "p", p, 0, m::thread_max_order, "m2l_path::thread");
  }
  if (path == m2l_path::split) {
    detail::check_range_for(f, "p", p, m::split_min_order, m::split_max_order, "m2l_path::split");
  }
  m::run<T>(path, p, multipoles, deltas, locals, num_pairs, stream);
}

}  // namespace wham
