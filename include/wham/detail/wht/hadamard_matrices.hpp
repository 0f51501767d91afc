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
#pragma once

#include <cstdint>

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

}  // namespace wham::detail::wht
