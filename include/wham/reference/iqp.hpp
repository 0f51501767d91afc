/// \file wham/reference/iqp.hpp
/// \brief Host references of the IQP encoder, in double (plain C++17, no nvcc):
/// the state built with the fast Walsh-Hadamard transform (O(n 2^n)), and an
/// independent gate-by-gate state-vector simulation (Hadamards, PhaseShift,
/// ControlledPhaseShift, Hadamards) for cross-checking.
///
/// Contract (docs/specs/iqp.md): qubit i is bit i of the basis index;
/// parameters per sample are a_0..a_{n-1} then, for the `iqp` variant, J_ij
/// for i < j in the order (0,1), (0,2), ..., (n-2,n-1);
///   theta(x) = sum_i a_i x_i + sum_{i<j} J_ij x_i x_j,
///   amp[k]   = 2^-n sum_x exp(i theta(x)) (-1)^popcount(x & k).
#pragma once

#include <wham/reference/fwht.hpp>

#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace wham::reference {

/// Parameters per sample: n (iqp_z) or n + n(n-1)/2 (iqp, with_pairs).
inline std::int64_t iqp_params_per_sample(int n, bool with_pairs) {
  const std::int64_t nn = n;
  return with_pairs ? nn + nn * (nn - 1) / 2 : nn;
}

/// Offset of J_ij (i < j) inside one sample's parameters.
inline std::int64_t iqp_pair_offset(int n, int i, int j) {
  const std::int64_t ii = i;
  return n + ii * n - ii * (ii + 1) / 2 + (j - i - 1);
}

/// theta(x) for one sample, in double.
template <class P>
double iqp_phase(const P* params, int n, bool with_pairs, std::uint64_t x) {
  double theta = 0.0;
  for (int i = 0; i < n; ++i) {
    if (((x >> i) & 1u) == 0) continue;
    theta += double(params[i]);
    if (!with_pairs) continue;
    for (int j = i + 1; j < n; ++j) {
      if ((x >> j) & 1u) theta += double(params[iqp_pair_offset(n, i, j)]);
    }
  }
  return theta;
}

/// The IQP state of one sample (2^n amplitudes), through the FWHT in double.
template <class P>
std::vector<std::complex<double>> iqp_state(const P* params, int n, bool with_pairs) {
  if (n < 1 || n > 30) throw std::invalid_argument("iqp_state: n outside 1..30");
  const std::size_t size = std::size_t(1) << n;
  std::vector<std::complex<double>> v(size);
  for (std::size_t x = 0; x < size; ++x)
    v[x] = std::polar(1.0, iqp_phase(params, n, with_pairs, x));
  fwht_inplace(v.data(), n);
  const double scale = std::ldexp(1.0, -n);
  for (auto& a : v) a *= scale;
  return v;
}

/// States of `batch` samples, batch-major ([batch][2^n]); params row-major.
template <class P>
std::vector<std::complex<double>> iqp_states(const P* params, int n, std::int64_t batch,
                                             bool with_pairs) {
  const std::size_t size = std::size_t(1) << n;
  const std::int64_t per = iqp_params_per_sample(n, with_pairs);
  std::vector<std::complex<double>> out(size * static_cast<std::size_t>(batch));
  for (std::int64_t b = 0; b < batch; ++b) {
    const auto s = iqp_state(params + b * per, n, with_pairs);
    for (std::size_t k = 0; k < size; ++k) out[static_cast<std::size_t>(b) * size + k] = s[k];
  }
  return out;
}

/// Gate-by-gate state-vector simulation of the same circuit, independent of the
/// FWHT: H on every qubit, PhaseShift(a_i), ControlledPhaseShift(J_ij), H on every qubit.
template <class P>
std::vector<std::complex<double>> iqp_state_gates(const P* params, int n, bool with_pairs) {
  if (n < 1 || n > 24) throw std::invalid_argument("iqp_state_gates: n outside 1..24");
  using C = std::complex<double>;
  const std::size_t size = std::size_t(1) << n;
  std::vector<C> psi(size, C(0.0, 0.0));
  psi[0] = 1.0;
  const double r = 1.0 / std::sqrt(2.0);
  auto hadamard = [&](int q) {
    const std::size_t bit = std::size_t(1) << q;
    for (std::size_t x = 0; x < size; ++x) {
      if (x & bit) continue;
      const C a = psi[x], b = psi[x | bit];
      psi[x] = r * (a + b);
      psi[x | bit] = r * (a - b);
    }
  };
  for (int q = 0; q < n; ++q) hadamard(q);
  for (int q = 0; q < n; ++q) {
    const C phase = std::polar(1.0, double(params[q]));
    const std::size_t bit = std::size_t(1) << q;
    for (std::size_t x = 0; x < size; ++x) {
      if (x & bit) psi[x] *= phase;
    }
  }
  if (with_pairs) {
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) {
        const C phase = std::polar(1.0, double(params[iqp_pair_offset(n, i, j)]));
        const std::size_t both = (std::size_t(1) << i) | (std::size_t(1) << j);
        for (std::size_t x = 0; x < size; ++x) {
          if ((x & both) == both) psi[x] *= phase;
        }
      }
    }
  }
  for (int q = 0; q < n; ++q) hadamard(q);
  return psi;
}

}  // namespace wham::reference
