/// \file wham/fwht.cuh
/// \brief The batched fast Walsh-Hadamard transform.
///
/// Rows of 2^log_n contiguous elements, batch-major (`[batch][2^log_n]`):
///
///     out[b][k] = scale * sum_x in[b][x] * (-1)^popcount(x & k)
///
/// Element types: float, double, cuda::std::complex<float>, cuda::std::complex<double>,
/// __half and __nv_bfloat16.
/// In place (`in == out`) and out of place (the buffers must not otherwise overlap:
/// a partial overlap throws wham::error).
/// `scale = 2^(-log_n / 2)` gives the orthonormal transform. Arithmetic is in the
/// element's own precision, but for __half and __nv_bfloat16, whose rows are widened to
/// float on the load and rounded to nearest once on each store to memory: once for rows
/// on chip (fused), once a pass for the kronecker path (docs/specs/fwht.md has the bound).
///
/// Paths (one kernel family; `automatic` picks from log_n, T, batch and the device):
///   - fused:     whole rows on chip, one read and one write. One block a row up to
///                what a block's shared memory holds (H200: log_n <= 15 float, 14
///                double / complex<float>, 13 complex<double>); on compute capability
///                9.0+ a cluster of 2 or 4 blocks a row for the two log_n above. Rows
///                shorter than 16 bytes between 16-byte aligned buffers go 16-byte
///                vectors at a time; rows of 2^13 up to one block's from a 16-byte aligned
///                `in` stream through persistent blocks that bulk-copy their next row
///                while they transform the current one (compute capability 9.0+).
///   - kronecker: rows too long for one block (11 <= log_n <= 30): the fused kernel
///                over the low bits, then one coalesced column-tiled pass per group of
///                up to 11 high bits, in place in `out` (no workspace); on compute
///                capability 9.0+ a group of up to 13 bits as clusters of blocks where
///                that saves a pass, and, from 16-byte aligned `in` and `out`, rows of
///                2^20 to 2^28 elements (by type) in two passes.
///   - baseline:  one global-memory pass per butterfly stage (for comparison).
/// `automatic` takes fused where one block holds a row; where a row needs a cluster,
/// fused once the batch fills the GPU, else kronecker; kronecker for longer rows;
/// baseline only where neither serves.
///
/// \code
///   // d_rows: 1000 rows of 2^10 floats on the device
///   wham::fwht(d_rows, d_rows, 10, 1000, 1.0f / 32.0f, stream);  // orthonormal, in place
/// \endcode
///
/// Conventions (wham/error.hpp): enqueued on `stream`, no allocation, no
/// synchronisation, capturable in a CUDA graph; bad arguments throw wham::error.
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/check.hpp>
#include <wham/detail/wht/dispatch.cuh>
#include <wham/error.hpp>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

namespace wham {

// fwht_path, fwht_scale_t and the declarations with their default arguments: detail/api.hpp.

/// Whether `path` serves rows of 2^log_n elements of T on the current device.
template <class T>
bool fwht_path_serves(fwht_path path, int log_n) {
  return detail::wht::path_serves<T>(path, log_n);
}

/// Largest log_n the fused path serves for element type T on the current device.
template <class T>
int fwht_fused_max_log_n() {
  return detail::wht::fused_cluster_max_log_n<detail::wht::compute_t<T>>();
}

/// Batched Walsh-Hadamard transform of `batch` rows of 2^log_n elements.
/// \param in      device pointer, batch * 2^log_n elements
/// \param out     device pointer, batch * 2^log_n elements (may equal in; must not
///                otherwise overlap it)
///                Both aligned to alignof(T) and device-accessible (device, managed or
///                registered host memory): a misaligned or plain host pointer throws
///                wham::error naming it (cudaPointerGetAttributes, once a pointer a call).
/// \param log_n   0 <= log_n <= 30
/// \param batch   number of rows, >= 0 (0: a no-op that checks the other scalars and
///                touches neither the pointers nor the device)
/// \param scale   multiplies every output element
/// \param stream  the stream the work is enqueued on
/// \param path    schedule; an explicit path that cannot serve log_n throws wham::error
template <class T>
void fwht(const T* in, T* out, int log_n, std::int64_t batch, fwht_scale_t<T> scale,
          cudaStream_t stream, fwht_path path) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, cuda::std::complex<float>> ||
                    std::is_same_v<T, cuda::std::complex<double>> || std::is_same_v<T, __half> ||
                    std::is_same_v<T, __nv_bfloat16>,
                "wham::fwht: T must be float, double, cuda::std::complex<float|double>, __half "
                "or __nv_bfloat16");
  constexpr const char* f = "fwht";
  detail::check_range(f, "log_n", log_n, 0, detail::fwht_max_log_n);
  // batch * 2^log_n * sizeof(T) bytes must fit in int64.
  detail::check_range(f, "batch", batch, 0, (INT64_MAX / std::int64_t(sizeof(T))) >> log_n);
  detail::check_enum(f, "path", path, detail::fwht_path_count,
                     "automatic, fused, kronecker or baseline");
  if (batch == 0) return;
  detail::check_buffer(f, "in", in);
  detail::check_buffer(f, "out", out);
  if (static_cast<const void*>(in) != static_cast<const void*>(out)) {
    const std::uint64_t bytes = std::uint64_t(batch << log_n) * sizeof(T);
    if (detail::ranges_overlap(in, bytes, out, bytes)) {
      detail::throw_invalid_argument(f, "out", "a range overlapping in",
                                     "in itself (in place) or a buffer apart from in");
    }
  }
  detail::wht::run_fwht<T>(in, out, log_n, batch, scale, stream, path);
}

}  // namespace wham
