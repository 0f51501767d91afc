// Apache Mahout QDP's IQP launchers (wham/qdp.h) over wham::iqp_encode<double,
// complex<double>>: QDP's status codes (cudaError_t values) instead of wham_status.
#pragma GCC visibility push(default)
#include <wham/qdp.h>
#pragma GCC visibility pop

#include <wham/prebuilt.hpp>

#include "c_guard.hpp"

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace {

int encode(const char* f, const double* data, void* states, std::uint64_t num_samples,
           std::uint64_t state_len, unsigned int num_qubits, std::uint64_t data_len, int enable_zz,
           cudaStream_t stream) {
  using wham::detail::check_range;
  using wham::detail::throw_invalid_argument;
  const auto variant = enable_zz != 0 ? wham::iqp_variant::iqp : wham::iqp_variant::iqp_z;
  int cuda_code = 0;
  const wham_status s = wham::c::guarded([&] {
    // QDP's own check first (num_samples, state_len and num_qubits nonzero), then wham's.
    check_range(f, "num_qubits", num_qubits, 1, 30);
    if (num_samples == 0 || num_samples > std::uint64_t(INT64_MAX)) {
      throw_invalid_argument(f, "num_samples", std::to_string(num_samples), "1..2^63-1");
    }
    if (state_len != (std::uint64_t(1) << num_qubits)) {
      throw_invalid_argument(f, "state_len", std::to_string(state_len),
                             "2^num_qubits = " + std::to_string(std::uint64_t(1) << num_qubits));
    }
    const std::int64_t per_sample = wham::iqp_num_params(int(num_qubits), variant);
    if (data_len != std::uint64_t(per_sample)) {
      throw_invalid_argument(f, "data_len", std::to_string(data_len),
                             std::to_string(per_sample) + " (" +
                                 (enable_zz != 0 ? "n + n(n-1)/2 with enable_zz" : "n") + ")");
    }
    wham::iqp_encode(data, static_cast<cuda::std::complex<double>*>(states), int(num_qubits),
                     std::int64_t(num_samples), variant, stream);
  }, &cuda_code);
  switch (s) {
    case WHAM_SUCCESS:
      return cudaSuccess;
    case WHAM_ERROR_INVALID_ARGUMENT:
      return cudaErrorInvalidValue;
    case WHAM_ERROR_NOT_SUPPORTED:
      return cudaErrorNotSupported;
    case WHAM_ERROR_CUDA:
    case WHAM_ERROR_NO_DEVICE:
      return cuda_code != 0 ? cuda_code : int(cudaErrorUnknown);
    default:
      return cudaErrorUnknown;
  }
}

}  // namespace

extern "C" {

int launch_iqp_encode(const double* data_d, void* state_d, size_t state_len,
                      unsigned int num_qubits, int enable_zz, wham_stream stream) {
  // One sample: its parameter count is whatever n and enable_zz ask for.
  const std::uint64_t per_sample =
      num_qubits >= 1 && num_qubits <= 30
          ? std::uint64_t(num_qubits) +
                (enable_zz != 0 ? std::uint64_t(num_qubits) * (num_qubits - 1) / 2 : 0)
          : 0;
  return encode("launch_iqp_encode", data_d, state_d, 1, state_len, num_qubits, per_sample,
                enable_zz, stream);
}

int launch_iqp_encode_batch(const double* data_batch_d, void* state_batch_d, size_t num_samples,
                            size_t state_len, unsigned int num_qubits, unsigned int data_len,
                            int enable_zz, wham_stream stream) {
  return encode("launch_iqp_encode_batch", data_batch_d, state_batch_d, num_samples, state_len,
                num_qubits, data_len, enable_zz, stream);
}

}  // extern "C"
