/// \file wham/detail/particles/harmonics.cuh
/// \brief The per-thread arithmetic of the particle operators (docs/specs/particles.md):
/// regular solid harmonics by the recurrence of reference::regular_harmonics, one column at
/// a time, and the evaluation of a local expansion with its gradient. Everything is
/// __host__ __device__ (so it runs, and is tested, on the host too), in T.
///
///   cell_points(offsets, c, n)          cell c's points, offsets clamped to [0, n]
///   fill_inverses / inverse_entries<P>  1/j, j = 0..P*P (the recurrence's divisors)
///   add_column<P>(x, y, z, q, m, ...)   acc[n - m] += q R_n^m(x, y, z), n = m..P
///   evaluate_local<P, T, G>(L, ...)     phi = Re sum conj(L_n^m) R_n^m(d) and, for G, its
///                                       gradient in x (d = centre - x)
///   add_interaction<T, G>(...)          one source's 1/r and its gradient at one target
///
/// The recurrence (m >= 0): R_0^0 = 1; R_m^m = R_{m-1}^{m-1} (x + i y) / (2m);
/// R_{m+1}^m = z R_m^m; R_n^m = ((2n-1) z R_{n-1}^m - r^2 R_{n-2}^m) / ((n+m)(n-m));
/// R_n^{-m} = (-1)^m conj(R_n^m). The divisions are products by a table of reciprocals
/// (one more rounding each): the kernels keep the table in shared memory.
///
/// Gradient of F(d) = sum conj(L_n^m) R_n^m(d), by the ladder identities of this
/// normalisation (tests/particles/test_particles_host.cu checks them):
///   dR_n^m/dz = R_{n-1}^m,  (d/dx - i d/dy) R_n^m = R_{n-1}^{m-1},
///   (d/dx + i d/dy) R_n^m = -R_{n-1}^{m+1}   (R_k^l = 0 for |l| > k),
/// so with Gz = sum conj(L_{n+1}^m) R_n^m, Gp = -sum conj(L_{n+1}^{m-1}) R_n^m and
/// Gm = sum conj(L_{n+1}^{m+1}) R_n^m (n = 0..p-1), dF/dz = Gz, (d/dx + i d/dy) F = Gp,
/// (d/dx - i d/dy) F = Gm, and d Re F / dd = (Re(Gp + Gm) / 2, Im(Gp - Gm) / 2, Re Gz).
#pragma once

#include <wham/detail/m2l/blocks.cuh>

#include <cmath>
#include <cstdint>
#include <limits>

namespace wham::detail::particles {

using m2l::cpx;

/// A cell's points [begin, end).
struct point_range {
  std::int64_t begin, end;
};

__host__ __device__ __forceinline__ std::int64_t clamp_index(std::int64_t v, std::int64_t hi) {
  return v < 0 ? 0 : (v > hi ? hi : v);
}

/// [offsets[c], offsets[c+1]) clamped to [0, count]; an end below its begin gives an empty
/// range. No offset, however wrong, leads outside [0, count).
__host__ __device__ __forceinline__ point_range clamped_range(const std::int64_t* offsets,
                                                              std::int64_t c, std::int64_t count) {
  const std::int64_t b = clamp_index(offsets[c], count);
  const std::int64_t e = clamp_index(offsets[c + 1], count);
  return {b, e < b ? b : e};
}

/// Entries of the reciprocal table at order P: 1/j for j = 0..P*P (entry 0 is 0, unused);
/// (n+m)(n-m) <= P*P and 2m <= 2P.
template <int P>
inline constexpr int inverse_entries = P* P + 1;

/// Fills inv[j] = 1/j (inv[0] = 0), j = first, first + stride, ... < inverse_entries<P>.
template <int P, class T>
__host__ __device__ __forceinline__ void fill_inverses(T* inv, int first, int stride) {
  for (int j = first; j < inverse_entries<P>; j += stride) inv[j] = j == 0 ? T(0) : T(1) / T(j);
}

/// acc[n - m] += q R_n^m(x, y, z) for n = m..P, one column m in 0..P. acc[k] for k > P - m
/// gets meaningless values (to be ignored): the recurrence runs on for all P+1 steps, with
/// no test per step, and takes 1/0 := 0 where its divisor passes the table. The lanes of a
/// warp, on different columns, run all P+1 steps anyway; the test cost registers (ptxas of
/// CUDA 13.0 spilled at some orders). `inv`: the reciprocal table (fill_inverses).
template <int P, class T>
__host__ __device__ __forceinline__ void add_column(T x, T y, T z, T q, int m, const T* inv,
                                                    cpx<T> (&acc)[P + 1]) {
  cpx<T> cur = {q, T(0)};  // q R_m^m
  for (int j = 1; j <= m; ++j) cur = m2l::scale(cur * cpx<T>{x, y}, T(0.5) * inv[j]);
  const T r2 = x * x + y * y + z * z;
  cpx<T> prev = {T(0), T(0)};
  acc[0] = acc[0] + cur;
  WHAM_M2L_UNROLL
  for (int k = 1; k <= P; ++k) {
    const int n = m + k;
    const int e = (n + m) * (n - m);  // past P*P only where n > P
    const cpx<T> next = k == 1
                            ? m2l::scale(cur, z)
                            : m2l::scale(m2l::scale(cur, T(2 * n - 1) * z) - m2l::scale(prev, r2),
                                         inv[e < inverse_entries<P> ? e : 0]);
    acc[k] = acc[k] + next;
    prev = cur;
    cur = next;
  }
}

/// The sums of evaluate_local for one harmonic R = R_n^mu: F (real part), and with the
/// gradient Re Gz, Re(Gp + Gm), Im(Gp - Gm).
template <int P, class T, bool Gradient>
__host__ __device__ __forceinline__ void add_local_term(const cpx<T>* L, int n, int mu, cpx<T> R,
                                                        T& f, T& gx, T& gy, T& gz) {
  const cpx<T> l = L[n * n + n + mu];
  f += l.re * R.re + l.im * R.im;  // Re(conj(l) R)
  if constexpr (Gradient) {
    if (n < P) {
      const int up = (n + 1) * (n + 2) + mu;  // index(n + 1, mu)
      const cpx<T> lz = L[up], lp = L[up - 1], lm = L[up + 1];
      gz += lz.re * R.re + lz.im * R.im;
      // Gp + Gm = sum conj(lm - lp) R;  Gp - Gm = -sum conj(lp + lm) R
      gx += (lm.re - lp.re) * R.re + (lm.im - lp.im) * R.im;
      gy -= (lp.re + lm.re) * R.im - (lp.im + lm.im) * R.re;
    }
  }
}

/// phi = Re sum_{n,m} conj(L_n^m) R_n^m(d) for d = (dx, dy, dz) = centre - x, and with
/// Gradient its gradient in x, -d phi / dd. `L`: (P+1)^2 coefficients; `inv`: the
/// reciprocal table. One column m >= 0 of R at a time (two complex values of state), each
/// R_n^m used for +m and, by the symmetry, -m.
template <int P, class T, bool Gradient>
__host__ __device__ __forceinline__ void evaluate_local(const cpx<T>* L, const T* inv, T dx, T dy,
                                                        T dz, T& phi, T (&grad)[3]) {
  const T r2 = dx * dx + dy * dy + dz * dz;
  T f = T(0), gx = T(0), gy = T(0), gz = T(0);
  cpx<T> diag = {T(1), T(0)};  // R_m^m
  for (int m = 0; m <= P; ++m) {
    if (m > 0) diag = m2l::scale(diag * cpx<T>{dx, dy}, T(0.5) * inv[m]);
    const T sign = (m & 1) ? T(-1) : T(1);
    cpx<T> cur = diag, prev = {T(0), T(0)};
    for (int n = m; n <= P; ++n) {
      if (n == m + 1) {
        prev = cur;
        cur = m2l::scale(cur, dz);
      } else if (n > m + 1) {
        const cpx<T> next = m2l::scale(m2l::scale(cur, T(2 * n - 1) * dz) - m2l::scale(prev, r2),
                                       inv[(n + m) * (n - m)]);
        prev = cur;
        cur = next;
      }
      add_local_term<P, T, Gradient>(L, n, m, cur, f, gx, gy, gz);
      if (m > 0) {
        add_local_term<P, T, Gradient>(L, n, -m, cpx<T>{sign * cur.re, -sign * cur.im}, f, gx, gy,
                                       gz);
      }
    }
  }
  phi = f;
  grad[0] = -T(0.5) * gx;
  grad[1] = -T(0.5) * gy;
  grad[2] = -gz;
}

/// 1 / sqrt(r2) for r2 > 0: CUDA's rsqrt on the device (at most 1 ulp in double, 2 ulp in
/// float, CUDA C++ Programming Guide, mathematical functions), 1 / sqrt on the host.
template <class T>
__host__ __device__ __forceinline__ T inverse_sqrt(T r2) {
#if defined(__CUDA_ARCH__)
  return rsqrt(r2);
#else
  return T(1) / std::sqrt(r2);
#endif
}

/// The source (xi, yi, zi, qi) at the target (xj, yj, zj): phi += q / r and, with
/// Gradient, g += -q (x_j - y_i) / r^3. A pair whose r^2 is 0 in T (the self pair) adds
/// nothing, whatever its charge. 20 flops, counting the reciprocal square root as 2.
///
/// r^2 is formed from the smallest normal T up (three fused multiply-adds, as many
/// instructions as without it), so 1/r and 1/r^2 stay finite at r^2 = 0 and the select
/// that drops the pair can act on q/r itself: a non-finite charge of the self pair is
/// never multiplied by anything but is dropped. Above r^2 = 2^-101 (float), 2^-968
/// (double) the floor is below half an ulp of r^2 and changes nothing. A source with a
/// non-finite coordinate must not reach here (its dx times a zero q/r^3 is NaN): P2P
/// stages it as a chargeless point, its bad coordinates 0 (finite_point tells), which adds
/// exact zeros at every finite target.
template <class T, bool Gradient>
__host__ __device__ __forceinline__ void add_interaction(T xj, T yj, T zj, T xi, T yi, T zi, T qi,
                                                         T& phi, T& gx, T& gy, T& gz) {
  constexpr T r2_floor = std::numeric_limits<T>::min();
  const T dx = xj - xi, dy = yj - yi, dz = zj - zi;
  const T r2 = r2_floor + dx * dx + dy * dy + dz * dz;
  const T inv = inverse_sqrt(r2);
  const T q_r = r2 > r2_floor ? qi * inv : T(0);
  phi += q_r;
  if constexpr (Gradient) {
    const T q_r3 = q_r * (inv * inv);
    gx -= dx * q_r3;
    gy -= dy * q_r3;
    gz -= dz * q_r3;
  }
}

/// Whether x, y and z are all finite: P2P skips a source for which they are not.
template <class T>
__host__ __device__ __forceinline__ bool finite_point(T x, T y, T z) {
  // x - x is 0 for finite x and NaN for inf or NaN: one subtraction and compare a value.
  return (x - x) == T(0) && (y - y) == T(0) && (z - z) == T(0);
}

}  // namespace wham::detail::particles
