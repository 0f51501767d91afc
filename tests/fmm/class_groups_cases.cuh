// What the GPU tests of m2l_accumulate_class_groups share (test_fmm_class_groups_gpu,
// test_fmm_class_group_schedules_{float,double}_gpu, test_fmm_class_dense_gpu): the check of
// one grouped launch against the double host reference, the pair list a schedule is launched
// on by name, and the scalar and tensor schedules by name.
#pragma once

#include "fmm_cases.cuh"

#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

namespace fmm_test {

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

/// The list check_class_groups hands `run`, as the grouped schedules launched by name take
/// it: multipoles dM, locals dL, the list and its class deltas in d.
template <class T, class Buffer>
wham::detail::fmm::pair_list<T> schedule_list(const Buffer& dM, const Buffer& dL,
                                              const device_list<T>& d, const test_list& h) {
  namespace f = wham::detail::fmm;
  return f::pair_list<T>{reinterpret_cast<const f::cpx<T>*>(dM.data()),
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
}

/// The scalar and tensor grouped schedules by name at every order they are compiled for
/// (the public call picks one per order): scalar, and tensor (double). Each precision's
/// test case has a translation unit of its own (test_fmm_class_group_schedules_float_gpu,
/// _double_gpu): both precisions' kernels at every order are too slow to compile in one.
template <class T>
void check_named_schedules() {
  namespace f = wham::detail::fmm;
  const int p = GENERATE(range(f::class_group_min_order, f::class_group_max_order<T>() + 1));
  const int kind = GENERATE(0, 2);
  const int schedule = GENERATE(0, 1);  // scalar, tensor
  if (schedule != 0 && !std::is_same_v<T, double>) return;
  if (wham_test::reduced() && (kind != 2 || (p != 1 && p != 5 && p != 8 && p != 13 && p != 16))) {
    return;
  }
  CAPTURE(schedule);
  check_class_groups<T>(p, kind, [&](auto& dM, auto& dL, auto& d, const test_list& h) {
    const auto l = schedule_list(dM, dL, d, h);
    wham::detail::arch::static_for<f::class_group_min_order, f::class_group_max_order<T>() + 1>(
        [&](auto Pc) {
          constexpr int P = decltype(Pc)::value;
          if (P != p) return;
          if constexpr (std::is_same_v<T, double>) {
            if (schedule == 1) {
              f::launch_class_group_schedule<P, T, f::class_tensor_warps, true>(l, 0);
              return;
            }
          }
          f::launch_class_group_schedule<P, T>(l, 0);
        });
  });
}

}  // namespace fmm_test
