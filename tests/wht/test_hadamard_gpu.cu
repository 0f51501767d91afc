// wham::hadamard (rows of m * 2^k) against the double host reference, every element type,
// m in {1, 12, 20, 28, 40}, both matrix sets, transposed or not, the fused schedule and the
// split beyond it, in and out of place into poisoned buffers; the shapes of language
// models (rows of 96 to 28672 elements, 1, 7 and 8192 tokens, sampled rows checked); bad
// arguments throw before anything runs.
//
// Tolerances: float arithmetic 1e-5 and double 1e-12 relative to a row's norm (each output
// is a +-1 sum formed in log2(m) + k stages, errors about sqrt(stages) * eps: fwht's);
// __half and __nv_bfloat16: r * u + 1e-6, u = 2^-11 or 2^-8, r the roundings to the
// 16-bit type (1 fused; split: the fwht's, at most 3, and the H_m pass's).
#include <wham/hadamard.cuh>
#include <wham/reference/fwht.hpp>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <vector>

namespace {

template <class T>
constexpr bool is_16_v = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <class T>
constexpr bool is_complex_v =
    !is_16_v<T> && !std::is_same_v<T, float> && !std::is_same_v<T, double>;
template <class T>
using double_of = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;

template <class T>
T random_value(std::mt19937_64& gen) {
  std::normal_distribution<double> normal;
  if constexpr (std::is_same_v<T, __half>) {
    return __double2half(normal(gen));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __double2bfloat16(normal(gen));
  } else if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    return T(R(normal(gen)), R(normal(gen)));
  } else {
    return T(normal(gen));
  }
}

template <class T>
double_of<T> to_double(const T& v) {
  if constexpr (is_complex_v<T>) {
    return {double(v.real()), double(v.imag())};
  } else {
    return wham_test::widen(v).real();
  }
}

template <class T>
bool fused(int m, int log_k, std::int64_t batch) {
  return m > 1 && wham::detail::wht::hadamard_m_rows_per_block<T>(m, log_k, batch) > 0;
}

template <class T>
double tolerance(int m, int log_k, std::int64_t batch) {
  if constexpr (is_16_v<T>) {
    const double u = std::is_same_v<T, __half> ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
    const int r = m == 1 ? (log_k > 15 ? 3 : 1) : fused<T>(m, log_k, batch) ? 1 : 4;
    return r * u + 1e-6;
  } else {
    return std::is_same_v<wham::fwht_scale_t<T>, float> ? 1e-5 : 1e-12;
  }
}

/// Runs wham::hadamard on `batch` random rows and checks `rows` of them (all where empty).
template <class T>
void check(int m, int log_k, std::int64_t batch, wham::hadamard_matrices set, bool transpose,
           bool in_place, std::vector<std::int64_t> rows, std::uint64_t tag) {
  const std::size_t n = std::size_t(m) << log_k;
  auto gen = wham_test::rng(tag);
  // Up to 64 random rows, repeated over a larger batch (the checked rows are sampled there).
  const std::size_t distinct = n * std::size_t(std::min<std::int64_t>(batch, 64));
  std::vector<T> host(n * batch);
  for (std::size_t i = 0; i < distinct; ++i) host[i] = random_value<T>(gen);
  for (std::size_t i = distinct; i < host.size(); i += distinct) {
    std::copy_n(host.begin(), std::min(distinct, host.size() - i), host.begin() + i);
  }
  const double scale = 1.0 / std::sqrt(double(n));

  wham_test::device_buffer<T> d_in(host);
  wham_test::device_buffer<T> d_out(in_place ? 0 : host.size());
  if (!in_place) d_out.poison();
  T* out = in_place ? d_in.data() : d_out.data();
  wham::hadamard(d_in.data(), out, m, log_k, batch, wham::fwht_scale_t<T>(scale), 0, set,
                 transpose);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = in_place ? d_in.download() : d_out.download();

  if (rows.empty()) {
    for (std::int64_t r = 0; r < batch; ++r) rows.push_back(r);
  }
  std::vector<double_of<T>> row(n);
  for (const std::int64_t r : rows) {
    for (std::size_t i = 0; i < n; ++i) row[i] = to_double(host[r * n + i]);
    const auto ref = wham::reference::hadamard_batched<double_of<T>>(row.data(), m, log_k, 1, scale,
                                                                     set, transpose);
    const double err = wham_test::relative_error(got.data() + r * n, ref.data(), n);
    CAPTURE(r, err);
    REQUIRE(err <= tolerance<T>(m, log_k, batch));
  }
}

}  // namespace

TEMPLATE_TEST_CASE("hadamard: m * 2^k rows match the reference", "[hadamard][gpu]", float, double,
                   cuda::std::complex<float>, cuda::std::complex<double>, __half, __nv_bfloat16) {
  using T = TestType;
  const int m = GENERATE(1, 12, 20, 28, 40);
  const int log_k = GENERATE(0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13);
  const std::int64_t batch = GENERATE(1, 7, 300);
  const std::size_t n = std::size_t(m) << log_k;
  if (batch > 1 && n * batch > (std::size_t(1) << 20)) return;
  if (wham_test::reduced() && (log_k > 10 || batch > 7)) return;
  // Both sets and both orientations at each size, in turn; in place every other size.
  const int variant = (log_k + int(batch % 5) + m) % 4;
  const auto set = variant & 1 ? wham::hadamard_matrices::quarot
                               : wham::hadamard_matrices::fast_hadamard_transform;
  const bool transpose = (variant & 2) != 0;
  const bool in_place = (log_k + m) % 2 == 0;
  CAPTURE(m, log_k, batch, int(set), transpose, in_place, fused<T>(m, log_k, batch),
          wham_test::seed());
  check<T>(m, log_k, batch, set, transpose, in_place, {}, 0x4AD0 + 1000 * log_k + m + batch);
}

// The split schedule where the fused one would serve: a block's shared memory is not what
// decides correctness, so rows beyond it are checked at every m with the 16-bit types.
TEMPLATE_TEST_CASE("hadamard: rows beyond one block (split schedule)", "[hadamard][gpu]", float,
                   __half, __nv_bfloat16, cuda::std::complex<double>) {
  using T = TestType;
  const int m = GENERATE(12, 20, 28, 40);
  const int log_k = GENERATE(14, 17);
  if (wham_test::reduced() && log_k > 14) return;
  const bool transpose = GENERATE(false, true);
  CAPTURE(m, log_k, transpose, fused<T>(m, log_k, 2), wham_test::seed());
  REQUIRE_FALSE(fused<T>(m, log_k, 2));
  check<T>(m, log_k, 2, wham::hadamard_matrices::quarot, transpose, log_k == 14, {},
           0x4AE0 + log_k + m);
}

// Rows of language models: head and hidden sizes, tokens 1, 7 and 8192 (sampled rows).
TEMPLATE_TEST_CASE("hadamard: the shapes of language models", "[hadamard][gpu][models]", float,
                   __half, __nv_bfloat16) {
  using T = TestType;
  struct shape {
    int m, log_k;
  };
  // 96, 128, 192, 4096, 5120 (40 * 2^7), 12288, 14336, 28672
  const auto s = GENERATE(shape{12, 3}, shape{1, 7}, shape{12, 4}, shape{1, 12}, shape{40, 7},
                          shape{12, 10}, shape{28, 9}, shape{28, 10});
  const std::int64_t tokens = GENERATE(1, 7, 8192);
  if (wham_test::reduced() && tokens > 7) return;
  CAPTURE(s.m, s.log_k, tokens, wham_test::seed());
  std::vector<std::int64_t> rows;
  if (tokens > 7) rows = {0, 1, 4095, tokens - 1};
  check<T>(s.m, s.log_k, tokens, wham::hadamard_matrices::fast_hadamard_transform, false, false,
           rows, 0x4AF0 + s.m * 100 + s.log_k);
}

TEST_CASE("hadamard: bad arguments throw wham::error before anything runs", "[hadamard][gpu]") {
  wham_test::device_buffer<float> d(std::size_t(40) << 10);
  d.poison();
  const auto before = d.download();
  float* p = d.data();
  CHECK_THROWS_AS(wham::hadamard(p, p, 24, 3, 1), wham::error);
  CHECK_THROWS_AS(wham::hadamard(p, p, 0, 3, 1), wham::error);
  CHECK_THROWS_AS(wham::hadamard(p, p, 12, -1, 1), wham::error);
  CHECK_THROWS_AS(wham::hadamard(p, p, 12, 26, 1), wham::error);
  CHECK_THROWS_AS(wham::hadamard(p, p, 1, 31, 1), wham::error);
  CHECK_THROWS_AS(wham::hadamard(p, p, 12, 3, -1), wham::error);
  CHECK_NOTHROW(wham::hadamard(p, p, 12, 3, 0));  // batch = 0: a no-op
  CHECK_THROWS_AS(wham::hadamard(p, p, 12, 3, 1, 1.0f, 0, static_cast<wham::hadamard_matrices>(2)),
                  wham::error);
  CHECK_THROWS_AS(wham::hadamard(p, p + 1, 12, 3, 2), wham::error);  // partial overlap
  CHECK_THROWS_AS(wham::hadamard<float>(nullptr, p, 12, 3, 1), wham::error);
  try {
    wham::hadamard(p, p, 24, 3, 1);
  } catch (const wham::error& e) {
    const std::string what = e.what();
    CHECK(what.find("m") != std::string::npos);
    CHECK(what.find("24") != std::string::npos);
    CHECK(what.find("1, 12, 20, 28 or 40") != std::string::npos);
  }
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const auto after = d.download();
  REQUIRE(std::equal(before.begin(), before.end(), after.begin(),
                     [](float a, float b) { return std::isnan(a) && std::isnan(b); }));
}
