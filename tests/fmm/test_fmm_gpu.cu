// The accumulate and class forms of the M2L against the double host reference
// (direct O(p^4) per pair, summed into targets), against the pair-streaming form,
// and against themselves (determinism, class form == pair form).
#include <wham/fmm.cuh>
#include <wham/fmm_lists.hpp>
#include <wham/m2l.cuh>
#include <wham/reference/fmm.hpp>
#include <wham/reference/m2l.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
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

/// Relative-error bound (the M2L concept's, tests/m2l: spec f64 1e-12 to p = 12, 1e-10
/// above; f32 1e-4 to p = 8, then 1e-4 * 4^(p-8): the swap matrices grow like 2^l).
template <class T>
double tolerance(int p) {
  if constexpr (std::is_same_v<T, double>) {
    return p <= 12 ? 1e-12 : 1e-10;
  } else {
    return p <= 8 ? 1e-4 : 1e-4 * std::pow(4.0, p - 8);
  }
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
      wham::m2l_accumulate(M, d.deltas.data(), d.src.data(), d.tgt.data(), L, p, h.size(), stream,
                           how);
      break;
    case form::centers:
      wham::m2l_accumulate_centers(M, d.centers.data(), d.src.data(), d.tgt.data(), L, p, h.size(),
                                   stream, how);
      break;
    case form::classes:
      wham::m2l_accumulate_classes(M, d.class_deltas.data(), d.cls.data(), d.src.data(),
                                   d.tgt.data(), L, p, h.size(), int(h.class_deltas.size() / 3),
                                   stream, how);
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
  CHECK(err <= tolerance<T>(p));
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
  CHECK(err <= tolerance<T>(p));
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
                                      int(h.class_deltas.size() / 3));
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
                            h.size()};
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

TEMPLATE_TEST_CASE("m2l class groups form: spans and target tiles agree with the class form",
                   "[fmm][gpu]", float, double) {
  using T = TestType;
  using cT = cuda::std::complex<T>;
  // A uniform level large enough that blocks take several spans (level 4: 584,136 pairs,
  // 18,255 chunks; span_max 1: every chunk its own span), in three orders of the same
  // pairs; the reference is the class form in list order on the GPU (its own test holds
  // it to the host reference).
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
      h.size()};
  wham::detail::arch::static_for<9, 13>([&](auto Pc) {
    constexpr int P = decltype(Pc)::value;
    if (P == p) wham::detail::fmm::launch_class_group_order<P, T>(l, 0, span_max);
  });
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = dL.download();
  const auto expected = widen_all(dR.download());
  const double err = wham_test::relative_error(got.data(), expected.data(), got.size());
  CAPTURE(err);
  CHECK(err <= tolerance<T>(p));
}

TEMPLATE_TEST_CASE("m2l class groups form: a bad class id poisons only its target", "[fmm][gpu]",
                   float, double) {
  using T = TestType;
  using cT = cuda::std::complex<T>;
  const int p = GENERATE(3, 10);
  CAPTURE(p);
  const int C = (p + 1) * (p + 1);
  // three pairs: classes 5, bad (316), 5; targets 0, 1, 2
  const std::vector<std::int32_t> src{3, 4, 5}, tgt{0, 1, 2}, cls{5, 316, 5};
  const auto deltas = wham::uniform_class_deltas(0.25);
  wham_test::device_buffer<std::int32_t> dsrc(src), dtgt(tgt), dcls(cls);
  wham_test::device_buffer<T> dd(narrow<T>(deltas));
  std::vector<cT> M(6 * std::size_t(C), cT(T(0.5), T(-0.25)));
  wham_test::device_buffer<cT> dM(M), dL(M.size());
  WHAM_TEST_CUDA(cudaMemset(dL.data(), 0, dL.bytes()));
  wham::m2l_accumulate_class_groups(dM.data(), dd.data(), dcls.data(), dsrc.data(), dtgt.data(),
                                    dL.data(), p, 3, wham::uniform_num_classes);
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
  // targets 0 and 2 got the same class and multipole: the same values
  CHECK(std::memcmp(got.data(), got.data() + 2 * std::size_t(C), sizeof(cT) * C) == 0);
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
  std::vector<std::complex<double>> expected(std::size_t(h.num_cells) * C);
  for (std::int64_t i = 0; i < h.size(); ++i)
    for (int c = 0; c < C; ++c)
      expected[std::size_t(h.tgt[std::size_t(i)]) * C + c] +=
          wham_test::widen(per_pair[std::size_t(i) * C + c]);

  wham_test::device_buffer<cT> dM(M), dL(M.size());
  for (const method how : {method::atomic, method::deterministic}) {
    for (const form f : {form::deltas, form::classes}) {
      CAPTURE(int(how), int(f));
      WHAM_TEST_CUDA(cudaMemset(dL.data(), 0, dL.bytes()));
      launch<T>(f, p, dM.data(), dL.data(), h, d, how);
      WHAM_TEST_CUDA(cudaDeviceSynchronize());
      const auto got = dL.download();
      const double err = wham_test::relative_error(got.data(), expected.data(), got.size());
      CAPTURE(err);
      // Both sides round in T per pair; the sums differ in order only.
      CHECK(err <= tolerance<T>(p));
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
  device_list<T> d(h);
  wham_test::device_buffer<cT> dM(M), dA(M.size()), dB(M.size());
  WHAM_TEST_CUDA(cudaMemset(dA.data(), 0, dA.bytes()));
  WHAM_TEST_CUDA(cudaMemset(dB.data(), 0, dB.bytes()));
  launch<T>(form::deltas, p, dM.data(), dA.data(), h, d, how);
  launch<T>(form::classes, p, dM.data(), dB.data(), h, d, how);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto a = dA.download(), b = dB.download();
  const double err = wham_test::relative_error(b.data(), a.data(), a.size());
  CAPTURE(err);
  CHECK(err <= tolerance<T>(p));
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
      wham::m2l_accumulate<T>(nullptr, nullptr, nullptr, nullptr, nullptr, p, 0, 0, how));
  REQUIRE_NOTHROW(wham::m2l_accumulate_classes<T>(nullptr, nullptr, nullptr, nullptr, nullptr,
                                                  nullptr, p, 0, 1, 0, how));
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
    CHECK(err <= tolerance<T>(p) * (n > 1 ? 10 : 1));
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
  std::vector<std::complex<double>> expected(std::size_t(2 * S) * C);
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
    WHAM_TEST_CUDA(cudaMemset(dL.data(), 0, dL.bytes()));
    wham::m2l_accumulate_centers(dM.data(), dc.data(), dsrc.data(), dtgt.data(), dL.data(), p, n, 0,
                                 how);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = dL.download();
    const double err = wham_test::relative_error(got.data(), expected.data(), got.size());
    CAPTURE(err);
    CHECK(err <= 1e-9);  // 1.34M terms summed per target
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
  std::vector<std::complex<double>> expected(4 * C);
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
  wham_test::device_buffer<cT> dL(4 * C);
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
    WHAM_TEST_CUDA(cudaMemset(dL.data(), 0, dL.bytes()));
    wham::m2l_accumulate(dM.data(), dd.data(), dsrc.data(), dtgt.data(), dL.data(), p,
                         std::int64_t(s2.size()), 0, how);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = dL.download();
    const double err = wham_test::relative_error(got.data(), expected.data(), got.size());
    CAPTURE(err);
    CHECK(err <= 1e-4);
  }
}

TEST_CASE("m2l accumulate launches inside a captured CUDA graph", "[fmm][gpu][graph]") {
  using cT = cuda::std::complex<double>;
  const int p = 5, C = 36;
  auto gen = wham_test::rng(7700);
  const test_list h = uniform_list(2);
  const auto M =
      to_device_type<double>(random_coefficients<double>(std::size_t(h.num_cells) * C, gen));
  device_list<double> d(h);
  wham_test::device_buffer<cT> dM(M), dA(M.size()), dB(M.size());
  cudaStream_t stream;
  WHAM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  WHAM_TEST_CUDA(cudaMemsetAsync(dA.data(), 0, dA.bytes(), stream));
  launch<double>(form::classes, p, dM.data(), dA.data(), h, d, method::deterministic, stream);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  WHAM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  WHAM_TEST_CUDA(cudaMemsetAsync(dB.data(), 0, dB.bytes(), stream));
  launch<double>(form::classes, p, dM.data(), dB.data(), h, d, method::deterministic, stream);
  WHAM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  WHAM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) WHAM_TEST_CUDA(cudaGraphLaunch(exec, stream));
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  REQUIRE(dA.download() == dB.download());
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
      wham::m2l_accumulate(M.data(), geo.data(), idx.data(), idx.data(), L.data(), 21, 1),
      wham::error);
  CHECK_THROWS_AS(
      wham::m2l_accumulate(M.data(), geo.data(), idx.data(), idx.data(), L.data(), -1, 1),
      wham::error);
  CHECK_THROWS_AS(
      wham::m2l_accumulate(M.data(), geo.data(), idx.data(), idx.data(), L.data(), 4, -1),
      wham::error);
  CHECK_THROWS_AS(wham::m2l_accumulate(M.data(), geo.data(), nullptr, idx.data(), L.data(), 4, 1),
                  wham::error);
  CHECK_THROWS_AS(wham::m2l_accumulate(M.data(), static_cast<const double*>(nullptr), idx.data(),
                                       idx.data(), L.data(), 4, 1),
                  wham::error);
  CHECK_THROWS_AS(
      wham::m2l_accumulate(M.data(), geo.data(), idx.data(), idx.data(), M.data(), 4, 1),
      wham::error);
  CHECK_THROWS_AS(wham::m2l_accumulate_centers(M.data(), geo.data(), idx.data(), idx.data(),
                                               L.data(), 4, 1, 0, static_cast<method>(7)),
                  wham::error);
  CHECK_THROWS_AS(wham::m2l_accumulate_classes(M.data(), geo.data(), idx.data(), idx.data(),
                                               idx.data(), L.data(), 4, 1, 0),
                  wham::error);
  CHECK_THROWS_AS(wham::m2l_accumulate_classes(M.data(), geo.data(), idx.data(), idx.data(),
                                               idx.data(), L.data(), 4, 1, 1025),
                  wham::error);
  CHECK_THROWS_AS(wham::m2l_accumulate_classes(M.data(), geo.data(), nullptr, idx.data(),
                                               idx.data(), L.data(), 4, 1, 1),
                  wham::error);
  wham_test::device_buffer<float> fgeo(3);
  wham_test::device_buffer<cuda::std::complex<float>> fM(17 * 17 + 100), fL(17 * 17 + 100);
  CHECK_THROWS_AS(
      wham::m2l_accumulate(fM.data(), fgeo.data(), idx.data(), idx.data(), fL.data(), 17, 1),
      wham::error);
}
