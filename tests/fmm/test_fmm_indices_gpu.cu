// The FMM forms given indices out of range, host pointers and misaligned pointers: a pair
// whose src or tgt lies outside its buffer adds nothing and no byte outside the buffers is
// written (guard rows around locals; run under compute-sanitizer for the reads, which land
// in exact-size allocations); wham::check_interaction_list counts those pairs; bad pointers
// throw naming the argument and leave the context usable. Each schedule of each form runs:
// the orders below cross the thread, split, warp and tensor schedules and the grouped ones.
#include <wham/fmm.cuh>
#include <wham/fmm_lists.hpp>
#include <wham/m2l.cuh>
#include <wham/reference/fmm.hpp>
#include <wham/reference/m2l.hpp>

#include "api_checks.cuh"
#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <algorithm>
#include <climits>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

namespace ref = wham::reference;
using method = wham::m2l_accumulate_method;

constexpr int num_multipoles = 40;  // source rows
constexpr int num_locals = 24;      // target rows: a src in 24..39 is valid, a tgt there is not
constexpr int guard_rows = 3;       // rows of locals' allocation before and after the buffer

/// A target-grouped list of valid pairs with out-of-range pairs mixed in: a bad src with the
/// run's own target inside runs (so the list stays grouped for the deterministic method),
/// a bad tgt (and both bad) between runs, at the list's ends and back to back.
struct mixed_list {
  std::vector<std::int32_t> src, tgt, cls;
  std::vector<char> valid;
  std::int64_t bad = 0;
  std::int64_t size() const { return std::int64_t(src.size()); }
};

mixed_list make_mixed_list(std::mt19937_64& gen, bool all_bad = false) {
  mixed_list l;
  std::uniform_int_distribution<int> source(0, num_multipoles - 1), len(1, 30), coin(0, 5),
      klass(0, wham::uniform_num_classes - 1);
  const std::int32_t bad_src[] = {-1, num_multipoles, INT_MIN, INT_MAX, 1 << 30, -7};
  const std::int32_t bad_tgt[] = {-1, num_locals, INT_MIN, INT_MAX, 1 << 30, num_multipoles};
  auto push = [&](std::int32_t s, std::int32_t t, bool ok) {
    l.src.push_back(s);
    l.tgt.push_back(t);
    l.cls.push_back(klass(gen));
    l.valid.push_back(ok ? 1 : 0);
    if (!ok) ++l.bad;
  };
  auto bad_between = [&] {
    const int n = coin(gen) % 3;
    for (int k = 0; k < n; ++k) {
      const bool both = coin(gen) == 0;
      push(both ? bad_src[coin(gen)] : source(gen), bad_tgt[coin(gen)], false);
    }
  };
  bad_between();
  for (int t = 0; t < num_locals; ++t) {
    const int n = len(gen);
    for (int k = 0; k < n; ++k) {
      if (all_bad || coin(gen) == 0) push(bad_src[coin(gen)], t, false);
      if (all_bad) continue;
      int s = source(gen);
      while (s == t) s = source(gen);  // the centres form needs delta != 0
      push(s, t, true);
    }
    bad_between();
  }
  push(bad_src[0], bad_tgt[0], false);  // the list ends in a bad pair
  return l;
}

template <class T>
std::vector<T> narrow(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

enum class form { deltas, centers, classes, class_groups };

/// One call of `f` on list `l` against the host reference over its valid pairs.
template <class T>
void check_form(form f, int p, method m, const mixed_list& l, std::mt19937_64& gen) {
  using cT = cuda::std::complex<T>;
  const int C = wham::m2l_num_coeffs(p);
  std::uniform_real_distribution<double> u(-1.0, 1.0), jitter(-0.1, 0.1);
  // Cells on a lattice of spacing 1 (|delta| >= about 0.8), one centre per row index.
  std::vector<double> centers(3 * num_multipoles);
  for (int c = 0; c < num_multipoles; ++c) {
    centers[3 * c] = c % 4 + jitter(gen);
    centers[3 * c + 1] = (c / 4) % 4 + jitter(gen);
    centers[3 * c + 2] = c / 16 + jitter(gen);
  }
  const std::vector<double> class_deltas = wham::uniform_class_deltas(1.0);
  const std::vector<T> centers_t = narrow<T>(centers), classes_t = narrow<T>(class_deltas);
  // The displacement of each pair as the form forms it (in T), and a finite filler for the
  // bad pairs of the per-pair form.
  std::vector<T> deltas_t(3 * l.src.size());
  std::vector<double> deltas_ref(3 * l.src.size());
  for (std::size_t i = 0; i < l.src.size(); ++i) {
    for (int k = 0; k < 3; ++k) {
      T d = T(k == 2 ? 1 : 0);
      if (l.valid[i]) {
        d = f == form::classes || f == form::class_groups
                ? classes_t[3 * std::size_t(l.cls[i]) + k]
                : T(centers_t[3 * std::size_t(l.tgt[i]) + k] -
                    centers_t[3 * std::size_t(l.src[i]) + k]);
      }
      deltas_t[3 * i + k] = d;
      deltas_ref[3 * i + k] = double(d);
    }
  }
  std::vector<cT> M(std::size_t(num_multipoles) * C),
      L0(std::size_t(num_locals + 2 * guard_rows) * C);
  std::vector<std::complex<double>> Mref(M.size()), Lref(std::size_t(num_locals) * C);
  for (std::size_t j = 0; j < M.size(); ++j) {
    M[j] = {T(u(gen)), T(u(gen))};
    Mref[j] = {double(M[j].real()), double(M[j].imag())};
  }
  for (std::size_t j = 0; j < L0.size(); ++j) L0[j] = {T(u(gen)), T(u(gen))};
  for (std::size_t j = 0; j < Lref.size(); ++j) {
    const cT v = L0[std::size_t(guard_rows) * C + j];
    Lref[j] = {double(v.real()), double(v.imag())};
  }
  // the reference over the valid pairs only
  std::vector<std::int32_t> vs, vt;
  std::vector<double> vd;
  for (std::size_t i = 0; i < l.src.size(); ++i) {
    if (!l.valid[i]) continue;
    vs.push_back(l.src[i]);
    vt.push_back(l.tgt[i]);
    for (int k = 0; k < 3; ++k) vd.push_back(deltas_ref[3 * i + k]);
  }
  ref::m2l_accumulate(Mref.data(), vd.data(), vs.data(), vt.data(), Lref.data(), p,
                      std::int64_t(vs.size()));

  wham_test::device_buffer<cT> dM(M), dL(L0);
  wham_test::device_buffer<T> dDeltas(deltas_t), dCenters(centers_t), dClasses(classes_t);
  wham_test::device_buffer<std::int32_t> dSrc(l.src), dTgt(l.tgt), dCls(l.cls);
  cT* locals = dL.data() + std::size_t(guard_rows) * C;
  const std::int64_t n = l.size();
  switch (f) {
    case form::deltas:
      wham::m2l_accumulate(dM.data(), dDeltas.data(), dSrc.data(), dTgt.data(), locals, p, n,
                           num_multipoles, num_locals, 0, m);
      break;
    case form::centers:
      wham::m2l_accumulate_centers(dM.data(), dCenters.data(), dSrc.data(), dTgt.data(), locals, p,
                                   n, num_multipoles, num_locals, 0, m);
      break;
    case form::classes:
      wham::m2l_accumulate_classes(dM.data(), dClasses.data(), dCls.data(), dSrc.data(),
                                   dTgt.data(), locals, p, n, wham::uniform_num_classes,
                                   num_multipoles, num_locals, 0, m);
      break;
    case form::class_groups:
      wham::m2l_accumulate_class_groups(dM.data(), dClasses.data(), dCls.data(), dSrc.data(),
                                        dTgt.data(), locals, p, n, wham::uniform_num_classes,
                                        num_multipoles, num_locals, 0);
      break;
  }
  WHAM_TEST_CUDA(cudaGetLastError());
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const std::vector<cT> got = dL.download();
  // the guard rows: byte for byte as they were
  const std::size_t g = std::size_t(guard_rows) * C;
  CHECK(std::memcmp(got.data(), L0.data(), g * sizeof(cT)) == 0);
  CHECK(std::memcmp(got.data() + g + std::size_t(num_locals) * C,
                    L0.data() + g + std::size_t(num_locals) * C, g * sizeof(cT)) == 0);
  const double err =
      wham_test::relative_error(got.data() + g, Lref.data(), std::size_t(num_locals) * C);
  CAPTURE(err);
  // Far below the size of one stray pair's term (order 1 relative), far above rounding.
  CHECK(err < (std::is_same_v<T, double> ? 1e-9 : 1e-3));
}

template <class T>
std::vector<int> orders() {
  // thread, split, warp / tensor boundaries and the grouped schedules' ranges
  if (wham_test::reduced())
    return std::is_same_v<T, double> ? std::vector<int>{2, 8, 13} : std::vector<int>{2, 9, 13};
  if constexpr (std::is_same_v<T, double>) return {0, 2, 6, 7, 10, 12, 13, 16, 20};
  return {0, 2, 8, 9, 10, 12, 13, 16};
}

}  // namespace

TEMPLATE_TEST_CASE("pairs with indices out of range add nothing and write nothing outside",
                   "[fmm][gpu]", float, double) {
  using T = TestType;
  auto gen = wham_test::rng(51001 + sizeof(T));
  const mixed_list l = make_mixed_list(gen);
  REQUIRE(l.bad > 0);
  for (const int p : orders<T>()) {
    for (const form f : {form::deltas, form::centers, form::classes, form::class_groups}) {
      for (const method m : {method::atomic, method::deterministic}) {
        if (f == form::class_groups && m == method::deterministic) continue;
        CAPTURE(p, int(f), int(m), l.size(), l.bad);
        check_form<T>(f, p, m, l, gen);
      }
    }
  }
}

TEMPLATE_TEST_CASE("a list of only bad pairs leaves locals untouched", "[fmm][gpu]", float,
                   double) {
  using T = TestType;
  auto gen = wham_test::rng(51002 + sizeof(T));
  const mixed_list l = make_mixed_list(gen, true);
  REQUIRE(l.bad == l.size());
  for (const int p : orders<T>()) {
    for (const form f : {form::deltas, form::centers, form::classes, form::class_groups}) {
      CAPTURE(p, int(f));
      check_form<T>(f, p, method::atomic, l, gen);
    }
  }
}

TEST_CASE("check_interaction_list counts the pairs the forms skip", "[fmm][gpu]") {
  auto gen = wham_test::rng(51003);
  mixed_list l = make_mixed_list(gen);
  // Class ids out of range too (the class forms give their targets NaN; counted here).
  std::int64_t bad_cls = 0;
  for (std::size_t i = 0; i < l.cls.size(); i += 17) {
    l.cls[i] = i % 2 ? -3 : wham::uniform_num_classes;
    if (l.valid[i]) ++bad_cls;
  }
  wham_test::device_buffer<std::int32_t> dSrc(l.src), dTgt(l.tgt), dCls(l.cls);
  wham_test::device_buffer<unsigned long long> count(1);
  cudaStream_t stream;
  WHAM_TEST_CUDA(cudaStreamCreate(&stream));
  count.poison();
  wham::check_interaction_list(dSrc.data(), dTgt.data(), nullptr, l.size(), num_multipoles,
                               num_locals, 0, count.data(), stream);
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  CHECK(count.download()[0] == static_cast<unsigned long long>(l.bad));
  count.poison();
  wham::check_interaction_list(dSrc.data(), dTgt.data(), dCls.data(), l.size(), num_multipoles,
                               num_locals, wham::uniform_num_classes, count.data(), stream);
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  CHECK(count.download()[0] == static_cast<unsigned long long>(l.bad + bad_cls));
  // rows up to 2^31: only the negative indices are out of range
  std::int64_t negative = 0;
  for (std::size_t i = 0; i < l.src.size(); ++i) negative += l.src[i] < 0 || l.tgt[i] < 0;
  REQUIRE(negative > 0);
  REQUIRE(negative < l.bad);
  count.poison();
  wham::check_interaction_list(dSrc.data(), dTgt.data(), nullptr, l.size(), INT_MAX + 1ll,
                               INT_MAX + 1ll, 0, count.data(), stream);
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  CHECK(count.download()[0] == static_cast<unsigned long long>(negative));
  // no pairs: 0
  count.poison();
  wham::check_interaction_list(nullptr, nullptr, nullptr, 0, 0, 0, 0, count.data(), stream);
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  CHECK(count.download()[0] == 0ull);
  WHAM_TEST_CUDA(cudaStreamDestroy(stream));
}

TEST_CASE("host and misaligned pointers throw naming the argument; the context stays usable",
          "[m2l][fmm][gpu]") {
  using cT = cuda::std::complex<double>;
  const int p = 4, C = 25;
  std::vector<cT> hM(2 * C, cT{0.5, -0.25});
  std::vector<double> hd{0.3, -0.2, 1.1, 0.3, -0.2, 1.1};
  wham_test::device_buffer<cT> dM(hM), dL(2 * C + 1);
  wham_test::device_buffer<double> dd(hd);
  std::vector<std::int32_t> idx{0, 1};
  wham_test::device_buffer<std::int32_t> dIdx(idx);
  using wham_test::message_of;

  const std::string host =
      " = a host pointer (not device-accessible) is invalid (valid: device, "
      "managed or registered host memory)";
  int pageable = 0, device = 0;
  WHAM_TEST_CUDA(cudaGetDevice(&device));
  WHAM_TEST_CUDA(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device));
  if (pageable == 0) {
    CHECK(message_of([&] { wham::m2l(hM.data(), dd.data(), dL.data(), p, 2); }) ==
          "wham::m2l: multipoles" + host);
    CHECK(message_of([&] {
            wham::m2l_accumulate(dM.data(), hd.data(), dIdx.data(), dIdx.data(), dL.data(), p, 2, 2,
                                 2);
          }) == "wham::m2l_accumulate: deltas" + host);
    CHECK(message_of([&] {
            wham::m2l_accumulate_centers(dM.data(), dd.data(), idx.data(), dIdx.data(), dL.data(),
                                         p, 2, 2, 2);
          }) == "wham::m2l_accumulate_centers: src" + host);
  }
  // misaligned device pointers: 8 bytes into a complex<double>
  const auto* m8 = reinterpret_cast<const cT*>(reinterpret_cast<const char*>(dM.data()) + 8);
  CHECK(message_of([&] {
          wham::m2l(m8, dd.data(), dL.data(), p, 1);
        }).find("multipoles = an address 8 bytes") != std::string::npos);
  auto* l8 = reinterpret_cast<cT*>(reinterpret_cast<char*>(dL.data()) + 8);
  CHECK(message_of([&] {
          wham::m2l_accumulate(dM.data(), dd.data(), dIdx.data(), dIdx.data(), l8, p, 2, 2, 2);
        }).find("locals = an address 8 bytes") != std::string::npos);
  // pinned host memory runs (device-accessible), and the context is fine afterwards
  cT* pinned = nullptr;
  WHAM_TEST_CUDA(cudaMallocHost(&pinned, 2 * C * sizeof(cT)));
  for (int j = 0; j < 2 * C; ++j) pinned[j] = hM[std::size_t(j)];
  wham::m2l(static_cast<const cT*>(pinned), dd.data(), dL.data(), p, 2);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  wham::m2l(dM.data(), dd.data(), dL.data(), p, 2);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  WHAM_TEST_CUDA(cudaFreeHost(pinned));
}

TEMPLATE_TEST_CASE("the accumulate forms' schedule fits this device at every order",
                   "[fmm][gpu][dispatch]", float, double) {
  using T = TestType;
  namespace fmm = wham::detail::fmm;
  const std::size_t have = wham::detail::current_device_limits().smem_per_block_optin;
  for (const int num_classes : {0, 1, 316, 1024}) {
    const fmm::geometry mode =
        num_classes == 0 ? fmm::geometry::pair_deltas : fmm::geometry::classes;
    for (const bool deterministic : {false, true}) {
      for (int p = 0; p <= wham::m2l_max_order<T>(); ++p) {
        CAPTURE(num_classes, deterministic, p);
        const auto s = fmm::accumulate_path<T>(p, deterministic, mode, num_classes);
        CHECK(fmm::accumulate_smem_bytes<T>(s, p, mode, num_classes) <= have);
      }
    }
  }
}

TEST_CASE("M2L and FMM launches above 48 KB of shared memory run again after cudaDeviceReset",
          "[m2l][fmm][gpu]") {
  // Each round makes its buffers, runs wham::m2l (thread schedule, p = 6 in double: above
  // 48 KB a block) and the grouped class form (the dense operator at p = 8), checks both
  // against the host reference, frees its buffers; a reset comes between the rounds.
  auto gen = wham_test::rng(51004);
  const mixed_list l = make_mixed_list(gen);
  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    {
      using cT = cuda::std::complex<double>;
      const int p = 6, C = wham::m2l_num_coeffs(p), n = 64;
      REQUIRE(wham::detail::m2l::thread_schedule_smem_bytes<double>(p) > 48 * 1024);
      std::uniform_real_distribution<double> u(-1.0, 1.0), r(1.0, 2.0);
      std::vector<cT> M(std::size_t(n) * C);
      std::vector<std::complex<double>> Mref(M.size());
      for (std::size_t j = 0; j < M.size(); ++j) {
        M[j] = {u(gen), u(gen)};
        Mref[j] = {M[j].real(), M[j].imag()};
      }
      std::vector<double> d(3 * std::size_t(n));
      for (auto& v : d) v = r(gen);
      wham_test::device_buffer<cT> dM(M), dL(M.size());
      wham_test::device_buffer<double> dd(d);
      dL.poison();
      wham::m2l(dM.data(), dd.data(), dL.data(), p, n, 0, wham::m2l_path::thread);
      WHAM_TEST_CUDA(cudaDeviceSynchronize());
      const auto got = dL.download();
      double worst = 0;
      for (int i = 0; i < n; ++i) {
        const auto want = wham::reference::m2l_direct(p, Mref.data() + std::size_t(i) * C,
                                                      d.data() + 3 * std::size_t(i));
        worst = std::max(worst, wham_test::relative_error(got.data() + std::size_t(i) * C,
                                                          want.data(), std::size_t(C)));
      }
      CHECK(worst < 1e-12);
    }
    check_form<double>(form::class_groups, 8, method::atomic, l, gen);
    if (round == 0) WHAM_TEST_CUDA(cudaDeviceReset());
  }
}
