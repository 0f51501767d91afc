/// \file wham/detail/wht/kronecker.cuh
/// \brief The Kronecker-split schedule for rows too long for one block:
/// H_n = H_hi (x) H_lo. (Stub: lands with the large-n issue.)
#pragma once

#include <wham/detail/wht/common.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>

namespace wham::detail::wht {

/// Whether launch_kronecker serves rows of 2^log_n elements of V on this device.
template <class V>
inline bool kronecker_serves(int /*log_n*/) {
  return false;
}

/// Transforms `batch` rows of 2^log_n elements: input from the policy (loaded or
/// generated; see fused.cuh for the policy interface), result written through
/// `output`, which is also the workspace (no allocation).
template <class V, class Input, class Output>
inline void launch_kronecker(int log_n, std::int64_t /*batch*/, Input /*input*/,
                             Output /*output*/, real_t<V> /*scale*/, cudaStream_t /*stream*/) {
  throw_invalid_argument("kronecker path", "log_n", log_n, "none yet (not implemented)");
}

}  // namespace wham::detail::wht
