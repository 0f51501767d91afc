// What the GPU tests of the FMM forms share (test_fmm_accumulate_gpu, test_fmm_class_groups_gpu,
// test_fmm_large_gpu): pair lists with their geometry, their device copies, the launch of
// each accumulate form, and the double host reference with its error over the targets.
#pragma once

#include <wham/fmm.cuh>
#include <wham/fmm_lists.hpp>
#include <wham/m2l.cuh>
#include <wham/reference/fmm.hpp>
#include <wham/reference/m2l.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "m2l_accuracy.hpp"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <type_traits>
#include <vector>

namespace fmm_test {

namespace ref = wham::reference;
using method = wham::m2l_accumulate_method;

/// A pair list with its geometry: cell centres, per-pair deltas, classes.
struct test_list {
  int num_cells = 0;
  std::vector<std::int32_t> src, tgt, cls;
  std::vector<double> centers;       ///< [num_cells][3]
  std::vector<double> deltas;        ///< [num_pairs][3] = centers[tgt] - centers[src]
  std::vector<double> class_deltas;  ///< [num_classes][3]
  std::int64_t size() const { return std::int64_t(src.size()); }
};

/// One uniform level (level 2: 64 cells; level 3: 512 cells), target-sorted.
inline test_list uniform_list(int level) {
  const auto l = wham::uniform_interaction_lists(level);
  test_list t;
  t.num_cells = 1 << (3 * level);
  t.src = l.src;
  t.tgt = l.tgt;
  t.cls = l.cls;
  const double h = 1.0 / double(1 << level);
  t.centers = wham::cell_centers(level);
  t.class_deltas = wham::uniform_class_deltas(h);
  t.deltas.resize(3 * t.src.size());
  for (std::size_t i = 0; i < t.src.size(); ++i)
    for (int k = 0; k < 3; ++k) t.deltas[3 * i + k] = t.class_deltas[3 * std::size_t(t.cls[i]) + k];
  return t;
}

/// Random pairs over `cells` cells with duplicate targets, classes from the uniform
/// table (so the class form applies); grouped by target when `grouped`, else shuffled.
inline test_list random_list(int cells, std::int64_t pairs, bool grouped, std::mt19937_64& gen) {
  test_list t;
  t.num_cells = cells;
  t.class_deltas = wham::uniform_class_deltas(0.25);
  std::uniform_int_distribution<int> cell(0, cells - 1), klass(0, wham::uniform_num_classes - 1);
  for (std::int64_t i = 0; i < pairs; ++i) {
    const int a = cell(gen);
    int b = cell(gen);
    while (cells > 1 && b == a) b = cell(gen);  // the centres form needs delta != 0
    t.src.push_back(a);
    t.tgt.push_back(b);
    t.cls.push_back(klass(gen));
  }
  if (grouped) {
    std::vector<std::size_t> order(t.src.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return t.tgt[a] < t.tgt[b]; });
    test_list u = t;
    for (std::size_t i = 0; i < order.size(); ++i) {
      u.src[i] = t.src[order[i]];
      u.tgt[i] = t.tgt[order[i]];
      u.cls[i] = t.cls[order[i]];
    }
    t = u;
  }
  t.deltas.resize(3 * t.src.size());
  for (std::size_t i = 0; i < t.src.size(); ++i)
    for (int k = 0; k < 3; ++k) t.deltas[3 * i + k] = t.class_deltas[3 * std::size_t(t.cls[i]) + k];
  // Centres (a lattice of spacing 1, jittered) are not consistent with these classes:
  // the centres form gets its own deltas.
  std::uniform_real_distribution<double> u(-0.1, 0.1);
  t.centers.resize(3 * std::size_t(cells));
  for (int c = 0; c < cells; ++c) {
    t.centers[3 * std::size_t(c)] = c % 5 + u(gen);
    t.centers[3 * std::size_t(c) + 1] = (c / 5) % 5 + u(gen);
    t.centers[3 * std::size_t(c) + 2] = c / 25 + u(gen);
  }
  return t;
}

using wham_test::documented_accuracy;

template <class T>
double tolerance(int p, std::int64_t terms = 1) {
  return wham_test::m2l_tolerance<T>(p, terms);
}

template <class T>
std::vector<cuda::std::complex<T>> to_device_type(const std::vector<std::complex<double>>& v) {
  std::vector<cuda::std::complex<T>> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = {T(v[i].real()), T(v[i].imag())};
  return out;
}
template <class T>
std::vector<std::complex<double>> widen_all(const std::vector<cuda::std::complex<T>>& v) {
  std::vector<std::complex<double>> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = {double(v[i].real()), double(v[i].imag())};
  return out;
}
template <class T>
std::vector<T> narrow(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

enum class form { deltas, centers, classes };

/// Device copies of a list and its geometry in precision T.
template <class T>
struct device_list {
  wham_test::device_buffer<std::int32_t> src, tgt, cls;
  wham_test::device_buffer<T> deltas, centers, class_deltas;
  explicit device_list(const test_list& l)
      : src(l.src),
        tgt(l.tgt),
        cls(l.cls),
        deltas(narrow<T>(l.deltas)),
        centers(narrow<T>(l.centers)),
        class_deltas(narrow<T>(l.class_deltas)) {}
};

template <class T>
void launch(form f, int p, const cuda::std::complex<T>* M, cuda::std::complex<T>* L,
            const test_list& h, const device_list<T>& d, method how, cudaStream_t stream = 0) {
  switch (f) {
    case form::deltas:
      wham::m2l_accumulate(M, d.deltas.data(), d.src.data(), d.tgt.data(), L, p, h.size(),
                           h.num_cells, h.num_cells, stream, how);
      break;
    case form::centers:
      wham::m2l_accumulate_centers(M, d.centers.data(), d.src.data(), d.tgt.data(), L, p, h.size(),
                                   h.num_cells, h.num_cells, stream, how);
      break;
    case form::classes:
      wham::m2l_accumulate_classes(M, d.class_deltas.data(), d.cls.data(), d.src.data(),
                                   d.tgt.data(), L, p, h.size(), int(h.class_deltas.size() / 3),
                                   h.num_cells, h.num_cells, stream, how);
      break;
  }
}

/// The host reference in double from the inputs as rounded to T.
template <class T>
std::vector<std::complex<double>> reference_sum(form f, int p, const test_list& h,
                                                const std::vector<cuda::std::complex<T>>& M,
                                                const std::vector<cuda::std::complex<T>>& L0) {
  auto Md = widen_all(M);
  auto Ld = widen_all(L0);
  std::vector<double> deltas(3 * h.src.size());
  for (std::size_t i = 0; i < h.src.size(); ++i) {
    for (int k = 0; k < 3; ++k) {
      if (f == form::centers) {
        // the device subtracts the T-rounded centres in T
        deltas[3 * i + k] = double(T(h.centers[3 * std::size_t(h.tgt[i]) + k]) -
                                   T(h.centers[3 * std::size_t(h.src[i]) + k]));
      } else {
        deltas[3 * i + k] = double(T(h.deltas[3 * i + k]));
      }
    }
  }
  ref::m2l_accumulate(Md.data(), deltas.data(), h.src.data(), h.tgt.data(), Ld.data(), p, h.size());
  return Ld;
}

/// The most pairs one target of the list sums.
inline std::int64_t most_per_target(const test_list& h) {
  std::vector<std::int64_t> count(std::size_t(h.num_cells), 0);
  for (auto t : h.tgt) ++count[std::size_t(t)];
  return count.empty() ? 0 : *std::max_element(count.begin(), count.end());
}

/// The relative error of `got` against the host reference over the targets t with
/// t % stride == 0 (the reference costs O(p^4) a pair: a stride keeps long lists quick).
template <class T>
double error_against_reference(form f, int p, const test_list& h,
                               const std::vector<cuda::std::complex<T>>& M,
                               const std::vector<cuda::std::complex<T>>& L0,
                               const std::vector<cuda::std::complex<T>>& got, int stride = 1) {
  test_list sub;
  sub.num_cells = h.num_cells;
  sub.centers = h.centers;
  sub.class_deltas = h.class_deltas;
  for (std::size_t i = 0; i < h.src.size(); ++i) {
    if (h.tgt[i] % stride != 0) continue;
    sub.src.push_back(h.src[i]);
    sub.tgt.push_back(h.tgt[i]);
    if (!h.cls.empty()) sub.cls.push_back(h.cls[i]);
    sub.deltas.insert(sub.deltas.end(), h.deltas.begin() + 3 * i, h.deltas.begin() + 3 * i + 3);
  }
  const auto expected = reference_sum<T>(f, p, sub, M, L0);
  const std::size_t C = std::size_t(p + 1) * std::size_t(p + 1);
  std::vector<cuda::std::complex<T>> got_rows;
  std::vector<std::complex<double>> want_rows;
  for (int t = 0; t < h.num_cells; t += stride) {
    got_rows.insert(got_rows.end(), got.begin() + std::size_t(t) * C,
                    got.begin() + std::size_t(t + 1) * C);
    want_rows.insert(want_rows.end(), expected.begin() + std::size_t(t) * C,
                     expected.begin() + std::size_t(t + 1) * C);
  }
  return wham_test::relative_error(got_rows.data(), want_rows.data(), got_rows.size());
}

/// Every target of a uniform level 3 at low order, every seventh above p = 8.
inline int reference_stride(int p) { return p <= 8 ? 1 : 7; }

/// Cells that are no target of the list keep their values bit for bit.
template <class cT>
void require_non_targets_unchanged(const test_list& h, const std::vector<cT>& got,
                                   const std::vector<cT>& before, int C) {
  std::vector<bool> is_target(std::size_t(h.num_cells), false);
  for (auto t : h.tgt) is_target[std::size_t(t)] = true;
  for (int c = 0; c < h.num_cells; ++c) {
    if (is_target[std::size_t(c)]) continue;
    CAPTURE(c);
    REQUIRE(std::memcmp(got.data() + std::size_t(c) * C, before.data() + std::size_t(c) * C,
                        sizeof(cT) * C) == 0);
  }
}

template <class T>
std::vector<std::complex<double>> random_coefficients(std::size_t n, std::mt19937_64& gen) {
  std::normal_distribution<double> normal;
  std::vector<std::complex<double>> v(n);
  for (auto& c : v) c = {normal(gen), normal(gen)};
  return v;
}

/// The same pairs grouped by class (stable), as wham::group_by_class does.
inline test_list by_class(const test_list& t) {
  std::vector<std::size_t> order(t.src.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return t.cls[a] < t.cls[b]; });
  test_list u = t;
  for (std::size_t i = 0; i < order.size(); ++i) {
    u.src[i] = t.src[order[i]];
    u.tgt[i] = t.tgt[order[i]];
    u.cls[i] = t.cls[order[i]];
    for (int k = 0; k < 3; ++k) u.deltas[3 * i + k] = t.deltas[3 * order[i] + k];
  }
  return u;
}

/// `cells` targets of `per_target` pairs each, grouped by target, over `classes`
/// displacements of polar angle theta from +z (even classes) or from -z (odd ones: the
/// same vector with z negated, so theta = 0 lies exactly on either axis), azimuths spread
/// round the axis, lengths uniform in [1, 3].
inline test_list near_axis_list(double theta, int cells, int classes, int per_target,
                                std::mt19937_64& gen) {
  test_list t;
  t.num_cells = cells;
  std::uniform_real_distribution<double> len(1.0, 3.0), jitter(0.0, 1.0);
  const double pi = std::acos(-1.0);
  for (int k = 0; k < classes; ++k) {
    const double r = len(gen), phi = 2 * pi * (k + jitter(gen)) / classes;
    const double z = r * std::cos(theta) * (k % 2 == 0 ? 1.0 : -1.0);
    t.class_deltas.insert(t.class_deltas.end(), {r * std::sin(theta) * std::cos(phi),
                                                 r * std::sin(theta) * std::sin(phi), z});
  }
  std::uniform_int_distribution<int> cell(0, cells - 1), klass(0, classes - 1);
  for (int target = 0; target < cells; ++target) {
    for (int j = 0; j < per_target; ++j) {
      t.src.push_back(cell(gen));
      t.tgt.push_back(target);
      t.cls.push_back(klass(gen));
      const auto c = std::size_t(t.cls.back());
      t.deltas.insert(t.deltas.end(), t.class_deltas.begin() + 3 * c,
                      t.class_deltas.begin() + 3 * c + 3);
    }
  }
  return t;
}

}  // namespace fmm_test
