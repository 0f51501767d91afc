/// \file wham/detail/particles/tuning.cuh
/// \brief The particle operators' shapes (p2m.cuh, l2p.cuh, p2p.cuh), each with its reason.
/// One shape each is built; its H100 figures are in docs/performance.md (bench_particles).
#pragma once

namespace wham::detail::particles {

/// P2M slices of a cell's points per column of R: 4-8 points a thread in cells of 32-64, and
/// the partial sums (slices x (P+1)(P+2)/2 complex) within 48 KB static up to p = 20 double.
inline constexpr int p2m_slices = 8;

/// P2M threads a block (one block a cell): p2m_slices slices of the P+1 columns, whole warps.
template <int P>
inline constexpr int p2m_threads = 32 * ((p2m_slices * (P + 1) + 31) / 32);

/// L2P cells (warps) a block: 4 local expansions in shared memory (28 KB at p = 20 double).
inline constexpr int l2p_warps = 4;

/// P2P target cells (warps) a block: the warps never wait on each other, so a small block.
/// H100: 556 G interactions/s in double, 0.63 of the FP64 issue rate (docs/performance.md).
inline constexpr int p2p_warps = 4;

/// P2P sources a warp stages at a time: one a lane, one coalesced load each.
inline constexpr int p2p_tile = 32;

}  // namespace wham::detail::particles
