// The FMM forms' first call made while its stream is being captured
// (cudaStreamCaptureModeGlobal). A first call looks the device up, raises kernels'
// shared-memory limits and asks for occupancies; none of that may enqueue work,
// synchronise or allocate, or the capture fails. ctest runs each test case below in a
// process of its own (tests/fmm/CMakeLists.txt), so that its call is the process's first
// wham call; run together, each is still the first call of its form. The replayed graph's
// locals must match the host reference.
#include <wham/fmm.cuh>
#include <wham/fmm_lists.hpp>
#include <wham/reference/fmm.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "graph_capture.cuh"
#include "m2l_accuracy.hpp"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace {

using method = wham::m2l_accumulate_method;

enum class form { deltas, centers, classes, class_groups };

template <class T>
double tolerance(int p, std::int64_t terms) {
  return wham_test::m2l_tolerance<T>(p, terms);
}

using wham_test::capture_and_replay;

/// Form `f` at order p over a uniform level 2 (64 cells, 3096 pairs; grouped by class for
/// the grouped form), captured as the first call and replayed once, against the host
/// reference on the same (T-rounded) inputs.
template <class T>
void check_first_call(form f, int p, method how) {
  using cT = cuda::std::complex<T>;
  const int level = 2, cells = 64;
  const auto uniform = wham::uniform_interaction_lists(level);
  const auto list = f == form::class_groups ? wham::group_by_class(uniform) : uniform;
  const auto centers = wham::cell_centers(level);
  const auto class_deltas = wham::uniform_class_deltas(0.25);  // cells of edge 1/4
  const std::int64_t n = std::int64_t(list.size());
  const std::size_t C = std::size_t(p + 1) * std::size_t(p + 1);
  CAPTURE(int(f), p, int(how), n, wham_test::seed());
  auto gen = wham_test::rng(0xF30 + 32 * int(f) + p);
  std::normal_distribution<double> normal;
  std::vector<cT> M(cells * C), L0(cells * C);  // locals start random, never zero
  for (auto& v : M) v = cT(T(normal(gen)), T(normal(gen)));
  for (auto& v : L0) v = cT(T(normal(gen)), T(normal(gen)));
  // Each pair's displacement as the device forms it, in T.
  std::vector<double> deltas(3 * std::size_t(n));
  for (std::size_t i = 0; i < std::size_t(n); ++i) {
    for (std::size_t k = 0; k < 3; ++k) {
      const auto s = std::size_t(list.src[i]), t = std::size_t(list.tgt[i]);
      deltas[3 * i + k] = f == form::centers
                              ? double(T(centers[3 * t + k]) - T(centers[3 * s + k]))
                              : double(T(class_deltas[3 * std::size_t(list.cls[i]) + k]));
    }
  }
  wham_test::device_buffer<std::int32_t> d_src(list.src), d_tgt(list.tgt), d_cls(list.cls);
  wham_test::device_buffer<T> d_deltas(std::vector<T>(deltas.begin(), deltas.end()));
  wham_test::device_buffer<T> d_centers(std::vector<T>(centers.begin(), centers.end()));
  wham_test::device_buffer<T> d_class(std::vector<T>(class_deltas.begin(), class_deltas.end()));
  wham_test::device_buffer<cT> d_M(M), d_L(L0);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  capture_and_replay([&](cudaStream_t s) {
    switch (f) {
      case form::deltas:
        wham::m2l_accumulate(d_M.data(), d_deltas.data(), d_src.data(), d_tgt.data(), d_L.data(), p,
                             n, cells, cells, s, how);
        break;
      case form::centers:
        wham::m2l_accumulate_centers(d_M.data(), d_centers.data(), d_src.data(), d_tgt.data(),
                                     d_L.data(), p, n, cells, cells, s, how);
        break;
      case form::classes:
        wham::m2l_accumulate_classes(d_M.data(), d_class.data(), d_cls.data(), d_src.data(),
                                     d_tgt.data(), d_L.data(), p, n, wham::uniform_num_classes,
                                     cells, cells, s, how);
        break;
      case form::class_groups:
        wham::m2l_accumulate_class_groups(d_M.data(), d_class.data(), d_cls.data(), d_src.data(),
                                          d_tgt.data(), d_L.data(), p, n, wham::uniform_num_classes,
                                          cells, cells, s);
        break;
    }
  });
  const auto got = d_L.download();

  std::vector<std::complex<double>> Md(M.size()), want(L0.size());
  for (std::size_t i = 0; i < M.size(); ++i) Md[i] = wham_test::widen(M[i]);
  for (std::size_t i = 0; i < L0.size(); ++i) want[i] = wham_test::widen(L0[i]);
  wham::reference::m2l_accumulate(Md.data(), deltas.data(), list.src.data(), list.tgt.data(),
                                  want.data(), p, n);
  std::vector<std::int64_t> per_target(cells, 0);
  for (const auto t : list.tgt) ++per_target[std::size_t(t)];
  const double tol = tolerance<T>(p, *std::max_element(per_target.begin(), per_target.end()));
  const double err = wham_test::relative_error(got.data(), want.data(), got.size());
  CAPTURE(err, tol);
  REQUIRE(err <= tol);
}

}  // namespace

TEST_CASE("m2l_accumulate's first call may be captured into a CUDA graph",
          "[fmm][gpu][graph][deltas]") {
  // double, p = 16, atomic: the tensor-core schedule
  check_first_call<double>(form::deltas, 16, method::atomic);
}

TEST_CASE("m2l_accumulate_centers' first call may be captured into a CUDA graph",
          "[fmm][gpu][graph][centers]") {
  check_first_call<float>(form::centers, 12, method::deterministic);
}

TEST_CASE("m2l_accumulate_classes' first call may be captured into a CUDA graph",
          "[fmm][gpu][graph][classes]") {
  // double, p = 9, deterministic: the split schedule
  check_first_call<double>(form::classes, 9, method::deterministic);
}

TEST_CASE("m2l_accumulate_class_groups' first call may be captured into a CUDA graph",
          "[fmm][gpu][graph][class_groups]") {
  // double, p = 8: the dense class schedule (its shared memory raised on first use)
  check_first_call<double>(form::class_groups, 8, method::atomic);
}
