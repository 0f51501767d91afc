// What the particle tests share (plain C++17): the accuracy the docs promise
// (docs/specs/particles.md, Accuracy) as the tests hold it, random cells of points, and the
// double host references over cells (clamped offsets, near lists) built on
// wham/reference/translations.hpp.
#pragma once

#include <wham/reference/translations.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace particles_test {

namespace ref = wham::reference;

// ---- accuracy ----------------------------------------------------------------------------

/// The worst relative errors measured on the host with the kernels' own arithmetic
/// (detail/particles/harmonics.cuh), every order: P2M (degree-weighted), L2P potential and
/// gradient: 4.6e-7 in float, 6e-16 in double; the tests allow a margin of 20 in float and
/// 100 in double for the device's other rounding (contracted products) and longer sums.
template <class T>
double expansion_tolerance() {
  return std::is_same_v<T, double> ? 1e-13 : 1e-5;
}

/// The L2P gradient against reference::l2p_gradient: that reference differentiates
/// numerically (Richardson from steps h and h/2 here), good to about 1e-11 in double.
template <class T>
double gradient_tolerance() {
  return std::is_same_v<T, double> ? 1e-9 : 1e-5;
}

/// P2P, potential and gradient, norm-wise over all targets.
template <class T>
double p2p_tolerance() {
  return std::is_same_v<T, double> ? 1e-13 : 1e-5;
}

// ---- inputs ------------------------------------------------------------------------------

/// Cells of points, every value already rounded to T (held in double).
struct cell_set {
  std::vector<double> points, charges, centers;  // [n][3], [n], [cells][3]
  std::vector<std::int64_t> offsets;             // [cells + 1]
  double radius = 0.5;                           // points lie within radius of their centre
  std::int64_t num_points() const { return std::int64_t(charges.size()); }
  std::int64_t num_cells() const { return std::int64_t(centers.size() / 3); }
};

template <class T>
double round_to(double v) {
  return double(T(v));
}

/// Cells of the given sizes, centres on a lattice of spacing 1 (x fastest, `side` a row),
/// points uniform in the cube of half-width 0.5 about each centre (|x - c| < 0.87), charges
/// uniform in [-1, 1].
template <class T>
cell_set make_cells(std::mt19937_64& gen, const std::vector<int>& sizes, int side = 4) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  cell_set s;
  s.radius = std::sqrt(3.0) * 0.5;
  s.offsets.push_back(0);
  for (std::size_t c = 0; c < sizes.size(); ++c) {
    const double centre[3] = {double(c % side) + 0.25, double((c / side) % side) - 0.5,
                              double(c / (side * side)) + 0.125};
    for (int k = 0; k < 3; ++k) s.centers.push_back(round_to<T>(centre[k]));
    for (int i = 0; i < sizes[c]; ++i) {
      for (int k = 0; k < 3; ++k) s.points.push_back(round_to<T>(centre[k] + 0.5 * u(gen)));
      s.charges.push_back(round_to<T>(u(gen)));
    }
    s.offsets.push_back(s.offsets.back() + sizes[c]);
  }
  return s;
}

template <class T>
std::vector<T> narrow(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

inline double factorial(int n) {
  double f = 1.0;
  for (int i = 2; i <= n; ++i) f *= i;
  return f;
}

/// The weight of degree n that brings every degree of an expansion over points within
/// `radius` to a like size: |R_n^m(d)| <= |d|^n / n!, so M_n^m n! / radius^n and
/// L_n^m radius^n / n! are at most about 1 (the sizes a P2M makes and an L2P can use).
inline double degree_weight(int n, double radius) { return factorial(n) / std::pow(radius, n); }

/// Random local expansions [cells][(p+1)^2], coefficient (n, m) uniform of size
/// degree_weight(n, radius) (each term of the L2P sum at most about 1), rounded to T.
template <class T>
std::vector<std::complex<double>> make_locals(std::mt19937_64& gen, int p, std::int64_t cells,
                                              double radius) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<std::complex<double>> L;
  for (std::int64_t c = 0; c < cells; ++c) {
    for (int n = 0; n <= p; ++n) {
      const double w = degree_weight(n, radius);
      for (int m = -n; m <= n; ++m) L.push_back({round_to<T>(w * u(gen)), round_to<T>(w * u(gen))});
    }
  }
  return L;
}

// ---- references over cells ----------------------------------------------------------------

/// [offsets[c], offsets[c+1]) clamped to [0, count], empty where the end is below the begin
/// (the contract's reading of bad offsets).
inline void clamped(const std::vector<std::int64_t>& offsets, std::size_t c, std::int64_t count,
                    std::int64_t& begin, std::int64_t& end) {
  begin = std::clamp<std::int64_t>(offsets[c], 0, count);
  end = std::max(begin, std::clamp<std::int64_t>(offsets[c + 1], 0, count));
}

/// P2M of every cell (multipoles [cells][(p+1)^2]).
inline std::vector<std::complex<double>> p2m_reference(int p, const cell_set& s) {
  std::vector<std::complex<double>> out;
  for (std::int64_t c = 0; c < s.num_cells(); ++c) {
    std::int64_t b, e;
    clamped(s.offsets, std::size_t(c), s.num_points(), b, e);
    const auto M = ref::p2m(p, &s.centers[3 * c], s.points.data() + 3 * b, s.charges.data() + b,
                            std::size_t(e - b));
    out.insert(out.end(), M.begin(), M.end());
  }
  return out;
}

/// L2P of every cell at its points: potential [n] and gradient [n][3] (zero outside every
/// cell), the gradient by Richardson extrapolation of reference::l2p_gradient.
inline void l2p_reference(int p, const std::vector<std::complex<double>>& L, const cell_set& s,
                          std::vector<double>& potential, std::vector<double>& gradient) {
  const std::size_t C = std::size_t(p + 1) * (p + 1);
  potential.assign(std::size_t(s.num_points()), 0.0);
  gradient.assign(3 * std::size_t(s.num_points()), 0.0);
  const double h = 1e-4 * s.radius;
  for (std::int64_t c = 0; c < s.num_cells(); ++c) {
    std::int64_t b, e;
    clamped(s.offsets, std::size_t(c), s.num_points(), b, e);
    const auto* Lc = L.data() + std::size_t(c) * C;
    for (std::int64_t j = b; j < e; ++j) {
      const double* x = &s.points[3 * j];
      potential[j] += ref::l2p(p, Lc, &s.centers[3 * c], x);
      double g1[3], g2[3];
      ref::l2p_gradient(p, Lc, &s.centers[3 * c], x, h, g1);
      ref::l2p_gradient(p, Lc, &s.centers[3 * c], x, 0.5 * h, g2);
      for (int k = 0; k < 3; ++k) gradient[3 * j + k] += (4.0 * g2[k] - g1[k]) / 3.0;
    }
  }
}

/// P2P over a near list: potential [n], gradient [n][3] (zero for points of no cell).
inline void p2p_reference(const cell_set& s, const std::vector<std::int64_t>& near_offsets,
                          const std::vector<std::int32_t>& near_cells,
                          std::vector<double>& potential, std::vector<double>& gradient) {
  const std::int64_t n = s.num_points(), cells = s.num_cells();
  potential.assign(std::size_t(n), 0.0);
  gradient.assign(3 * std::size_t(n), 0.0);
  for (std::int64_t t = 0; t < cells; ++t) {
    std::int64_t tb, te, nb, ne;
    clamped(s.offsets, std::size_t(t), n, tb, te);
    clamped(near_offsets, std::size_t(t), std::int64_t(near_cells.size()), nb, ne);
    for (std::int64_t k = nb; k < ne; ++k) {
      const std::int32_t src = near_cells[std::size_t(k)];
      if (src < 0 || src >= cells) continue;
      std::int64_t sb, se;
      clamped(s.offsets, std::size_t(src), n, sb, se);
      if (se == sb || te == tb) continue;
      std::vector<double> phi(std::size_t(te - tb)), g(3 * std::size_t(te - tb));
      ref::p2p(&s.points[3 * sb], &s.charges[sb], std::size_t(se - sb), &s.points[3 * tb],
               std::size_t(te - tb), phi.data(), g.data());
      for (std::int64_t j = tb; j < te; ++j) {
        potential[j] += phi[std::size_t(j - tb)];
        for (int d = 0; d < 3; ++d) gradient[3 * j + d] += g[3 * std::size_t(j - tb) + d];
      }
    }
  }
}

// ---- errors ------------------------------------------------------------------------------

/// ||got - want|| / ||want|| over expansions [cells][(p+1)^2], each degree n weighted by
/// degree_weight(n, radius) (so that every degree counts, not only the largest);
/// non-finite anywhere gives +inf. G: anything with real() and imag().
template <class G>
double weighted_error(const std::vector<G>& got, const std::vector<std::complex<double>>& want,
                      int p, double radius) {
  const std::size_t C = std::size_t(p + 1) * (p + 1);
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const int n = int(std::sqrt(double(i % C)) + 1e-9);
    const double w = degree_weight(n, radius);
    const std::complex<double> g(double(got[i].real()), double(got[i].imag()));
    const double e = std::norm(g - want[i]) * w * w;
    if (!std::isfinite(e)) return INFINITY;
    num += e;
    den += std::norm(want[i]) * w * w;
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

/// ||(got - start) - want|| / ||want|| for an added-to output: what the call added against
/// the reference (non-finite anywhere: +inf; ||want|| = 0: the absolute error).
template <class T>
double added_error(const std::vector<T>& got, const std::vector<T>& start,
                   const std::vector<double>& want) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double e = double(got[i]) - double(start[i]) - want[i];
    if (!std::isfinite(e)) return INFINITY;
    num += e * e;
    den += want[i] * want[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace particles_test
