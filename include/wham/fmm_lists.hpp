/// \file wham/fmm_lists.hpp
/// \brief M2L interaction lists of one octree level and their orderings for the FMM forms
/// of wham/fmm.cuh: cells, displacement classes, lists grouped by target, by class, or by
/// tile of targets and class, cell centres and displacements. Host code, plain C++17
/// (no CUDA needed).
///
/// Cells of one level `L` of an octree over the cube `[origin, origin + size)^3` have
/// integer coordinates `(ix, iy, iz)`, `0 <= i < 2^L`, edge `h = size / 2^L`, centre
/// `origin + (i + 1/2) h`, and the linear id `(iz * 2^L + iy) * 2^L + ix`.
///
/// The M2L interaction list of a cell `t` (level >= 2): every cell `s` of the same level
/// that is a child of a neighbour of t's parent (the parent included) and is not a
/// neighbour of t itself (neighbour: the integer coordinates differ by at most 1 in each
/// axis). Then `d = t - s` (target minus source, in cells) lies in `[-3, 3]^3` with
/// `max |d_k| >= 2`: one of 316 displacement classes. An interior cell has 189 entries
/// (6^3 children of the 27 neighbours of its parent, less its own 27 neighbours).
#pragma once

#include <wham/detail/argument_error.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

namespace wham {

/// Number of distinct M2L displacements of a uniform level: 7^3 - 3^3.
inline constexpr int uniform_num_classes = 316;

/// The class id of a displacement `d = target - source` in cells, or -1 when `d` is not
/// an M2L displacement (a near neighbour, or beyond the parent's neighbours).
/// Ids enumerate the 316 displacements in lexicographic (dz, dy, dx) order.
inline int uniform_class_id(int dx, int dy, int dz) {
  static const std::array<int, 343> table = [] {
    std::array<int, 343> t{};
    int id = 0;
    for (int z = -3; z <= 3; ++z)
      for (int y = -3; y <= 3; ++y)
        for (int x = -3; x <= 3; ++x) {
          const bool near = x >= -1 && x <= 1 && y >= -1 && y <= 1 && z >= -1 && z <= 1;
          t[std::size_t(((z + 3) * 7 + (y + 3)) * 7 + (x + 3))] = near ? -1 : id++;
        }
    return t;
  }();
  if (dx < -3 || dx > 3 || dy < -3 || dy > 3 || dz < -3 || dz > 3) return -1;
  return table[std::size_t(((dz + 3) * 7 + (dy + 3)) * 7 + (dx + 3))];
}

/// The displacement `d = target - source` (in cells) of class `id`, 0 <= id < 316.
inline std::array<int, 3> uniform_class_displacement(int id) {
  if (id < 0 || id >= uniform_num_classes) {
    detail::throw_invalid_argument("uniform_class_displacement", "id", id, "0..315");
  }
  int k = 0;
  for (int z = -3; z <= 3; ++z)
    for (int y = -3; y <= 3; ++y)
      for (int x = -3; x <= 3; ++x) {
        if (uniform_class_id(x, y, z) < 0) continue;
        if (k++ == id) return {x, y, z};
      }
  return {0, 0, 0};  // unreachable
}

/// The interaction lists of a set of cells of one level, target-sorted.
///
/// Pair `i` translates cell `src[i]`'s multipole into cell `tgt[i]`'s local expansion.
/// Pairs are grouped by target (targets ascending in the order of `cells`, i.e. `tgt` is
/// non-decreasing when the ids in `cells` are ascending), and within a target ordered by
/// class id. `offsets[k] .. offsets[k + 1]` are the pairs of the k-th target.
/// Indices are int32: a level has at most 2^30 cells (level <= 10).
struct interaction_list {
  int level = 0;
  std::vector<std::int32_t> src;      ///< source cell id per pair
  std::vector<std::int32_t> tgt;      ///< target cell id per pair
  std::vector<std::int32_t> cls;      ///< displacement class id per pair (0..315)
  std::vector<std::int64_t> offsets;  ///< per target: first pair; size targets + 1
  std::size_t size() const { return src.size(); }
};

/// Linear id of integer cell coordinates at `level`.
inline std::int32_t cell_id(int level, int ix, int iy, int iz) {
  const std::int64_t n = std::int64_t(1) << level;
  return std::int32_t((iz * n + iy) * n + ix);
}

/// Integer coordinates of a linear cell id at `level`.
inline std::array<int, 3> cell_coords(int level, std::int64_t id) {
  const std::int64_t n = std::int64_t(1) << level;
  return {int(id % n), int((id / n) % n), int(id / (n * n))};
}

namespace detail::fmm_lists {
inline void check_level(const char* f, int level) { check_range(f, "level", level, 2, 10); }
}  // namespace detail::fmm_lists

/// Interaction lists of the cells `cells` (ids at `level`; each target is one of them and
/// so is each source: a sparse level, as a small adaptive tree gives one). Ids must be
/// distinct and valid; targets appear in the order of `cells`.
inline interaction_list interaction_lists(int level, const std::vector<std::int32_t>& cells) {
  detail::fmm_lists::check_level("interaction_lists", level);
  const std::int64_t n = std::int64_t(1) << level;
  std::unordered_map<std::int32_t, std::int32_t> present;
  present.reserve(cells.size() * 2);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (cells[i] < 0 || cells[i] >= n * n * n) {
      const std::string name = "cells[" + std::to_string(i) + "]";
      detail::throw_invalid_argument("interaction_lists", name.c_str(), cells[i],
                                     "a cell id, 0.." + std::to_string(n * n * n - 1));
    }
    if (!present.emplace(cells[i], std::int32_t(i)).second) {
      const std::string name = "cells[" + std::to_string(i) + "]";
      detail::throw_invalid_argument("interaction_lists", name.c_str(), cells[i],
                                     "ids that appear once");
    }
  }
  const bool dense = std::int64_t(cells.size()) == n * n * n;
  interaction_list out;
  out.level = level;
  out.offsets.reserve(cells.size() + 1);
  out.offsets.push_back(0);
  for (const std::int32_t t : cells) {
    const auto c = cell_coords(level, t);
    // Sources: children of the neighbours of t's parent that are not t's neighbours,
    // visited in ascending class id.
    for (int z = -3; z <= 3; ++z)
      for (int y = -3; y <= 3; ++y)
        for (int x = -3; x <= 3; ++x) {
          const int id = uniform_class_id(x, y, z);
          if (id < 0) continue;
          const int sx = c[0] - x, sy = c[1] - y, sz = c[2] - z;
          if (sx < 0 || sy < 0 || sz < 0 || sx >= n || sy >= n || sz >= n) continue;
          // Child of a neighbour of t's parent: parents differ by at most 1 per axis.
          if (std::abs(sx / 2 - c[0] / 2) > 1 || std::abs(sy / 2 - c[1] / 2) > 1 ||
              std::abs(sz / 2 - c[2] / 2) > 1) {
            continue;
          }
          const std::int32_t s = cell_id(level, sx, sy, sz);
          if (!dense && present.find(s) == present.end()) continue;
          out.src.push_back(s);
          out.tgt.push_back(t);
          out.cls.push_back(id);
        }
    out.offsets.push_back(std::int64_t(out.src.size()));
  }
  return out;
}

/// Interaction lists of every cell of a uniform level (targets in id order).
inline interaction_list uniform_interaction_lists(int level) {
  detail::fmm_lists::check_level("uniform_interaction_lists", level);
  const std::int64_t n = std::int64_t(1) << level;
  std::vector<std::int32_t> cells(std::size_t(n * n * n));
  for (std::size_t i = 0; i < cells.size(); ++i) cells[i] = std::int32_t(i);
  return interaction_lists(level, cells);
}

/// The same pairs grouped by target tile, then by class: tile `t = tgt / targets_per_tile`
/// ascending, class ids ascending within a tile, list order kept within a (tile, class)
/// group; for wham::m2l_accumulate_class_groups. `offsets` then holds, per group
/// `g = t * num_classes + k`, its first pair (size num_tiles * num_classes + 1, with
/// num_classes = the largest id + 1 and num_tiles = the largest tile + 1).
///
/// Why tiles: on long lists in double the grouped schedules' blocks sweep the list in
/// order together, so with tiles the pairs in flight at one time have their targets in
/// one tile and their sources near it, and both stay in the L2 cache. A level whose
/// multipoles and locals outgrow the L2 (32^3 cells at p >= 8 in double) runs faster that
/// way: four to eight z-planes of a uniform level a tile (`targets_per_tile = 4 *
/// 4^level`, cell ids z-major). Every (tile, class) group costs the kernel a table
/// rebuild, so smaller levels, whose data the L2 holds anyway, and float run faster by
/// class alone.
/// `targets_per_tile <= 0` is one tile (group_by_class).
inline interaction_list group_by_tile_and_class(const interaction_list& l,
                                                std::int64_t targets_per_tile) {
  std::int32_t classes = 0;
  std::int64_t tiles = 1;
  for (std::size_t i = 0; i < l.size(); ++i) {
    if (l.cls[i] < 0) {
      const std::string name = "l.cls[" + std::to_string(i) + "]";
      detail::throw_invalid_argument("group_by_tile_and_class", name.c_str(), l.cls[i], ">= 0");
    }
    classes = l.cls[i] + 1 > classes ? l.cls[i] + 1 : classes;
    if (targets_per_tile > 0) {
      if (l.tgt[i] < 0) {
        const std::string name = "l.tgt[" + std::to_string(i) + "]";
        detail::throw_invalid_argument("group_by_tile_and_class", name.c_str(), l.tgt[i], ">= 0");
      }
      const std::int64_t t = l.tgt[i] / targets_per_tile;
      tiles = t + 1 > tiles ? t + 1 : tiles;
    }
  }
  auto group = [&](std::size_t i) {
    const std::int64_t t = targets_per_tile > 0 ? l.tgt[i] / targets_per_tile : 0;
    return std::size_t(t * classes + l.cls[i]);
  };
  interaction_list g;
  g.level = l.level;
  g.offsets.assign(std::size_t(tiles * classes) + 1, 0);
  for (std::size_t i = 0; i < l.size(); ++i) ++g.offsets[group(i) + 1];
  for (std::size_t k = 0; k + 1 < g.offsets.size(); ++k) g.offsets[k + 1] += g.offsets[k];
  std::vector<std::int64_t> next(g.offsets.begin(), g.offsets.end() - 1);
  g.src.resize(l.size());
  g.tgt.resize(l.size());
  g.cls.resize(l.size());
  for (std::size_t i = 0; i < l.size(); ++i) {
    const auto at = std::size_t(next[group(i)]++);
    g.src[at] = l.src[i];
    g.tgt[at] = l.tgt[i];
    g.cls[at] = l.cls[i];
  }
  return g;
}

/// The same pairs grouped by class (class ids ascending, list order kept within a
/// class), for wham::m2l_accumulate_class_groups; `offsets` then holds, per class, its
/// first pair (size num_classes + 1, num_classes = the largest id + 1).
inline interaction_list group_by_class(const interaction_list& l) {
  return group_by_tile_and_class(l, 0);
}

/// Cell centres of a level, `[n^3][3]`: `origin + (i + 1/2) * size / 2^level`.
inline std::vector<double> cell_centers(int level, const std::array<double, 3>& origin = {0, 0, 0},
                                        double size = 1.0) {
  const std::int64_t n = std::int64_t(1) << level;
  const double h = size / double(n);
  std::vector<double> c(std::size_t(n * n * n * 3));
  for (std::int64_t id = 0; id < n * n * n; ++id) {
    const auto ijk = cell_coords(level, id);
    for (int k = 0; k < 3; ++k) c[std::size_t(3 * id + k)] = origin[k] + (ijk[k] + 0.5) * h;
  }
  return c;
}

/// Displacement table of the 316 classes, `[316][3]`, for cells of edge `h`:
/// `delta = target centre - source centre = d * h`.
inline std::vector<double> uniform_class_deltas(double h) {
  std::vector<double> d(3 * uniform_num_classes);
  for (int id = 0; id < uniform_num_classes; ++id) {
    const auto v = uniform_class_displacement(id);
    for (int k = 0; k < 3; ++k) d[std::size_t(3 * id + k)] = v[k] * h;
  }
  return d;
}
/// Per-pair displacements `centers[tgt[i]] - centers[src[i]]`, `[num_pairs][3]`.
inline std::vector<double> pair_deltas(const double* centers, const std::int32_t* src,
                                       const std::int32_t* tgt, std::int64_t num_pairs) {
  std::vector<double> d(std::size_t(num_pairs) * 3);
  for (std::int64_t i = 0; i < num_pairs; ++i)
    for (int k = 0; k < 3; ++k)
      d[std::size_t(3 * i + k)] =
          centers[3 * std::size_t(tgt[i]) + k] - centers[3 * std::size_t(src[i]) + k];
  return d;
}

}  // namespace wham
