/// \file wham/detail/iqp/dispatch.cuh
/// \brief The one place `wham::iqp_encode` chooses its path and schedule: what
/// `automatic` resolves to, how the fused path splits a row over blocks, the launch
/// switch, and iqp_encode's one call (run).
/// Tuning constants and rules: tuning.cuh.
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/check.hpp>
#include <wham/detail/device.cuh>
#include <wham/detail/iqp/phase.cuh>
#include <wham/detail/iqp/product.cuh>
#include <wham/detail/iqp/tuning.cuh>
#include <wham/detail/wht/baseline.cuh>
#include <wham/detail/wht/cluster.cuh>
#include <wham/detail/wht/fused.cuh>
#include <wham/detail/wht/kronecker.cuh>
#include <wham/detail/wht/kronecker_plan.cuh>
#include <wham/detail/wht/kronecker_resident.cuh>
#include <wham/detail/wht/policies.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <string>

namespace wham::detail::iqp {

/// Compiled ceiling of the fused path's one-block rows per output type (227 KiB of
/// shared memory hold 2^14 complex64 or 2^13 complex128 amplitudes).
template <class V>
inline constexpr int fused_compiled_max = wht::block_compiled_max_log_n<V>;

/// Largest n one block holds on the current device.
template <class V>
inline int block_max_qubits() {
  const int dev = wht::fused_max_log_n<V>();
  return dev < fused_compiled_max<V> ? dev : fused_compiled_max<V>;
}

/// Largest n on chip: one block, or a cluster (wht::fused_cluster_max_log_n).
template <class V>
inline int fused_max_qubits() {
  const int on_chip = wht::fused_cluster_max_log_n<V>();
  return on_chip > wht::fused_max_log_n<V>() ? on_chip : block_max_qubits<V>();
}

/// The path `automatic` takes (wham/iqp.cuh documents it): product for iqp_z; for iqp,
/// fused where one block holds the state, or a cluster holds it and clusters pay at this
/// batch, else kronecker where it serves n, else baseline.
template <class Out>
inline iqp_path automatic_path(int n, std::int64_t batch, iqp_variant variant) {
  if (variant == iqp_variant::iqp_z) return iqp_path::product;
  if (n <= block_max_qubits<Out>()) return iqp_path::fused;
  if (n <= fused_max_qubits<Out>() && clusters_pay<Out>(n, batch)) return iqp_path::fused;
  return wht::kronecker_serves<Out>(n) ? iqp_path::kronecker : iqp_path::baseline;
}

/// Rows beyond one block (n = M + 1, M + 2) as clusters of parts of 2^M or 2^(M - 1)
/// (quarter_parts).
template <class V, class Input, class Output>
inline void launch_beyond_block(int n, std::int64_t batch, Input input, Output output,
                                wht::real_t<V> scale, cudaStream_t stream) {
  constexpr int M = fused_compiled_max<V>;
  if (n == M + 1) {
    const auto row = input.template with_qubits<M + 1>();
    if (quarter_parts<V>(batch)) {
      return wht::launch_cluster_n<V, M - 1, 4>(row, output, batch, scale, stream);
    }
    return wht::launch_cluster_n<V, M, 2>(row, output, batch, scale, stream);
  }
  if (n == M + 2) {
    const auto row = input.template with_qubits<M + 2>();
    return wht::launch_cluster_n<V, M - 1, 8>(row, output, batch, scale, stream);
  }
  throw_invalid_argument("iqp_encode", "num_qubits (cluster schedule)", n,
                         std::to_string(M + 1) + ".." + std::to_string(M + 2));
}

/// The fused path: one block a row, or a cluster of parts (cluster_parts) where the
/// device has clusters; each kernel compiled for its row's qubit count.
template <class V, class Input, class Output>
inline void launch_fused_path(int n, std::int64_t batch, Input input, Output output,
                              wht::real_t<V> scale, cudaStream_t stream) {
  if (n > block_max_qubits<V>()) {
    return launch_beyond_block<V>(n, batch, input, output, scale, stream);
  }
  constexpr int M = fused_compiled_max<V>;
  const bool clusters = fused_max_qubits<V>() > block_max_qubits<V>();
  switch (clusters ? cluster_parts<V>(n, batch) : 1) {
    case 4:  // n = M, or M - 1 in complex128 (cluster_parts)
      if (n == M) {
        return wht::launch_cluster_n<V, M - 2, 4>(input.template with_qubits<M>(), output, batch,
                                                  scale, stream);
      }
      if constexpr (sizeof(V) >= 16) {
        return wht::launch_cluster_n<V, M - 3, 4>(input.template with_qubits<M - 1>(), output,
                                                  batch, scale, stream);
      }
      break;
    case 2:  // n = M
      return wht::launch_cluster_n<V, M - 1, 2>(input.template with_qubits<M>(), output, batch,
                                                scale, stream);
    default:
      break;
  }
  const bool built = arch::dispatch_int<1, M + 1>(n, [&](auto size) {
    constexpr int L = decltype(size)::value;
    wht::launch_fused_n<V, L>(input.template with_qubits<L>(), output, batch, scale, stream);
  });
  if (!built) {
    throw_not_supported("iqp_encode", "num_qubits (fused path)", n,
                        "1.." + std::to_string(fused_compiled_max<V>));
  }
}

/// Runs `path` (automatic resolved here) on arguments wham::iqp_encode has checked
/// (`per_sample` = iqp_num_params(n, variant); path and variant in range, product only
/// for iqp_z); a path that cannot serve n on this device throws wham::error.
template <class Param, class Out>
inline void dispatch(const Param* params, std::int64_t per_sample, Out* states, int n,
                     std::int64_t batch, iqp_variant variant, cudaStream_t stream, iqp_path path) {
  const device_scope device;  // one device lookup for the whole dispatch
  using V = Out;
  using R = wht::real_t<V>;
  const R scale = static_cast<R>(std::ldexp(1.0, -n));
  const phase_input<Param, V> input{params, per_sample, n, variant == iqp_variant::iqp, batch};
  const wht::stored_output<Out, V> output{states};

  if (path == iqp_path::automatic) path = automatic_path<Out>(n, batch, variant);
  switch (path) {
    case iqp_path::product:  // iqp_z only (wham::iqp_encode checked, check_iqp_enums)
      return launch_product(params, states, n, batch, stream);
    case iqp_path::fused: {
      const int max_fused = fused_max_qubits<Out>();
      if (n > max_fused) {
        throw_not_supported("iqp_encode", "num_qubits", n,
                            "1.." + std::to_string(max_fused) +
                                " for the fused path with this output type on this device");
      }
      // The scale goes into the phases (exact: a power of two), not each store.
      auto prescaled = input;
      prescaled.prescale = scale;
      const wht::stored_output<Out, V, false> unscaled{states};
      return iqp::launch_fused_path<V>(n, batch, prescaled, unscaled, R(1), stream);
    }
    case iqp_path::kronecker:
      if (!wht::kronecker_serves<V>(n)) {
        throw_invalid_argument("iqp_encode", "num_qubits", n,
                               "a qubit count the kronecker path serves on this device");
      }
      if (wht::kronecker_resident_serves<V, V>(n) && resident_pays<V>(n, batch)) {
        return wht::launch_kronecker_resident<V>(n, batch, input, output, scale, stream);
      }
      return wht::launch_kronecker_config<V>(n, batch, input, output, scale, stream,
                                             kronecker_tuning);
    case iqp_path::baseline:
      return wht::launch_baseline<V>(n, batch, input, output, scale, stream);
    default:
      throw_invalid_argument("iqp_encode", "path", static_cast<long long>(path),
                             "automatic, fused, kronecker, baseline or product");
  }
}

/// Whether `path` serves n qubits of `variant` with output type Out on the current device
/// (wham::iqp_path_serves).
template <class Out>
bool path_serves(iqp_path path, int n, iqp_variant variant) {
  if (n < 1 || n > iqp_max_qubits) return false;
  switch (path) {
    case iqp_path::product:
      return variant == iqp_variant::iqp_z;
    case iqp_path::automatic:
    case iqp_path::baseline:
      return true;
    case iqp_path::fused:
      return n <= fused_max_qubits<Out>();
    case iqp_path::kronecker:
      return wht::kronecker_serves<Out>(n);
  }
  return false;
}

/// wham::iqp_encode's one call once its checks that need no device have passed
/// (batch >= 1): whether the device can address params and states (a device query), then
/// the path chosen, checked against the device and launched.
template <class Param, class Out>
void run(const Param* params, std::int64_t per_sample, Out* states, int n, std::int64_t batch,
         iqp_variant variant, cudaStream_t stream, iqp_path path) {
  check_accessible("iqp_encode", {span_of("params", params, std::uint64_t(batch * per_sample)),
                                  span_of("states", states, std::uint64_t(batch << n))});
  dispatch(params, per_sample, states, n, batch, variant, stream, path);
}

}  // namespace wham::detail::iqp
