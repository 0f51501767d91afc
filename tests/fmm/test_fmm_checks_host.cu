// The checks of wham::m2l and the FMM forms that fire before any device query (alignment,
// overlaps, enumerations, sizes), and the FMM schedule choice on the shared-memory limits
// of every supported device before sm_90. No CUDA device is needed: the pointers are host
// addresses no check dereferences, and the device limits are pinned for the thread.
#include <wham/fmm.cuh>
#include <wham/m2l.cuh>

#include "api_checks.cuh"
#include "catch.hpp"

#include <cstdint>
#include <string>
#include <type_traits>

namespace {

using wham_test::fake_device;
using wham_test::message_of;
using wham_test::offset_bytes;
using c128 = cuda::std::complex<double>;

// Buffers for one order-2 call: 4 rows of 9 coefficients, 4 pairs, 2 classes.
struct host_args {
  alignas(16) c128 m[36] = {};
  alignas(16) c128 l[36] = {};
  alignas(16) double geo[12] = {};
  alignas(16) std::int32_t src[4] = {}, tgt[4] = {}, cls[4] = {};
};

const char* const misaligned_c128 =
    " = an address 8 bytes past a multiple of 16 is invalid (valid: a pointer aligned to 16 "
    "bytes, the element type's alignment)";

}  // namespace

TEST_CASE("m2l and the FMM forms name a misaligned pointer", "[m2l][fmm][errors]") {
  host_args a;
  c128* m8 = offset_bytes(a.m, 8);
  c128* l8 = offset_bytes(a.l, 8);
  double* g4 = offset_bytes(a.geo, 4);
  std::int32_t* s2 = offset_bytes(a.src, 2);
  CHECK(message_of([&] { wham::m2l(m8, a.geo, a.l, 2, 1); }) ==
        std::string("wham::m2l: multipoles") + misaligned_c128);
  CHECK(message_of([&] { wham::m2l(a.m, a.geo, l8, 2, 1); }) ==
        std::string("wham::m2l: locals") + misaligned_c128);
  CHECK(message_of([&] { wham::m2l(a.m, g4, a.l, 2, 1); }) ==
        "wham::m2l: deltas = an address 4 bytes past a multiple of 8 is invalid (valid: a "
        "pointer aligned to 8 bytes, the element type's alignment)");
  CHECK(message_of([&] { wham::m2l_accumulate(m8, a.geo, a.src, a.tgt, a.l, 2, 4, 4, 4); }) ==
        std::string("wham::m2l_accumulate: multipoles") + misaligned_c128);
  CHECK(message_of([&] { wham::m2l_accumulate(a.m, a.geo, a.src, a.tgt, l8, 2, 4, 4, 4); }) ==
        std::string("wham::m2l_accumulate: locals") + misaligned_c128);
  CHECK(message_of([&] { wham::m2l_accumulate_centers(a.m, g4, a.src, a.tgt, a.l, 2, 4, 4, 4); }) ==
        "wham::m2l_accumulate_centers: centers = an address 4 bytes past a multiple of 8 "
        "is invalid (valid: a pointer aligned to 8 bytes, the element type's alignment)");
  CHECK(message_of([&] { wham::m2l_accumulate(a.m, a.geo, s2, a.tgt, a.l, 2, 4, 4, 4); }) ==
        "wham::m2l_accumulate: src = an address 2 bytes past a multiple of 4 is invalid (valid: "
        "a pointer aligned to 4 bytes, the element type's alignment)");
  CHECK(message_of([&] {
          wham::m2l_accumulate_classes(a.m, a.geo, s2, a.src, a.tgt, a.l, 2, 4, 2, 4, 4);
        }) ==
        "wham::m2l_accumulate_classes: cls = an address 2 bytes past a multiple of 4 is "
        "invalid (valid: a pointer aligned to 4 bytes, the element type's alignment)");
  CHECK(message_of([&] {
          wham::m2l_accumulate_class_groups(a.m, a.geo, a.cls, a.src, a.tgt, l8, 2, 4, 2, 4, 4);
        }) == std::string("wham::m2l_accumulate_class_groups: locals") + misaligned_c128);
}

TEST_CASE("the FMM forms reject a locals range that shares a byte with any input",
          "[fmm][errors]") {
  // One buffer carved up: locals placed to overlap each input in turn by one row or less.
  alignas(16) static c128 pool[4096];
  const char* tail = " is invalid (valid: a buffer apart from every other argument)";
  auto* base = reinterpret_cast<unsigned char*>(pool);
  const auto* m = reinterpret_cast<const c128*>(base);             // 4 rows of 9: 576 bytes
  const auto* geo = reinterpret_cast<const double*>(base + 1024);  // 12 doubles
  const auto* src = reinterpret_cast<const std::int32_t*>(base + 2048);
  const auto* tgt = reinterpret_cast<const std::int32_t*>(base + 3072);
  const auto* cls = reinterpret_cast<const std::int32_t*>(base + 4096);
  auto locals_at = [&](std::size_t offset) { return reinterpret_cast<c128*>(base + offset); };
  // the last row of multipoles (bytes 432..575) under the first row of locals
  CHECK(message_of([&] { wham::m2l_accumulate(m, geo, src, tgt, locals_at(432), 2, 4, 4, 4); }) ==
        std::string("wham::m2l_accumulate: locals = a range overlapping multipoles") + tail);
  // one row of locals ending 16 bytes into deltas
  CHECK(message_of([&] {
          wham::m2l_accumulate(m, geo, src, tgt, locals_at(1024 - 144 + 16), 2, 4, 4, 1);
        }) == std::string("wham::m2l_accumulate: locals = a range overlapping deltas") + tail);
  CHECK(message_of([&] {
          wham::m2l_accumulate_centers(m, geo, src, tgt, locals_at(1024 + 80), 2, 4, 4, 1);
        }) ==
        std::string("wham::m2l_accumulate_centers: locals = a range overlapping centers") + tail);
  CHECK(message_of([&] {
          wham::m2l_accumulate(m, geo, src, tgt, locals_at(2048 + 0), 2, 4, 4, 1);
        }) == std::string("wham::m2l_accumulate: locals = a range overlapping src") + tail);
  CHECK(message_of([&] {
          wham::m2l_accumulate(m, geo, src, tgt, locals_at(3072 - 128), 2, 4, 4, 1);
        }) == std::string("wham::m2l_accumulate: locals = a range overlapping tgt") + tail);
  CHECK(message_of([&] {
          wham::m2l_accumulate_classes(m, geo, cls, src, tgt, locals_at(4096 - 144 + 16), 2, 4, 2,
                                       4, 1);
        }) == std::string("wham::m2l_accumulate_classes: locals = a range overlapping cls") + tail);
  CHECK(message_of([&] {
          wham::m2l_accumulate_class_groups(m, geo, cls, src, tgt, locals_at(1024 + 32), 2, 4, 2, 4,
                                            1);
        }) == std::string("wham::m2l_accumulate_class_groups: locals = a range overlapping "
                          "class_deltas") +
                  tail);
  // Adjacent, not overlapping: the checks pass and the call goes on to the device query
  // (a CUDA error here without a driver, or a host-pointer error with one).
  const std::string next =
      message_of([&] { wham::m2l_accumulate(m, geo, src, tgt, locals_at(576), 2, 4, 4, 1); });
  CHECK(next.find("overlapping") == std::string::npos);
}

TEST_CASE("m2l and the FMM forms check sizes and enumerations before any device query",
          "[m2l][fmm][errors]") {
  host_args a;
  using method = wham::m2l_accumulate_method;
  CHECK(message_of([&] { wham::m2l(a.m, a.geo, a.l, 2, 1, 0, wham::m2l_path(6)); }) ==
        "wham::m2l: path = 6 is invalid (valid: automatic, thread, warp, split, direct or tensor)");
  CHECK(
      message_of([&] { wham::m2l(a.m, a.geo, a.l, 2, 1, 0, wham::m2l_path(-1)); }) ==
      "wham::m2l: path = -1 is invalid (valid: automatic, thread, warp, split, direct or tensor)");
  CHECK(message_of([&] {
          wham::m2l_accumulate(a.m, a.geo, a.src, a.tgt, a.l, 2, 4, 4, 4, 0, method(3));
        }) ==
        "wham::m2l_accumulate: method = 3 is invalid (valid: automatic, atomic or "
        "deterministic)");
  CHECK(message_of([&] { wham::m2l_accumulate(a.m, a.geo, a.src, a.tgt, a.l, 2, 4, 0, 4); }) ==
        "wham::m2l_accumulate: num_multipoles = 0 is invalid (valid: 1..2147483648)");
  CHECK(message_of([&] {
          wham::m2l_accumulate_centers(a.m, a.geo, a.src, a.tgt, a.l, 2, 4, 4, -1);
        }) == "wham::m2l_accumulate_centers: num_locals = -1 is invalid (valid: 1..2147483648)");
  CHECK(message_of([&] {
          wham::m2l_accumulate(a.m, a.geo, a.src, a.tgt, a.l, 2, 4, 4, (std::int64_t(1) << 31) + 1);
        }) == "wham::m2l_accumulate: num_locals = 2147483649 is invalid (valid: 1..2147483648)");
  // Without pairs, zero rows and null pointers are accepted; negative counts are not.
  CHECK(message_of([&] {
          wham::m2l_accumulate_classes(static_cast<const c128*>(nullptr),
                                       static_cast<const double*>(nullptr), nullptr, nullptr,
                                       nullptr, static_cast<c128*>(nullptr), 20, 0, 316, 0, 0);
        }) == "(no throw)");
  CHECK(message_of([&] {
          wham::m2l_accumulate_class_groups(static_cast<const c128*>(nullptr),
                                            static_cast<const double*>(nullptr), nullptr, nullptr,
                                            nullptr, static_cast<c128*>(nullptr), 3, 0, 1, 0, -1);
        }) ==
        "wham::m2l_accumulate_class_groups: num_locals = -1 is invalid (valid: 0..2147483648)");
  // m2l_num_coeffs: the orders whose coefficient count fits an int.
  CHECK(wham::m2l_num_coeffs(0) == 1);
  CHECK(wham::m2l_num_coeffs(46339) == 46340 * 46340);
  CHECK(message_of([] { (void)wham::m2l_num_coeffs(-1); }) ==
        "wham::m2l_num_coeffs: p = -1 is invalid (valid: 0..46339)");
  CHECK(message_of([] { (void)wham::m2l_num_coeffs(46340); }) ==
        "wham::m2l_num_coeffs: p = 46340 is invalid (valid: 0..46339)");
  static_assert(wham::m2l_num_coeffs(20) == 441, "still a constant expression");
  // check_interaction_list
  unsigned long long* no_count = nullptr;
  CHECK(message_of(
            [&] { wham::check_interaction_list(a.src, a.tgt, nullptr, 4, 4, 4, 0, no_count); }) ==
        "wham::check_interaction_list: out_of_range = nullptr is invalid (valid: a device "
        "pointer)");
  alignas(8) unsigned long long count[2] = {};
  CHECK(message_of([&] { wham::check_interaction_list(a.src, a.tgt, a.cls, 4, 4, 4, 0, count); }) ==
        "wham::check_interaction_list: num_classes = 0 is invalid (valid: 1..1024)");
  CHECK(message_of([&] {
          wham::check_interaction_list(nullptr, a.tgt, nullptr, 4, 4, 4, 0, count);
        }) == "wham::check_interaction_list: src = nullptr is invalid (valid: a device pointer)");
}

// Every order, type, method and geometry of the accumulate forms gets a schedule whose block
// fits the device's shared memory (an A100's 163 KB; an RTX 30x0/40x0's or L40's 99 KB).
// Float at p = 8 used to take the thread schedule, 101,376 bytes of records plus the
// pairs' indices, on the 99 KB devices.
TEMPLATE_TEST_CASE("the accumulate forms' schedule fits every supported device",
                   "[fmm][dispatch]", float, double) {
  using T = TestType;
  namespace fmm = wham::detail::fmm;
  namespace m2l = wham::detail::m2l;
  struct device {
    int major, minor;
    std::size_t smem;
  };
  const device d = GENERATE(device{8, 0, 166912}, device{8, 6, 101376}, device{8, 9, 101376});
  const bool deterministic = GENERATE(false, true);
  const int num_classes = GENERATE(0, 1, 316, 1024);
  const fake_device fake(d.major, d.minor, d.smem);
  const fmm::geometry mode = num_classes == 0 ? fmm::geometry::pair_deltas : fmm::geometry::classes;
  for (int p = 0; p <= wham::m2l_max_order<T>(); ++p) {
    CAPTURE(d.major, d.minor, deterministic, num_classes, p);
    const wham::m2l_path s = fmm::accumulate_path<T>(p, deterministic, mode, num_classes);
    CAPTURE(int(s));
    CHECK(fmm::accumulate_serves<T>(s, p, deterministic));
    CHECK(fmm::accumulate_smem_bytes<T>(s, p, mode, num_classes) <= d.smem);
  }
  if (d.smem == 101376 && num_classes == 0 && std::is_same_v<T, float>) {
    CHECK(fmm::accumulate_path<T>(8, deterministic) == wham::m2l_path::split);
  }
}
