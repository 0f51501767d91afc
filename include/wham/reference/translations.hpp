/// \file wham/reference/translations.hpp
/// \brief Host references of the FMM's other translations, in double, plain C++17, in the
/// conventions of `wham/reference/m2l.hpp` (solidfmm's solid harmonics, `index(n, m) =
/// n*n + n + m`, general complex coefficients):
///   - `m2m`: a multipole expansion moved to another centre (child to parent), exact for
///     the orders kept (M'_n depends on M_k, k <= n, only);
///   - `l2l`: a local expansion moved to another centre (parent to child), exact likewise;
///   - `p2p`: the direct sum between point sets, potential and gradient, self pairs left out;
///   - `l2p_gradient`: the gradient of `l2p`'s potential.
/// They rest on the addition theorem of the regular harmonics in this normalisation,
/// R_n^m(a + b) = sum_{k=0}^{n} sum_{l} R_k^l(a) R_{n-k}^{m-l}(b) (|l| <= k, |m - l| <= n - k),
/// which `tests/translations/test_translations_reference.cpp` checks numerically.
#pragma once

#include <wham/reference/m2l.hpp>

#include <cmath>
#include <complex>
#include <cstddef>
#include <vector>

namespace wham::reference {

/// M2M: M about the source centre s -> M' about the target centre t, delta = t - s:
///   M'_n^m = sum_{k=0}^{n} sum_{l} M_k^l R_{n-k}^{m-l}(-delta).
inline std::vector<m2l_complex> m2m(int p, const m2l_complex* M, const double delta[3]) {
  detail_m2l::check_order(p);
  const auto R = regular_harmonics(p, -delta[0], -delta[1], -delta[2]);
  std::vector<m2l_complex> out(m2l_num_coeffs(p));
  for (int n = 0; n <= p; ++n) {
    for (int m = -n; m <= n; ++m) {
      m2l_complex acc = 0.0;
      for (int k = 0; k <= n; ++k) {
        for (int l = -k; l <= k; ++l) {
          if (std::abs(m - l) > n - k) continue;
          acc += M[m2l_index(k, l)] * R[m2l_index(n - k, m - l)];
        }
      }
      out[m2l_index(n, m)] = acc;
    }
  }
  return out;
}

/// L2L: L about the source centre s -> L' about the target centre t, delta = t - s
/// (l2p's convention phi(x) = Re sum conj(L_n^m) R_n^m(centre - x)):
///   L'_k^l = sum_{n=k}^{p} sum_{m} L_n^m conj(R_{n-k}^{m-l}(-delta)).
inline std::vector<m2l_complex> l2l(int p, const m2l_complex* L, const double delta[3]) {
  detail_m2l::check_order(p);
  const auto R = regular_harmonics(p, -delta[0], -delta[1], -delta[2]);
  std::vector<m2l_complex> out(m2l_num_coeffs(p));
  for (int k = 0; k <= p; ++k) {
    for (int l = -k; l <= k; ++l) {
      m2l_complex acc = 0.0;
      for (int n = k; n <= p; ++n) {
        for (int m = -n; m <= n; ++m) {
          if (std::abs(m - l) > n - k) continue;
          acc += L[m2l_index(n, m)] * std::conj(R[m2l_index(n - k, m - l)]);
        }
      }
      out[m2l_index(k, l)] = acc;
    }
  }
  return out;
}

/// The gradient of l2p's potential at `point`, by central differences of the exact
/// polynomial (step h relative to the expansion's scale): for tests, not for speed.
inline void l2p_gradient(int p, const m2l_complex* L, const double centre[3], const double point[3],
                         double h, double gradient[3]) {
  for (int d = 0; d < 3; ++d) {
    double a[3] = {point[0], point[1], point[2]}, b[3] = {point[0], point[1], point[2]};
    a[d] += h;
    b[d] -= h;
    gradient[d] = (l2p(p, L, centre, a) - l2p(p, L, centre, b)) / (2 * h);
  }
}

/// P2P: phi(x_j) = sum_i q_i / |x_j - y_i| and its gradient -sum_i q_i (x_j - y_i) / |x_j - y_i|^3
/// over the sources y_i (`sources` [count][3]) at each target x_j (`targets` [count][3]);
/// a source at the target's own position (the self pair, whatever its charge) and a source
/// with a non-finite coordinate are left out. `gradient` may be null.
inline void p2p(const double* sources, const double* charges, std::size_t num_sources,
                const double* targets, std::size_t num_targets, double* potential,
                double* gradient) {
  for (std::size_t j = 0; j < num_targets; ++j) {
    double phi = 0.0, g[3] = {0.0, 0.0, 0.0};
    for (std::size_t i = 0; i < num_sources; ++i) {
      if (!std::isfinite(sources[3 * i]) || !std::isfinite(sources[3 * i + 1]) ||
          !std::isfinite(sources[3 * i + 2])) {
        continue;
      }
      const double d[3] = {targets[3 * j] - sources[3 * i], targets[3 * j + 1] - sources[3 * i + 1],
                           targets[3 * j + 2] - sources[3 * i + 2]};
      const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
      if (r2 == 0.0) continue;
      const double inv = 1.0 / std::sqrt(r2);
      phi += charges[i] * inv;
      const double inv3 = charges[i] * inv * inv * inv;
      for (int c = 0; c < 3; ++c) g[c] -= d[c] * inv3;
    }
    potential[j] = phi;
    if (gradient != nullptr) {
      for (int c = 0; c < 3; ++c) gradient[3 * j + c] = g[c];
    }
  }
}

}  // namespace wham::reference
