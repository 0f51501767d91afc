// P2P with non-finite inputs on the GPU (docs/specs/particles.md, Caller's errors): a source
// with a NaN or infinite coordinate is left out of every pair, so every other target gets
// what it gets without that source; a self pair is left out whatever its charge, so a point
// with a non-finite charge keeps a finite potential and gradient of its own while every
// other target that lists its cell is spoiled. Only wham::p2p is instantiated here (a
// quick build beside test_particles_gpu).
#include <wham/particles.cuh>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "particles_cases.hpp"
#include "test_util.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

namespace pt = particles_test;

/// Every cell lists every cell, itself included.
void all_pairs(std::int64_t cells, std::vector<std::int64_t>& offsets,
               std::vector<std::int32_t>& ids) {
  offsets.assign(1, 0);
  ids.clear();
  for (std::int64_t t = 0; t < cells; ++t) {
    for (std::int64_t s = 0; s < cells; ++s) ids.push_back(std::int32_t(s));
    offsets.push_back(std::int64_t(ids.size()));
  }
}

/// The outputs of one wham::p2p call from zero (gradient: empty where not asked for).
template <class T>
struct p2p_result {
  std::vector<T> potential, gradient;
};

template <class T>
p2p_result<T> run_p2p(const pt::cell_set& s, const std::vector<std::int64_t>& near_offsets,
                      const std::vector<std::int32_t>& near_cells, bool with_gradient) {
  const std::size_t n = std::size_t(s.num_points());
  wham_test::device_buffer<T> points(pt::narrow<T>(s.points)), charges(pt::narrow<T>(s.charges));
  wham_test::device_buffer<std::int64_t> offsets(s.offsets), noff(near_offsets);
  wham_test::device_buffer<std::int32_t> ids(near_cells);
  wham_test::device_buffer<T> phi(std::vector<T>(n, T(0))), grad(std::vector<T>(3 * n, T(0)));
  wham::p2p(points.data(), charges.data(), s.num_points(), offsets.data(), s.num_cells(),
            noff.data(), ids.data(), std::int64_t(near_cells.size()), phi.data(),
            with_gradient ? grad.data() : nullptr);
  WHAM_TEST_CUDA(cudaGetLastError());
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  return {phi.download(), with_gradient ? grad.download() : std::vector<T>()};
}

/// ||got - want|| / ||want|| over the points `keep` (width values a point); +inf where
/// anything compared is not finite.
template <class T>
double error_over(const std::vector<T>& got, const std::vector<double>& want,
                  const std::vector<std::size_t>& keep, int width) {
  double num = 0.0, den = 0.0;
  for (const std::size_t j : keep) {
    for (int k = 0; k < width; ++k) {
      const double e = double(got[width * j + k]) - want[width * j + k];
      if (!std::isfinite(e)) return INFINITY;
      num += e * e;
      den += want[width * j + k] * want[width * j + k];
    }
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

template <class T>
bool all_finite(const std::vector<T>& v, std::size_t j, int width) {
  for (int k = 0; k < width; ++k) {
    if (!std::isfinite(v[width * j + k])) return false;
  }
  return true;
}

}  // namespace

TEMPLATE_TEST_CASE("p2p leaves out a source with a non-finite coordinate",
                   "[particles][gpu][p2p][nonfinite]", float, double) {
  using T = TestType;
  const double bad = GENERATE(std::numeric_limits<double>::quiet_NaN(), INFINITY, -INFINITY);
  const int axis = GENERATE(0, 1, 2);
  const bool with_gradient = GENERATE(true, false);
  CAPTURE(bad, axis, with_gradient, wham_test::seed());
  auto gen = wham_test::rng(0xf1e + 8 * std::uint64_t(axis) + 2 * with_gradient + sizeof(T));
  // cells of 64 (whole tiles of 32 sources), 33 (a tile of 1 after one of 32), 7 and 1
  const pt::cell_set clean = pt::make_cells<T>(gen, {64, 33, 7, 1}, 2);
  // one bad source in a whole tile, one in a tile's last place, one a cell's only point
  const std::vector<std::size_t> bad_points = {std::size_t(clean.offsets[0]) + 40,
                                               std::size_t(clean.offsets[1]) + 32,
                                               std::size_t(clean.offsets[3])};
  pt::cell_set s = clean, without = clean;
  for (const std::size_t j : bad_points) {
    s.points[3 * j + std::size_t(axis)] = bad;
    without.charges[j] = 0.0;  // the same set, those sources taking no part
  }
  std::vector<std::int64_t> near_offsets;
  std::vector<std::int32_t> near_cells;
  all_pairs(s.num_cells(), near_offsets, near_cells);
  std::vector<double> phi_ref, grad_ref;
  pt::p2p_reference(without, near_offsets, near_cells, phi_ref, grad_ref);
  const p2p_result<T> got = run_p2p<T>(s, near_offsets, near_cells, with_gradient);

  std::vector<std::size_t> others;
  for (std::size_t j = 0; j < std::size_t(s.num_points()); ++j) {
    bool is_bad = false;
    for (const std::size_t b : bad_points) is_bad = is_bad || b == j;
    if (!is_bad) others.push_back(j);
  }
  std::size_t finite_phi = 0, finite_grad = 0;
  for (const std::size_t j : others) {
    finite_phi += all_finite(got.potential, j, 1);
    if (with_gradient) finite_grad += all_finite(got.gradient, j, 3);
  }
  CHECK(finite_phi == others.size());
  if (with_gradient) CHECK(finite_grad == others.size());
  const double e_phi = error_over(got.potential, phi_ref, others, 1);
  const double e_grad = with_gradient ? error_over(got.gradient, grad_ref, others, 3) : 0.0;
  CAPTURE(e_phi, e_grad);
  CHECK(e_phi <= pt::p2p_tolerance<T>());
  CHECK(e_grad <= pt::p2p_tolerance<T>());
}

TEMPLATE_TEST_CASE("a p2p self pair is left out whatever its charge",
                   "[particles][gpu][p2p][nonfinite]", float, double) {
  using T = TestType;
  const double bad = GENERATE(std::numeric_limits<double>::quiet_NaN(), INFINITY, -INFINITY);
  const bool with_gradient = GENERATE(true, false);
  CAPTURE(bad, with_gradient, wham_test::seed());
  auto gen = wham_test::rng(0x5e1f + 2 * with_gradient + sizeof(T));
  const pt::cell_set clean = pt::make_cells<T>(gen, {40, 33, 20, 1}, 2);
  // Cell 0 lists 0 and 1, cell 1 itself, cell 2 itself and 0, cell 3 itself. Point k of
  // cell 1 gets the non-finite charge; so does cell 3's only point, which pairs with none
  // but itself.
  const std::vector<std::int64_t> near_offsets = {0, 2, 3, 5, 6};
  const std::vector<std::int32_t> near_cells = {0, 1, 1, 2, 0, 3};
  const std::size_t k = std::size_t(clean.offsets[1]) + 5, lone = std::size_t(clean.offsets[3]);
  pt::cell_set s = clean, without = clean;
  s.charges[k] = s.charges[lone] = bad;
  without.charges[k] = without.charges[lone] = 0.0;
  std::vector<double> phi_ref, grad_ref;
  pt::p2p_reference(without, near_offsets, near_cells, phi_ref, grad_ref);
  const p2p_result<T> got = run_p2p<T>(s, near_offsets, near_cells, with_gradient);

  // Unspoiled: the two points themselves and cells 2 and 3 (which do not list cell 1).
  std::vector<std::size_t> kept = {k, lone};
  for (std::int64_t j = clean.offsets[2]; j < clean.offsets[3]; ++j) kept.push_back(std::size_t(j));
  const double e_phi = error_over(got.potential, phi_ref, kept, 1);
  const double e_grad = with_gradient ? error_over(got.gradient, grad_ref, kept, 3) : 0.0;
  CAPTURE(e_phi, e_grad, double(got.potential[k]), double(got.potential[lone]));
  CHECK(e_phi <= pt::p2p_tolerance<T>());
  CHECK(e_grad <= pt::p2p_tolerance<T>());
  CHECK(got.potential[lone] == T(0));
  // Spoiled: every other point of cells 0 and 1, which pair with the charge at r > 0.
  std::size_t spoiled = 0, listing = 0;
  for (std::int64_t j = clean.offsets[0]; j < clean.offsets[2]; ++j) {
    if (std::size_t(j) == k) continue;
    ++listing;
    spoiled += !std::isfinite(got.potential[std::size_t(j)]);
  }
  CHECK(spoiled == listing);
}
