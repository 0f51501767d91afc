/// \file wham/reference/fmm.hpp
/// \brief The host reference of the accumulate form
/// `locals[tgt[i]] += M2L_p(multipoles[src[i]], delta_i)` (compiles without nvcc: plain
/// C++17). The interaction lists it runs on: wham/fmm_lists.hpp.
#pragma once

#include <wham/reference/m2l.hpp>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace wham::reference {

/// The accumulate form on the host, in pair order:
///   for i < num_pairs:  locals[tgt[i]] += m2l(p, multipoles + src[i] * C, delta_i)
/// with `C = (p+1)^2`, `delta_i = deltas + 3 i` (wham::m2l_accumulate's argument order).
/// `m2l(p, M, delta, L)` writes the translated expansion of one pair into `L` (C values);
/// pass one of the M2L references of wham/reference/m2l.hpp, for instance.
template <class M2L>
void m2l_accumulate(const std::complex<double>* multipoles, const double* deltas,
                    const std::int32_t* src, const std::int32_t* tgt, std::complex<double>* locals,
                    int p, std::int64_t num_pairs, M2L&& m2l) {
  const std::size_t C = std::size_t(p + 1) * std::size_t(p + 1);
  std::vector<std::complex<double>> one(C);
  for (std::int64_t i = 0; i < num_pairs; ++i) {
    m2l(p, multipoles + std::size_t(src[i]) * C, deltas + 3 * i, one.data());
    std::complex<double>* L = locals + std::size_t(tgt[i]) * C;
    for (std::size_t c = 0; c < C; ++c) L[c] += one[c];
  }
}

/// The accumulate form with the direct O(p^4) M2L (the ground truth) per pair.
inline void m2l_accumulate(const std::complex<double>* multipoles, const double* deltas,
                           const std::int32_t* src, const std::int32_t* tgt,
                           std::complex<double>* locals, int p, std::int64_t num_pairs) {
  m2l_accumulate(
      multipoles, deltas, src, tgt, locals, p, num_pairs,
      [](int order, const std::complex<double>* M, const double* d, std::complex<double>* L) {
        const auto one = m2l_direct(order, M, d);
        for (std::size_t c = 0; c < one.size(); ++c) L[c] = one[c];
      });
}

}  // namespace wham::reference
