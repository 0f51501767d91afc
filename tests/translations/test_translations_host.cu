// wham::m2m / l2l and their accumulate forms without a GPU: every argument check that comes
// before the device (order, path, counts, null, misaligned and overlapping pointers), each
// naming its argument; and the path automatic picks fits the shared memory of every
// supported architecture (made-up device limits), an explicit path that does not fit throws.
#include <wham/translations.cuh>

#include "api_checks.cuh"
#include "catch.hpp"

#include <cuda/std/complex>

#include <cstdint>
#include <string>
#include <vector>

namespace {

namespace tr = wham::detail::translations;
using wham::translation_path;
using wham_test::message_of;

template <class T>
using cx = cuda::std::complex<T>;

bool names(const std::string& message, const std::string& argument) {
  return message.find(argument) != std::string::npos;
}

}  // namespace

TEMPLATE_TEST_CASE("m2m and l2l check their arguments before the device", "[translations]",
                   float, double) {
  using T = TestType;
  const int p = 4, C = 25;
  // host memory is never touched: every call here throws before the device query
  std::vector<cx<T>> in(4 * C), out(4 * C);
  std::vector<T> d(12);
  std::vector<std::int32_t> idx(4);
  const int top = wham::m2l_max_order<T>();
  SECTION("order and path") {
    CHECK(names(message_of([&] { wham::m2m(in.data(), d.data(), out.data(), -1, 4); }), "p"));
    CHECK(names(message_of([&] { wham::l2l(in.data(), d.data(), out.data(), top + 1, 4); }),
                std::to_string(top)));
    CHECK(names(message_of([&] {
                  wham::m2m(in.data(), d.data(), out.data(), p, 4, 0, translation_path(7));
                }),
                "path"));
    // the direct form serves p <= 4, the thread schedule p <= 12
    CHECK(names(message_of([&] {
                  wham::l2l(in.data(), d.data(), out.data(), 5, 4, 0, translation_path::direct);
                }),
                "0..4"));
    CHECK(names(message_of([&] {
                  wham::m2m(in.data(), d.data(), out.data(), 13, 4, 0, translation_path::thread);
                }),
                "0..12"));
    CHECK(names(message_of([&] {
                  wham::l2l(in.data(), d.data(), out.data(), 6, 4, 0, translation_path::split);
                }),
                "7..12"));
  }
  SECTION("counts") {
    CHECK(names(message_of([&] { wham::m2m(in.data(), d.data(), out.data(), p, -1); }),
                "num_pairs"));
    CHECK(names(message_of([&] {
                  wham::m2m_accumulate(in.data(), d.data(), idx.data(), idx.data(), out.data(), p,
                                       4, 0, 4);
                }),
                "num_multipoles"));
    CHECK(names(message_of([&] {
                  wham::m2m_accumulate(in.data(), d.data(), idx.data(), idx.data(), out.data(), p,
                                       4, 4, 0);
                }),
                "num_parents"));
    CHECK(names(message_of([&] {
                  wham::l2l_accumulate(in.data(), d.data(), idx.data(), idx.data(), out.data(), p,
                                       4, 0, 4);
                }),
                "num_locals"));
    CHECK(names(message_of([&] {
                  wham::l2l_accumulate(in.data(), d.data(), idx.data(), idx.data(), out.data(), p,
                                       4, 4, -2);
                }),
                "num_children"));
    // nothing to do: null pointers are fine, nothing is touched
    CHECK(message_of([&] {
            wham::m2m<T>(nullptr, nullptr, nullptr, p, 0);
            wham::l2l_accumulate<T>(nullptr, nullptr, nullptr, nullptr, nullptr, p, 0, 0, 0);
          }) == "(no throw)");
  }
  SECTION("null, misaligned and overlapping pointers") {
    CHECK(names(message_of([&] { wham::m2m<T>(nullptr, d.data(), out.data(), p, 4); }),
                "multipoles"));
    CHECK(names(message_of([&] { wham::l2l<T>(in.data(), nullptr, out.data(), p, 4); }),
                "deltas"));
    CHECK(names(message_of([&] {
                  wham::m2m_accumulate<T>(in.data(), d.data(), nullptr, idx.data(), out.data(), p,
                                          4, 4, 4);
                }),
                "src"));
    CHECK(names(message_of([&] {
                  wham::l2l_accumulate<T>(in.data(), d.data(), idx.data(), nullptr, out.data(), p,
                                          4, 4, 4);
                }),
                "tgt"));
    CHECK(names(message_of([&] {
                  wham::m2m(wham_test::offset_bytes(in.data(), sizeof(T)), d.data(), out.data(),
                            p, 2);
                }),
                "multipoles"));
    CHECK(names(message_of([&] {
                  wham::l2l(in.data(), d.data(), wham_test::offset_bytes(out.data(), sizeof(T)),
                            p, 2);
                }),
                "out"));
    // out shares a byte with the input, the deltas or an index list
    CHECK(names(message_of([&] { wham::m2m(in.data(), d.data(), in.data() + C, p, 2); }), "out"));
    CHECK(names(message_of([&] {
                  wham::l2l(in.data(), reinterpret_cast<const T*>(out.data() + C), out.data(), p,
                            2);
                }),
                "out"));
    CHECK(names(message_of([&] {
                  wham::m2m_accumulate(in.data(), d.data(), idx.data(),
                                       reinterpret_cast<const std::int32_t*>(out.data()),
                                       out.data(), p, 4, 4, 4);
                }),
                "parents"));
  }
}

TEMPLATE_TEST_CASE("automatic M2M / L2L paths fit every supported device", "[translations]",
                   float, double) {
  using T = TestType;
  struct arch {
    int major, minor;
    std::size_t smem;
  };
  for (const arch a : {arch{8, 0, 166912}, arch{8, 6, 101376}, arch{8, 9, 101376},
                       arch{9, 0, 232448}}) {
    wham_test::fake_device dev(a.major, a.minor, a.smem);
    for (int p = 0; p <= wham::m2l_max_order<T>(); ++p) {
      const auto s = tr::fitting_path<T>("m2m", translation_path::automatic, p);
      CAPTURE(a.major, a.minor, p, int(s));
      CHECK(s != translation_path::automatic);
      CHECK(p >= tr::path_min_order(s));
      CHECK(p <= tr::path_max_order<T>(s));
      CHECK(tr::path_smem_bytes<T>(s, p) <= a.smem);
      if (p <= tr::automatic_direct_max_order<T>()) CHECK(s == translation_path::direct);
    }
  }
  // float's thread path needs 121 KB at p = 9: an explicit thread path on a 99 KB device is
  // not supported there (a valid path this device cannot serve), and runs on sm_90
  if constexpr (sizeof(T) == 4) {
    wham_test::fake_device small(8, 6, 101376);
    try {
      tr::fitting_path<T>("m2m", translation_path::thread, 9);
      FAIL("an explicit thread path at p = 9 on a 99 KB device did not throw");
    } catch (const wham::error& e) {
      CHECK(e.kind() == wham::error_kind::not_supported);
      CHECK(names(e.what(), "shared memory"));
      CHECK(names(e.what(), "path"));
    }
    wham_test::fake_device hopper(9, 0, 232448);
    CHECK(tr::fitting_path<T>("m2m", translation_path::thread, 9) == translation_path::thread);
  }
}

TEMPLATE_TEST_CASE("an explicit path's order message states the limits the check uses",
                   "[translations]", float, double) {
  using T = TestType;
  std::vector<cx<T>> in(4 * 441), out(4 * 441);
  std::vector<T> d(12);
  for (const translation_path path :
       {translation_path::direct, translation_path::thread, translation_path::split}) {
    const int lo = tr::path_min_order(path), hi = tr::path_max_order<T>(path);
    const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
    CAPTURE(int(path), range);
    if (lo > 0) {
      CHECK(names(message_of([&] { wham::m2m(in.data(), d.data(), out.data(), lo - 1, 4, 0, path); }),
                  range));
    }
    if (hi < wham::m2l_max_order<T>()) {
      CHECK(names(message_of([&] { wham::l2l(in.data(), d.data(), out.data(), hi + 1, 4, 0, path); }),
                  range));
    }
  }
}
