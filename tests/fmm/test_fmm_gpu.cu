// The accumulate and class forms of the M2L against the double host reference
// (direct O(p^4) per pair, summed into targets), near the z axis where the documented
// worst case lies, and against the pair-streaming form and themselves (determinism,
// class form == pair form, spans, graphs): every comparison of the GPU with itself also
// holds each side to the host reference.
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

namespace {

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
test_list uniform_list(int level) {
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
test_list random_list(int cells, std::int64_t pairs, bool grouped, std::mt19937_64& gen) {
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
std::int64_t most_per_target(const test_list& h) {
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
int reference_stride(int p) { return p <= 8 ? 1 : 7; }

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

}  // namespace

TEMPLATE_TEST_CASE("m2l accumulate forms match the host reference", "[fmm][gpu]", float, double) {
  using T = TestType;
  using cT = cuda::std::complex<T>;
  const int p = GENERATE(0, 1, 2, 3, 4, 5, 8, 12, 16, 20);
  const int kind = GENERATE(0, 1, 2);  // uniform level 2; random grouped; random shuffled
  const form f = GENERATE(form::deltas, form::centers, form::classes);
  const method how = GENERATE(method::automatic, method::atomic, method::deterministic);
  if (p > wham::m2l_max_order<T>()) return;
  if (kind == 2 && how == method::deterministic) return;  // needs grouped targets
  // Sanitizer runs: p = 2 thread; p = 8 split (double) or thread (float); p = 16 tensor
  // (double, atomic) or warp.
  if (wham_test::reduced() &&
      (kind == 1 || how == method::automatic || (p != 2 && p != 8 && p != 16))) {
    return;
  }
  // The O(p^4) host reference dominates the run time: fewer pairs at high order.
  const std::int64_t pairs = p <= 8 ? 3000 : 400;
  CAPTURE(p, kind, int(f), int(how), wham_test::seed());
  auto gen = wham_test::rng(7000 + 100 * p + 10 * kind + int(f));
  test_list h = kind == 0 ? uniform_list(2) : random_list(97, pairs, kind == 1, gen);
  if (kind == 0 && p > 8) {  // keep the uniform list but only its first targets
    const auto n = std::size_t(std::min<std::int64_t>(h.size(), 600));
    h.src.resize(n);
    h.tgt.resize(n);
    h.cls.resize(n);
    h.deltas.resize(3 * n);
  }
  CAPTURE(h.size());
  const int C = (p + 1) * (p + 1);
  const auto M = to_device_type<T>(random_coefficients<T>(std::size_t(h.num_cells) * C, gen));
  const auto L0 = to_device_type<T>(random_coefficients<T>(std::size_t(h.num_cells) * C, gen));
  const auto expected = reference_sum<T>(f, p, h, M, L0);

  device_list<T> d(h);
  wham_test::device_buffer<cT> dM(M), dL(L0);
  launch<T>(f, p, dM.data(), dL.data(), h, d, how);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = dL.download();
  const double err = wham_test::relative_error(got.data(), expected.data(), got.size());
  CAPTURE(err);
  CHECK(err <= tolerance<T>(p, most_per_target(h)));
  require_non_targets_unchanged(h, got, L0, C);
}

namespace {

/// The same pairs grouped by class (stable), as wham::group_by_class does.
test_list by_class(const test_list& t) {
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

}  // namespace

/// The grouped class form on a level-3 uniform list grouped by class (kind 0), a random
/// list grouped by class (1) or shuffled (2), against the host reference; `run(dM, dL, d,
/// h)` launches it.
template <class T, class Run>
void check_class_groups(int p, int kind, Run&& run) {
  using cT = cuda::std::complex<T>;
  CAPTURE(p, kind, wham_test::seed());
  auto gen = wham_test::rng(7400 + 100 * p + kind);
  test_list h =
      kind == 0 ? by_class(uniform_list(3)) : random_list(97, p <= 8 ? 3000 : 400, false, gen);
  if (kind == 1) h = by_class(h);
  const std::size_t keep = p <= 8 ? 20000 : 700;  // the O(p^4) host reference
  if (h.src.size() > keep) {  // keep whole classes at the front and a partial one
    h.src.resize(keep);
    h.tgt.resize(keep);
    h.cls.resize(keep);
    h.deltas.resize(3 * keep);
  }
  CAPTURE(h.size());
  const int C = (p + 1) * (p + 1);
  const auto M = to_device_type<T>(random_coefficients<T>(std::size_t(h.num_cells) * C, gen));
  const auto L0 = to_device_type<T>(random_coefficients<T>(std::size_t(h.num_cells) * C, gen));
  const auto expected = reference_sum<T>(form::classes, p, h, M, L0);
  device_list<T> d(h);
  wham_test::device_buffer<cT> dM(M), dL(L0);
  run(dM, dL, d, h);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = dL.download();
  const double err = wham_test::relative_error(got.data(), expected.data(), got.size());
  CAPTURE(err);
  CHECK(err <= tolerance<T>(p, most_per_target(h)));
  require_non_targets_unchanged(h, got, L0, C);
}

TEMPLATE_TEST_CASE("m2l class groups form matches the host reference", "[fmm][gpu]", float,
                   double) {
  using T = TestType;
  // double: 1-10 the dense schedule, 12 scalar, 16 tensor; float: 10 the first grouped order
  const int p = GENERATE(0, 1, 2, 4, 7, 8, 9, 10, 12, 16, 20);
  const int kind = GENERATE(0, 1, 2);  // uniform level 3 by class; random by class; shuffled
  if (p > wham::m2l_max_order<T>()) return;
  if (wham_test::reduced() && (kind == 1 || (p != 2 && p != 9 && p != 10 && p != 16))) return;
  check_class_groups<T>(p, kind, [&](auto& dM, auto& dL, auto& d, const test_list& h) {
    wham::m2l_accumulate_class_groups(dM.data(), d.class_deltas.data(), d.cls.data(), d.src.data(),
                                      d.tgt.data(), dL.data(), p, h.size(),
                                      int(h.class_deltas.size() / 3), h.num_cells, h.num_cells);
  });
}

/// The grouped schedules by name at every order they are compiled for (the public call
/// above picks one per order): scalar, tensor (double) and dense (double, to
/// class_dense_max_order; its tuned shape, and a small one with spans of 16 pairs, so
/// that the blocks take several spans each where the list is long (p <= 8: up to 20,000
/// pairs), with atomics and with bulk reductions; and every row tile in one group with
/// each pair's record gathered by one bulk copy, with spans of 16).
TEMPLATE_TEST_CASE("m2l class groups schedules match the host reference at every order",
                   "[fmm][gpu]", float, double) {
  using T = TestType;
  namespace f = wham::detail::fmm;
  const int p = GENERATE(range(f::class_group_min_order, f::class_group_max_order<T>() + 1));
  const int kind = GENERATE(0, 2);
  // scalar, tensor, dense (tuned), dense with spans of 16 (atomics), the same (bulk),
  // all rows with bulk gathers and spans of 16
  const int schedule = GENERATE(0, 1, 2, 3, 4, 5);
  if (schedule != 0 && !std::is_same_v<T, double>) return;
  if (schedule >= 2 && !f::class_dense_serves<T>(p)) return;
  if (wham_test::reduced() && (kind != 2 || (p != 1 && p != 5 && p != 8 && p != 13 && p != 16))) {
    return;
  }
  CAPTURE(schedule);
  check_class_groups<T>(p, kind, [&](auto& dM, auto& dL, auto& d, const test_list& h) {
    const f::pair_list<T> l{reinterpret_cast<const f::cpx<T>*>(dM.data()),
                            reinterpret_cast<f::cpx<T>*>(dL.data()),
                            d.src.data(),
                            d.tgt.data(),
                            d.cls.data(),
                            d.class_deltas.data(),
                            int(h.class_deltas.size() / 3),
                            f::geometry::classes,
                            h.size(),
                            h.num_cells,
                            h.num_cells};
    wham::detail::arch::static_for<f::class_group_min_order, f::class_group_max_order<T>() + 1>(
        [&](auto Pc) {
          constexpr int P = decltype(Pc)::value;
          if (P != p) return;
          if constexpr (std::is_same_v<T, double>) {
            if (schedule == 1) {
              f::launch_class_group_schedule<P, T, f::class_tensor_warps, true>(l, 0);
              return;
            }
            if constexpr (f::class_dense_serves<T>(P)) {
              if (schedule == 2) {
                REQUIRE(f::launch_class_dense_order<P>(l, 0));
                return;
              }
              if (schedule >= 3) {
                using atomic_spans = f::dense_config<4, 1, 2, 1, true, false, 16>;
                using bulk_spans = f::dense_config<4, 1, 2, 1, true, true, 16>;
                using bulk_gathers =
                    f::dense_config<4, 1, (f::dense_shape<P>::row_tiles + 1) / 2 * 2, 1, true, true,
                                    16, true>;
                REQUIRE(f::dense_layout<P, bulk_spans>::total <=
                        wham::detail::current_device_limits().smem_per_block_optin);
                REQUIRE(f::dense_layout<P, bulk_gathers>::total <=
                        wham::detail::current_device_limits().smem_per_block_optin);
                if (schedule == 3) {
                  f::launch_class_dense<P, atomic_spans>(l, 0);
                } else if (schedule == 4) {
                  f::launch_class_dense<P, bulk_spans>(l, 0);
                } else {
                  f::launch_class_dense<P, bulk_gathers>(l, 0);
                }
                return;
              }
            }
          }
          f::launch_class_group_schedule<P, T>(l, 0);
        });
  });
}

namespace {

/// `cells` targets of `per_target` pairs each, grouped by target, over `classes`
/// displacements of polar angle theta from +z (even classes) or from -z (odd ones: the
/// same vector with z negated, so theta = 0 lies exactly on either axis), azimuths spread
/// round the axis, lengths uniform in [1, 3].
test_list near_axis_list(double theta, int cells, int classes, int per_target,
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

}  // namespace

/// The documented worst case (docs/specs/m2l.md, Accuracy) lies near the z axis: every
/// form, with every method, at polar angles from 0 to 0.3 about both poles, at the top
/// order of each band of the accuracy table. Prints the worst error of each form, the
/// figure the table documents.
TEMPLATE_TEST_CASE("m2l accumulate forms hold the documented accuracy near the z axis",
                   "[fmm][gpu]", float, double) {
  using T = TestType;
  using cT = cuda::std::complex<T>;
  const int p = GENERATE(8, 12, 16, 20);
  if (p > wham::m2l_max_order<T>()) return;
  if (wham_test::reduced() && p != 8 && p != 16) return;
  const std::vector<double> thetas =
      wham_test::reduced()
          ? std::vector<double>{0.0, 1e-6, 1e-2}
          : std::vector<double>{0.0, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3};
  const int cells = wham_test::reduced() ? 16 : 128, classes = 16, per_target = 4;
  CAPTURE(p, wham_test::seed());
  auto gen = wham_test::rng(7800 + p);
  const double tol = tolerance<T>(p, per_target);
  struct variant {
    const char* name;
    form f;
    method how;
    bool groups;
  };
  const variant variants[] = {
      {"deltas atomic", form::deltas, method::atomic, false},
      {"deltas deterministic", form::deltas, method::deterministic, false},
      {"classes atomic", form::classes, method::atomic, false},
      {"classes deterministic", form::classes, method::deterministic, false},
      {"class groups", form::classes, method::atomic, true},
  };
  constexpr int num_variants = sizeof(variants) / sizeof(variants[0]);
  double worst[num_variants] = {}, worst_theta[num_variants] = {};
  for (const double theta : thetas) {
    const test_list h = near_axis_list(theta, cells, classes, per_target, gen);
    const test_list g = by_class(h);
    const int C = (p + 1) * (p + 1);
    const auto M = to_device_type<T>(random_coefficients<T>(std::size_t(cells) * C, gen));
    const auto L0 = to_device_type<T>(random_coefficients<T>(std::size_t(cells) * C, gen));
    const auto expected = reference_sum<T>(form::deltas, p, h, M, L0);
    device_list<T> d(h), dg(g);
    wham_test::device_buffer<cT> dM(M), dL(L0);
    for (int v = 0; v < num_variants; ++v) {
      CAPTURE(theta, variants[v].name);
      dL.upload(L0);
      if (variants[v].groups) {
        wham::m2l_accumulate_class_groups(dM.data(), dg.class_deltas.data(), dg.cls.data(),
                                          dg.src.data(), dg.tgt.data(), dL.data(), p, g.size(),
                                          classes, cells, cells);
      } else {
        launch<T>(variants[v].f, p, dM.data(), dL.data(), h, d, variants[v].how);
      }
      WHAM_TEST_CUDA(cudaDeviceSynchronize());
      const auto got = dL.download();
      const double err = wham_test::relative_error(got.data(), expected.data(), got.size());
      CAPTURE(err, tol);
      CHECK(err <= tol);
      if (err > worst[v]) {
        worst[v] = err;
        worst_theta[v] = theta;
      }
    }
  }
  for (int v = 0; v < num_variants; ++v) {
    std::printf(
        "near the z axis, %s p = %d, %s: worst relative error %.2e (theta %.0e), "
        "documented %.1e, bound %.2e\n",
        std::is_same_v<T, double> ? "double" : "float", p, variants[v].name, worst[v],
        worst_theta[v], documented_accuracy<T>(p), tol);
  }
}

TEMPLATE_TEST_CASE("m2l class groups form: spans and target tiles agree with the class form",
                   "[fmm][gpu]", float, double) {
  using T = TestType;
  using cT = cuda::std::complex<T>;
  // A uniform level large enough that blocks take several spans (level 4: 584,136 pairs,
  // 18,255 chunks; span_max 1: every chunk its own span), in three orders of the same
  // pairs, against the class form in list order on the GPU, and both against the host
  // reference on every 61st target (a sample across every z-plane and tile).
  const int level = wham_test::reduced() ? 3 : 4;
  const int p = GENERATE(9, 12);
  const int planes = GENERATE(0, 1, 2);  // 0: grouped by class alone
  // -1: the automatic choice (one stretch a block on this list); 0: one stretch a block;
  // 1: every chunk its own span
  const std::int64_t span_max = GENERATE(std::int64_t(-1), std::int64_t(0), std::int64_t(1),
                                         wham::detail::fmm::class_group_span_max);
  if (wham_test::reduced() && (p != 9 || planes == 2 || span_max <= 0)) return;
  CAPTURE(level, p, planes, span_max, wham_test::seed());
  auto gen = wham_test::rng(7900 + 10 * p + planes);
  const test_list h = uniform_list(level);
  const auto g = wham::group_by_tile_and_class(wham::uniform_interaction_lists(level),
                                               std::int64_t(planes) << (2 * level));
  REQUIRE(g.size() == std::size_t(h.size()));
  const int C = (p + 1) * (p + 1);
  const auto M = to_device_type<T>(random_coefficients<T>(std::size_t(h.num_cells) * C, gen));
  const auto L0 = to_device_type<T>(random_coefficients<T>(std::size_t(h.num_cells) * C, gen));
  device_list<T> d(h);
  wham_test::device_buffer<std::int32_t> gsrc(g.src), gtgt(g.tgt), gcls(g.cls);
  wham_test::device_buffer<cT> dM(M), dL(L0), dR(L0);
  launch<T>(form::classes, p, dM.data(), dR.data(), h, d, method::atomic);
  const wham::detail::fmm::pair_list<T> l{
      reinterpret_cast<const wham::detail::fmm::cpx<T>*>(dM.data()),
      reinterpret_cast<wham::detail::fmm::cpx<T>*>(dL.data()),
      gsrc.data(),
      gtgt.data(),
      gcls.data(),
      d.class_deltas.data(),
      wham::uniform_num_classes,
      wham::detail::fmm::geometry::classes,
      h.size(),
      h.num_cells,
      h.num_cells};
  bool launched = false;
  wham::detail::arch::static_for<9, 13>([&](auto Pc) {
    constexpr int P = decltype(Pc)::value;
    if (P == p) launched = wham::detail::fmm::launch_class_group_order<P, T>(l, 0, span_max);
  });
  REQUIRE(launched);  // an H100 or H200 holds every grouped shape
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = dL.download();
  const auto class_form = dR.download();
  const auto expected = widen_all(class_form);
  const double tol = tolerance<T>(p, most_per_target(h));
  const double err = wham_test::relative_error(got.data(), expected.data(), got.size());
  const double err_groups = error_against_reference<T>(form::classes, p, h, M, L0, got, 61);
  const double err_classes = error_against_reference<T>(form::classes, p, h, M, L0, class_form, 61);
  CAPTURE(err, err_groups, err_classes, tol);
  CHECK(err <= tol);
  CHECK(err_groups <= tol);
  CHECK(err_classes <= tol);
}

TEMPLATE_TEST_CASE("m2l class groups form: a bad class id poisons only its target", "[fmm][gpu]",
                   float, double) {
  using T = TestType;
  using cT = cuda::std::complex<T>;
  const int p = GENERATE(3, 10);
  CAPTURE(p, wham_test::seed());
  auto gen = wham_test::rng(7450 + p);
  const int C = (p + 1) * (p + 1);
  // three pairs: classes 5, bad (316), 5; targets 0, 1, 2
  const std::vector<std::int32_t> src{3, 4, 5}, tgt{0, 1, 2}, cls{5, 316, 5};
  const auto deltas = wham::uniform_class_deltas(0.25);
  wham_test::device_buffer<std::int32_t> dsrc(src), dtgt(tgt), dcls(cls);
  wham_test::device_buffer<T> dd(narrow<T>(deltas));
  std::vector<cT> M(6 * std::size_t(C), cT(T(0.5), T(-0.25)));
  // random locals before the call, rows 0 and 2 alike
  auto L0 = to_device_type<T>(random_coefficients<T>(6 * std::size_t(C), gen));
  std::copy_n(L0.begin(), C, L0.begin() + 2 * std::size_t(C));
  wham_test::device_buffer<cT> dM(M), dL(L0);
  wham::m2l_accumulate_class_groups(dM.data(), dd.data(), dcls.data(), dsrc.data(), dtgt.data(),
                                    dL.data(), p, 3, wham::uniform_num_classes, 6, 6);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = dL.download();
  bool bad_nan = false, others_finite = true;
  for (int c = 0; c < C; ++c) {
    bad_nan = bad_nan || !std::isfinite(double(got[std::size_t(C + c)].real()));
    for (const int t : {0, 2}) {
      others_finite = others_finite && std::isfinite(double(got[std::size_t(t * C + c)].real())) &&
                      std::isfinite(double(got[std::size_t(t * C + c)].imag()));
    }
  }
  CHECK(bad_nan);
  CHECK(others_finite);
  // targets 0 and 2 got the same class and multipole: the same values, the reference's
  CHECK(std::memcmp(got.data(), got.data() + 2 * std::size_t(C), sizeof(cT) * C) == 0);
  test_list good;  // the two valid pairs; rows 0, 2 and 4 (no target) against the reference
  good.num_cells = 6;
  good.src = {3, 5};
  good.tgt = {0, 2};
  good.cls = {5, 5};
  good.class_deltas = deltas;
  good.deltas.assign(deltas.begin() + 15, deltas.begin() + 18);
  good.deltas.insert(good.deltas.end(), deltas.begin() + 15, deltas.begin() + 18);
  const double err = error_against_reference<T>(form::classes, p, good, M, L0, got, 2);
  CAPTURE(err);
  CHECK(err <= tolerance<T>(p));
}

TEMPLATE_TEST_CASE("m2l accumulate equals the sum of pair-streaming results", "[fmm][gpu]", float,
                   double) {
  using T = TestType;
  using cT = cuda::std::complex<T>;
  const int p = GENERATE(2, 4, 8, 13);
  if (wham_test::reduced() && p != 4 && p != 13) return;
  CAPTURE(p, wham_test::seed());
  auto gen = wham_test::rng(7100 + p);
  const test_list h = uniform_list(wham_test::reduced() ? 2 : 3);  // 512 cells, every class
  const int C = (p + 1) * (p + 1);
  const auto M = to_device_type<T>(random_coefficients<T>(std::size_t(h.num_cells) * C, gen));
  const auto L0 = to_device_type<T>(random_coefficients<T>(std::size_t(h.num_cells) * C, gen));
  // Pair streaming: gather multipoles per pair, translate, sum on the host in double.
  std::vector<cT> Mpairs(std::size_t(h.size()) * C);
  for (std::int64_t i = 0; i < h.size(); ++i)
    std::copy_n(M.begin() + std::size_t(h.src[std::size_t(i)]) * C, C,
                Mpairs.begin() + std::size_t(i) * C);
  device_list<T> d(h);
  wham_test::device_buffer<cT> dMp(Mpairs), dLp(Mpairs.size());
  dLp.poison();
  wham::m2l(dMp.data(), d.deltas.data(), dLp.data(), p, h.size());
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto per_pair = dLp.download();
  const auto expected_pairs = [&] {
    auto e = widen_all(L0);
    for (std::int64_t i = 0; i < h.size(); ++i)
      for (int c = 0; c < C; ++c)
        e[std::size_t(h.tgt[std::size_t(i)]) * C + c] +=
            wham_test::widen(per_pair[std::size_t(i) * C + c]);
    return e;
  }();
  const double tol = tolerance<T>(p, most_per_target(h));

  wham_test::device_buffer<cT> dM(M), dL(L0);
  for (const method how : {method::atomic, method::deterministic}) {
    for (const form f : {form::deltas, form::classes}) {
      CAPTURE(int(how), int(f));
      dL.upload(L0);
      launch<T>(f, p, dM.data(), dL.data(), h, d, how);
      WHAM_TEST_CUDA(cudaDeviceSynchronize());
      const auto got = dL.download();
      // Both sides round in T per pair; the sums differ in order only.
      const double err = wham_test::relative_error(got.data(), expected_pairs.data(), got.size());
      const double err_reference =
          error_against_reference<T>(f, p, h, M, L0, got, reference_stride(p));
      CAPTURE(err, err_reference, tol);
      CHECK(err <= tol);
      CHECK(err_reference <= tol);
    }
  }
}

TEMPLATE_TEST_CASE("m2l accumulate deterministic method gives identical bits", "[fmm][gpu]", float,
                   double) {
  using T = TestType;
  using cT = cuda::std::complex<T>;
  const int p = GENERATE(3, 6, 9, 14);  // thread, thread, split, warp
  const form f = GENERATE(form::deltas, form::centers, form::classes);
  if (wham_test::reduced() && p == 6) return;
  CAPTURE(p, int(f), wham_test::seed());
  auto gen = wham_test::rng(7200 + p);
  const test_list h = uniform_list(wham_test::reduced() ? 2 : 3);
  const int C = (p + 1) * (p + 1);
  const auto M = to_device_type<T>(random_coefficients<T>(std::size_t(h.num_cells) * C, gen));
  const auto L0 = to_device_type<T>(random_coefficients<T>(std::size_t(h.num_cells) * C, gen));
  device_list<T> d(h);
  wham_test::device_buffer<cT> dM(M), dL(L0);
  std::vector<cT> first;
  for (int run = 0; run < 3; ++run) {
    dL.upload(L0);
    launch<T>(f, p, dM.data(), dL.data(), h, d, method::deterministic);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = dL.download();
    if (run == 0) {
      first = got;
    } else {
      CAPTURE(run);
      REQUIRE(std::memcmp(got.data(), first.data(), sizeof(cT) * got.size()) == 0);
    }
  }
  const double err = error_against_reference<T>(f, p, h, M, L0, first, reference_stride(p));
  CAPTURE(err);
  CHECK(err <= tolerance<T>(p, most_per_target(h)));
}

TEMPLATE_TEST_CASE("m2l class form equals the pair form", "[fmm][gpu]", float, double) {
  using T = TestType;
  using cT = cuda::std::complex<T>;
  const int p = GENERATE(1, 4, 7, 10, 15);  // 7, 10: split (float 7: thread)
  const method how = GENERATE(method::atomic, method::deterministic);
  if (wham_test::reduced() && p != 4 && p != 10 && p != 15) return;
  CAPTURE(p, int(how), wham_test::seed());
  auto gen = wham_test::rng(7300 + p);
  const test_list h = uniform_list(wham_test::reduced() ? 2 : 3);
  const int C = (p + 1) * (p + 1);
  const auto M = to_device_type<T>(random_coefficients<T>(std::size_t(h.num_cells) * C, gen));
  const auto L0 = to_device_type<T>(random_coefficients<T>(std::size_t(h.num_cells) * C, gen));
  device_list<T> d(h);
  wham_test::device_buffer<cT> dM(M), dA(L0), dB(L0);
  launch<T>(form::deltas, p, dM.data(), dA.data(), h, d, how);
  launch<T>(form::classes, p, dM.data(), dB.data(), h, d, how);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto a = dA.download(), b = dB.download();
  const double tol = tolerance<T>(p, most_per_target(h));
  const double err = wham_test::relative_error(b.data(), a.data(), a.size());
  const int stride = reference_stride(p);
  const double err_pairs = error_against_reference<T>(form::deltas, p, h, M, L0, a, stride);
  const double err_classes = error_against_reference<T>(form::classes, p, h, M, L0, b, stride);
  CAPTURE(err, err_pairs, err_classes, tol);
  CHECK(err <= tol);
  CHECK(err_pairs <= tol);
  CHECK(err_classes <= tol);
}

TEMPLATE_TEST_CASE("m2l accumulate edges: empty list, single pair, one target", "[fmm][gpu]", float,
                   double) {
  using T = TestType;
  using cT = cuda::std::complex<T>;
  const int p = GENERATE(0, 4, 12, 17);
  const method how = GENERATE(method::atomic, method::deterministic);
  if (p > wham::m2l_max_order<T>()) return;
  CAPTURE(p, int(how), wham_test::seed());
  auto gen = wham_test::rng(7400 + p);
  const int C = (p + 1) * (p + 1);
  // Empty list: nothing enqueued, null pointers allowed.
  REQUIRE_NOTHROW(
      wham::m2l_accumulate<T>(nullptr, nullptr, nullptr, nullptr, nullptr, p, 0, 0, 0, 0, how));
  REQUIRE_NOTHROW(wham::m2l_accumulate_classes<T>(nullptr, nullptr, nullptr, nullptr, nullptr,
                                                  nullptr, p, 0, 1, 0, 0, 0, how));
  // A single pair; then 1000 pairs into one target (one long run, every tile).
  for (const std::int64_t n : {std::int64_t(1), std::int64_t(1000)}) {
    CAPTURE(n);
    test_list h = random_list(3, n, true, gen);
    for (auto& t : h.tgt) t = 2;
    const auto M = to_device_type<T>(random_coefficients<T>(std::size_t(3) * C, gen));
    const auto L0 = to_device_type<T>(random_coefficients<T>(std::size_t(3) * C, gen));
    const auto expected = reference_sum<T>(form::deltas, p, h, M, L0);
    device_list<T> d(h);
    wham_test::device_buffer<cT> dM(M), dL(L0);
    launch<T>(form::deltas, p, dM.data(), dL.data(), h, d, how);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = dL.download();
    const double err = wham_test::relative_error(got.data(), expected.data(), got.size());
    CAPTURE(err);
    CHECK(err <= tolerance<T>(p, n));
  }
}

TEST_CASE("m2l accumulate with more than 2^31 coefficients in total", "[fmm][gpu][large]") {
  // 2^31 / 25 + 10^5 pairs at p = 4 (double, centres form): 86M pairs, 690 MB of
  // indices; 64 sources, 64 targets, every target one long run of 1.34M pairs.
  if (wham_test::reduced()) return;
  using cT = cuda::std::complex<double>;
  const int p = 4, C = 25;
  const std::int64_t n = (std::int64_t(1) << 31) / C + 100000;
  std::size_t free_b = 0, total_b = 0;
  WHAM_TEST_CUDA(cudaMemGetInfo(&free_b, &total_b));
  if (free_b < std::size_t(2) << 30) {
    WARN("skipped: less than 2 GB of device memory free");
    return;
  }
  CAPTURE(n, wham_test::seed());
  auto gen = wham_test::rng(7500);
  const int S = 64;
  std::vector<std::int32_t> src(static_cast<std::size_t>(n)), tgt(static_cast<std::size_t>(n));
  const std::int64_t per = (n + S - 1) / S;
  for (std::int64_t i = 0; i < n; ++i) {
    src[std::size_t(i)] = std::int32_t(i % S);
    tgt[std::size_t(i)] = std::int32_t(S + i / per);  // grouped by target
  }
  // Target t receives, from each source s, the pairs i with i % S == s inside its run.
  std::vector<std::vector<std::int64_t>> mult(S, std::vector<std::int64_t>(S, 0));
  for (int t = 0; t < S; ++t) {
    const std::int64_t a = t * per, b = std::min(n, (t + 1) * per);
    for (std::int64_t i = a; i < b; ++i) ++mult[std::size_t(t)][std::size_t(i % S)];
  }
  std::vector<double> centers(3 * 2 * S);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int c = 0; c < 2 * S; ++c)
    for (int k = 0; k < 3; ++k) centers[std::size_t(3 * c + k)] = u(gen) + (c >= S ? 3.0 : 0.0);
  const auto Mh = random_coefficients<double>(std::size_t(2 * S) * C, gen);
  const auto M = to_device_type<double>(Mh);
  std::vector<std::complex<double>> expected = Mh;  // the locals start as a copy of M
  for (int t = 0; t < S; ++t)
    for (int s = 0; s < S; ++s) {
      double dlt[3];
      for (int k = 0; k < 3; ++k)
        dlt[k] = centers[std::size_t(3 * (S + t) + k)] - centers[std::size_t(3 * s + k)];
      const auto one = ref::m2l_direct(p, Mh.data() + std::size_t(s) * C, dlt);
      for (int c = 0; c < C; ++c)
        expected[std::size_t(S + t) * C + c] +=
            double(mult[std::size_t(t)][std::size_t(s)]) * one[std::size_t(c)];
    }
  wham_test::device_buffer<std::int32_t> dsrc(src), dtgt(tgt);
  wham_test::device_buffer<double> dc(centers);
  wham_test::device_buffer<cT> dM(M), dL(M.size());
  for (const method how : {method::atomic, method::deterministic}) {
    CAPTURE(int(how));
    dL.upload(M);
    wham::m2l_accumulate_centers(dM.data(), dc.data(), dsrc.data(), dtgt.data(), dL.data(), p, n,
                                 2 * S, 2 * S, 0, how);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = dL.download();
    const double err = wham_test::relative_error(got.data(), expected.data(), got.size());
    // 1.34M terms a target, 64 values repeated: their rounding errors need not average
    // out, so the sum's allowance is n eps, not eps sqrt(n).
    const double tol = tolerance<double>(p) + double(per) * std::numeric_limits<double>::epsilon();
    CAPTURE(err, tol);
    CHECK(err <= tol);
  }
}

TEST_CASE("m2l accumulate with source offsets past 2^31 coefficients", "[fmm][gpu][large]") {
  // float, p = 1: 2^29 + 2^20 source cells (17 GB of multipoles, most of them zero);
  // the pairs read the last cells, whose coefficient offsets pass 2^31.
  if (wham_test::reduced()) return;
  using cT = cuda::std::complex<float>;
  const int p = 1, C = 4;
  const std::int64_t cells = (std::int64_t(1) << 29) + (std::int64_t(1) << 20);
  std::size_t free_b = 0, total_b = 0;
  WHAM_TEST_CUDA(cudaMemGetInfo(&free_b, &total_b));
  if (free_b < std::size_t(cells) * C * sizeof(cT) + (std::size_t(1) << 30)) {
    WARN("skipped: not enough device memory for 17 GB of multipoles");
    return;
  }
  CAPTURE(cells, wham_test::seed());
  auto gen = wham_test::rng(7600);
  wham_test::device_buffer<cT> dM(std::size_t(cells) * C);
  WHAM_TEST_CUDA(cudaMemset(dM.data(), 0, dM.bytes()));
  const int used = 8;
  const auto Mh = random_coefficients<float>(std::size_t(used) * C, gen);
  const auto Mf = to_device_type<float>(Mh);
  WHAM_TEST_CUDA(cudaMemcpy(dM.data() + std::size_t(cells - used) * C, Mf.data(),
                            sizeof(cT) * Mf.size(), cudaMemcpyHostToDevice));
  test_list h;
  h.num_cells = 4;
  for (int s = 0; s < used; ++s)
    for (int t = 0; t < 4; ++t) {
      h.src.push_back(std::int32_t(cells - used + s));
      h.tgt.push_back(t);
      h.deltas.insert(h.deltas.end(), {1.5 + t, -2.0 + 0.25 * s, 0.5});
    }
  const auto L0 = to_device_type<float>(random_coefficients<float>(4 * std::size_t(C), gen));
  std::vector<std::complex<double>> expected = widen_all(L0);
  for (std::size_t i = 0; i < h.src.size(); ++i) {
    double dlt[3];
    for (int k = 0; k < 3; ++k) dlt[k] = double(float(h.deltas[3 * i + k]));
    const std::int64_t s = h.src[i] - (cells - used);
    std::vector<std::complex<double>> Ms(C);
    for (int c = 0; c < C; ++c) Ms[std::size_t(c)] = wham_test::widen(Mf[std::size_t(s * C + c)]);
    const auto one = ref::m2l_direct(p, Ms.data(), dlt);
    for (int c = 0; c < C; ++c) expected[std::size_t(h.tgt[i]) * C + c] += one[std::size_t(c)];
  }
  wham_test::device_buffer<std::int32_t> dsrc(h.src), dtgt(h.tgt);
  wham_test::device_buffer<float> dd(narrow<float>(h.deltas));
  wham_test::device_buffer<cT> dL(L0);
  for (const method how : {method::atomic, method::deterministic}) {
    CAPTURE(int(how));
    // deterministic needs grouped targets: sort by target on the host
    std::vector<std::int32_t> s2 = h.src, t2 = h.tgt;
    std::vector<float> d2 = narrow<float>(h.deltas);
    if (how == method::deterministic) {
      std::vector<std::size_t> o(h.src.size());
      std::iota(o.begin(), o.end(), 0);
      std::stable_sort(o.begin(), o.end(), [&](auto a, auto b) { return h.tgt[a] < h.tgt[b]; });
      for (std::size_t i = 0; i < o.size(); ++i) {
        s2[i] = h.src[o[i]];
        t2[i] = h.tgt[o[i]];
        for (int k = 0; k < 3; ++k) d2[3 * i + k] = float(h.deltas[3 * o[i] + k]);
      }
    }
    dsrc.upload(s2);
    dtgt.upload(t2);
    dd.upload(d2);
    dL.upload(L0);
    wham::m2l_accumulate(dM.data(), dd.data(), dsrc.data(), dtgt.data(), dL.data(), p,
                         std::int64_t(s2.size()), cells, 4, 0, how);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = dL.download();
    const double err = wham_test::relative_error(got.data(), expected.data(), got.size());
    CAPTURE(err);
    CHECK(err <= tolerance<float>(p, used));
  }
}

TEST_CASE("m2l accumulate launches inside a captured CUDA graph", "[fmm][gpu][graph]") {
  using cT = cuda::std::complex<double>;
  const int p = 5, C = 36;
  CAPTURE(p, wham_test::seed());
  auto gen = wham_test::rng(7700);
  const test_list h = uniform_list(2);
  const auto M =
      to_device_type<double>(random_coefficients<double>(std::size_t(h.num_cells) * C, gen));
  const auto L0 =
      to_device_type<double>(random_coefficients<double>(std::size_t(h.num_cells) * C, gen));
  device_list<double> d(h);
  wham_test::device_buffer<cT> dM(M), dL0(L0), dA(L0), dB(L0.size());
  dB.poison();  // the graph's copy of L0 must reach every row
  cudaStream_t stream;
  WHAM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  launch<double>(form::classes, p, dM.data(), dA.data(), h, d, method::deterministic, stream);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  WHAM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  WHAM_TEST_CUDA(
      cudaMemcpyAsync(dB.data(), dL0.data(), dB.bytes(), cudaMemcpyDeviceToDevice, stream));
  launch<double>(form::classes, p, dM.data(), dB.data(), h, d, method::deterministic, stream);
  WHAM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  WHAM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) WHAM_TEST_CUDA(cudaGraphLaunch(exec, stream));
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  const auto a = dA.download(), b = dB.download();
  REQUIRE(a == b);
  const double err = error_against_reference<double>(form::classes, p, h, M, L0, b);
  CAPTURE(err);
  CHECK(err <= tolerance<double>(p, most_per_target(h)));
  WHAM_TEST_CUDA(cudaGraphExecDestroy(exec));
  WHAM_TEST_CUDA(cudaGraphDestroy(graph));
  WHAM_TEST_CUDA(cudaStreamDestroy(stream));
}

TEST_CASE("m2l accumulate rejects bad arguments with wham::error", "[fmm][gpu][errors]") {
  using cT = cuda::std::complex<double>;
  wham_test::device_buffer<cT> M(25), L(25);
  wham_test::device_buffer<std::int32_t> idx(1);
  wham_test::device_buffer<double> geo(3);
  CHECK_THROWS_AS(
      wham::m2l_accumulate(M.data(), geo.data(), idx.data(), idx.data(), L.data(), 21, 1, 1, 1),
      wham::error);
  CHECK_THROWS_AS(
      wham::m2l_accumulate(M.data(), geo.data(), idx.data(), idx.data(), L.data(), -1, 1, 1, 1),
      wham::error);
  CHECK_THROWS_AS(
      wham::m2l_accumulate(M.data(), geo.data(), idx.data(), idx.data(), L.data(), 4, -1, 1, 1),
      wham::error);
  CHECK_THROWS_AS(
      wham::m2l_accumulate(M.data(), geo.data(), nullptr, idx.data(), L.data(), 4, 1, 1, 1),
      wham::error);
  CHECK_THROWS_AS(wham::m2l_accumulate(M.data(), static_cast<const double*>(nullptr), idx.data(),
                                       idx.data(), L.data(), 4, 1, 1, 1),
                  wham::error);
  CHECK_THROWS_AS(
      wham::m2l_accumulate(M.data(), geo.data(), idx.data(), idx.data(), M.data(), 4, 1, 1, 1),
      wham::error);
  CHECK_THROWS_AS(wham::m2l_accumulate_centers(M.data(), geo.data(), idx.data(), idx.data(),
                                               L.data(), 4, 1, 1, 1, 0, static_cast<method>(7)),
                  wham::error);
  CHECK_THROWS_AS(wham::m2l_accumulate_classes(M.data(), geo.data(), idx.data(), idx.data(),
                                               idx.data(), L.data(), 4, 1, 0, 1, 1),
                  wham::error);
  CHECK_THROWS_AS(wham::m2l_accumulate_classes(M.data(), geo.data(), idx.data(), idx.data(),
                                               idx.data(), L.data(), 4, 1, 1025, 1, 1),
                  wham::error);
  CHECK_THROWS_AS(wham::m2l_accumulate_classes(M.data(), geo.data(), nullptr, idx.data(),
                                               idx.data(), L.data(), 4, 1, 1, 1, 1),
                  wham::error);
  wham_test::device_buffer<float> fgeo(3);
  wham_test::device_buffer<cuda::std::complex<float>> fM(17 * 17 + 100), fL(17 * 17 + 100);
  CHECK_THROWS_AS(
      wham::m2l_accumulate(fM.data(), fgeo.data(), idx.data(), idx.data(), fL.data(), 17, 1, 1, 1),
      wham::error);
}
