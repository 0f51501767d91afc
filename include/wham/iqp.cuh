/// \file wham/iqp.cuh
/// \brief The IQP encoder: batches of real feature vectors to IQP states.
///
/// n qubits, basis index x in [0, 2^n); qubit i is bit i of x (least significant
/// first, as Apache Mahout QDP numbers them). Per sample, real parameters:
///
///   iqp_variant::iqp_z  n values            a_0 .. a_{n-1}
///   iqp_variant::iqp    n + n(n-1)/2 values a_0 .. a_{n-1}, then J_ij for i < j in
///                                           the order (0,1), (0,2), ..., (0,n-1), (1,2), ...,
///                                           (n-2,n-1)
///
///   theta(x) = sum_i a_i x_i + sum_{i<j} J_ij x_i x_j
///   amp[k]   = 2^-n sum_x exp(i theta(x)) (-1)^popcount(x & k)
///
/// i.e. H^n diag(exp(i theta)) H^n |0>: norm 1, and all-zero parameters give |0>.
///
/// Layouts: parameters row-major `[batch][iqp_num_params(n, variant)]`, `float` or
/// `double`; states batch-major `[batch][2^n]`, interleaved complex
/// (`cuda::std::complex<float>` or `cuda::std::complex<double>`), the output
/// precision chosen independently of the parameters'. 1 <= n <= 30, batch >= 0 (0: a no-op).
/// Phases are formed in double whatever the types, so complex64 output stays
/// within 1e-5 (relative, per sample) at |theta| of thousands of radians. Every finite
/// theta is reduced exactly (beyond 2^51 radians, 2^28 for complex64, by a multi-word
/// product with 2/pi's bits): norm 1 at any angle. A NaN or infinite parameter makes its
/// own sample's amplitudes non-finite; the other samples stay exact.
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
/// Paths (`iqp_path`):
///   - fused:     the whole state on chip, written once: one block a sample (several
///                samples a block at small n), or on compute capability 9.0+ a cluster
///                of 2, 4 or 8 blocks a sample exchanging through distributed shared
///                memory, for the two qubit counts above one block's shared memory and
///                for batches that would leave most multiprocessors idle. Phases are
///                made in registers, the 2^-n scale folded into them (exact). Serves
///                n <= iqp_fused_max_qubits<Out>() (H200: 15 complex128, 16 complex64).
///   - kronecker: the large-n schedule (the FWHT's Kronecker split, phases made on chip
///                in its first stage): one launch a stage, or, for rows of 2^16 / 2^17
///                at large enough batch on compute capability 9.0+, both stages in one
///                kernel with a cluster of 8 blocks a sample.
///   - baseline:  writes the phases, then one global-memory butterfly launch per stage
///                (n + 1 launches; any n), for comparison.
///   - product:   iqp_z only, any n: with no pair couplings the state is the tensor
///                product prod_i (1 + (-1)^{k_i} e^{i a_i}) / 2, written directly (no
///                transform).
///   - automatic: for iqp_z, product, at every n and batch. For iqp: fused when one
///                block holds a state (H200: n <= 14 complex64, 13 complex128); for the
///                two qubit counts above (compute capability 9.0+), fused as clusters
///                from a batch of about a quarter of the multiprocessor count on (33
///                samples on an H200), kronecker below it; beyond, kronecker (baseline
///                only on a device too small for it). iqp_automatic_path says which for
///                a given n, batch and variant.
/// The transform paths also serve `iqp_z` when asked for by name. Device limits are
/// looked up once per device and cached.
///
/// Conventions (wham/error.hpp): enqueued on `stream`, no allocation, no
/// synchronisation, capturable in a CUDA graph; bad arguments throw wham::error.
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/check.hpp>
#include <wham/detail/iqp/dispatch.cuh>
#include <wham/error.hpp>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace wham {

// iqp_variant, iqp_path, iqp_num_params, iqp_size and the declarations with their default
// arguments: detail/api.hpp.

/// Largest n the fused path serves for output type Out on the current device.
template <class Out>
int iqp_fused_max_qubits() {
  return detail::iqp::fused_max_qubits<Out>();
}

/// The path `automatic` resolves to for n qubits, output type Out, `batch` samples and
/// the variant on the current device (the file comment says how it chooses).
/// Throws wham::error for n outside 1..30, batch < 1 or an invalid variant.
template <class Out>
iqp_path iqp_automatic_path(int num_qubits, std::int64_t batch, iqp_variant variant) {
  detail::check_range("iqp_automatic_path", "num_qubits", num_qubits, 1, detail::iqp_max_qubits);
  detail::check_range("iqp_automatic_path", "batch", batch, 1, INT64_MAX);
  detail::check_iqp_enums("iqp_automatic_path", variant, iqp_path::automatic);
  return detail::iqp::automatic_path<Out>(num_qubits, batch, variant);
}

/// Whether `path` serves n qubits of `variant` with output type Out on the current device.
template <class Out>
bool iqp_path_serves(iqp_path path, int num_qubits, iqp_variant variant) {
  return detail::iqp::path_serves<Out>(path, num_qubits, variant);
}

/// Encodes `batch` samples into IQP states (see the file comment for the layouts).
/// \param params      device pointer, batch * iqp_num_params(num_qubits, variant) values
/// \param states      device pointer, iqp_size<Out>(num_qubits, batch).amplitudes values;
///                    must not overlap params (wham::error)
///                    Both aligned to their element type and device-accessible (device,
///                    managed or registered host memory): a misaligned or plain host
///                    pointer throws wham::error naming it (cudaPointerGetAttributes).
/// \param num_qubits  1..30
/// \param batch       >= 0 (0: a no-op that checks the other scalars and touches neither
///                    the pointers nor the device)
/// \param variant     iqp (with pair couplings) or iqp_z
/// \param stream      the stream the work is enqueued on
/// \param path        schedule (default: automatic)
template <class Param, class Out>
void iqp_encode(const Param* params, Out* states, int num_qubits, std::int64_t batch,
                iqp_variant variant, cudaStream_t stream, iqp_path path) {
  static_assert(std::is_same_v<Param, float> || std::is_same_v<Param, double>,
                "wham::iqp_encode: parameters must be float or double");
  static_assert(std::is_same_v<Out, cuda::std::complex<float>> ||
                    std::is_same_v<Out, cuda::std::complex<double>>,
                "wham::iqp_encode: states must be cuda::std::complex<float|double>");
  constexpr const char* f = "iqp_encode";
  detail::check_range(f, "num_qubits", num_qubits, 1, detail::iqp_max_qubits);
  detail::check_iqp_enums(f, variant, path);
  const std::int64_t per_sample = iqp_num_params(num_qubits, variant);
  detail::check_range(
      f, "batch", batch, 0,
      std::min<std::int64_t>((INT64_MAX / std::int64_t(sizeof(Out))) >> num_qubits,
                             INT64_MAX / (per_sample * std::int64_t(sizeof(Param)))));
  if (batch == 0) return;
  detail::check_buffer(f, "params", params);
  detail::check_buffer(f, "states", states);
  detail::check_apart(f, detail::span_of("states", states, std::uint64_t(batch << num_qubits)),
                      {detail::span_of("params", params, std::uint64_t(batch * per_sample))});
  detail::iqp::run(params, per_sample, states, num_qubits, batch, variant, stream, path);
}

}  // namespace wham
