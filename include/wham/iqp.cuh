/// \file wham/iqp.cuh
/// \brief The IQP encoder: batches of real feature vectors to IQP states.
///
/// n qubits, basis index x in [0, 2^n); qubit i is bit i of x (least significant
/// first, as Apache Mahout QDP numbers them). Per sample, real parameters:
///
///   iqp_variant::iqp_z  n values            a_0 .. a_{n-1}
///   iqp_variant::iqp    n + n(n-1)/2 values a_0 .. a_{n-1}, then J_ij for i < j in
///                                           the order (0,1), (0,2), ..., (0,n-1), (1,2), ..., (n-2,n-1)
///
///   theta(x) = sum_i a_i x_i + sum_{i<j} J_ij x_i x_j
///   amp[k]   = 2^-n sum_x exp(i theta(x)) (-1)^popcount(x & k)
///
/// i.e. H^n diag(exp(i theta)) H^n |0>: norm 1, and all-zero parameters give |0>.
///
/// Layouts: parameters row-major `[batch][iqp_num_params(n, variant)]`, `float` or
/// `double`; states batch-major `[batch][2^n]`, interleaved complex
/// (`cuda::std::complex<float>` or `cuda::std::complex<double>`), the output
/// precision chosen independently of the parameters'. 1 <= n <= 30, batch >= 1.
/// Phases are formed in double whatever the types, so complex64 output stays
/// within 1e-5 (relative, per sample) at |theta| of thousands of radians.
///
/// \code
///   #include <wham/iqp.cuh>
///   using C = cuda::std::complex<float>;
///   const int n = 12;
///   const std::int64_t batch = 64;
///   const auto variant = wham::iqp_variant::iqp;
///   // d_params: batch * wham::iqp_num_params(n, variant) doubles on the device
///   wham::iqp_size<C> size(n, batch);          // amplitudes and bytes, overflow-checked
///   C* d_states = nullptr;
///   cudaMalloc(&d_states, size.bytes);
///   wham::iqp_encode(d_params, d_states, n, batch, variant, stream);
/// \endcode
///
/// Paths (`iqp_path`): `fused` keeps a whole state on chip (one block per sample,
/// several samples per block at small n; on compute capability 9.0+ also a
/// cluster of 2, 4 or 8 blocks per sample, exchanging through distributed shared
/// memory, for the two qubit counts above one block's shared memory and for
/// batches that would leave most multiprocessors idle): phases generated in
/// registers, every butterfly stage in registers and shared memory, the 2^-n
/// scale folded into the phases (a power of two: exact); it serves
/// n <= iqp_fused_max_qubits<Out>()
/// (on an H200: 15 for complex128, 16 for complex64). `kronecker` is the large-n schedule
/// (wham/detail/wht/kronecker.cuh): one launch per stage, or, for rows of 2^16 / 2^17
/// at large enough batch on compute capability 9.0+, both stages in one kernel with a
/// cluster of 8 blocks a sample (detail::iqp::resident_pays). `baseline` writes the phases, then runs one
/// global-memory butterfly launch per stage (n + 1 launches; any n). `product`
/// serves `iqp_z` only, at any n: with no pair couplings the state is the tensor
/// product prod_i (1 + (-1)^{k_i} e^{i a_i}) / 2, which it writes directly (no
/// transform; wham/detail/iqp/product.cuh). `automatic` picks product for
/// `iqp_z`; for `iqp`, fused when the state fits one block, or a cluster and the
/// batch is large enough for clusters to pay, else kronecker where it serves n,
/// else baseline. The transform paths still serve `iqp_z` when asked
/// for by name. Device limits are looked up once per device and cached.
///
/// Conventions (wham/error.hpp): enqueued on `stream`, no allocation, no
/// synchronisation, capturable in a CUDA graph; bad arguments throw wham::error.
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/iqp/phase.cuh>
#include <wham/detail/iqp/product.cuh>
#include <wham/detail/wht/baseline.cuh>
#include <wham/detail/wht/cluster.cuh>
#include <wham/detail/wht/fused.cuh>
#include <wham/detail/wht/kronecker.cuh>
#include <wham/error.hpp>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace wham {

/// Which IQP circuit: with pair couplings (`iqp`) or single-qubit phases only (`iqp_z`).
enum class iqp_variant { iqp, iqp_z };

/// Which schedule runs the encoder.
enum class iqp_path {
  automatic,  ///< fused when the state fits on chip, else kronecker (where it serves), else baseline
  fused,      ///< whole state on chip; throws for n > iqp_fused_max_qubits<Out>()
  kronecker,  ///< the large-n schedule; throws where it does not serve n
  baseline,   ///< phase launch + one global-memory launch per butterfly stage
  product,    ///< iqp_z only: the product state, one write (throws for iqp)
};

/// Real parameters per sample: n (iqp_z) or n + n(n-1)/2 (iqp). Throws for n outside 1..30.
inline std::int64_t iqp_num_params(int num_qubits, iqp_variant variant) {
  detail::check_range("iqp_num_params", "num_qubits", num_qubits, 1, 30);
  const std::int64_t n = num_qubits;
  return variant == iqp_variant::iqp ? n + n * (n - 1) / 2 : n;
}

/// Size of `batch` states of n qubits in element type Out: amplitudes and bytes,
/// overflow-checked (throws wham::error for n outside 1..30, batch < 1, or a byte
/// count that does not fit in int64).
template <class Out>
struct iqp_size {
  std::int64_t amplitudes = 0;
  std::size_t bytes = 0;
  iqp_size(int num_qubits, std::int64_t batch) {
    detail::check_range("iqp_size", "num_qubits", num_qubits, 1, 30);
    const std::int64_t max_batch = (INT64_MAX / std::int64_t(sizeof(Out))) >> num_qubits;
    detail::check_range("iqp_size", "batch", batch, 1, max_batch);
    amplitudes = batch << num_qubits;
    bytes = static_cast<std::size_t>(amplitudes) * sizeof(Out);
  }
};

namespace detail::iqp {

/// Compiled ceiling of the fused path per output type (the H200's 227 KB of
/// shared memory per block hold 2^14 complex64 or 2^13 complex128 amplitudes).
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

/// Blocks a row of n <= M qubits (M the compiled one-block maximum) is split over:
/// 1 (one block a row), or a cluster of 2 or 4 parts. Rows of 2^M fill a block's
/// shared memory, one block an SM, and the SM idles while that block loads and
/// stores; two half-rows let two blocks overlap (512 MiB of output, 2026-12-01,
/// fraction of the write floor: complex128 n = 13: one block 0.36, 2 parts 0.41;
/// complex64 n = 14: 369 vs 366 us). At small batch (rows <= SMs / 8) four parts
/// shorten each row's chain of dependent work, for n = M and, in complex128, M - 1.
/// H200, 2026-12-01, us a launch (10 launches back to back, median of 101 groups;
/// all schedules bitwise identical), batch 1 / 16 / 32 / 64, one block vs 2 vs 4 parts:
///   complex128 n = 13: 10.65 / 10.73 / 10.92 / 11.08 vs 7.81 / 7.95 / 8.02 / 8.47
///                      vs 6.31 / 6.48 / 8.28 / 9.90
///   complex128 n = 12: 6.25 / 6.30 / 6.43 / 6.60 vs 6.23 / 6.41 / 6.49 / 6.60
///                      vs 5.66 / 5.81 / 6.22 / 7.33
///   complex64 n = 14:  11.01 / 11.14 / 11.32 / 11.59 vs 8.94 / 9.32 / 9.36 / 9.57
///                      vs 7.35 / 7.93 / 8.97 / 11.25
///   complex64 n = 13:  7.14 / 7.21 / 7.37 / 7.52 vs 7.73 / 8.30 / 8.74 / 8.89
///                      vs 7.18 / 7.66 / 7.87 / 8.53
/// bench_iqp (one launch between CUDA events, median), same day, the previous rule
/// (2 parts at n = M, and at n = M - 1 below SMs / 2 rows) -> this one: batch 1,
/// complex128 n = 12: 10.4 -> 9.1 us, n = 13: 11.8 -> 9.8; complex64 n = 13: 12.4 ->
/// 10.7, n = 14: 14.4 -> 10.9; batch 64, complex64 n = 13: 13.8 -> 11.1. (Before the
/// complex128 kernels lost their per-element fallback, fused.cuh's product_only_v,
/// two parts had also won at n = M - 1 below SMs / 2 rows.)
/// Fewer amplitudes a thread (more threads a row) did not pay at small batch
/// either (2026-11-30, batch 64, complex128, us, E = 16 vs 8 vs 4: n = 10 10.9,
/// 10.4, 11.5; n = 12 13.3, 14.3, 16.7; clusters of 2 at n = 13: 15.6, 17.2, 20.0):
/// the extra shared-memory round trips cost more than the shorter threads save.
/// Re-measured on the device alone (H200, 2026-12-04, complex128 batch 64, a CUDA
/// graph of 20 launches, us a launch, two rounds, E = 16 vs 8 vs 4): n = 9 2.79 vs
/// 2.47 vs 2.62, n = 10 3.10 vs 3.00 vs 3.45, n = 11 3.6 vs 4.0 vs 5.4, n = 12 5.5 vs
/// 6.7 vs 9.6, n = 13 (clusters of 2) 7.1 vs 8.3 vs 11.7; at 512 MiB, of the write
/// floor, E = 16 vs 8: n = 9-13 0.70, 0.64, 0.59, 0.56, 0.51 vs 0.63, 0.55, 0.51, 0.31,
/// 0.39. The 0.1-0.3 us that E = 8 takes off n = 9, 10 is inside the 1-2 us by which
/// single launches between events (the benchmark's measure) vary from run to run.
template <class V>
inline int cluster_parts(int n, std::int64_t batch) {
  if (fused_max_qubits<V>() <= block_max_qubits<V>()) return 1;  // no clusters here
  constexpr int M = fused_compiled_max<V>;
  const bool small = batch * 8 <= std::int64_t(current_device_limits().sm_count);
  if (n == M) return small ? 4 : 2;
  if (n == M - 1 && sizeof(V) >= 16 && small) return 4;
  return 1;
}

/// Rows beyond one block (n = M + 1, M + 2, M the compiled one-block maximum) as
/// clusters of parts of 2^(M - 1): two such parts share an SM, where a part of 2^M
/// fills one and the SM idles while it loads and stores (the FWHT keeps parts of
/// 2^M: wht::launch_cluster_beyond_block). H200, 2026-12-01, fraction of the write
/// floor at 512 MiB (us at batch 64), parts of 2^M vs of 2^(M - 1): complex128 n = 14:
/// 0.31 vs 0.43 (15.9 vs 19.2 us), n = 15: 0.26 vs 0.36 (43.4 vs 32.0 us); complex64
/// n = 15: 0.31 vs 0.41 (15.9 vs 19.7 us), n = 16: 0.27 vs 0.33 (43.7 vs 34.3 us). So
/// rows of 2^(M + 1) take four parts from 2 * SMs rows on (between batch 64, where
/// two parts of 2^M win, and 2048, where four win; the crossing itself is not
/// measured), and rows of 2^(M + 2) take eight parts at every batch.
template <class V>
inline bool quarter_parts(std::int64_t batch) {
  return batch >= 2 * std::int64_t(current_device_limits().sm_count);
}

/// Whether rows beyond one block pay as clusters against the Kronecker split.
/// n = M + 1: wht::cluster_pays's measure (two parts of 2^M). n = M + 2, eight parts:
/// H200, 2026-12-01, complex128 n = 15: batch 64 32.0 vs 37.8 us, 512 MiB 0.36 vs
/// 0.26 of the write floor (Kronecker at batch 1: 14.3 us; clusters there not
/// measured): from 2 * SMs / 8 rows on.
template <class V>
inline bool clusters_pay(int n, std::int64_t batch) {
  if (n == fused_compiled_max<V> + 2) {
    return batch * 8 >= 2 * std::int64_t(current_device_limits().sm_count);
  }
  return wht::cluster_pays(2, batch);
}

/// Whether the kronecker path runs `batch` rows of 2^n as the resident schedule
/// (one kernel, a cluster of 8 blocks a row: wht::launch_kronecker_resident, whose
/// comment has the measurements) rather than one launch per stage. H200, 2026-12-02:
/// rows of 1 MiB (complex128 n = 16, complex64 n = 17) gain from batch 64 (1.09-1.17x;
/// 1.19-1.28x at 512 MiB) and lose at batch 8; complex128 n = 17 gains at 256 rows
/// (1.11x) and not at 64.
template <class V>
inline bool resident_pays(int n, std::int64_t batch) {
  if (!wht::kronecker_resident_serves<V, V>(n)) return false;
  const bool one_mib_rows = (std::int64_t(sizeof(V)) << n) == (std::int64_t(1) << 20);
  return batch >= (one_mib_rows ? 64 : 256);
}

/// The Kronecker split's plan for the IQP phases: strided stages in one block only.
/// Clustered stages (wht::strided_cluster_kernel), which save the FWHT a pass at
/// float n = 27, 28 and 8-byte n = 26, 27, would need a stage 0 of 13 or 14 bits, and
/// the phase-generating stage 0 costs more there than the third pass it saves (H200,
/// 2026-12-02, 512 MiB, fraction of the write floor: complex64 n = 26 0.121 (13+13)
/// vs 0.152 (12+7+7), n = 27 0.114 (14+13) vs 0.147 (12+8+7)).
inline constexpr wht::kronecker_config kronecker_tuning = [] {
  wht::kronecker_config c;
  c.clusters = -1;
  return c;
}();

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

template <class V, class Input, class Output>
inline void launch_fused(int n, std::int64_t batch, Input input, Output output,
                         wht::real_t<V> scale, cudaStream_t stream) {
  if (n > block_max_qubits<V>()) {
    return launch_beyond_block<V>(n, batch, input, output, scale, stream);
  }
  constexpr int M = fused_compiled_max<V>;
  switch (cluster_parts<V>(n, batch)) {
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
  switch (n) {
#define WHAM_IQP_FUSED_CASE(L)                                                    \
  case L:                                                                         \
    if constexpr (L <= fused_compiled_max<V>) {                                   \
      return wht::launch_fused_n<V, L>(input.template with_qubits<L>(), output,   \
                                       batch, scale, stream);                     \
    }                                                                             \
    break;
    WHAM_IQP_FUSED_CASE(1)
    WHAM_IQP_FUSED_CASE(2)
    WHAM_IQP_FUSED_CASE(3)
    WHAM_IQP_FUSED_CASE(4)
    WHAM_IQP_FUSED_CASE(5)
    WHAM_IQP_FUSED_CASE(6)
    WHAM_IQP_FUSED_CASE(7)
    WHAM_IQP_FUSED_CASE(8)
    WHAM_IQP_FUSED_CASE(9)
    WHAM_IQP_FUSED_CASE(10)
    WHAM_IQP_FUSED_CASE(11)
    WHAM_IQP_FUSED_CASE(12)
    WHAM_IQP_FUSED_CASE(13)
    WHAM_IQP_FUSED_CASE(14)
#undef WHAM_IQP_FUSED_CASE
    default:
      break;
  }
  throw_invalid_argument("iqp_encode", "num_qubits (fused path)", n,
                         "1.." + std::to_string(fused_compiled_max<V>));
}

}  // namespace detail::iqp

/// Largest n the fused path serves for output type Out on the current device.
template <class Out>
inline int iqp_fused_max_qubits() {
  return detail::iqp::fused_max_qubits<Out>();
}

/// The path `automatic` resolves to for n qubits, output type Out, `batch`
/// samples and the variant on the current device (iqp_z: product; iqp: rows
/// beyond one block run fused as clusters once the batch fills the GPU, else
/// kronecker).
template <class Out>
inline iqp_path iqp_automatic_path(int num_qubits, std::int64_t batch = INT64_MAX / 8,
                                   iqp_variant variant = iqp_variant::iqp) {
  if (variant == iqp_variant::iqp_z) return iqp_path::product;
  if (num_qubits <= detail::iqp::block_max_qubits<Out>()) return iqp_path::fused;
  if (num_qubits <= iqp_fused_max_qubits<Out>() &&
      detail::iqp::clusters_pay<Out>(num_qubits, batch)) {
    return iqp_path::fused;
  }
  return detail::wht::kronecker_serves<Out>(num_qubits) ? iqp_path::kronecker
                                                        : iqp_path::baseline;
}

/// Whether `path` serves n qubits of `variant` with output type Out on the current device.
template <class Out>
inline bool iqp_path_serves(iqp_path path, int num_qubits,
                            iqp_variant variant = iqp_variant::iqp) {
  if (num_qubits < 1 || num_qubits > 30) return false;
  switch (path) {
    case iqp_path::product:
      return variant == iqp_variant::iqp_z;
    case iqp_path::automatic:
    case iqp_path::baseline:
      return true;
    case iqp_path::fused:
      return num_qubits <= iqp_fused_max_qubits<Out>();
    case iqp_path::kronecker:
      return detail::wht::kronecker_serves<Out>(num_qubits);
  }
  return false;
}

/// Encodes `batch` samples into IQP states (see the file comment for the layouts).
/// \param params      device pointer, batch * iqp_num_params(num_qubits, variant) values
/// \param states      device pointer, iqp_size<Out>(num_qubits, batch).amplitudes values;
///                    must not overlap params (wham::error)
/// \param num_qubits  1..30
/// \param batch       >= 1
/// \param variant     iqp (with pair couplings) or iqp_z
/// \param stream      the stream the work is enqueued on
/// \param path        schedule (default: automatic)
template <class Param, class Out>
void iqp_encode(const Param* params, Out* states, int num_qubits, std::int64_t batch,
                iqp_variant variant, cudaStream_t stream = 0,
                iqp_path path = iqp_path::automatic) {
  static_assert(std::is_same_v<Param, float> || std::is_same_v<Param, double>,
                "wham::iqp_encode: parameters must be float or double");
  static_assert(std::is_same_v<Out, cuda::std::complex<float>> ||
                    std::is_same_v<Out, cuda::std::complex<double>>,
                "wham::iqp_encode: states must be cuda::std::complex<float|double>");
  detail::check_range("iqp_encode", "num_qubits", num_qubits, 1, 30);
  if (variant != iqp_variant::iqp && variant != iqp_variant::iqp_z) {
    detail::throw_invalid_argument("iqp_encode", "variant", static_cast<long long>(variant),
                                   "iqp_variant::iqp or iqp_variant::iqp_z");
  }
  const std::int64_t per_sample = iqp_num_params(num_qubits, variant);
  detail::check_range("iqp_encode", "batch", batch, 1,
                      std::min<std::int64_t>((INT64_MAX / std::int64_t(sizeof(Out))) >> num_qubits,
                                             INT64_MAX / (per_sample * std::int64_t(sizeof(Param)))));
  detail::check_not_null("iqp_encode", "params", params);
  detail::check_not_null("iqp_encode", "states", states);
  if (detail::ranges_overlap(states, std::uint64_t(batch << num_qubits) * sizeof(Out), params,
                             std::uint64_t(batch * per_sample) * sizeof(Param))) {
    detail::throw_invalid_argument("iqp_encode", "states", "a range overlapping params",
                                   "a buffer apart from params");
  }
  const detail::device_scope device;  // one device lookup for the whole dispatch

  using V = Out;
  using R = detail::wht::real_t<V>;
  const R scale = static_cast<R>(std::ldexp(1.0, -num_qubits));
  const detail::iqp::phase_input<Param, V> input{params, per_sample, num_qubits,
                                                 variant == iqp_variant::iqp, batch};
  const detail::wht::stored_output<Out, V> output{states};

  if (path == iqp_path::automatic) path = iqp_automatic_path<Out>(num_qubits, batch, variant);
  switch (path) {
    case iqp_path::product:
      if (variant != iqp_variant::iqp_z) {
        detail::throw_invalid_argument("iqp_encode", "path", static_cast<long long>(path),
                                       "automatic, fused, kronecker or baseline for the iqp "
                                       "variant (product serves iqp_z only)");
      }
      return detail::iqp::launch_product(params, states, num_qubits, batch, stream);
    case iqp_path::fused: {
      const int max_fused = iqp_fused_max_qubits<Out>();
      if (num_qubits > max_fused) {
        detail::throw_invalid_argument(
            "iqp_encode", "num_qubits", num_qubits,
            "1.." + std::to_string(max_fused) + " for the fused path with this output type on this device");
      }
      // The scale goes into the phases (exact: a power of two), not each store.
      auto prescaled = input;
      prescaled.prescale = scale;
      const detail::wht::stored_output<Out, V, false> unscaled{states};
      return detail::iqp::launch_fused<V>(num_qubits, batch, prescaled, unscaled, R(1), stream);
    }
    case iqp_path::kronecker:
      if (!detail::wht::kronecker_serves<V>(num_qubits)) {
        detail::throw_invalid_argument("iqp_encode", "num_qubits", num_qubits,
                                       "a qubit count the kronecker path serves on this device");
      }
      if (detail::iqp::resident_pays<V>(num_qubits, batch)) {
        return detail::wht::launch_kronecker_resident<V>(num_qubits, batch, input, output, scale,
                                                         stream);
      }
      return detail::wht::launch_kronecker_config<V>(num_qubits, batch, input, output, scale,
                                                     stream, detail::iqp::kronecker_tuning);
    case iqp_path::baseline:
      return detail::wht::launch_baseline<V>(num_qubits, batch, input, output, scale, stream);
    default:
      detail::throw_invalid_argument("iqp_encode", "path", static_cast<long long>(path),
                                     "automatic, fused, kronecker, baseline or product");
  }
}

}  // namespace wham
