// Interaction lists of one uniform (or sparse) octree level, and the host accumulate
// reference.
#include <wham/fmm_lists.hpp>
#include <wham/reference/fmm.hpp>
#include <wham/reference/m2l.hpp>

#include "catch.hpp"
#include "test_util.hpp"

#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace ref = wham::reference;

TEST_CASE("uniform displacement classes: 316, each a far M2L displacement", "[fmm][reference]") {
  std::set<std::array<int, 3>> seen;
  for (int id = 0; id < wham::uniform_num_classes; ++id) {
    const auto d = wham::uniform_class_displacement(id);
    CAPTURE(id, d[0], d[1], d[2]);
    REQUIRE(wham::uniform_class_id(d[0], d[1], d[2]) == id);
    REQUIRE(std::max({std::abs(d[0]), std::abs(d[1]), std::abs(d[2])}) >= 2);
    REQUIRE(std::max({std::abs(d[0]), std::abs(d[1]), std::abs(d[2])}) <= 3);
    seen.insert(d);
  }
  CHECK(seen.size() == 316);
  CHECK(wham::uniform_class_id(1, -1, 0) == -1);
  CHECK(wham::uniform_class_id(4, 0, 0) == -1);
  // wham::error, as every other entry point (std::invalid_argument before).
  CHECK_THROWS_MATCHES(wham::uniform_class_displacement(316), wham::error,
                       Catch::Matchers::Message("wham::uniform_class_displacement: id = 316 is "
                                                "invalid (valid: 0..315)"));
}

TEST_CASE("uniform interaction lists: counts, classes, symmetry, no near neighbours",
          "[fmm][reference]") {
  const int level = GENERATE(2, 3, 4);
  CAPTURE(level);
  const auto list = wham::uniform_interaction_lists(level);
  const int n = 1 << level;
  const std::size_t cells = std::size_t(n) * n * n;
  REQUIRE(list.offsets.size() == cells + 1);
  REQUIRE(list.src.size() == list.tgt.size());
  REQUIRE(list.cls.size() == list.src.size());

  std::set<std::pair<std::int32_t, std::int32_t>> pairs;
  std::set<int> classes;
  for (std::size_t t = 0; t < cells; ++t) {
    const auto c = wham::cell_coords(level, std::int64_t(t));
    const bool interior =
        std::min({c[0], c[1], c[2]}) >= 2 && std::max({c[0], c[1], c[2]}) <= n - 3;
    const std::int64_t count = list.offsets[t + 1] - list.offsets[t];
    CAPTURE(t, c[0], c[1], c[2], count);
    REQUIRE(count <= 189);
    if (interior) REQUIRE(count == 189);
    int prev_cls = -1;
    for (std::int64_t i = list.offsets[t]; i < list.offsets[t + 1]; ++i) {
      REQUIRE(list.tgt[std::size_t(i)] == std::int32_t(t));
      const auto s = wham::cell_coords(level, list.src[std::size_t(i)]);
      const int dx = c[0] - s[0], dy = c[1] - s[1], dz = c[2] - s[2];
      // Well separated: not a neighbour; a child of a neighbour of the parent.
      REQUIRE(std::max({std::abs(dx), std::abs(dy), std::abs(dz)}) >= 2);
      for (int k = 0; k < 3; ++k) REQUIRE(std::abs(s[k] / 2 - c[k] / 2) <= 1);
      REQUIRE(list.cls[std::size_t(i)] == wham::uniform_class_id(dx, dy, dz));
      REQUIRE(list.cls[std::size_t(i)] > prev_cls);  // ascending class within a target
      prev_cls = list.cls[std::size_t(i)];
      classes.insert(prev_cls);
      pairs.insert({list.src[std::size_t(i)], list.tgt[std::size_t(i)]});
    }
  }
  REQUIRE(pairs.size() == list.size());  // no duplicate pair
  // Symmetric: s is in t's list exactly when t is in s's.
  for (const auto& st : pairs) REQUIRE(pairs.count({st.second, st.first}) == 1);
  // Completeness against brute force over every pair of cells.
  std::size_t brute = 0;
  for (std::size_t t = 0; t < cells; ++t) {
    const auto c = wham::cell_coords(level, std::int64_t(t));
    for (std::size_t s = 0; s < cells; ++s) {
      const auto d = wham::cell_coords(level, std::int64_t(s));
      bool parent_near = true, near = true;
      for (int k = 0; k < 3; ++k) {
        parent_near = parent_near && std::abs(d[k] / 2 - c[k] / 2) <= 1;
        near = near && std::abs(d[k] - c[k]) <= 1;
      }
      brute += (parent_near && !near) ? 1 : 0;
    }
  }
  CHECK(brute == list.size());
  if (level >= 3) CHECK(classes.size() == 316);  // every displacement occurs (n >= 8)
}

TEST_CASE("sparse interaction lists keep only present cells", "[fmm][reference]") {
  const int level = 3;
  auto gen = wham_test::rng(61);
  std::vector<std::int32_t> cells;
  std::bernoulli_distribution keep(0.4);
  for (std::int32_t id = 0; id < 512; ++id)
    if (keep(gen)) cells.push_back(id);
  CAPTURE(cells.size(), wham_test::seed());
  const auto sparse = wham::interaction_lists(level, cells);
  const auto full = wham::uniform_interaction_lists(level);
  std::set<std::int32_t> present(cells.begin(), cells.end());
  std::size_t expected = 0;
  for (std::size_t i = 0; i < full.size(); ++i)
    expected += present.count(full.src[i]) && present.count(full.tgt[i]) ? 1 : 0;
  CHECK(sparse.size() == expected);
  REQUIRE(sparse.offsets.size() == cells.size() + 1);
  for (std::size_t k = 0; k < cells.size(); ++k)
    for (std::int64_t i = sparse.offsets[k]; i < sparse.offsets[k + 1]; ++i) {
      REQUIRE(sparse.tgt[std::size_t(i)] == cells[k]);
      REQUIRE(present.count(sparse.src[std::size_t(i)]) == 1);
    }
  CHECK_THROWS_MATCHES(wham::interaction_lists(level, {1, 1}), wham::error,
                       Catch::Matchers::Message("wham::interaction_lists: cells[1] = 1 is invalid "
                                                "(valid: ids that appear once)"));
  const std::int32_t cells_at_level = std::int32_t(1) << (3 * level);
  CHECK_THROWS_MATCHES(
      wham::interaction_lists(level, {cells_at_level}), wham::error,
      Catch::Matchers::Message(
          "wham::interaction_lists: cells[0] = " + std::to_string(cells_at_level) +
          " is invalid (valid: a cell id, 0.." + std::to_string(cells_at_level - 1) + ")"));
  CHECK_THROWS_MATCHES(
      wham::interaction_lists(1, {0}), wham::error,
      Catch::Matchers::Message("wham::interaction_lists: level = 1 is invalid (valid: 2..10)"));
}

TEST_CASE("accumulate reference sums per-pair M2L results into targets", "[fmm][reference]") {
  const int p = GENERATE(0, 3, 6);
  CAPTURE(p, wham_test::seed());
  auto gen = wham_test::rng(62 + p);
  std::normal_distribution<double> normal;
  const int C = (p + 1) * (p + 1);
  const int cells = 5;
  std::vector<std::complex<double>> M(std::size_t(cells) * C);
  for (auto& v : M) v = {normal(gen), normal(gen)};
  // Duplicate targets, a target with no pairs (cell 4), a self-translation free list.
  const std::vector<std::int32_t> src{0, 1, 2, 0, 3, 1};
  const std::vector<std::int32_t> tgt{3, 3, 0, 1, 1, 3};
  std::vector<double> centers(3 * cells);
  for (int c = 0; c < cells; ++c)
    for (int k = 0; k < 3; ++k) centers[std::size_t(3 * c + k)] = 3.0 * c * (k + 1) + k;
  const auto deltas = wham::pair_deltas(centers.data(), src.data(), tgt.data(), 6);
  std::vector<std::complex<double>> L(std::size_t(cells) * C, {1.0, -1.0});
  const auto init = L;
  ref::m2l_accumulate(M.data(), deltas.data(), src.data(), tgt.data(), L.data(), p, 6);
  std::vector<std::complex<double>> expected = init;
  for (std::size_t i = 0; i < src.size(); ++i) {
    const double d[3] = {
        centers[3 * std::size_t(tgt[i])] - centers[3 * std::size_t(src[i])],
        centers[3 * std::size_t(tgt[i]) + 1] - centers[3 * std::size_t(src[i]) + 1],
        centers[3 * std::size_t(tgt[i]) + 2] - centers[3 * std::size_t(src[i]) + 2]};
    const auto one = ref::m2l_direct(p, M.data() + std::size_t(src[i]) * C, d);
    for (int c = 0; c < C; ++c) expected[std::size_t(tgt[i]) * C + c] += one[std::size_t(c)];
  }
  CHECK(wham_test::relative_error(L.data(), expected.data(), L.size()) <= 1e-14);
  // The untouched target keeps its value exactly.
  for (int c = 0; c < C; ++c) CHECK(L[std::size_t(4 * C + c)] == init[std::size_t(4 * C + c)]);
}

TEST_CASE("group_by_class keeps the pairs, orders them by class, stable", "[fmm][reference]") {
  const auto l = wham::uniform_interaction_lists(3);
  const auto g = wham::group_by_class(l);
  REQUIRE(g.size() == l.size());
  REQUIRE(g.offsets.size() == std::size_t(wham::uniform_num_classes) + 1);
  CHECK(g.offsets.front() == 0);
  CHECK(g.offsets.back() == std::int64_t(l.size()));
  for (std::size_t k = 0; k + 1 < g.offsets.size(); ++k) {
    CAPTURE(k);
    for (auto i = g.offsets[k]; i < g.offsets[k + 1]; ++i) {
      REQUIRE(g.cls[std::size_t(i)] == std::int32_t(k));
      // stable: the uniform list is target-sorted, so targets ascend within a class
      if (i > g.offsets[k]) REQUIRE(g.tgt[std::size_t(i)] > g.tgt[std::size_t(i) - 1]);
    }
  }
  std::multiset<std::array<std::int32_t, 3>> a, b;
  for (std::size_t i = 0; i < l.size(); ++i) {
    a.insert({l.src[i], l.tgt[i], l.cls[i]});
    b.insert({g.src[i], g.tgt[i], g.cls[i]});
  }
  CHECK(a == b);
}

TEST_CASE("group_by_tile_and_class orders by target tile, then class, stable", "[fmm][reference]") {
  const auto l = wham::uniform_interaction_lists(3);
  const std::int64_t tile = GENERATE(std::int64_t(1), std::int64_t(64), std::int64_t(100),
                                     std::int64_t(512), std::int64_t(5000));
  CAPTURE(tile);
  const auto g = wham::group_by_tile_and_class(l, tile);
  const std::int64_t classes = wham::uniform_num_classes;
  const std::int64_t tiles = (511 / tile) + 1;  // targets 0..511 all present
  REQUIRE(g.size() == l.size());
  REQUIRE(g.offsets.size() == std::size_t(tiles * classes) + 1);
  CHECK(g.offsets.front() == 0);
  CHECK(g.offsets.back() == std::int64_t(l.size()));
  for (std::size_t k = 0; k + 1 < g.offsets.size(); ++k) {
    CAPTURE(k);
    for (auto i = g.offsets[k]; i < g.offsets[k + 1]; ++i) {
      const auto at = std::size_t(i);
      REQUIRE(g.tgt[at] / tile == std::int64_t(k) / classes);
      REQUIRE(g.cls[at] == std::int32_t(std::int64_t(k) % classes));
      // stable: the uniform list is target-sorted, so targets ascend within a group
      if (i > g.offsets[k]) REQUIRE(g.tgt[at] > g.tgt[at - 1]);
    }
  }
  std::multiset<std::array<std::int32_t, 3>> a, b;
  for (std::size_t i = 0; i < l.size(); ++i) {
    a.insert({l.src[i], l.tgt[i], l.cls[i]});
    b.insert({g.src[i], g.tgt[i], g.cls[i]});
  }
  CHECK(a == b);
  // no tile is group_by_class
  const auto whole = wham::group_by_tile_and_class(l, 0);
  const auto by_class = wham::group_by_class(l);
  CHECK(whole.src == by_class.src);
  CHECK(whole.tgt == by_class.tgt);
  CHECK(whole.cls == by_class.cls);
  CHECK(whole.offsets == by_class.offsets);
}

TEST_CASE("group_by_tile_and_class names a negative class or target", "[fmm][reference]") {
  auto l = wham::uniform_interaction_lists(2);
  l.cls[3] = -2;
  CHECK_THROWS_MATCHES(wham::group_by_class(l), wham::error,
                       Catch::Matchers::Message("wham::group_by_tile_and_class: l.cls[3] = -2 is "
                                                "invalid (valid: >= 0)"));
  l.cls[3] = 0;
  l.tgt[5] = -1;
  CHECK_THROWS_MATCHES(wham::group_by_tile_and_class(l, 16), wham::error,
                       Catch::Matchers::Message("wham::group_by_tile_and_class: l.tgt[5] = -1 is "
                                                "invalid (valid: >= 0)"));
}
