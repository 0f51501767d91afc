/// \file wham/detail/wht/dispatch.cuh
/// \brief The one place `wham::fwht` and `wham::hadamard` choose their path and schedule:
/// what `automatic` resolves to, which kernel family runs the fused path for a row, the
/// Kronecker plan for loaded rows, the launch switch, and each operator's one call (run_fwht,
/// run_hadamard). Tuning constants and rules: tuning.cuh.
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/check.hpp>
#include <wham/detail/device.cuh>
#include <wham/detail/wht/baseline.cuh>
#include <wham/detail/wht/cluster.cuh>
#include <wham/detail/wht/fused.cuh>
#include <wham/detail/wht/hadamard_m.cuh>
#include <wham/detail/wht/kronecker.cuh>
#include <wham/detail/wht/kronecker_plan.cuh>
#include <wham/detail/wht/packed.cuh>
#include <wham/detail/wht/policies.cuh>
#include <wham/detail/wht/streamed.cuh>
#include <wham/detail/wht/tuning.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace wham::detail::wht {

/// Whether `automatic` runs rows of 2^log_n on chip: one block holds a row, or clusters
/// hold it and pay for `rows` rows (tuning.cuh, cluster_pays). A row one block holds
/// stays one block even where it fills the block's shared memory (the IQP encoder's
/// rows of 2^M gain from two half-rows; the FWHT's do not).
/// H200: float log_n = 15 0.72 (one block) vs 0.43 (cluster of 2) of a copy (bench_fwht)
template <class V>
inline bool fused_pays(int log_n, std::int64_t rows) {
  const int block = fused_max_log_n<V>();
  if (log_n <= block) return true;
  return log_n <= fused_cluster_max_log_n<V>() && cluster_pays(1 << (log_n - block), rows);
}

/// The path `automatic` takes for `batch` rows of 2^log_n elements of T on this device:
/// fused where the row stays on chip and that pays, else kronecker where it serves,
/// else baseline.
template <class T>
inline fwht_path automatic_path(int log_n, std::int64_t batch) {
  using V = compute_t<T>;
  return fused_pays<V>(log_n, batch)  ? fwht_path::fused
         : kronecker_serves<V>(log_n) ? fwht_path::kronecker
                                      : fwht_path::baseline;
}

/// The Kronecker split's plan for loaded rows of T from `in` to `out`: the middle plan
/// wherever it serves (kronecker_plan.cuh has the figures), else a streamed stage 0 of
/// kronecker_streamed_lo_bits where that serves, else the default plan. Rows of the 16-bit
/// floats take the default plan without clustered stages (their strided stages widen to
/// float in the one-block schedule only).
template <class T>
inline kronecker_config loaded_rows_config(int log_n, const T* in, const T* out) {
  kronecker_config cfg;
  if constexpr (!std::is_same_v<T, compute_t<T>>) {
    cfg.clusters = -1;
  } else {
    cfg.middle = kronecker_middle_serves<T>(log_n, in, out);
    if (!cfg.middle && std::is_same_v<T, float>) {
      const int lo = kronecker_streamed_lo_bits(log_n);
      if (lo != 0 && streamed_serves<T>(lo, in)) cfg.lo_bits = lo;
    }
  }
  return cfg;
}

/// The fused path for rows of 2^log_n (log_n at most fused_cluster_max_log_n): clusters
/// beyond one block; rows shorter than a 16-byte vector packed; rows of 2^13 and longer
/// streamed where the device and `in` allow; else the fused kernel. The packed and
/// streamed schedules move rows of their compute type only.
template <class T>
inline void launch_fused_path(int log_n, std::int64_t batch, const T* in, T* out, scale_t<T> scale,
                              cudaStream_t stream) {
  using V = compute_t<T>;
  const loaded_input<T, V> input{in};
  const stored_output<T, V> output{out};
  if (log_n > fused_max_log_n<V>()) {
    return launch_cluster_beyond_block<V>(log_n, batch, input, output, scale, stream);
  }
  if constexpr (std::is_same_v<T, V>) {
    if (packed_serves<V>(log_n, in, out))
      return launch_packed<V>(log_n, in, out, batch, scale, stream);
    if (streamed_serves<V>(log_n, in)) {
      return launch_streamed<V>(log_n, in, out, batch, scale, stream);
    }
  }
  launch_fused<V>(log_n, batch, input, output, scale, stream);
}

/// Runs `path` (automatic resolved here) on arguments wham::fwht has checked; an
/// explicit path that cannot serve log_n throws wham::error.
template <class T>
inline void dispatch(const T* in, T* out, int log_n, std::int64_t batch, scale_t<T> scale,
                     cudaStream_t stream, fwht_path path) {
  using V = compute_t<T>;
  const device_scope device;  // one device lookup for the whole dispatch
  const int max_fused = fused_cluster_max_log_n<V>();
  if (path == fwht_path::automatic) path = automatic_path<T>(log_n, batch);
  switch (path) {
    case fwht_path::fused:
      if (log_n > max_fused) {
        throw_not_supported("fwht", "log_n", log_n,
                            "0.." + std::to_string(max_fused) +
                                " for this element type on this device (fused path)");
      }
      return launch_fused_path<T>(log_n, batch, in, out, scale, stream);
    case fwht_path::kronecker:
      if (!kronecker_serves<V>(log_n)) {
        throw_invalid_argument("fwht", "log_n", log_n,
                               std::to_string(kronecker_min_log_n) + ".." +
                                   std::to_string(fwht_max_log_n) + " (kronecker path)");
      }
      return launch_kronecker_config<V>(log_n, batch, loaded_input<T, V>{in},
                                        stored_output<T, V>{out}, scale, stream,
                                        loaded_rows_config<T>(log_n, in, out));
    case fwht_path::baseline:
      return launch_baseline<V>(log_n, batch, loaded_input<T, V>{in}, stored_output<T, V>{out},
                                scale, stream);
    default:
      throw_invalid_argument("fwht", "path", static_cast<long long>(path),
                             "automatic, fused, kronecker or baseline");
  }
}

/// Whether `path` serves rows of 2^log_n elements of T on the current device
/// (wham::fwht_path_serves).
template <class T>
bool path_serves(fwht_path path, int log_n) {
  using V = compute_t<T>;
  if (log_n < 0 || log_n > fwht_max_log_n) return false;
  switch (path) {
    case fwht_path::automatic:
    case fwht_path::baseline:
      return true;
    case fwht_path::fused:
      return log_n <= fused_cluster_max_log_n<V>();
    case fwht_path::kronecker:
      return kronecker_serves<V>(log_n);
  }
  return false;
}

// Declared in detail/api.hpp: prebuilt with wham::fwht, so that wham::hadamard runs it
// without compiling the transform's kernels again.
template <class T>
void fwht_checked(const T* in, T* out, int log_n, std::int64_t batch, scale_t<T> scale,
                  cudaStream_t stream, fwht_path path) {
  dispatch<T>(in, out, log_n, batch, scale, stream, path);
}

/// wham::fwht's one call once its checks that need no device have passed (batch >= 1):
/// whether the device can address in and out (a device query), then the transform.
template <class T>
void run_fwht(const T* in, T* out, int log_n, std::int64_t batch, scale_t<T> scale,
              cudaStream_t stream, fwht_path path) {
  const auto n = std::uint64_t(batch << log_n);
  const bool apart = static_cast<const void*>(in) != static_cast<const void*>(out);
  check_accessible("fwht", {span_of("in", in, n), span_of("out", apart ? out : nullptr, n)});
  fwht_checked<T>(in, out, log_n, batch, scale, stream, path);
}

/// The m * 2^k transform (m > 1) on checked arguments: the fused path where a row fits a
/// block's shared memory, else the split (a fwht of the segments, then the H_m pass).
template <class T>
void dispatch_hadamard(const T* in, T* out, int m, int log_k, std::int64_t batch, scale_t<T> scale,
                       cudaStream_t stream, hadamard_matrices matrices, bool transpose) {
  const device_scope device;
  const int rows_per_block = hadamard_m_rows_per_block<T>(m, log_k, batch);
  with_hadamard_m(m, static_cast<int>(matrices), transpose, [&](auto mc, auto sc, auto tc) {
    constexpr int M = decltype(mc)::value;
    constexpr int S = decltype(sc)::value;
    constexpr bool Tr = decltype(tc)::value;
    if (rows_per_block > 0) {
      launch_hadamard_m_fused<T, M, S, Tr>(in, out, log_k, batch, rows_per_block, scale, stream);
    } else {
      fwht_checked<T>(in, out, log_k, batch * M, scale, stream, fwht_path::automatic);
      launch_hadamard_m_columns<T, M, S, Tr>(out, log_k, batch, stream);
    }
  });
}

/// wham::hadamard's one call once its checks that need no device have passed (batch >= 1):
/// whether the device can address in and out (a device query), then the fwht for m = 1,
/// else the m * 2^k transform.
template <class T>
void run_hadamard(const T* in, T* out, int m, int log_k, std::int64_t batch, scale_t<T> scale,
                  cudaStream_t stream, hadamard_matrices matrices, bool transpose) {
  const auto n = std::uint64_t((batch * m) << log_k);
  const bool apart = static_cast<const void*>(in) != static_cast<const void*>(out);
  check_accessible("hadamard", {span_of("in", in, n), span_of("out", apart ? out : nullptr, n)});
  if (m == 1) return fwht_checked<T>(in, out, log_k, batch, scale, stream, fwht_path::automatic);
  dispatch_hadamard<T>(in, out, m, log_k, batch, scale, stream, matrices, transpose);
}

}  // namespace wham::detail::wht
