/// \file wham/particles.cuh
/// \brief The 3D Laplace FMM's operators between particles and expansions (P2M, L2P) and
/// between particles (P2P), over cells of contiguous points:
///
///   p2m:  multipoles[c] = sum_{i in cell c} q_i R(x_i - centers[c])          (overwritten)
///   l2p:  potential[j] += Re sum_{n,m} conj(L_n^m) R_n^m(centers[c] - x_j),
///         gradient[j]  += its gradient in x_j                      (j in cell c; added to)
///   p2p:  for each target cell t, each source cell s of t's near list, each target j of t
///         and source i of s with r = |x_j - x_i| > 0:
///         potential[j] += q_i / r,  gradient[j] += -q_i (x_j - x_i) / r^3   (added to)
///
/// Convention (docs/specs/particles.md; that of wham::m2l, docs/specs/m2l.md): solidfmm's
/// regular solid harmonics R_n^m (Dehnen's normalisation), (p+1)^2 general complex
/// coefficients an expansion, index(n, m) = n*n + n + m. R_0^0 = 1,
/// R_m^m = R_{m-1}^{m-1} (x + i y) / (2m), R_{m+1}^m = z R_m^m,
/// R_n^m = ((2n-1) z R_{n-1}^m - r^2 R_{n-2}^m) / ((n+m)(n-m)), R_n^{-m} = (-1)^m conj(R_n^m).
/// The gradient of L2P comes from the ladder identities dR_n^m/dz = R_{n-1}^m,
/// (d/dx -+ i d/dy) R_n^m = +-R_{n-1}^{m-+1} (docs/specs/particles.md), exact for the
/// polynomial: no differences.
///
/// Layouts (row-major, device memory; T float or double):
///   points        [num_points][3] T, the points of each cell contiguous
///   charges       [num_points] T
///   cell_offsets  [num_cells + 1] int64: cell c holds points
///                 [cell_offsets[c], cell_offsets[c+1])
///   centers       [num_cells][3] T
///   multipoles, locals  [num_cells][(p+1)^2] cuda::std::complex<T>
///   potential     [num_points] T;  gradient [num_points][3] T (null: not computed)
///   near_offsets  [num_cells + 1] int64, near_cells [num_near] int32: the source cells of
///                 target cell t are near_cells[near_offsets[t] .. near_offsets[t+1]) (a CSR
///                 list; a cell may list itself: its self pairs, r = 0, are left out; a
///                 cell listed twice counts twice)
/// p2m overwrites every coefficient of every cell (an empty cell gets zeros); l2p and p2p
/// add to potential and gradient and leave every other byte as it was (zero them first for
/// a fresh sum). Cells are expected not to share points: l2p and p2p write each point of
/// a cell from one thread, so two cells whose ranges overlap race on the shared points.
///
/// Device data is never trusted: offsets are clamped to [0, num_points] (near_offsets to
/// [0, num_near]) and a range whose end lies below its begin is empty; a near cell id
/// outside [0, num_cells) contributes nothing. No index, however wrong, makes a kernel read
/// or write outside the buffers above.
///
/// Accuracy (docs/specs/particles.md): p2m and l2p, relative to the double reference,
/// at most 5e-7 in float and 6e-16 in double (measured on the host with the kernels' own
/// arithmetic, p = 0..16 / 0..20; P2M weighted by degree); the L2P gradient 5e-7 in float,
/// below the numerical reference's 1e-11 in double. p2p's reciprocal square root is CUDA's
/// rsqrt (at most 1 ulp in double, 2 in float), its sums plain sums in T (1e-6 in float,
/// 2e-15 in double over 1,936 sources a target). What the operators form must stay within
/// T's range (|x - centre|^p in p2m and l2p, q / r^3 of the closest pair in p2p).
///
/// Orders p in 0..m2l_max_order<T>() (20 in double, 16 in float), compiled for every order
/// (detail::arch::dispatch_int). Kernels (detail/particles/): P2M one block a cell, its
/// threads over the harmonics' columns and slices of the points; L2P one warp a cell, one
/// thread a point; P2P one warp a target cell, sources staged through shared memory.
///
/// \code
///   // 1e6 points sorted into 32768 cells, p = 8 (81 coefficients a cell)
///   wham::p2m(d_x, d_q, n, d_offsets, d_centers, 32768, d_M, 8, stream);
///   // ... M2M, M2L (wham/fmm.cuh), L2L ...
///   cudaMemsetAsync(d_phi, 0, n * sizeof(double), stream);
///   cudaMemsetAsync(d_grad, 0, 3 * n * sizeof(double), stream);
///   wham::l2p(d_L, d_centers, d_offsets, 32768, d_x, n, d_phi, d_grad, 8, stream);
///   wham::p2p(d_x, d_q, n, d_offsets, 32768, d_near_offsets, d_near, num_near, d_phi,
///             d_grad, stream);
/// \endcode
///
/// Conventions (wham/error.hpp): enqueued on `stream`, no allocation, no synchronisation,
/// capturable in a CUDA graph; bad arguments throw wham::error before anything touches the
/// device: p out of range, negative counts (or counts past the limits below), null,
/// misaligned or host (not device-accessible) pointers, an output sharing a byte with any
/// other argument. A call with no cells (or, for l2p and p2p, no points or no near
/// entries) enqueues nothing, and its pointers may then be null; p2m without points
/// writes zeros, and its points and charges may be null. Prebuilt for float and double
/// (wham/prebuilt.hpp; C: wham_p2m_f32 ... wham_p2p_f64 in wham/wham.h).
#pragma once

#include <wham/detail/api.hpp>
#include <wham/detail/check.hpp>
#include <wham/detail/particles/dispatch.cuh>
#include <wham/error.hpp>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

namespace wham {

// The declarations with their default arguments: detail/api.hpp.

/// multipoles[c] = sum_{i in cell c} charges[i] R(points[i] - centers[c]), every cell,
/// overwritten (see the file comment).
/// \param points        device pointer, num_points * 3 values (may be null without points)
/// \param charges       device pointer, num_points values (may be null without points)
/// \param num_points    0 .. INT64_MAX / (3 sizeof(T))
/// \param cell_offsets  device pointer, num_cells + 1 values (clamped to [0, num_points])
/// \param centers       device pointer, num_cells * 3 values
/// \param num_cells     0 .. 2^31 - 1 (0 enqueues nothing; the pointers may then be null)
/// \param multipoles    device pointer, num_cells * (p+1)^2 coefficients; must not overlap
///                      any input
/// \param p             order, 0..m2l_max_order<T>()
template <class T>
void p2m(const T* points, const T* charges, std::int64_t num_points,
         const std::int64_t* cell_offsets, const T* centers, std::int64_t num_cells,
         cuda::std::complex<T>* multipoles, int p, cudaStream_t stream) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "wham::p2m: T must be float or double");
  namespace d = detail;
  namespace pd = detail::particles;
  constexpr const char* f = "p2m";
  d::check_range(f, "p", p, 0, m2l_max_order<T>());
  d::check_range(f, "num_points", num_points, 0, pd::max_points<T>);
  d::check_range(f, "num_cells", num_cells, 0, pd::max_cells);
  if (num_cells == 0) return;
  // without points, points and charges are not read (and may be null)
  const T* x = num_points > 0 ? points : nullptr;
  const T* q = num_points > 0 ? charges : nullptr;
  if (num_points > 0) {
    d::check_buffer(f, "points", points);
    d::check_buffer(f, "charges", charges);
  }
  d::check_buffer(f, "cell_offsets", cell_offsets);
  d::check_buffer(f, "centers", centers);
  d::check_buffer(f, "multipoles", multipoles);
  const auto np = std::uint64_t(num_points), nc = std::uint64_t(num_cells);
  d::check_apart(f, d::span_of("multipoles", multipoles, nc * m2l_num_coeffs(p)),
                 {d::span_of("points", x, 3 * np), d::span_of("charges", q, np),
                  d::span_of("cell_offsets", cell_offsets, nc + 1),
                  d::span_of("centers", centers, 3 * nc)});
  pd::run_p2m<T>(p, x, q, num_points, cell_offsets, centers, num_cells,
                 reinterpret_cast<pd::cpx<T>*>(multipoles), stream);
}

/// For each cell c and each point j in it: potential[j] += Re sum conj(L_n^m)
/// R_n^m(centers[c] - x_j), and gradient[3j..3j+2] += its gradient in x_j (see the file
/// comment).
/// \param locals        device pointer, num_cells * (p+1)^2 coefficients
/// \param centers       device pointer, num_cells * 3 values
/// \param cell_offsets  device pointer, num_cells + 1 values (clamped to [0, num_points])
/// \param num_cells     0 .. 2^31 - 1 (0 enqueues nothing; the pointers may then be null)
/// \param points        device pointer, num_points * 3 values
/// \param num_points    0 .. INT64_MAX / (3 sizeof(T)) (0 enqueues nothing)
/// \param potential     device pointer, num_points values, added to
/// \param gradient      device pointer, num_points * 3 values, added to; null: not computed
/// \param p             order, 0..m2l_max_order<T>()
template <class T>
void l2p(const cuda::std::complex<T>* locals, const T* centers, const std::int64_t* cell_offsets,
         std::int64_t num_cells, const T* points, std::int64_t num_points, T* potential,
         T* gradient, int p, cudaStream_t stream) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "wham::l2p: T must be float or double");
  namespace d = detail;
  namespace pd = detail::particles;
  constexpr const char* f = "l2p";
  d::check_range(f, "p", p, 0, m2l_max_order<T>());
  d::check_range(f, "num_cells", num_cells, 0, pd::max_cells);
  d::check_range(f, "num_points", num_points, 0, pd::max_points<T>);
  if (num_cells == 0 || num_points == 0) return;
  d::check_buffer(f, "locals", locals);
  d::check_buffer(f, "centers", centers);
  d::check_buffer(f, "cell_offsets", cell_offsets);
  d::check_buffer(f, "points", points);
  d::check_buffer(f, "potential", potential);
  d::check_optional_buffer(f, "gradient", gradient);
  const auto np = std::uint64_t(num_points), nc = std::uint64_t(num_cells);
  const d::span L = d::span_of("locals", locals, nc * m2l_num_coeffs(p));
  const d::span ctr = d::span_of("centers", centers, 3 * nc);
  const d::span off = d::span_of("cell_offsets", cell_offsets, nc + 1);
  const d::span pts = d::span_of("points", points, 3 * np);
  const d::span phi = d::span_of("potential", potential, np);
  const d::span grad = d::span_of("gradient", gradient, 3 * np);
  d::check_apart(f, phi, {L, ctr, off, pts, grad});
  d::check_apart(f, grad, {L, ctr, off, pts, phi});
  pd::run_l2p<T>(p, reinterpret_cast<const pd::cpx<T>*>(locals), centers, cell_offsets,
                 num_cells, points, num_points, potential, gradient, stream);
}

/// For each target cell t, each source cell s in near_cells[near_offsets[t] ..
/// near_offsets[t+1]), each target point j of t and source point i of s with x_j != x_i:
/// potential[j] += q_i / |x_j - x_i|, gradient[j] += -q_i (x_j - x_i) / |x_j - x_i|^3
/// (see the file comment).
/// \param points, charges, num_points  as p2m (num_points 0 enqueues nothing)
/// \param cell_offsets  device pointer, num_cells + 1 values (clamped to [0, num_points])
/// \param num_cells     0 .. 2^31 - 1 (0 enqueues nothing; the pointers may then be null)
/// \param near_offsets  device pointer, num_cells + 1 values (clamped to [0, num_near])
/// \param near_cells    device pointer, num_near cell ids (outside [0, num_cells): skipped)
/// \param num_near      0 .. INT64_MAX / 4 (0 enqueues nothing)
/// \param potential     device pointer, num_points values, added to
/// \param gradient      device pointer, num_points * 3 values, added to; null: not computed
template <class T>
void p2p(const T* points, const T* charges, std::int64_t num_points,
         const std::int64_t* cell_offsets, std::int64_t num_cells, const std::int64_t* near_offsets,
         const std::int32_t* near_cells, std::int64_t num_near, T* potential, T* gradient,
         cudaStream_t stream) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "wham::p2p: T must be float or double");
  namespace d = detail;
  namespace pd = detail::particles;
  constexpr const char* f = "p2p";
  d::check_range(f, "num_points", num_points, 0, pd::max_points<T>);
  d::check_range(f, "num_cells", num_cells, 0, pd::max_cells);
  d::check_range(f, "num_near", num_near, 0, pd::max_near);
  if (num_cells == 0 || num_points == 0 || num_near == 0) return;
  d::check_buffer(f, "points", points);
  d::check_buffer(f, "charges", charges);
  d::check_buffer(f, "cell_offsets", cell_offsets);
  d::check_buffer(f, "near_offsets", near_offsets);
  d::check_buffer(f, "near_cells", near_cells);
  d::check_buffer(f, "potential", potential);
  d::check_optional_buffer(f, "gradient", gradient);
  const auto np = std::uint64_t(num_points), nc = std::uint64_t(num_cells);
  const d::span pts = d::span_of("points", points, 3 * np);
  const d::span q = d::span_of("charges", charges, np);
  const d::span off = d::span_of("cell_offsets", cell_offsets, nc + 1);
  const d::span noff = d::span_of("near_offsets", near_offsets, nc + 1);
  const d::span ids = d::span_of("near_cells", near_cells, std::uint64_t(num_near));
  const d::span phi = d::span_of("potential", potential, np);
  const d::span grad = d::span_of("gradient", gradient, 3 * np);
  d::check_apart(f, phi, {pts, q, off, noff, ids, grad});
  d::check_apart(f, grad, {pts, q, off, noff, ids, phi});
  pd::run_p2p<T>(points, charges, num_points, cell_offsets, num_cells, near_offsets, near_cells,
                 num_near, potential, gradient, stream);
}

}  // namespace wham
