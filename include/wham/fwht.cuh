/// \file wham/fwht.cuh
/// \brief The batched fast Walsh-Hadamard transform.
///
/// Rows of 2^log_n contiguous elements, batch-major (`[batch][2^log_n]`):
///
///     out[b][k] = scale * sum_x in[b][x] * (-1)^popcount(x & k)
///
/// Element types: float, double, cuda::std::complex<float>, cuda::std::complex<double>.
/// In place (`in == out`) and out of place (the buffers must not otherwise overlap:
/// a partial overlap throws wham::error).
/// `scale = 2^(-log_n / 2)` gives the orthonormal transform. Arithmetic is in the
/// element's own precision.
///
/// Paths (one kernel family; `automatic` picks from log_n, T and the device):
///   - fused:     a whole row on chip in one block, one read and one write
///                (H200: log_n <= 15 float, 14 double / complex<float>, 13 complex<double>);
///                float rows of 2^13 to 2^15, double and complex<float> rows of 2^13
///                and 2^14, complex<double> rows of 2^13, from a 16-byte aligned `in`,
///                stream through persistent
///                blocks (one an SM; three for float 2^13) that bulk-copy their next
///                row while they transform the current one (compute capability 9.0+);
///                rows shorter than 16 bytes (float log_n <= 1, double and
///                complex<float> log_n = 0) between 16-byte aligned buffers go
///                16-byte vectors at a time, several rows to a vector;
///   - kronecker: rows too long for one block (11 <= log_n <= 30): the fused
///                kernel over the low bits (streamed, as above, where the row allows),
///                then one coalesced column-tiled pass per group of up to 11
///                high bits, in place in `out` (no workspace);
///                on compute capability 9.0+ a group of up to 13 bits as clusters of
///                blocks where that saves a pass; and there, from 16-byte aligned
///                `in` and `out`, float rows of 2^22 to 2^28, double and
///                complex<float> rows of 2^21 to 2^27, complex<double> rows of 2^20
///                to 2^26 in two passes: bits 0-9 with the top 5 (float), 4 (8-byte)
///                or 3 (complex<double>), streamed, then the 7 to 13 bits between
///                (clusters beyond 11);
///   - baseline:  one global-memory pass per butterfly stage (for comparison).
///
/// \code
///   // d_rows: 1000 rows of 2^10 floats on the device
///   wham::fwht(d_rows, d_rows, 10, 1000, 1.0f / 32.0f, stream);  // orthonormal, in place
/// \endcode
///
/// Conventions (wham/error.hpp): enqueued on `stream`, no allocation, no
/// synchronisation, capturable in a CUDA graph; bad arguments throw wham::error.
#pragma once

#include <wham/detail/wht/baseline.cuh>
#include <wham/detail/wht/cluster.cuh>
#include <wham/detail/wht/fused.cuh>
#include <wham/detail/wht/kronecker.cuh>
#include <wham/detail/wht/packed.cuh>
#include <wham/detail/wht/streamed.cuh>
#include <wham/error.hpp>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace wham {

/// Which schedule runs the transform.
enum class fwht_path {
  automatic,  ///< fused whenever a row fits on chip (one block, or a cluster), else kronecker
              ///< (else baseline, on a device too small for either)
  fused,      ///< all on chip: one block per row (several rows per block when short), or
              ///< on compute capability 9.0+ a cluster of 2 or 4 blocks per row for the
              ///< two log_n above one block's shared memory
  kronecker,  ///< split H_n = H_hi (x) H_lo for long rows (log_n >= 11)
  baseline,   ///< one global-memory launch per butterfly stage (any log_n)
};

/// Whether `path` serves rows of 2^log_n elements of T on the current device.
template <class T>
inline bool fwht_path_serves(fwht_path path, int log_n) {
  if (log_n < 0 || log_n > 30) return false;
  switch (path) {
    case fwht_path::automatic:
    case fwht_path::baseline:
      return true;
    case fwht_path::fused:
      return log_n <= detail::wht::fused_cluster_max_log_n<T>();
    case fwht_path::kronecker:
      return detail::wht::kronecker_serves<T>(log_n);
  }
  return false;
}

/// Largest log_n the fused path serves for element type T on the current device.
template <class T>
inline int fwht_fused_max_log_n() {
  return detail::wht::fused_cluster_max_log_n<T>();
}

/// Batched Walsh-Hadamard transform of `batch` rows of 2^log_n elements.
/// \param in      device pointer, batch * 2^log_n elements
/// \param out     device pointer, batch * 2^log_n elements (may equal in)
/// \param log_n   0 <= log_n <= 30
/// \param batch   number of rows, >= 1
/// \param scale   multiplies every output element
/// \param path    schedule; an explicit path that cannot serve log_n throws wham::error
template <class T>
void fwht(const T* in, T* out, int log_n, std::int64_t batch,
          detail::wht::real_t<T> scale = detail::wht::real_t<T>(1), cudaStream_t stream = 0,
          fwht_path path = fwht_path::automatic) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, cuda::std::complex<float>> ||
                    std::is_same_v<T, cuda::std::complex<double>>,
                "wham::fwht: T must be float, double or cuda::std::complex<float|double>");
  detail::check_range("fwht", "log_n", log_n, 0, 30);
  // batch * 2^log_n * sizeof(T) bytes must fit in int64.
  detail::check_range("fwht", "batch", batch, 1, (INT64_MAX / std::int64_t(sizeof(T))) >> log_n);
  detail::check_not_null("fwht", "in", in);
  detail::check_not_null("fwht", "out", out);
  if (static_cast<const void*>(in) != static_cast<const void*>(out)) {
    const std::uint64_t bytes = std::uint64_t(batch << log_n) * sizeof(T);
    if (detail::ranges_overlap(in, bytes, out, bytes)) {
      detail::throw_invalid_argument("fwht", "out", "a range overlapping in",
                                     "in itself (in place) or a buffer apart from in");
    }
  }
  const detail::device_scope device;  // one device lookup for the whole dispatch
  using V = T;
  const detail::wht::loaded_input<T, V> input{in};
  const detail::wht::stored_output<T, V> output{out};
  const int max_fused = fwht_fused_max_log_n<T>();
  if (path == fwht_path::automatic) {
    path = detail::wht::fused_pays<T>(log_n, batch)     ? fwht_path::fused
           : detail::wht::kronecker_serves<T>(log_n) ? fwht_path::kronecker
                                                      : fwht_path::baseline;
  }
  switch (path) {
    case fwht_path::fused:
      if (log_n > max_fused) {
        detail::throw_invalid_argument(
            "fwht", "log_n", log_n,
            "0.." + std::to_string(max_fused) + " for this element type on this device (fused path)");
      }
      if (log_n > detail::wht::fused_max_log_n<T>()) {
        detail::wht::launch_cluster_beyond_block<V>(log_n, batch, input, output, scale, stream);
      } else if (detail::wht::packed_serves<T>(log_n, in, out)) {
        detail::wht::launch_packed<V>(log_n, in, out, batch, scale, stream);
      } else if (detail::wht::streamed_serves<T>(log_n, in)) {
        detail::wht::launch_streamed<V>(log_n, in, out, batch, scale, stream);
      } else {
        detail::wht::launch_fused<V>(log_n, batch, input, output, scale, stream);
      }
      return;
    case fwht_path::kronecker:
      if (!detail::wht::kronecker_serves<T>(log_n)) {
        detail::throw_invalid_argument(
            "fwht", "log_n", log_n,
            std::to_string(detail::wht::kronecker_min_log_n) + "..30 (kronecker path)");
      }
      detail::wht::launch_kronecker<V>(log_n, batch, input, output, scale, stream);
      return;
    case fwht_path::baseline:
      detail::wht::launch_baseline<V>(log_n, batch, input, output, scale, stream);
      return;
    default:
      detail::throw_invalid_argument("fwht", "path", static_cast<long long>(path),
                                     "automatic, fused, kronecker or baseline");
  }
}

}  // namespace wham
