// Host-run checks of the IQP encoder's device building blocks:
//  - the phases' sine and cosine (detail/iqp/phase.cuh, sincos_reduced) against the
//    long-double library functions over the arguments the encoder meets (|theta| up to
//    thousands) and beyond, in every quadrant and at its edges, and the exact
//    symmetries (odd sine, even cosine) that a wrong quadrant sign would break; the exact
//    reduction (detail/iqp/angle.cuh, reduce_exact) of angles up to the largest double;
//  - the shared memory the fused and cluster launches ask for (the padded segments
//    and the phases' warp tables, at the iqp variant's largest tables) fits every
//    opt-in limit of compute capability 8.0 and later wherever dispatch would pick them.
#include <wham/iqp.cuh>

#include "catch.hpp"
#include "test_util.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

namespace {

// Absolute error bound: the polynomials' truncation is below 1e-16 and the reduction
// by pi/2 in two doubles is exact to far below that for |theta| < 2^20; what is left is
// a few roundings of values of at most 1.
constexpr double tolerance = 4e-16;

void check_one(double theta) {
  double s = 0.0, c = 0.0;
  wham::detail::iqp::sincos_reduced(theta, &s, &c);
  const long double t = theta;
  CAPTURE(theta, s, c);
  REQUIRE(std::fabs(double(std::sin(t) - (long double)s)) <= tolerance);
  REQUIRE(std::fabs(double(std::cos(t) - (long double)c)) <= tolerance);
  double s2 = 0.0, c2 = 0.0;
  wham::detail::iqp::sincos_reduced(-theta, &s2, &c2);
  // Bitwise: the reduction, the polynomials and the signs are all symmetric.
  REQUIRE(std::memcmp(&s2, &s, sizeof s) != 0);  // -s differs from s in the sign bit at least
  const double minus_s = -s;
  REQUIRE(std::memcmp(&s2, &minus_s, sizeof s) == 0);
  REQUIRE(std::memcmp(&c2, &c, sizeof c) == 0);
}

}  // namespace

TEST_CASE("iqp phases: sincos_reduced against the library, every quadrant", "[iqp][cpu]") {
  const double scale = GENERATE(1.0, 10.0, 1e3, 1e6);
  CAPTURE(scale);
  auto gen = wham_test::rng(std::uint64_t(scale));
  std::uniform_real_distribution<double> dist(-scale, scale);
  for (int i = 0; i < 20000; ++i) check_one(dist(gen));
}

TEST_CASE("iqp phases: sincos_reduced at and beside the quadrant edges", "[iqp][cpu]") {
  const double half_pi = 1.5707963267948966;
  for (int k = -64; k <= 64; ++k) {
    for (double d :
         {0.0, 1e-300, 1e-12, -1e-12, 0.25, -0.25, 0.7853981633974483, -0.7853981633974483}) {
      if (k == 0 && d == 0.0) continue;  // 0: exact values, below
      check_one(k * half_pi + d);
    }
  }
  // Exact values where the reduction leaves zero.
  double s = 1.0, c = 0.0;
  wham::detail::iqp::sincos_reduced(0.0, &s, &c);
  REQUIRE(s == 0.0);
  REQUIRE_FALSE(std::signbit(s));
  REQUIRE(c == 1.0);
  wham::detail::iqp::sincos_reduced(-0.0, &s, &c);  // sin(-0) comes out +0: the same phase
  REQUIRE(s == 0.0);
  REQUIRE(c == 1.0);
}

TEST_CASE("iqp phases: the signs of each quadrant", "[iqp][cpu]") {
  // Quadrant q of [q pi/2 - pi/4, q pi/2 + pi/4): sin ~ (0, 1, 0, -1), cos ~ (1, 0, -1, 0).
  const double half_pi = 1.5707963267948966;
  for (int q = -8; q <= 8; ++q) {
    double s = 0.0, c = 0.0;
    wham::detail::iqp::sincos_reduced(q * half_pi + 0.5, &s, &c);
    const int m = ((q % 4) + 4) % 4;
    CAPTURE(q, s, c);
    REQUIRE((m == 1   ? s > 0.8
             : m == 3 ? s < -0.8
                      : std::fabs(s - (m == 0 ? 0.479 : -0.479)) < 1e-3));
    REQUIRE((m == 0   ? c > 0.8
             : m == 2 ? c < -0.8
                      : std::fabs(c - (m == 1 ? -0.479 : 0.479)) < 1e-3));
  }
}

namespace {

/// sin and cos as the phases make them at any angle (within: exact reduction beyond the
/// fast one's range), against the C library's, which reduces every double exactly.
void check_any(double theta, double limit = wham::detail::iqp::fast_reduction_limit) {
  namespace iqp = wham::detail::iqp;
  const double reduced = iqp::within(theta, limit);
  double s = 0.0, c = 0.0;
  iqp::sincos_reduced(reduced, &s, &c);
  CAPTURE(theta, reduced);
  REQUIRE(std::fabs(reduced) <= (std::fabs(theta) > limit ? 3.93 : std::fabs(theta)));
  REQUIRE(std::fabs(s - std::sin(theta)) <= 2e-15);
  REQUIRE(std::fabs(c - std::cos(theta)) <= 2e-15);
}

}  // namespace

TEST_CASE("iqp phases: any finite angle is reduced exactly", "[iqp][cpu]") {
  // sincos_reduced alone does not serve these: from about 3.5e15 radians its shifter no
  // longer rounds theta * 2/pi to an integer, and sine and cosine lose modulus 1.
  namespace iqp = wham::detail::iqp;
  for (const double theta : {1e15, 3.6e16, 1e17, 2e18, 1e300, -2e18, 0x1p51, 0x1p52, 0x1p53,
                             0x1.fffffffffffffp1023, -0x1.fffffffffffffp1023}) {
    check_any(theta);
  }
  // The double nearest a multiple of pi/2, 6381956970095103 * 2^797 (about 5.3e255; its
  // remainder is 4.7e-19): the reduction needs 2/pi's bits far below the product's top.
  check_any(std::ldexp(6381956970095103.0, 797));
  check_any(-std::ldexp(6381956970095103.0, 797));
  // Every binade above the complex64 reduction's limit, random mantissas and signs.
  auto gen = wham_test::rng(5150);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int e = 28; e <= 1023; ++e) {
    for (int i = 0; i < 40; ++i) {
      const double theta = std::ldexp(mantissa(gen), e) * (i % 2 != 0 ? -1.0 : 1.0);
      CAPTURE(e);
      check_any(theta, iqp::float_reduction_limit);
      // Odd: a sign error in the product's bookkeeping would break it.
      REQUIRE(iqp::reduce_exact(-theta) == -iqp::reduce_exact(theta));
    }
  }
  // Infinities and NaN give NaN; angles within the limit pass through untouched.
  REQUIRE(std::isnan(iqp::within(INFINITY, iqp::fast_reduction_limit)));
  REQUIRE(std::isnan(iqp::within(-INFINITY, iqp::float_reduction_limit)));
  REQUIRE(std::isnan(iqp::within(NAN, iqp::fast_reduction_limit)));
  REQUIRE(iqp::within(123.25, iqp::float_reduction_limit) == 123.25);
}

namespace {

namespace wht = wham::detail::wht;
namespace iqp = wham::detail::iqp;

/// The iqp variant's input for rows of N qubits (the largest tables: every pair).
template <class V, int N>
iqp::phase_input<double, V, N> worst_input() {
  return {nullptr, N + N * (N - 1) / 2, N, true, 1};
}

/// Bytes of the one-block fused launch for rows of N qubits, at the most segments a block.
template <class V, int N>
std::size_t fused_bytes() {
  using shape = wht::fused_shape_for<V, N, iqp::phase_input<double, V, N>>;
  const std::size_t b =
      wht::fused_block_smem<V, N>(worst_input<V, N>(), shape::segments_per_block).bytes;
  return b > shape::smem_bytes ? b : shape::smem_bytes;
}

/// Bytes of a cluster launch's block: parts of 2^LogS of a row of N qubits.
template <class V, int LogS, int N>
std::size_t cluster_bytes() {
  return wht::fused_block_smem<V, LogS>(worst_input<V, N>(), 1).bytes;
}

template <class V, int... I>
std::size_t fused_bytes_at(int n, std::integer_sequence<int, I...>) {
  std::size_t r = 0;
  ((n == I + 1 ? (r = fused_bytes<V, I + 1>(), 0) : 0), ...);
  return r;
}

/// Opt-in shared memory a block (bytes) by compute capability: 8.6, 8.9, 12.x; 8.0, 8.7;
/// 9.0, 10.x.
constexpr std::size_t optin_limits[] = {101376, 166912, 232448};

template <class V>
void check_launches_fit() {
  constexpr int M = iqp::fused_compiled_max<V>;
  for (const std::size_t limit : optin_limits) {
    const int dev = wht::fused_max_log_n_for<V>(limit);
    const int block = dev < M ? dev : M;  // iqp::block_max_qubits on such a device
    CAPTURE(sizeof(V), limit, block);
    for (int n = 1; n <= block; ++n) {
      CAPTURE(n);
      REQUIRE(fused_bytes_at<V>(n, std::make_integer_sequence<int, M>{}) <= limit);
    }
    if (block < M) continue;  // no clusters (wht::fused_cluster_max_log_n)
    // Every cluster launch iqp::launch_fused_path and launch_beyond_block make.
    REQUIRE(cluster_bytes<V, M - 2, M>() <= limit);
    REQUIRE(cluster_bytes<V, M - 1, M>() <= limit);
    REQUIRE(cluster_bytes<V, M - 3, M - 1>() <= limit);
    REQUIRE(cluster_bytes<V, M - 1, M + 1>() <= limit);
    REQUIRE(cluster_bytes<V, M, M + 1>() <= limit);
    REQUIRE(cluster_bytes<V, M - 1, M + 2>() <= limit);
  }
  // The documented floor on an H200 (227 KB): complex128 to n = 13, complex64 to 14 in one
  // block.
  REQUIRE(wht::fused_max_log_n_for<V>(232448) >= M);
}

}  // namespace

TEMPLATE_TEST_CASE("iqp fused and cluster launches fit the shared memory dispatch assumes",
                   "[iqp][cpu]", cuda::std::complex<float>, cuda::std::complex<double>) {
  check_launches_fit<TestType>();
}
