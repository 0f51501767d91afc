// The scalar grouped schedule of m2l_accumulate_class_groups by name in float (the only
// grouped one there), at every order it is compiled for, against the double host reference
// (check_named_schedules, class_groups_cases.cuh).
#include "class_groups_cases.cuh"

#include "catch.hpp"

using namespace fmm_test;

TEST_CASE("m2l class groups schedules in float match the host reference at every order",
          "[fmm][gpu]") {
  check_named_schedules<float>();
}
