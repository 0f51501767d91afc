/// \file wham/detail/api.hpp
/// \brief Declarations of every public entry point (enumerations, sizes, the launchers'
/// signatures and default arguments), without their definitions.
///
/// Plain C++17: a host compiler can parse it with the CUDA and CCCL include directories on
/// the path. The public headers (wham/fwht.cuh, hadamard.cuh, iqp.cuh, m2l.cuh, fmm.cuh,
/// translations.cuh, particles.cuh) include it and define the templates; wham/prebuilt.hpp
/// includes it and declares the prebuilt instantiations of every one of them
/// (detail/instantiations.hpp), so a call site compiles without the kernels. The
/// documentation of each entry point is at its definition in the public header.
#pragma once

#include <wham/detail/wht/hadamard_matrices.hpp>
#include <wham/error.hpp>

#include <cuda/std/complex>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace wham {

// ---- Walsh-Hadamard transform (wham/fwht.cuh) ---------------------------------------------

/// Which schedule runs the transform.
enum class fwht_path {
  automatic,  ///< fused whenever a row fits on chip (one block, or a cluster where the
              ///< batch fills the GPU), else kronecker (else baseline, on a device too
              ///< small for either)
  fused,      ///< all on chip: one block per row (several rows per block when short), or
              ///< on compute capability 9.0+ a cluster of 2 or 4 blocks per row for the
              ///< two log_n above one block's shared memory
  kronecker,  ///< split H_n = H_hi (x) H_lo for long rows (log_n >= 11)
  baseline,   ///< one global-memory launch per butterfly stage (any log_n)
};

namespace detail {
/// fwht_path's number of values, for the argument check (baseline stays the last).
inline constexpr int fwht_path_count = static_cast<int>(fwht_path::baseline) + 1;
/// Longest row of wham::fwht, log2: 2^30 elements (hadamard's m = 1 as well).
inline constexpr int fwht_max_log_n = 30;
/// Longest segment of wham::hadamard's rows of m * 2^k (m > 1), log2.
inline constexpr int hadamard_max_log_k = 25;

namespace wht {
/// The real type of an element type: T itself, or the component type of a complex T.
template <class T>
struct real_of {
  using type = T;
};
template <class T>
struct real_of<cuda::std::complex<T>> {
  using type = T;
};
template <class T>
using real_t = typename real_of<T>::type;
/// The type the transform of rows of T computes in: float for the 16-bit floats (their
/// rows are widened on the load and rounded once on each store), T itself otherwise.
template <class T>
struct compute_of {
  using type = T;
};
template <>
struct compute_of<__half> {
  using type = float;
};
template <>
struct compute_of<__nv_bfloat16> {
  using type = float;
};
template <class T>
using compute_t = typename compute_of<T>::type;
/// The real type that scales rows of T: real_t of the compute type.
template <class T>
using scale_t = real_t<compute_t<T>>;
}  // namespace wht
}  // namespace detail

/// The type of fwht's `scale`: float for __half, __nv_bfloat16, float and complex<float>
/// rows, double for double and complex<double> rows.
template <class T>
using fwht_scale_t = detail::wht::scale_t<T>;

template <class T>
bool fwht_path_serves(fwht_path path, int log_n);

template <class T>
int fwht_fused_max_log_n();

template <class T>
void fwht(const T* in, T* out, int log_n, std::int64_t batch,
          fwht_scale_t<T> scale = fwht_scale_t<T>(1), cudaStream_t stream = 0,
          fwht_path path = fwht_path::automatic);

namespace detail::wht {
/// wham::fwht after its argument checks (wham/fwht.cuh): what wham::hadamard runs once its
/// own checks have passed, prebuilt with fwht so that neither the checks nor the kernels
/// are repeated.
template <class T>
void fwht_checked(const T* in, T* out, int log_n, std::int64_t batch, scale_t<T> scale,
                  cudaStream_t stream, fwht_path path);
}  // namespace detail::wht

// ---- Hadamard transform of m * 2^k rows (wham/hadamard.cuh) --------------------------------

// hadamard_matrices: wham/detail/wht/hadamard_matrices.hpp.

template <class T>
void hadamard(const T* in, T* out, int m, int log_k, std::int64_t batch,
              fwht_scale_t<T> scale = fwht_scale_t<T>(1), cudaStream_t stream = 0,
              hadamard_matrices matrices = hadamard_matrices::fast_hadamard_transform,
              bool transpose = false);

// ---- IQP encoding (wham/iqp.cuh) ----------------------------------------------------------

/// Which IQP circuit: with pair couplings (`iqp`) or single-qubit phases only (`iqp_z`).
enum class iqp_variant { iqp, iqp_z };

/// Which schedule runs the encoder (see wham/iqp.cuh).
enum class iqp_path {
  automatic,  ///< product for iqp_z; for iqp fused while the state fits on chip (as
              ///< clusters only where the batch fills the GPU), else kronecker
  fused,      ///< whole state on chip; throws for n > iqp_fused_max_qubits<Out>()
  kronecker,  ///< the large-n schedule; throws where it does not serve n
  baseline,   ///< phase launch + one global-memory launch per butterfly stage
  product,    ///< iqp_z only: the product state, one write (throws for iqp)
};

namespace detail {
/// The enums' numbers of values, for the argument checks (iqp_z and product stay last).
inline constexpr int iqp_variant_count = static_cast<int>(iqp_variant::iqp_z) + 1;
inline constexpr int iqp_path_count = static_cast<int>(iqp_path::product) + 1;
/// Most qubits of an IQP state: 2^30 amplitudes.
inline constexpr int iqp_max_qubits = 30;

/// The checks of `variant` and `path` that need no device: each in its range, and
/// product only for iqp_z.
inline void check_iqp_enums(const char* function, iqp_variant variant, iqp_path path) {
  check_enum(function, "variant", variant, iqp_variant_count,
             "iqp_variant::iqp or iqp_variant::iqp_z");
  check_enum(function, "path", path, iqp_path_count,
             "automatic, fused, kronecker, baseline or product");
  if (path == iqp_path::product && variant != iqp_variant::iqp_z) {
    throw_invalid_argument(function, "path", static_cast<long long>(path),
                           "automatic, fused, kronecker or baseline for the iqp "
                           "variant (product serves iqp_z only)");
  }
}
}  // namespace detail

/// Real parameters per sample: n (iqp_z) or n + n(n-1)/2 (iqp). Throws for n outside 1..30.
inline std::int64_t iqp_num_params(int num_qubits, iqp_variant variant) {
  detail::check_range("iqp_num_params", "num_qubits", num_qubits, 1, detail::iqp_max_qubits);
  const std::int64_t n = num_qubits;
  return variant == iqp_variant::iqp ? n + n * (n - 1) / 2 : n;
}

/// Size of `batch` states of n qubits in element type Out: amplitudes and bytes,
/// overflow-checked (throws wham::error for n outside 1..30, batch < 0, or a byte
/// count that does not fit in int64). batch = 0 is zero bytes, as iqp_encode's no-op.
template <class Out>
struct iqp_size {
  std::int64_t amplitudes = 0;
  std::size_t bytes = 0;
  iqp_size(int num_qubits, std::int64_t batch) {
    detail::check_range("iqp_size", "num_qubits", num_qubits, 1, detail::iqp_max_qubits);
    const std::int64_t max_batch = (INT64_MAX / std::int64_t(sizeof(Out))) >> num_qubits;
    detail::check_range("iqp_size", "batch", batch, 0, max_batch);
    amplitudes = batch << num_qubits;
    bytes = static_cast<std::size_t>(amplitudes) * sizeof(Out);
  }
};

template <class Out>
int iqp_fused_max_qubits();

template <class Out>
iqp_path iqp_automatic_path(int num_qubits, std::int64_t batch = INT64_MAX / 8,
                            iqp_variant variant = iqp_variant::iqp);

template <class Out>
bool iqp_path_serves(iqp_path path, int num_qubits, iqp_variant variant = iqp_variant::iqp);

template <class Param, class Out>
void iqp_encode(const Param* params, Out* states, int num_qubits, std::int64_t batch,
                iqp_variant variant, cudaStream_t stream = 0, iqp_path path = iqp_path::automatic);

// ---- M2L (wham/m2l.cuh) -------------------------------------------------------------------

/// Which schedule runs the operator (see wham/m2l.cuh).
enum class m2l_path {
  automatic,  ///< by order, type and device (the file comment)
  thread,     ///< fused, one thread per pair, coefficients in registers or shared memory
              ///< (p <= 12 where a block may take 200 KB of shared memory, as on sm_90;
              ///< p <= 10 on sm_80, p <= 8 on sm_86/89; beyond, wham::error)
  warp,       ///< fused, one warp per pair (any order)
  split,      ///< fused, one pair per lane, its degrees split over the warps of a block (p = 7..12)
  direct,     ///< the O(p^4) double sum, one thread per pair (a baseline and a cross-check)
  tensor,     ///< fused, FP64 tensor-core products (any order): tiles of eight pairs on
              ///< sm_90, of four below (double only); float on sm_90 only, computed in double
};

namespace detail {
inline constexpr int m2l_path_count = static_cast<int>(m2l_path::tensor) + 1;
}  // namespace detail

/// Highest order wham::m2l serves for T.
template <class T>
constexpr int m2l_max_order() {
  return std::is_same_v<T, double> ? 20 : 16;
}

/// Number of complex coefficients of an order-p expansion, p in 0..46339 (the orders whose
/// count fits an int; wham::error otherwise).
constexpr int m2l_num_coeffs(int p) {
  if (p < 0 || p > 46339) detail::throw_invalid_argument("m2l_num_coeffs", "p", p, "0..46339");
  return (p + 1) * (p + 1);
}

template <class T>
void m2l(const cuda::std::complex<T>* multipoles, const T* deltas, cuda::std::complex<T>* locals,
         int p, std::int64_t num_pairs, cudaStream_t stream = 0,
         m2l_path path = m2l_path::automatic);

// ---- The FMM forms of M2L (wham/fmm.cuh) --------------------------------------------------

/// How the accumulate form sums the pairs of one target.
enum class m2l_accumulate_method {
  automatic,      ///< atomic
  atomic,         ///< any pair order; atomics; agrees to rounding run to run
  deterministic,  ///< pairs grouped by target; no atomics; bitwise reproducible
};

namespace detail::fmm {
inline constexpr int method_count = static_cast<int>(m2l_accumulate_method::deterministic) + 1;

/// Largest row count of multipoles or locals: int32 indices reach rows 0..2^31 - 1.
inline constexpr std::int64_t max_rows = std::int64_t(1) << 31;
}  // namespace detail::fmm

template <class T>
void m2l_accumulate(const cuda::std::complex<T>* multipoles, const T* deltas,
                    const std::int32_t* src, const std::int32_t* tgt, cuda::std::complex<T>* locals,
                    int p, std::int64_t num_pairs, std::int64_t num_multipoles,
                    std::int64_t num_locals, cudaStream_t stream = 0,
                    m2l_accumulate_method method = m2l_accumulate_method::automatic);

template <class T>
void m2l_accumulate_centers(const cuda::std::complex<T>* multipoles, const T* centers,
                            const std::int32_t* src, const std::int32_t* tgt,
                            cuda::std::complex<T>* locals, int p, std::int64_t num_pairs,
                            std::int64_t num_multipoles, std::int64_t num_locals,
                            cudaStream_t stream = 0,
                            m2l_accumulate_method method = m2l_accumulate_method::automatic);

template <class T>
void m2l_accumulate_classes(const cuda::std::complex<T>* multipoles, const T* class_deltas,
                            const std::int32_t* cls, const std::int32_t* src,
                            const std::int32_t* tgt, cuda::std::complex<T>* locals, int p,
                            std::int64_t num_pairs, int num_classes, std::int64_t num_multipoles,
                            std::int64_t num_locals, cudaStream_t stream = 0,
                            m2l_accumulate_method method = m2l_accumulate_method::automatic);

template <class T>
void m2l_accumulate_class_groups(const cuda::std::complex<T>* multipoles, const T* class_deltas,
                                 const std::int32_t* cls, const std::int32_t* src,
                                 const std::int32_t* tgt, cuda::std::complex<T>* locals, int p,
                                 std::int64_t num_pairs, int num_classes,
                                 std::int64_t num_multipoles, std::int64_t num_locals,
                                 cudaStream_t stream = 0);

// ---- M2M and L2L (wham/translations.cuh) --------------------------------------------------

/// Which path runs an M2M / L2L call (see wham/translations.cuh).
enum class translation_path {
  automatic,  ///< by order and type: direct, thread, split, then warp (the file comment)
  direct,     ///< the O(p^4) sum, one thread a pair (orders 0..4)
  thread,     ///< rotated, one thread a pair (orders 0..12)
  split,      ///< rotated, one lane a pair, its degrees over a block's warps (orders 7..12)
  warp,       ///< rotated, one warp a pair (every order)
};

namespace detail::translations {
/// translation_path's number of values, for the argument check (warp stays the last).
inline constexpr int path_count = static_cast<int>(translation_path::warp) + 1;
}  // namespace detail::translations

template <class T>
void m2m(const cuda::std::complex<T>* multipoles, const T* deltas, cuda::std::complex<T>* out,
         int p, std::int64_t num_pairs, cudaStream_t stream = 0,
         translation_path path = translation_path::automatic);

template <class T>
void l2l(const cuda::std::complex<T>* locals, const T* deltas, cuda::std::complex<T>* out, int p,
         std::int64_t num_pairs, cudaStream_t stream = 0,
         translation_path path = translation_path::automatic);

template <class T>
void m2m_accumulate(const cuda::std::complex<T>* multipoles, const T* deltas,
                    const std::int32_t* src, const std::int32_t* tgt,
                    cuda::std::complex<T>* parents, int p, std::int64_t num_pairs,
                    std::int64_t num_multipoles, std::int64_t num_parents,
                    cudaStream_t stream = 0,
                    translation_path path = translation_path::automatic);

template <class T>
void l2l_accumulate(const cuda::std::complex<T>* locals, const T* deltas, const std::int32_t* src,
                    const std::int32_t* tgt, cuda::std::complex<T>* children, int p,
                    std::int64_t num_pairs, std::int64_t num_locals, std::int64_t num_children,
                    cudaStream_t stream = 0,
                    translation_path path = translation_path::automatic);

// ---- P2M, L2P and P2P (wham/particles.cuh) ------------------------------------------------

template <class T>
void p2m(const T* points, const T* charges, std::int64_t num_points,
         const std::int64_t* cell_offsets, const T* centers, std::int64_t num_cells,
         cuda::std::complex<T>* multipoles, int p, cudaStream_t stream = 0);

template <class T>
void l2p(const cuda::std::complex<T>* locals, const T* centers, const std::int64_t* cell_offsets,
         std::int64_t num_cells, const T* points, std::int64_t num_points, T* potential,
         T* gradient, int p, cudaStream_t stream = 0);

template <class T>
void p2p(const T* points, const T* charges, std::int64_t num_points,
         const std::int64_t* cell_offsets, std::int64_t num_cells, const std::int64_t* near_offsets,
         const std::int32_t* near_cells, std::int64_t num_near, T* potential, T* gradient,
         cudaStream_t stream = 0);

}  // namespace wham
