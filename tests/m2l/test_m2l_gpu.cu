// Every M2L path on the GPU against the double host reference (direct O(p^4) form).
#include <wham/m2l.cuh>
#include <wham/reference/m2l.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "m2l_baselines.cuh"
#include "m2l_accuracy.hpp"
#include "m2l_range.hpp"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace ref = wham::reference;

namespace {

enum class path_kind { automatic, thread, split, warp, tensor, direct, materialised };

const char* name(path_kind k) {
  switch (k) {
    case path_kind::automatic:
      return "automatic";
    case path_kind::thread:
      return "thread";
    case path_kind::split:
      return "split";
    case path_kind::warp:
      return "warp";
    case path_kind::tensor:
      return "tensor";
    case path_kind::direct:
      return "direct";
    default:
      return "materialised";
  }
}

/// The bound of docs/specs/m2l.md's accuracy table.
template <class T>
double tolerance(int p) {
  return wham_test::m2l_tolerance<T>(p);
}

/// Random inputs for one (p, num_pairs): general complex multipoles (not conjugate-
/// symmetric), deltas with |delta| log-uniform in [1e-3, 1e3] (from twice the small end of
/// the documented range where that is above 1e-3: float at high p), every 4th on the +z or
/// -z axis, every 4th (offset 1) within 1e-7 |delta| of it, and of those at offset 2 a
/// quarter each on the x axis, on the y axis, in the xy plane, and general.
template <class T>
struct inputs {
  int p = -1;
  std::int64_t n = 0;
  std::vector<cuda::std::complex<T>> M;
  std::vector<T> d;
};

template <class T>
const inputs<T>& make_inputs(int p, std::int64_t n) {
  static inputs<T> cache;  // the last one: the path varies fastest in the generators
  if (cache.p == p && cache.n == n) return cache;
  cache.p = p;
  cache.n = n;
  const std::size_t C = std::size_t(p + 1) * (p + 1);
  auto gen = wham_test::rng(std::uint64_t(p) * 1000003 + std::uint64_t(n) + sizeof(T));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  cache.M.resize(C * n);
  for (auto& v : cache.M) v = {T(u(gen)), T(u(gen))};
  cache.d.resize(3 * n);
  // |M_k^l| <= sqrt(2): docs/specs/m2l.md, "Range of |delta|"
  const double log_lo = std::log(std::max(1e-3, 2.0 * wham_test::m2l_min_distance<T>(p, 1.5)));
  const double log_hi = std::log(1e3);
  for (std::int64_t i = 0; i < n; ++i) {
    double x = u(gen), y = u(gen), z = u(gen);
    const double len = std::sqrt(x * x + y * y + z * z) + 1e-30;
    const double r = std::exp(log_lo + 0.5 * (u(gen) + 1.0) * (log_hi - log_lo));
    x *= r / len;
    y *= r / len;
    z *= r / len;
    if (i % 4 == 0) {
      x = y = 0.0;
      z = (i % 8 == 0) ? r : -r;
    } else if (i % 4 == 1) {  // near the axis, |delta| still r
      x = 1e-7 * r * u(gen);
      y = 1e-7 * r * u(gen);
      z = z >= 0.0 ? r : -r;
    } else if (i % 4 == 2 && (i / 4) % 4 < 3) {  // the x axis, the y axis, the xy plane
      const int kind = int((i / 4) % 4);
      const double s = u(gen) >= 0.0 ? r : -r;
      if (kind == 2) {
        const double rho = std::hypot(x, y) + 1e-30;
        x *= r / rho;
        y *= r / rho;
      } else {
        x = kind == 0 ? s : 0.0;
        y = kind == 1 ? s : 0.0;
      }
      z = 0.0;
    }
    cache.d[3 * i] = T(x);
    cache.d[3 * i + 1] = T(y);
    cache.d[3 * i + 2] = T(z);
  }
  return cache;
}

template <class T>
void run_path(path_kind k, const cuda::std::complex<T>* M, const T* d, cuda::std::complex<T>* L,
              int p, std::int64_t n) {
  switch (k) {
    case path_kind::automatic: {  // the default call, on a stream of its own
      cudaStream_t s;
      WHAM_TEST_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      WHAM_TEST_CUDA(cudaDeviceSynchronize());  // the poison (legacy stream) first
      wham::m2l(M, d, L, p, n, s);
      WHAM_TEST_CUDA(cudaStreamSynchronize(s));
      WHAM_TEST_CUDA(cudaStreamDestroy(s));
      break;
    }
    case path_kind::thread:
      wham::m2l(M, d, L, p, n, 0, wham::m2l_path::thread);
      break;
    case path_kind::split:
      wham::m2l(M, d, L, p, n, 0, wham::m2l_path::split);
      break;
    case path_kind::warp:
      wham::m2l(M, d, L, p, n, 0, wham::m2l_path::warp);
      break;
    case path_kind::tensor:
      wham::m2l(M, d, L, p, n, 0, wham::m2l_path::tensor);
      break;
    case path_kind::direct:
      wham::m2l(M, d, L, p, n, 0, wham::m2l_path::direct);
      break;
    case path_kind::materialised: {
      wham_test::device_buffer<unsigned char> work(
          wham_bench::materialised_workspace_bytes<T>(p, n));
      using C = wham::detail::m2l::cpx<T>;
      wham_bench::launch_materialised<T>(p, reinterpret_cast<const C*>(M), d,
                                         reinterpret_cast<C*>(L), n, work.data(), 0);
      WHAM_TEST_CUDA(cudaDeviceSynchronize());
      break;
    }
  }
}

/// Relative error of `got` against the direct host reference over `count` pairs, the
/// j-th of them pair `pair_at(j)` of `in`.
template <class T, class PairAt>
double error_against_reference(int p, const inputs<T>& in,
                               const std::vector<cuda::std::complex<T>>& got, std::int64_t count,
                               PairAt pair_at) {
  const std::size_t C = std::size_t(p + 1) * (p + 1);
  std::vector<std::complex<double>> out, want;
  out.reserve(count * C);
  want.reserve(count * C);
  std::vector<ref::m2l_complex> M(C);
  for (std::int64_t j = 0; j < count; ++j) {
    const std::int64_t i = pair_at(j);
    for (std::size_t c = 0; c < C; ++c) M[c] = {in.M[i * C + c].real(), in.M[i * C + c].imag()};
    const double d[3] = {in.d[3 * i], in.d[3 * i + 1], in.d[3 * i + 2]};
    const auto L = ref::m2l_direct(p, M.data(), d);
    for (std::size_t c = 0; c < C; ++c) {
      want.push_back(L[c]);
      out.push_back({double(got[i * C + c].real()), double(got[i * C + c].imag())});
    }
  }
  return wham_test::relative_error(out.data(), want.data(), out.size());
}

/// Whether the explicit path serves order p in T.
template <class T>
bool serves(path_kind k, int p) {
  using namespace wham::detail::m2l;
  if (k == path_kind::thread) return p <= thread_max_order;
  if (k == path_kind::split) return p >= split_min_order && p <= split_max_order;
  // float: the wide schedule (sm_90) alone, computing in double
  if (k == path_kind::tensor) return std::is_same_v<T, double> || wide_supported();
  return true;
}

bool print_errors() {
  const char* e = std::getenv("WHAM_M2L_PRINT");
  return e != nullptr && e[0] == '1';
}

}  // namespace

TEMPLATE_TEST_CASE("m2l paths match the direct host reference", "[m2l][gpu]", float, double) {
  using T = TestType;
  // 7 and 10: orders where the split schedule's degree partition differs (G = 4); 13, 15,
  // 16: where the four-pair tensor schedule (sm_80) has its last one-tile and first
  // two-tile degrees; 11, 14, 16, 18, 20 (tensor path only where no other path changes):
  // where the wide tensor schedule (sm_90) starts in automatic and changes its kernel shape
  const int p = GENERATE(0, 1, 2, 3, 4, 5, 7, 8, 10, 11, 12, 13, 14, 15, 16, 18, 20);
  const std::int64_t n = GENERATE(1, 7, 1000, 100000);
  const path_kind k =
      GENERATE(path_kind::automatic, path_kind::thread, path_kind::split, path_kind::warp,
               path_kind::tensor, path_kind::direct, path_kind::materialised);
  if (p > wham::m2l_max_order<T>()) return;
  if (!serves<T>(k, p)) return;
  if ((p == 11 || p == 14 || p == 18) && k != path_kind::tensor && k != path_kind::automatic) {
    return;
  }
  const std::size_t C = std::size_t(p + 1) * (p + 1);
  // the materialised baseline's workspace: at most 2 GB here
  if (k == path_kind::materialised &&
      wham_bench::materialised_workspace_bytes<T>(p, n) > (std::size_t(2) << 30)) {
    return;
  }
  // reduced (sanitizer) runs: small batches; beyond p = 12 the tensor schedule alone (its
  // two-tile degrees start at 16), on 7 pairs
  if (wham_test::reduced() &&
      (n > 1000 || (p > 5 && n > 7) || (p > 12 && !(k == path_kind::tensor && n <= 7)))) {
    return;
  }
  const auto& in = make_inputs<T>(p, n);
  CAPTURE(p, n, name(k), wham_test::seed());

  wham_test::device_buffer<cuda::std::complex<T>> dM(in.M), dL(C * n);
  wham_test::device_buffer<T> dd(in.d);
  dL.poison();
  run_path<T>(k, dM.data(), dd.data(), dL.data(), p, n);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = dL.download();

  // The reference on every pair up to 1000 pairs, else on 1000 (300 from p = 12) pairs
  // spread over the batch: first, last, and a stride through the middle offset by j % 4,
  // so that the samples take every kind of delta (make_inputs: i % 4 picks on-axis,
  // near-axis or general; a stride of 100 alone would land on the axis every time).
  // NaN anywhere in the whole output fails too (the poison).
  bool all_finite = true;
  for (const auto& v : got)
    all_finite = all_finite && std::isfinite(v.real()) && std::isfinite(v.imag());
  CHECK(all_finite);
  const std::int64_t checked = std::min<std::int64_t>(n, p >= 12 ? 300 : 1000);
  const double err = error_against_reference(p, in, got, checked, [&](std::int64_t j) {
    return checked == n ? j : (j == checked - 1 ? n - 1 : j * (n / checked) + j % 4);
  });
  if (print_errors()) {
    std::printf("M2LERR %s p=%d n=%lld path=%s err=%.3e\n",
                std::is_same_v<T, double> ? "double" : "float", p, (long long)n, name(k), err);
  }
  CAPTURE(err, tolerance<T>(p));
  REQUIRE(err <= tolerance<T>(p));
}

// The launchers' conventions: enqueued on the caller's stream, no allocation and no
// synchronisation inside, so the call can be captured into a CUDA graph. Every schedule
// automatic takes (thread, split, the tensor schedules; warp in float below sm_90).
TEMPLATE_TEST_CASE("m2l: a call captured in a CUDA graph gives the same locals",
                   "[m2l][gpu][graph]", float, double) {
  using T = TestType;
  const int p = GENERATE(2, 8, 12, 16, 20);
  if (p > wham::m2l_max_order<T>()) return;
  const std::int64_t n = wham_test::reduced() ? 7 : 1000;
  const auto& in = make_inputs<T>(p, n);
  CAPTURE(p, n, wham_test::seed());
  const std::size_t C = std::size_t(p + 1) * (p + 1);
  wham_test::device_buffer<cuda::std::complex<T>> dM(in.M), dL(C * n), dG(C * n);
  wham_test::device_buffer<T> dd(in.d);
  dL.poison();
  dG.poison();
  WHAM_TEST_CUDA(cudaDeviceSynchronize());  // the poison (legacy stream) before the other stream
  cudaStream_t stream;
  WHAM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  wham::m2l(dM.data(), dd.data(), dL.data(), p, n, stream);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  WHAM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  wham::m2l(dM.data(), dd.data(), dG.data(), p, n, stream);
  WHAM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  WHAM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) WHAM_TEST_CUDA(cudaGraphLaunch(exec, stream));
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  const auto direct = dL.download(), replayed = dG.download();
  WHAM_TEST_CUDA(cudaGraphExecDestroy(exec));
  WHAM_TEST_CUDA(cudaGraphDestroy(graph));
  WHAM_TEST_CUDA(cudaStreamDestroy(stream));
  // The direct call is itself right on its first pairs (two equal wrong answers fail).
  const double err = error_against_reference(p, in, direct, std::min<std::int64_t>(n, 8),
                                             [](std::int64_t j) { return j; });
  CAPTURE(err);
  REQUIRE(err <= tolerance<T>(p));
  for (std::size_t k = 0; k < direct.size(); ++k) {
    CAPTURE(k);
    REQUIRE(direct[k] == replayed[k]);
  }
}

TEMPLATE_TEST_CASE("m2l: zero and non-finite displacements", "[m2l][gpu]", float, double) {
  using T = TestType;
  const int p = GENERATE(0, 1, 4, 8, 12, 16);
  const path_kind k = GENERATE(path_kind::thread, path_kind::split, path_kind::warp,
                               path_kind::tensor, path_kind::direct);
  if (p > wham::m2l_max_order<T>() || !serves<T>(k, p)) return;
  CAPTURE(p, name(k), wham_test::seed());
  const std::int64_t n = 6;
  const std::size_t C = std::size_t(p + 1) * (p + 1);
  auto gen = wham_test::rng(77 + p);
  std::uniform_real_distribution<double> u(0.5, 1.0);
  std::vector<cuda::std::complex<T>> M(C * n);
  for (auto& v : M) v = {T(u(gen)), T(u(gen))};
  const T inf = INFINITY, nan = NAN;
  // pairs: 0 good, 1 zero, 2 good, 3 NaN, 4 inf, 5 good
  std::vector<T> d = {T(1), T(2), T(-1), 0,   0,    0,    T(0.5), T(-1.5), T(2),
                      nan,  T(1), T(1),  inf, T(1), T(1), T(-2),  T(0),    T(0.25)};
  wham_test::device_buffer<cuda::std::complex<T>> dM(M), dL(C * n);
  wham_test::device_buffer<T> dd(d);
  dL.poison();
  run_path<T>(k, dM.data(), dd.data(), dL.data(), p, n);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = dL.download();
  auto finite = [](cuda::std::complex<T> v) {
    return std::isfinite(v.real()) && std::isfinite(v.imag());
  };
  for (int i : {0, 2, 5}) {
    std::vector<ref::m2l_complex> Mi(C);
    for (std::size_t c = 0; c < C; ++c) Mi[c] = {M[i * C + c].real(), M[i * C + c].imag()};
    const double di[3] = {d[3 * i], d[3 * i + 1], d[3 * i + 2]};
    const auto L = ref::m2l_direct(p, Mi.data(), di);
    CAPTURE(i);
    REQUIRE(wham_test::relative_error(got.data() + i * C, L.data(), C) <= tolerance<T>(p));
  }
  for (std::size_t c = 0; c < C; ++c) {
    CAPTURE(c);
    CHECK_FALSE(finite(got[1 * C + c]));  // zero delta: every coefficient non-finite
    CHECK_FALSE(finite(got[3 * C + c]));  // NaN: every coefficient non-finite
    const auto v = got[4 * C + c];        // inf: non-finite or the limit 0
    CHECK((!finite(v) || (v.real() == T(0) && v.imag() == T(0))));
  }
}

TEST_CASE("m2l: argument checks", "[m2l][gpu]") {
  wham_test::device_buffer<cuda::std::complex<double>> M(36 * 4), L(36 * 4);
  wham_test::device_buffer<double> d(12);
  using wham::m2l;
  CHECK_THROWS_AS(m2l(M.data(), d.data(), L.data(), -1, 4), wham::error);
  CHECK_THROWS_AS(m2l(M.data(), d.data(), L.data(), 21, 4), wham::error);
  CHECK_THROWS_AS(m2l(M.data(), d.data(), L.data(), 5, -1), wham::error);
  CHECK_THROWS_AS(m2l(M.data(), d.data(), L.data(), 5, INT64_MAX / 100), wham::error);
  CHECK_THROWS_AS(
      m2l(static_cast<const cuda::std::complex<double>*>(nullptr), d.data(), L.data(), 5, 4),
      wham::error);
  CHECK_THROWS_AS(m2l(M.data(), static_cast<const double*>(nullptr), L.data(), 5, 4), wham::error);
  CHECK_THROWS_AS(m2l(M.data(), d.data(), static_cast<cuda::std::complex<double>*>(nullptr), 5, 4),
                  wham::error);
  CHECK_THROWS_AS(m2l(M.data(), d.data(), M.data(), 5, 4), wham::error);  // overlap
  CHECK_THROWS_AS(m2l(M.data(), d.data(), L.data(), 13, 4, 0, wham::m2l_path::thread), wham::error);
  CHECK_THROWS_AS(m2l(M.data(), d.data(), L.data(), 4, 4, 0, wham::m2l_path::split), wham::error);
  CHECK_THROWS_AS(m2l(M.data(), d.data(), L.data(), 13, 4, 0, wham::m2l_path::split), wham::error);
  wham_test::device_buffer<cuda::std::complex<float>> Mf(289), Lf(289);
  wham_test::device_buffer<float> df(3);
  CHECK_THROWS_AS(m2l(Mf.data(), df.data(), Lf.data(), 17, 1), wham::error);
  // float on tensor cores: the sm_90 wide schedule only
  if (!wham::detail::m2l::wide_supported()) {
    CHECK_THROWS_AS(m2l(Mf.data(), df.data(), Lf.data(), 16, 1, 0, wham::m2l_path::tensor),
                    wham::error);
  }
  CHECK_NOTHROW(m2l(Mf.data(), df.data(), Lf.data(), 16, 0));  // empty: nothing enqueued
  try {
    m2l(M.data(), d.data(), L.data(), 21, 4);
  } catch (const wham::error& e) {
    const std::string what = e.what();
    CHECK(what.find("p = 21") != std::string::npos);
    CHECK(what.find("0..20") != std::string::npos);
  }
}
