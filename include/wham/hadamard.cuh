/// \file wham/hadamard.cuh
/// \brief The batched Hadamard transform of rows of m * 2^k elements, m in {1, 12, 20, 28,
/// 40}: the rotation that quantized language models apply to activations and weights of
/// sizes such as 96, 5120, 12288 and 14336.
///
/// Rows of m * 2^k contiguous elements, batch-major. Element a * 2^k + b of a row (a < m,
/// the high index; b < 2^k) is entry (a, b) of an m x 2^k matrix X, and
///
///     out = scale * (H_m (x) H_(2^k)) in,   i.e. out[a * 2^k + c] =
///           scale * sum_{a', b} H_m[a][a'] * (-1)^popcount(b & c) * in[a' * 2^k + b]
///
/// with H_m^T in place of H_m where `transpose` is set (the inverse, up to the scale:
/// H_m H_m^T = m I). m = 1 is wham::fwht. H_m is one of two published sets
/// (hadamard_matrices; docs/specs/fwht.md lists each matrix):
///   - fast_hadamard_transform: what fast-hadamard-transform 1.1's hadamard_transform_12N,
///     20N, 28N and 40N compute, with the same index convention;
///   - quarot: QuaRot's matrices (had.12, had.20.pal, had.28.pal2, had.40.tpal of Sloane's
///     library), which its matmul_hadU multiplies the same way, scaled by 1/sqrt(n).
///     QuaRot factors a row of 20 * 2^k (k >= 1) as 40 * 2^(k-1): pass m = 40 to match it.
/// The two sets share only H_40; their 12, 20 and 28 differ. Only fast-hadamard-transform's
/// 12 and QuaRot's 28 are symmetric: the adjoint of the others is the transposed call.
///
/// Element types and precision as wham::fwht: float, double, complex<float|double> in their
/// own precision; __half and __nv_bfloat16 computed in float and rounded once on the store
/// where a row fits one block's shared memory (fused), twice beyond (a fwht of the segments,
/// then the H_m pass).
///
/// Paths (chosen from the row's size and the device, detail/wht/dispatch.cuh):
///   - fused: whole rows in one block's shared memory (1.25 * m * 2^k elements of the
///     compute type a row; float on an H100 or H200: up to 12 * 2^11, 20 * 2^11, 28 * 2^10
///     and 40 * 2^10), one read and one write;
///   - split: longer rows: wham::fwht over the batch * m segments, then one pass of H_m
///     in place (two reads and two writes).
///
/// Conventions (wham/error.hpp): enqueued on `stream`, no allocation, no synchronisation,
/// capturable in a CUDA graph; bad arguments throw wham::error.
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/check.hpp>
#include <wham/detail/wht/dispatch.cuh>
#include <wham/error.hpp>
#include <wham/fwht.cuh>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

namespace wham {

/// Batched Hadamard transform of `batch` rows of m * 2^log_k elements.
/// \param in, out   device pointers, batch * m * 2^log_k elements each; in place (in ==
///                  out) or apart (a partial overlap throws); aligned to alignof(T),
///                  device-accessible (as wham::fwht)
/// \param m         1, 12, 20, 28 or 40
/// \param log_k     0..30 for m = 1, else 0..25
/// \param batch     rows, >= 0 (0: a no-op, as wham::fwht)
/// \param scale     multiplies every output (1 / sqrt(m * 2^log_k): orthonormal)
/// \param matrices  which published H_m (ignored for m = 1)
/// \param transpose H_m^T in place of H_m (the adjoint; ignored for m = 1)
template <class T>
void hadamard(const T* in, T* out, int m, int log_k, std::int64_t batch, fwht_scale_t<T> scale,
              cudaStream_t stream, hadamard_matrices matrices, bool transpose) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, cuda::std::complex<float>> ||
                    std::is_same_v<T, cuda::std::complex<double>> || std::is_same_v<T, __half> ||
                    std::is_same_v<T, __nv_bfloat16>,
                "wham::hadamard: T must be float, double, cuda::std::complex<float|double>, "
                "__half or __nv_bfloat16");
  constexpr const char* f = "hadamard";
  if (m != 1 && m != 12 && m != 20 && m != 28 && m != 40) {
    detail::throw_invalid_argument(f, "m", m, "1, 12, 20, 28 or 40");
  }
  detail::check_range(f, "log_k", log_k, 0,
                      m == 1 ? detail::fwht_max_log_n : detail::hadamard_max_log_k);
  // batch * m * 2^log_k * sizeof(T) bytes must fit in int64.
  detail::check_range(f, "batch", batch, 0, (INT64_MAX / std::int64_t(sizeof(T)) / m) >> log_k);
  detail::check_enum(f, "matrices", matrices, detail::hadamard_matrices_count,
                     "fast_hadamard_transform or quarot");
  if (batch == 0) return;
  detail::check_buffer(f, "in", in);
  detail::check_buffer(f, "out", out);
  if (static_cast<const void*>(in) != static_cast<const void*>(out)) {
    const std::uint64_t bytes = std::uint64_t((batch * m) << log_k) * sizeof(T);
    if (detail::ranges_overlap(in, bytes, out, bytes)) {
      detail::throw_invalid_argument(f, "out", "a range overlapping in",
                                     "in itself (in place) or a buffer apart from in");
    }
  }
  detail::wht::run_hadamard<T>(in, out, m, log_k, batch, scale, stream, matrices, transpose);
}

}  // namespace wham
