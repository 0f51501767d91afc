/// \file wham/detail/wht/hadamard_matrices.hpp
/// \brief The Hadamard matrices of order 12, 20, 28 and 40 of the m * 2^k transform, as data:
/// row a of H_m is `minus[a]`, bit a' set where H_m[a][a'] = -1 (entries are +-1).
///
/// Two published sets (docs/specs/fwht.md names each matrix):
///   fast_hadamard_transform  the matrices fast-hadamard-transform 1.1 compiles: a Paley II
///                            matrix of order 12 (symmetric), Sloane's had.20.will,
///                            had.28.will and had.40.tpal
///   quarot                   QuaRot's: Sloane's had.12, had.20.pal, had.28.pal2 (symmetric)
///                            and had.40.tpal (the same as the other set's 40)
/// Every one satisfies H H^T = m I (test_hadamard_host checks it, and each entry against
/// the published matrices written out as text there). Plain C++17.
///
/// Also the mixing of one column by H_m that the kernels run (hadamard_m_mix, host and
/// device, so that test_hadamard_host runs it as the kernels do).
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

#if defined(__CUDACC__)
#define WHAM_HADAMARD_HD __host__ __device__ __forceinline__
#else
#define WHAM_HADAMARD_HD inline
#endif
#if defined(__CUDA_ARCH__)
#define WHAM_HADAMARD_PRAGMA(x) _Pragma(#x)
#else
#define WHAM_HADAMARD_PRAGMA(x)
#endif

namespace wham {

/// Which published Hadamard matrices of order 12, 20, 28 and 40 wham::hadamard uses.
enum class hadamard_matrices {
  fast_hadamard_transform,  ///< fast-hadamard-transform 1.1's (its hadamard_transform_mN)
  quarot,                   ///< QuaRot's (its get_hadK matrices)
};

namespace detail {
inline constexpr int hadamard_matrices_count = 2;
}

}  // namespace wham

namespace wham::detail::wht {

/// fast_hadamard_transform, order 12.
inline constexpr std::uint64_t hadamard_fast_hadamard_transform_12[12] = {
    0x002ull, 0xaabull, 0x3c8ull, 0x96eull,
    0xf20ull, 0x5baull, 0xc8cull, 0x6e6ull,
    0x23cull, 0xb96ull, 0x8f0ull, 0xe5aull,
};
/// fast_hadamard_transform, order 20.
inline constexpr std::uint64_t hadamard_fast_hadamard_transform_20[20] = {
    0x933deull, 0x2e3bdull, 0x5477bull, 0xa0ef7ull,
    0x499efull, 0x637c1ull, 0xc6ba2ull, 0x8d764ull,
    0x1aee8ull, 0x359f0ull, 0x0fa53ull, 0x174a7ull,
    0x26d4eull, 0x45e9cull, 0x83d39ull, 0xf7a6dull,
    0xef4faull, 0xdedd5ull, 0xbdf8bull, 0x7bf36ull,
};
/// fast_hadamard_transform, order 28.
inline constexpr std::uint64_t hadamard_fast_hadamard_transform_28[28] = {
    0xcd69e7eull, 0x9ad7c7dull, 0x37ab8fbull, 0x6d571f7ull,
    0xd8ae3efull, 0xb3587dfull, 0x66b4f3full, 0xb467f43ull,
    0x6acbe87ull, 0xd593d8eull, 0xab27b9cull, 0x564f7b8ull,
    0xac9aff0ull, 0x5b31fe1ull, 0x87fb325ull, 0x0ff66caull,
    0x1decd95ull, 0x39ddb2aull, 0x71bf654ull, 0xe17eca9ull,
    0xc2fd9d2ull, 0xfcf1299ull, 0xfbe2532ull, 0xf7c4ae4ull,
    0xef8d549ull, 0xdf1ea13ull, 0xbe3d4a6ull, 0x7e7a94cull,
};
/// fast_hadamard_transform, order 40.
inline constexpr std::uint64_t hadamard_fast_hadamard_transform_40[40] = {
    0xffffeffffeull, 0x615e4615e4ull, 0xc2bc8c2bc8ull, 0x8579285792ull,
    0x0af260af26ull, 0x15e4c15e4cull, 0x2bc982bc98ull, 0x5793057930ull,
    0xaf260af260ull, 0x5e4c25e4c2ull, 0xbc984bc984ull, 0x7930a7930aull,
    0xf2614f2614ull, 0xe4c2ae4c2aull, 0xc9856c9856ull, 0x930ae930aeull,
    0x2615e2615eull, 0x4c2bc4c2bcull, 0x9857898578ull, 0x30af230af2ull,
    0x00001ffffeull, 0x9ea1b615e4ull, 0x3d437c2bc8ull, 0x7a86d85792ull,
    0xf50d90af26ull, 0xea1b315e4cull, 0xd43672bc98ull, 0xa86cf57930ull,
    0x50d9faf260ull, 0xa1b3d5e4c2ull, 0x4367bbc984ull, 0x86cf57930aull,
    0x0d9ebf2614ull, 0x1b3d5e4c2aull, 0x367a9c9856ull, 0x6cf51930aeull,
    0xd9ea12615eull, 0xb3d434c2bcull, 0x67a8798578ull, 0xcf50d30af2ull,
};
/// quarot, order 12.
inline constexpr std::uint64_t hadamard_quarot_12[12] = {
    0xffeull, 0x474ull, 0x8e8ull, 0x1d2ull,
    0x3a4ull, 0x748ull, 0xe90ull, 0xd22ull,
    0xa46ull, 0x48eull, 0x91cull, 0x23aull,
};
/// quarot, order 20.
inline constexpr std::uint64_t hadamard_quarot_20[20] = {
    0xffffeull, 0x615e4ull, 0xc2bc8ull, 0x85792ull,
    0x0af26ull, 0x15e4cull, 0x2bc98ull, 0x57930ull,
    0xaf260ull, 0x5e4c2ull, 0xbc984ull, 0x7930aull,
    0xf2614ull, 0xe4c2aull, 0xc9856ull, 0x930aeull,
    0x2615eull, 0x4c2bcull, 0x98578ull, 0x30af2ull,
};
/// quarot, order 28.
inline constexpr std::uint64_t hadamard_quarot_28[28] = {
    0x0004000ull, 0x4f293c8ull, 0x9e52790ull, 0x3ca8f22ull,
    0x7951e44ull, 0xf2a3c88ull, 0xe54b912ull, 0xca9b226ull,
    0x953a44eull, 0x2a7889eull, 0x54f113cull, 0xa9e2278ull,
    0x53c84f2ull, 0xa7909e4ull, 0xfffc001ull, 0xb0dd3caull,
    0x61be794ull, 0xc374f2aull, 0x86ede54ull, 0x0ddfca8ull,
    0x1bb7952ull, 0x37672a6ull, 0x6ec654eull, 0xdd84a9eull,
    0xbb0d53cull, 0x761ea78ull, 0xec354f2ull, 0xd86e9e4ull,
};
/// quarot, order 40: the same matrix as fast-hadamard-transform's (had.40.tpal).
inline constexpr const auto& hadamard_quarot_40 = hadamard_fast_hadamard_transform_40;

/// The rows of H_m (m in 12, 20, 28, 40) of the set `matrices`; null for any other m.
constexpr const std::uint64_t* hadamard_rows(int m, hadamard_matrices matrices) {
  const bool fht = matrices == hadamard_matrices::fast_hadamard_transform;
  switch (m) {
    case 12:
      return fht ? hadamard_fast_hadamard_transform_12 : hadamard_quarot_12;
    case 20:
      return fht ? hadamard_fast_hadamard_transform_20 : hadamard_quarot_20;
    case 28:
      return fht ? hadamard_fast_hadamard_transform_28 : hadamard_quarot_28;
    case 40:
      return hadamard_fast_hadamard_transform_40;
    default:
      return nullptr;
  }
}

/// Entry (a, j) of H_m (m in 12, 20, 28, 40) of the set `matrices`: +1 or -1
/// (wham_hadamard_matrix, the reference).
inline int hadamard_entry(int m, hadamard_matrices matrices, int a, int j) {
  const std::uint64_t* rows = hadamard_rows(m, matrices);
  if (rows == nullptr) throw std::invalid_argument("hadamard_entry: m is 12, 20, 28 or 40");
  return ((rows[a] >> j) & 1u) != 0 ? -1 : 1;
}

/// Row a of H_m (Set: a hadamard_matrices value), or of its transpose: bit a' set where the
/// entry is -1.
template <int M, int Set>
constexpr std::uint64_t hadamard_minus_row(int a, bool transpose) {
  static_assert(M == 12 || M == 20 || M == 28 || M == 40, "m is 12, 20, 28 or 40");
  const std::uint64_t* t = hadamard_rows(M, static_cast<hadamard_matrices>(Set));
  if (!transpose) return t[a];
  std::uint64_t row = 0;
  for (int j = 0; j < M; ++j) row |= ((t[j] >> a) & 1u) << j;
  return row;
}

constexpr int hadamard_popcount(std::uint64_t v) {
  int c = 0;
  for (; v != 0; v &= v - 1) ++c;
  return c;
}

/// Whether v (R, or complex of R) is finite: v - v is then exactly 0, else NaN.
template <class R, class V>
WHAM_HADAMARD_HD bool hadamard_finite(const V& v) {
  if constexpr (std::is_same_v<V, R>) {
    return v - v == R(0);
  } else {
    return v.real() - v.real() == R(0) && v.imag() - v.imag() == R(0);
  }
}

/// Output A of H_m x (or H_m^T x) from the column's sum: the entries of the row's minority
/// sign summed once, y = sum - 2 acc (or 2 acc - sum), about m / 2 + 1 additions. Exact
/// arithmetic aside, right only where the sum is finite (an infinite x_j in acc gives
/// inf - inf).
template <int M, int Set, bool Transpose, int A, class R, class V>
WHAM_HADAMARD_HD V hadamard_m_minority_entry(const V (&x)[M], const V& sum) {
  constexpr std::uint64_t minus = hadamard_minus_row<M, Set>(A, Transpose);
  constexpr bool few_minus = 2 * hadamard_popcount(minus) <= M;
  V acc = V(0);
  WHAM_HADAMARD_PRAGMA(unroll)
  for (int j = 0; j < M; ++j) {
    if (((minus >> j) & 1u) == (few_minus ? 1u : 0u)) acc += x[j];
  }
  return few_minus ? sum - acc * R(2) : acc * R(2) - sum;
}

/// H_m x (or H_m^T x) over one column x, each output its signed sum term by term:
/// store(a, y_a). With infinities and NaN what the exact sum gives (+-inf, NaN only where
/// +inf and -inf meet), and no intermediate beyond the range. About m^2 additions, one row
/// at a time (compact code): the path of the rare column whose sum is not finite.
template <int M, int Set, bool Transpose, class V, class Store, int... A>
WHAM_HADAMARD_HD void hadamard_m_mix_signed(const V (&x)[M], const Store& store,
                                            std::integer_sequence<int, A...>) {
  WHAM_HADAMARD_PRAGMA(unroll 1)
  for (int a = 0; a < M; ++a) {
    // row a's signs picked from constants (no table in memory to index)
    std::uint64_t minus = 0;
    ((minus = a == A ? hadamard_minus_row<M, Set>(A, Transpose) : minus), ...);
    V acc = V(0);
    WHAM_HADAMARD_PRAGMA(unroll)
    for (int j = 0; j < M; ++j) {
      if ((minus >> j) & 1u) {
        acc -= x[j];
      } else {
        acc += x[j];
      }
    }
    store(a, acc);
  }
}

template <int M, int Set, bool Transpose, class V, class Store>
WHAM_HADAMARD_HD void hadamard_m_mix_signed(const V (&x)[M], const Store& store) {
  hadamard_m_mix_signed<M, Set, Transpose>(x, store, std::make_integer_sequence<int, M>{});
}

template <int M, int Set, bool Transpose, bool KeepInputs, class R, class V, class Store,
          int... A>
WHAM_HADAMARD_HD bool hadamard_m_mix_finite(const V (&x)[M], const Store& store,
                                            std::integer_sequence<int, A...>) {
  V sum = x[0];
  WHAM_HADAMARD_PRAGMA(unroll)
  for (int j = 1; j < M; ++j) sum += x[j];
  const bool finite = hadamard_finite<R>(sum);
  if constexpr (KeepInputs) {
    // a select an output, no branch around the stores (which costs the common path
    // registers where the column holds many)
    (store(A, finite ? hadamard_m_minority_entry<M, Set, Transpose, A, R>(x, sum) : x[A]), ...);
  } else {
    (store(A, hadamard_m_minority_entry<M, Set, Transpose, A, R>(x, sum)), ...);
  }
  return finite;
}

/// The common path: store(a, y_a) for y = H_m x (or H_m^T x), each output by the column's
/// sum less twice the minority-sign entries (hadamard_m_minority_entry), and whether that
/// sum is finite. Where it is not (an infinite or NaN entry, or finite values whose sum
/// leaves the range: sum - 2 acc may then be inf - inf), the caller runs
/// hadamard_m_mix_signed on the column again after its loop over the columns (so that the
/// rare path takes no registers from this one); with KeepInputs the column's own values
/// are stored then (in place, the column stays as it was, for that second reading).
template <int M, int Set, bool Transpose, bool KeepInputs, class R, class V, class Store>
WHAM_HADAMARD_HD bool hadamard_m_mix_finite(const V (&x)[M], const Store& store) {
  return hadamard_m_mix_finite<M, Set, Transpose, KeepInputs, R>(
      x, store, std::make_integer_sequence<int, M>{});
}

/// Both paths for one column: the kernels' arithmetic, column by column (host tests).
template <int M, int Set, bool Transpose, class R, class V, class Store>
WHAM_HADAMARD_HD void hadamard_m_mix(const V (&x)[M], const Store& store) {
  if (!hadamard_m_mix_finite<M, Set, Transpose, false, R>(x, store)) {
    hadamard_m_mix_signed<M, Set, Transpose>(x, store);
  }
}

}  // namespace wham::detail::wht
