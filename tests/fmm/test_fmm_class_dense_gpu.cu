// The dense grouped schedule of m2l_accumulate_class_groups (double, to
// class_dense_max_order) by name, in its tuned shape and in shapes that take the list in
// spans, against the double host reference (the scalar and tensor schedules:
// test_fmm_class_group_schedules_{float,double}_gpu; the public form: test_fmm_class_groups_gpu).
#include "class_groups_cases.cuh"
#include "fmm_cases.cuh"

#include "catch.hpp"
#include "test_util.hpp"

using namespace fmm_test;

/// The dense schedule by name at every order it is compiled for: its tuned shape, and a
/// small one with spans of 16 pairs, so that the blocks take several spans each where the
/// list is long (p <= 8: up to 20,000 pairs), with atomics and with bulk reductions; and
/// every row tile in one group with each pair's record gathered by one bulk copy, with
/// spans of 16.
TEST_CASE("m2l class groups dense schedule matches the host reference at every order",
          "[fmm][gpu]") {
  using T = double;
  namespace f = wham::detail::fmm;
  const int p = GENERATE(range(f::class_group_min_order, f::class_dense_max_order + 1));
  const int kind = GENERATE(0, 2);
  // dense (tuned), dense with spans of 16 (atomics), the same (bulk), all rows with bulk
  // gathers and spans of 16
  const int schedule = GENERATE(2, 3, 4, 5);
  if (wham_test::reduced() && (kind != 2 || (p != 1 && p != 5 && p != 8))) return;
  CAPTURE(schedule);
  check_class_groups<T>(p, kind, [&](auto& dM, auto& dL, auto& d, const test_list& h) {
    const auto l = schedule_list(dM, dL, d, h);
    wham::detail::arch::static_for<f::class_group_min_order, f::class_dense_max_order + 1>(
        [&](auto Pc) {
          constexpr int P = decltype(Pc)::value;
          if (P != p) return;
          if (schedule == 2) {
            REQUIRE(f::launch_class_dense_order<P>(l, 0));
            return;
          }
          using atomic_spans = f::dense_config<4, 1, 2, 1, true, false, 16>;
          using bulk_spans = f::dense_config<4, 1, 2, 1, true, true, 16>;
          using bulk_gathers = f::dense_config<4, 1, (f::dense_shape<P>::row_tiles + 1) / 2 * 2, 1,
                                               true, true, 16, true>;
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
        });
  });
}
