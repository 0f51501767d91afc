/// \file wham/m2l.cuh
/// \brief The complex multipole-to-local (M2L) operator of the 3D Laplace FMM,
/// pair-streaming form:
///
///     locals[i] = M2L_p(multipoles[i], deltas[i]),   i = 0..num_pairs-1
///
/// Convention (shared/specs/m2l.md): solidfmm's solid harmonics (Dehnen's
/// normalisation, no Condon-Shortley phase), single-height truncation n + k <= p:
///
///     L_n^m = sum_{k=0}^{p-n} sum_{l=-k}^{k} (-1)^l M_k^l S_{n+k}^{m-l}(delta)
///
/// Layouts (row-major, contiguous):
///   multipoles  [num_pairs][(p+1)^2] cuda::std::complex<T>, index(n, m) = n*n + n + m
///   deltas      [num_pairs][3] T: target centre - source centre (x, y, z)
///   locals      [num_pairs][(p+1)^2] cuda::std::complex<T>
/// Coefficients are general complex (no conjugate symmetry is assumed). T is
/// float or double; arithmetic is in T. Orders 0..20 in double, 0..16 in float
/// (float holds 0! .. 34!; the swap matrices' entries grow like 2^l, so float
/// accuracy degrades with p: measured relative errors about 1e-6 at p <= 8, 4e-6 at
/// p = 12, 4e-5 at p = 16; double 1e-14 at p = 12, 1e-12 at p = 20).
///
/// Measured on an H200 (double, 100k pairs, the automatic path, bench/bench_m2l.cu,
/// 2026-12-05): p = 2, 3, 4, 5, 6 in 11.7, 22.0, 32.1, 44.1, 57.0 us (0.81-0.90 of a
/// plain copy of the same bytes); p = 7, 8 in 93, 112 us (0.64, 0.68); p = 12, 13, 16,
/// 20 in 0.45, 0.48, 0.79, 1.43 ms (the wide tensor schedule; the warp schedule took
/// 1.19, 1.93, 4.39 ms at p = 13, 16, 20 on 2026-12-02). Every order: the README.
///
/// Displacements: a zero or non-finite delta is the caller's error. It is not
/// checked (that would need a pass over device data); that pair's local comes out
/// non-finite (every coefficient NaN or inf; an infinite but otherwise valid delta
/// may instead give the limit 0 in some coefficients), every other pair is unaffected.
///
/// The kernel (the `automatic` path) rotates each multipole so that delta lies on
/// z (Dehnen's swap matrices, compile-time constants in __constant__ memory, angle
/// powers by complex multiplication), translates along z with one Hankel block per
/// m, and rotates back, all on chip: O(p^3) per pair, no workspace. Schedules by
/// order (detail/m2l/fused.cuh): one thread a pair to p = 6 (double) / 8 (float),
/// one lane a pair with its degrees split over a block's warps to p = 12, and above:
/// in double, FP64 tensor-core products, on sm_90 on tiles of eight pairs from p = 11
/// (detail/m2l/tensor_wide.cuh: mma.m16n8k4, folded swap matrices, the two swaps of a
/// degree chained in registers), else on tiles of four pairs from p = 13
/// (detail/m2l/tensor.cuh, sm_80+); in float the wide schedule (computed in double)
/// from p = 13 on sm_90, one warp a pair below sm_90.
///
/// \code
///   // d_M, d_L: n * 36 cuda::std::complex<double>; d_delta: n * 3 double (p = 5)
///   wham::m2l(d_M, d_delta, d_L, 5, n, stream);
/// \endcode
///
/// Conventions (wham/error.hpp): enqueued on `stream`, no allocation, no
/// synchronisation, capturable in a CUDA graph; bad arguments throw wham::error.
#pragma once

#include <wham/detail/m2l/baselines.cuh>
#include <wham/detail/m2l/fused.cuh>
#include <wham/detail/m2l/tensor.cuh>
#include <wham/detail/m2l/tensor_wide.cuh>
#include <wham/error.hpp>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace wham {

/// Which schedule runs the operator.
enum class m2l_path {
  automatic,  ///< the fastest measured schedule for the order (tuning table in detail/m2l/fused.cuh)
  thread,     ///< fused, one thread per pair, coefficients in registers or shared memory
              ///< (p <= 12 where a block may take 200 KB of shared memory, as on sm_90;
              ///< p <= 10 on sm_80, p <= 8 on sm_86/89; beyond, wham::error)
  warp,       ///< fused, one warp per pair (any order)
  split,      ///< fused, one pair per lane, its degrees split over the warps of a block (p = 7..12)
  direct,     ///< the O(p^4) double sum, one thread per pair (a baseline and a cross-check)
  tensor,     ///< fused, FP64 tensor-core products (any order): tiles of eight pairs on
              ///< sm_90 (tensor_wide.cuh), of four below (tensor.cuh, double only); float
              ///< on sm_90 only, computed in double (H100, 1e5 pairs, 2026-12-05: p = 13-16
              ///< in 456-783 us against the warp schedule's 959-1430; automatic takes it
              ///< there, and the warp schedule below sm_90)
};

/// Highest order wham::m2l serves for T.
template <class T>
constexpr int m2l_max_order() {
  return std::is_same_v<T, double> ? 20 : 16;
}

/// Number of complex coefficients of an order-p expansion.
constexpr int m2l_num_coeffs(int p) { return (p + 1) * (p + 1); }

/// locals[i] = M2L_p(multipoles[i], deltas[i]) for i < num_pairs (see the file comment).
/// \param multipoles  device pointer, num_pairs * (p+1)^2 coefficients
/// \param deltas      device pointer, num_pairs * 3 values
/// \param locals      device pointer, num_pairs * (p+1)^2 coefficients; must not overlap
///                    multipoles or deltas
/// \param p           order, 0..m2l_max_order<T>()
/// \param num_pairs   >= 0 (0 enqueues nothing; the pointers may then be null)
template <class T>
void m2l(const cuda::std::complex<T>* multipoles, const T* deltas, cuda::std::complex<T>* locals,
         int p, std::int64_t num_pairs, cudaStream_t stream = 0,
         m2l_path path = m2l_path::automatic) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "wham::m2l: T must be float or double");
  detail::check_range("m2l", "p", p, 0, m2l_max_order<T>());
  const std::int64_t C = m2l_num_coeffs(p);
  // pair counts whose byte sizes, or whose thread grids, pass the 64-bit / grid limits
  detail::check_range("m2l", "num_pairs", num_pairs, 0,
                      std::min<std::int64_t>(INT64_MAX / (C * 2 * std::int64_t(sizeof(T))),
                                             std::int64_t(0x7fffffff) * 32));
  if (num_pairs == 0) return;
  detail::check_not_null("m2l", "multipoles", multipoles);
  detail::check_not_null("m2l", "deltas", deltas);
  detail::check_not_null("m2l", "locals", locals);
  {
    const std::uint64_t coeff_bytes = std::uint64_t(num_pairs * C) * sizeof(cuda::std::complex<T>);
    if (detail::ranges_overlap(locals, coeff_bytes, multipoles, coeff_bytes) ||
        detail::ranges_overlap(locals, coeff_bytes, deltas, std::uint64_t(num_pairs * 3) * sizeof(T))) {
      detail::throw_invalid_argument("m2l", "locals", "an overlapping range",
                                     "a buffer apart from multipoles and deltas");
    }
  }
  using detail::m2l::cpx;
  const auto* M = reinterpret_cast<const cpx<T>*>(multipoles);
  auto* L = reinterpret_cast<cpx<T>*>(locals);
  const bool chosen_by_caller = path != m2l_path::automatic;
  if (!chosen_by_caller) {
    path = p <= detail::m2l::automatic_thread_max_order<T>() ? m2l_path::thread
           : (std::is_same_v<T, double> ? detail::m2l::tensor_automatic(p)
                                        : detail::m2l::tensor_automatic_float(p))
               ? m2l_path::tensor
           : p <= detail::m2l::split_max_order ? m2l_path::split
                                               : m2l_path::warp;
  }
  switch (path) {
    case m2l_path::thread:
      if (p > detail::m2l::thread_max_order) {
        detail::throw_invalid_argument(
            "m2l", "p", p,
            "0.." + std::to_string(detail::m2l::thread_max_order) + " for m2l_path::thread");
      }
      if (chosen_by_caller) {
        // Before the launch's own check, so the message names the path and the way out
        // (automatic's thread orders fit every device: test_arguments_host).
        const std::size_t need = detail::m2l::thread_schedule_smem_bytes<T>(p);
        const std::size_t have = detail::current_device_limits().smem_per_block_optin;
        if (need > have) {
          detail::throw_invalid_argument(
              "m2l", "path", "m2l_path::thread",
              "automatic, split or warp at p = " + std::to_string(p) + " on this device: the "
              "thread schedule needs " + std::to_string(need) + " bytes of shared memory a "
              "block, the device allows " + std::to_string(have));
        }
      }
      detail::m2l::launch_thread<T>(p, M, deltas, L, num_pairs, stream);
      break;
    case m2l_path::split:
      if (p < detail::m2l::split_min_order || p > detail::m2l::split_max_order) {
        detail::throw_invalid_argument("m2l", "p", p,
                                       std::to_string(detail::m2l::split_min_order) + ".." +
                                           std::to_string(detail::m2l::split_max_order) +
                                           " for m2l_path::split");
      }
      detail::m2l::launch_split<T>(p, M, deltas, L, num_pairs, stream);
      break;
    case m2l_path::warp:
      detail::m2l::launch_warp<T>(p, M, deltas, L, num_pairs, stream);
      break;
    case m2l_path::tensor:
      if constexpr (std::is_same_v<T, double>) {
        detail::m2l::launch_tensor_any(p, detail::m2l::wide_stream<double>{M, deltas, L, num_pairs},
                                       detail::m2l::tensor_stream{M, deltas, L, num_pairs}, stream);
      } else {
        // Float runs the wide schedule only (sm_90), computing in double.
        if (!detail::m2l::wide_supported()) {
          detail::throw_invalid_argument(
              "m2l", "path", "m2l_path::tensor",
              "a path other than tensor for float below compute capability 9.0 (float runs "
              "the sm_90 wide tensor schedule only)");
        }
        detail::m2l::launch_tensor_wide_tuned(
            p, detail::m2l::wide_stream<float>{M, deltas, L, num_pairs}, stream);
      }
      break;
    case m2l_path::direct:
      detail::m2l::launch_direct<T>(p, M, deltas, L, num_pairs, stream);
      break;
    default:
      detail::throw_invalid_argument("m2l", "path", int(path), "an m2l_path value");
  }
}

}  // namespace wham
