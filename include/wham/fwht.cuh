/// \file wham/fwht.cuh
/// \brief The batched fast Walsh-Hadamard transform.
///
/// Rows of 2^log_n contiguous elements, batch-major (`[batch][2^log_n]`):
///
///     out[b][k] = scale * sum_x in[b][x] * (-1)^popcount(x & k)
///
/// Element types: float, double, cuda::std::complex<float>, cuda::std::complex<double>.
/// In place (`in == out`) and out of place (the buffers must not otherwise overlap).
/// `scale = 2^(-log_n / 2)` gives the orthonormal transform. Arithmetic is in the
/// element's own precision.
///
/// \code
///   // d_rows: 1000 rows of 2^10 floats on the device
///   wham::fwht(d_rows, d_rows, 10, 1000, 1.0f / 32.0f, stream);  // orthonormal, in place
/// \endcode
///
/// Conventions (wham/error.hpp): enqueued on `stream`, no allocation, no
/// synchronisation, capturable in a CUDA graph; bad arguments throw wham::error.
#pragma once

#include <wham/detail/wht/fused.cuh>
#include <wham/error.hpp>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace wham {

/// Which schedule runs the transform.
enum class fwht_path {
  automatic,  ///< fused whenever a row fits one block's shared memory
  fused,      ///< one block per row (several rows per block when short), all on chip
};

/// Largest log_n the fused path serves for element type T on the current device.
template <class T>
inline int fwht_fused_max_log_n() {
  return detail::wht::fused_max_log_n<T>();
}

/// Batched Walsh-Hadamard transform of `batch` rows of 2^log_n elements.
/// \param in      device pointer, batch * 2^log_n elements
/// \param out     device pointer, batch * 2^log_n elements (may equal in)
/// \param log_n   0 <= log_n <= fwht_fused_max_log_n<T>() for now
/// \param batch   number of rows, >= 1
/// \param scale   multiplies every output element
template <class T>
void fwht(const T* in, T* out, int log_n, std::int64_t batch,
          detail::wht::real_t<T> scale = detail::wht::real_t<T>(1), cudaStream_t stream = 0,
          fwht_path path = fwht_path::automatic) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, cuda::std::complex<float>> ||
                    std::is_same_v<T, cuda::std::complex<double>>,
                "wham::fwht: T must be float, double or cuda::std::complex<float|double>");
  detail::check_range("fwht", "log_n", log_n, 0, 30);
  detail::check_range("fwht", "batch", batch, 1, INT64_MAX >> log_n);
  detail::check_not_null("fwht", "in", in);
  detail::check_not_null("fwht", "out", out);
  const int max_fused = fwht_fused_max_log_n<T>();
  if (log_n > max_fused) {
    detail::throw_invalid_argument(
        "fwht", "log_n", log_n,
        "0.." + std::to_string(max_fused) + " for this element type on this device (fused path)");
  }
  (void)path;
  using V = T;
  detail::wht::launch_fused<V>(log_n, batch, detail::wht::loaded_input<T, V>{in},
                               detail::wht::stored_output<T, V>{out}, scale, stream);
}

}  // namespace wham
