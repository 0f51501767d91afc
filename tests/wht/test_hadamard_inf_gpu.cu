// wham::hadamard (m > 1) with infinite inputs on the GPU: every output is what the exact sum
// gives (the double host reference, which sums the signed terms): +-inf where the infinite
// terms, once multiplied by their entries, have one sign, NaN only where +inf and -inf
// meet. The fused schedule (rows within a block's shared memory) and the split one (rows
// beyond it), every m, both sets and orientations, float, double and the 16-bit types (the
// complex types run the same code on each part; not run here).
#include <wham/hadamard.cuh>
#include <wham/reference/fwht.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

namespace {

template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __double2half(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __double2bfloat16(v);
  } else {
    return T(v);
  }
}

template <class T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return double(__half2float(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return double(__bfloat162float(v));
  } else {
    return double(v);
  }
}

template <class T>
double tolerance() {
  if constexpr (std::is_same_v<T, __half>) return 4 * std::ldexp(1.0, -11);
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return 4 * std::ldexp(1.0, -8);
  return std::is_same_v<T, float> ? 1e-5 : 1e-12;
}

}  // namespace

TEMPLATE_TEST_CASE("hadamard: infinite inputs give the exact sum's infinities, NaN only where "
                   "+inf and -inf meet",
                   "[hadamard][gpu][nonfinite]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  const int m = GENERATE(12, 20, 28, 40);
  // small and large segments: the fused schedule, and (14, 15) the split one
  const int log_k = GENERATE(0, 2, 5, 9, 14, 15);
  if (wham_test::reduced() && log_k > 14) return;
  const bool transpose = GENERATE(false, true);
  const auto set = (m + log_k) % 2 == 0 ? wham::hadamard_matrices::fast_hadamard_transform
                                        : wham::hadamard_matrices::quarot;
  CAPTURE(m, log_k, transpose, int(set), wham_test::seed());
  const std::size_t seg = std::size_t(1) << log_k, n = seg * std::size_t(m);
  const std::int64_t batch = 5;
  auto gen = wham_test::rng(0x1f7 + 100 * std::uint64_t(m) + 2 * std::uint64_t(log_k) + transpose);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<std::size_t> column(0, seg - 1);
  std::uniform_int_distribution<int> high(0, m - 1);
  std::vector<double> x(n * std::size_t(batch));
  for (auto& v : x) v = to_double(from_double<T>(normal(gen)));
  // Row 0: one +inf. Row 1: one -inf. Row 2: +inf and -inf in one column of H_m (some
  // outputs +-inf, others NaN). Row 3: two +inf in one column and a -inf in another.
  // Row 4: finite.
  const std::size_t c = column(gen);
  const int a0 = high(gen), a1 = (a0 + 1 + high(gen) % (m - 1)) % m;
  x[0 * n + std::size_t(a0) * seg + c] = INFINITY;
  x[1 * n + std::size_t(a1) * seg + column(gen)] = -INFINITY;
  x[2 * n + std::size_t(a0) * seg + c] = INFINITY;
  x[2 * n + std::size_t(a1) * seg + c] = -INFINITY;
  x[3 * n + std::size_t(a0) * seg + c] = INFINITY;
  x[3 * n + std::size_t(a1) * seg + c] = INFINITY;
  x[3 * n + std::size_t(a1) * seg + (c + 1) % seg] = -INFINITY;

  std::vector<T> host(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) host[i] = from_double<T>(x[i]);
  const double scale = 1.0 / std::sqrt(double(n));
  wham_test::device_buffer<T> d_in(host), d_out(host.size());
  d_out.poison();
  wham::hadamard(d_in.data(), d_out.data(), m, log_k, batch, wham::fwht_scale_t<T>(scale), 0, set,
                 transpose);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const std::vector<T> got = d_out.download();
  const auto want =
      wham::reference::hadamard_batched<double>(x.data(), m, log_k, batch, scale, set, transpose);

  for (std::int64_t r = 0; r < batch; ++r) {
    std::size_t wrong = 0, nan_want = 0, nan_got = 0, first_wrong = n;
    std::vector<double> g(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double w = want[std::size_t(r) * n + i];
      g[i] = to_double(got[std::size_t(r) * n + i]);
      nan_want += std::isnan(w);
      nan_got += std::isnan(g[i]);
      const bool same = std::isfinite(w) ? std::isfinite(g[i])
                        : std::isnan(w)  ? std::isnan(g[i])
                                         : g[i] == w;
      if (!same && wrong++ == 0) first_wrong = i;
    }
    CAPTURE(r, wrong, first_wrong, nan_want, nan_got);
    CHECK(wrong == 0);
    if (r == 0 || r == 1) CHECK(nan_want == 0);  // one infinity: no NaN anywhere
    if (r == 2) CHECK(nan_want > 0);             // the case where +inf and -inf meet
    if (r == 4) {
      const double err = wham_test::relative_error(g.data(), want.data() + 4 * n, n);
      CAPTURE(err);
      CHECK(err <= tolerance<T>());
    }
  }
}
