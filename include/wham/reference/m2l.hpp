/// \file wham/reference/m2l.hpp
/// \brief Host references of the complex M2L operator (3D Laplace), in double,
/// plain C++17 (compiles without nvcc). The contract is `docs/specs/m2l.md`:
/// solidfmm's solid harmonics (Dehnen's normalisation, no Condon-Shortley
/// phase), layout `index(n, m) = n*n + n + m`, `delta = target centre - source
/// centre`, single-height truncation `n + k <= p`.
///
/// Users can call these to validate their own data:
///   - `regular_harmonics`, `singular_harmonics`: R_n^m(d), S_n^m(d), n <= p;
///   - `p2m`, `l2p`: expansions of point charges and their evaluation;
///   - `m2l_direct`: the O(p^4) ground truth;
///   - `m2l_factorised`: rotate to z (swap matrices), z-translation, rotate back,
///     in plain loops (what the GPU kernels compute);
///   - `swap_matrix`: Dehnen's real swap matrix B_l (B_l^2 = I).
#pragma once

#include <cmath>
#include <complex>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace wham::reference {

using m2l_complex = std::complex<double>;

/// Number of coefficients of an order-p expansion, (p+1)^2.
inline constexpr int m2l_num_coeffs(int p) { return (p + 1) * (p + 1); }
/// Position of (n, m), |m| <= n, in an expansion.
inline constexpr int m2l_index(int n, int m) { return n * n + n + m; }

namespace detail_m2l {
inline void check_order(int p) {
  if (p < 0 || p > 60) throw std::invalid_argument("wham::reference m2l: order p out of 0..60");
}
inline double sign(int m) { return (m & 1) ? -1.0 : 1.0; }
/// Fills the negative orders from C_n^{-m} = (-1)^m conj(C_n^m).
inline void fill_negative(std::vector<m2l_complex>& c, int p) {
  for (int n = 0; n <= p; ++n) {
    for (int m = 1; m <= n; ++m) {
      c[m2l_index(n, -m)] = sign(m) * std::conj(c[m2l_index(n, m)]);
    }
  }
}
}  // namespace detail_m2l

/// Regular solid harmonics R_n^m(x, y, z), n = 0..p, by the spec's recurrences.
inline std::vector<m2l_complex> regular_harmonics(int p, double x, double y, double z) {
  detail_m2l::check_order(p);
  std::vector<m2l_complex> R(m2l_num_coeffs(p));
  const double r2 = x * x + y * y + z * z;
  const m2l_complex xy(x, y);
  R[0] = 1.0;
  for (int m = 0; m <= p; ++m) {
    if (m > 0) R[m2l_index(m, m)] = R[m2l_index(m - 1, m - 1)] * xy / double(2 * m);
    if (m + 1 <= p) R[m2l_index(m + 1, m)] = z * R[m2l_index(m, m)];
    for (int n = m + 2; n <= p; ++n) {
      R[m2l_index(n, m)] =
          (double(2 * n - 1) * z * R[m2l_index(n - 1, m)] - r2 * R[m2l_index(n - 2, m)]) /
          double((n + m) * (n - m));
    }
  }
  detail_m2l::fill_negative(R, p);
  return R;
}

/// Singular solid harmonics S_n^m(x, y, z), n = 0..p, by the spec's recurrences,
/// written in u = d / r and 1 / r with r = hypot(x, y, z) (x / r^2 = u_x / r): r^2 would
/// over- or underflow long before the harmonics do. d = 0 gives non-finite values.
inline std::vector<m2l_complex> singular_harmonics(int p, double x, double y, double z) {
  detail_m2l::check_order(p);
  std::vector<m2l_complex> S(m2l_num_coeffs(p));
  const double r = std::hypot(x, y, z);
  const double inv_r = 1.0 / r;
  const double uz = z / r;
  const m2l_complex uxy(x / r, y / r);
  S[0] = inv_r;
  for (int m = 0; m <= p; ++m) {
    if (m > 0) {
      S[m2l_index(m, m)] = S[m2l_index(m - 1, m - 1)] * double(2 * m - 1) * uxy * inv_r;
    }
    if (m + 1 <= p) S[m2l_index(m + 1, m)] = double(2 * m + 1) * uz * S[m2l_index(m, m)] * inv_r;
    for (int n = m + 2; n <= p; ++n) {
      S[m2l_index(n, m)] = (double(2 * n - 1) * uz * S[m2l_index(n - 1, m)] -
                            double((n + m - 1) * (n - m - 1)) * S[m2l_index(n - 2, m)] * inv_r) *
                           inv_r;
    }
  }
  detail_m2l::fill_negative(S, p);
  return S;
}

/// P2M about `centre`: M_n^m = sum_i q_i R_n^m(x_i - centre). `points` is [count][3].
inline std::vector<m2l_complex> p2m(int p, const double centre[3], const double* points,
                                    const double* charges, std::size_t count) {
  std::vector<m2l_complex> M(m2l_num_coeffs(p));
  for (std::size_t i = 0; i < count; ++i) {
    const auto R = regular_harmonics(p, points[3 * i] - centre[0], points[3 * i + 1] - centre[1],
                                     points[3 * i + 2] - centre[2]);
    for (int j = 0; j < m2l_num_coeffs(p); ++j) M[j] += charges[i] * R[j];
  }
  return M;
}

/// L2P about `centre`: phi(x) = Re sum_{n,m} conj(L_n^m) R_n^m(centre - x),
/// which approximates sum_i q_i / |x - x_i| for the sources behind L.
inline double l2p(int p, const m2l_complex* L, const double centre[3], const double point[3]) {
  const auto R =
      regular_harmonics(p, centre[0] - point[0], centre[1] - point[1], centre[2] - point[2]);
  double phi = 0.0;
  for (int j = 0; j < m2l_num_coeffs(p); ++j) phi += (std::conj(L[j]) * R[j]).real();
  return phi;
}

/// The direct O(p^4) M2L (ground truth):
///   L_n^m = sum_{k=0}^{p-n} sum_{l=-k}^{k} (-1)^l M_k^l S_{n+k}^{m-l}(delta).
/// `M` and the result hold (p+1)^2 coefficients; delta = target - source centre.
inline std::vector<m2l_complex> m2l_direct(int p, const m2l_complex* M, const double delta[3]) {
  const auto S = singular_harmonics(p, delta[0], delta[1], delta[2]);
  std::vector<m2l_complex> L(m2l_num_coeffs(p));
  for (int n = 0; n <= p; ++n) {
    for (int m = -n; m <= n; ++m) {
      m2l_complex acc = 0.0;
      for (int k = 0; k <= p - n; ++k) {
        for (int l = -k; l <= k; ++l) {
          acc += detail_m2l::sign(l) * M[m2l_index(k, l)] * S[m2l_index(n + k, m - l)];
        }
      }
      L[m2l_index(n, m)] = acc;
    }
  }
  return L;
}

/// Dehnen's swap matrix B_l, (2l+1) x (2l+1) row-major, rows and columns
/// m = -l..l (entry [m][k] at ((m + l) * (2l + 1) + (k + l))), by the spec's
/// recursion on the degree. Real, B_l^2 = I (not orthogonal: entries grow like
/// 2^l), with the parities the kernels exploit
///   B_l[-m][k] = (-1)^(l+k) B_l[m][k],   B_l[m][-k] = (-1)^(l+m) B_l[m][k].
inline std::vector<double> swap_matrix(int l) {
  std::vector<double> B{1.0};
  for (int n = 0; n < l; ++n) {
    const int w = 2 * n + 1, w1 = 2 * n + 3;
    auto at = [&](int m, int k) -> double {  // B_n[m][k], 0 outside -n..n
      if (m < -n || m > n || k < -n || k > n) return 0.0;
      return B[(m + n) * w + (k + n)];
    };
    std::vector<double> next(std::size_t(w1) * w1);
    for (int m = -(n + 1); m <= n + 1; ++m) {
      for (int k = -(n + 1); k <= n + 1; ++k) {
        double v;
        if (m == n + 1) {
          v = 0.5 * (at(n, k - 1) + at(n, k + 1) + 2.0 * at(n, k));
        } else if (m == -(n + 1)) {
          v = 0.5 * (at(-n, k - 1) + at(-n, k + 1) - 2.0 * at(-n, k));
        } else {
          v = 0.5 * (at(m, k - 1) - at(m, k + 1));
        }
        next[(m + n + 1) * w1 + (k + n + 1)] = v;
      }
    }
    B.swap(next);
  }
  return B;
}

/// The factorised M2L, O(p^3), in plain loops:
///   to z:   M_rot[l] = B_l^T Dz(beta) B_l^T Dz(alpha) M[l]
///   z:      L_z[n,m] = (-1)^m sum_{k=|m|}^{p-n} (n+k)! / r^{n+k+1} M_rot[k,m]
///   back:   L[l]     = Dz(-alpha) B_l Dz(-beta) B_l L_z[l]
/// with e^{i alpha} = (y + i x)/rho (1 when rho = 0), e^{i beta} = (z - i rho)/r,
/// Dz(a) = diag(e^{i m a}); equals m2l_direct to rounding for every delta != 0. rho and r
/// by hypot: no square of a component is formed.
inline std::vector<m2l_complex> m2l_factorised(int p, const m2l_complex* M, const double delta[3]) {
  detail_m2l::check_order(p);
  const double x = delta[0], y = delta[1], z = delta[2];
  const double rho = std::hypot(x, y);
  const double r = std::hypot(x, y, z);
  const m2l_complex ea = rho > 0 ? m2l_complex(y / rho, x / rho) : m2l_complex(1.0, 0.0);
  const m2l_complex eb(z / r, -rho / r);
  std::vector<m2l_complex> pa(p + 1), pb(p + 1);  // e^{i m alpha}, e^{i m beta}, m >= 0
  pa[0] = pb[0] = 1.0;
  for (int m = 1; m <= p; ++m) {
    pa[m] = pa[m - 1] * ea;
    pb[m] = pb[m - 1] * eb;
  }
  auto dz = [](const std::vector<m2l_complex>& pw, int m, bool negate) {
    m2l_complex e = m >= 0 ? pw[m] : std::conj(pw[-m]);
    return negate ? std::conj(e) : e;
  };
  std::vector<m2l_complex> Mrot(m2l_num_coeffs(p)), Lz(m2l_num_coeffs(p)), L(m2l_num_coeffs(p));
  for (int l = 0; l <= p; ++l) {
    const auto B = swap_matrix(l);
    const int w = 2 * l + 1;
    std::vector<m2l_complex> u(w), v(w);
    for (int k = -l; k <= l; ++k) u[k + l] = dz(pa, k, false) * M[m2l_index(l, k)];
    for (int m = -l; m <= l; ++m) {  // v = Dz(beta) B^T u
      m2l_complex acc = 0.0;
      for (int k = -l; k <= l; ++k) acc += B[(k + l) * w + (m + l)] * u[k + l];
      v[m + l] = dz(pb, m, false) * acc;
    }
    for (int m = -l; m <= l; ++m) {  // M_rot = B^T v
      m2l_complex acc = 0.0;
      for (int k = -l; k <= l; ++k) acc += B[(k + l) * w + (m + l)] * v[k + l];
      Mrot[m2l_index(l, m)] = acc;
    }
  }
  std::vector<double> fact(2 * p + 2, 1.0), inv_rp(2 * p + 2, 1.0);
  for (int i = 1; i < 2 * p + 2; ++i) {
    fact[i] = fact[i - 1] * i;
    inv_rp[i] = inv_rp[i - 1] / r;
  }
  for (int n = 0; n <= p; ++n) {
    for (int m = -n; m <= n; ++m) {
      m2l_complex acc = 0.0;
      for (int k = std::abs(m); k <= p - n; ++k) {
        acc += fact[n + k] * inv_rp[n + k + 1] * Mrot[m2l_index(k, m)];
      }
      Lz[m2l_index(n, m)] = detail_m2l::sign(m) * acc;
    }
  }
  for (int l = 0; l <= p; ++l) {
    const auto B = swap_matrix(l);
    const int w = 2 * l + 1;
    std::vector<m2l_complex> u(w), v(w);
    for (int m = -l; m <= l; ++m) {  // u = Dz(-beta) B Lz
      m2l_complex acc = 0.0;
      for (int k = -l; k <= l; ++k) acc += B[(m + l) * w + (k + l)] * Lz[m2l_index(l, k)];
      u[m + l] = dz(pb, m, true) * acc;
    }
    for (int m = -l; m <= l; ++m) {  // L = Dz(-alpha) B u
      m2l_complex acc = 0.0;
      for (int k = -l; k <= l; ++k) acc += B[(m + l) * w + (k + l)] * u[k + l];
      L[m2l_index(l, m)] = dz(pa, m, true) * acc;
    }
  }
  return L;
}

}  // namespace wham::reference
