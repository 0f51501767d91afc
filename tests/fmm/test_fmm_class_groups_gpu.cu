// m2l_accumulate_class_groups against the double host reference: the public form on lists
// grouped by class or not, spans and target tiles against the class form, and a bad class id
// that poisons only its target. The grouped schedules by name: the scalar and tensor ones in
// test_fmm_class_group_schedules_{float,double}_gpu, the dense one in test_fmm_class_dense_gpu.
#include "class_groups_cases.cuh"
#include "fmm_cases.cuh"

#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

using namespace fmm_test;

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
