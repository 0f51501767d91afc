// The m * 2^k Hadamard transform's matrices and host reference (no GPU):
//   - each H_m table of wham/detail/wht/hadamard_matrices.hpp, entry by entry, against the
//     published matrices written out below as text (row a: m characters, '+' or '-'),
//     transcribed from fast-hadamard-transform 1.1 (csrc/code_gen.py: had_12_paley,
//     had_20_will, had_28_will, had_40_tpal) and QuaRot (hadamard_utils.py: get_had12,
//     get_had20, get_had28, get_had40);
//   - H H^T = m I for each (a transposed or mis-signed row breaks it), the symmetries the
//     documentation states, and had.40.tpal = H_2 (x) QuaRot's H_20;
//   - reference::hadamard_batched against the definition, and the transposed call as the
//     inverse.
#include <wham/reference/fwht.hpp>

#include "catch.hpp"
#include "test_util.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using wham::hadamard_matrices;

struct published {
  int m;
  hadamard_matrices set;
  std::vector<std::string> rows;
};

// clang-format off
const std::vector<published>& published_matrices() {
  static const std::vector<published> all = {
    {12, hadamard_matrices::fast_hadamard_transform, {
        "+-++++++++++",
        "--+-+-+-+-+-",
        "+++-++----++",
        "+---+--+-++-",
        "+++++-++----",
        "+-+---+--+-+",
        "++--+++-++--",
        "+--++---+--+",
        "++----+++-++",
        "+--+-++---+-",
        "++++----+++-",
        "+-+--+-++---",
    }},
    {20, hadamard_matrices::fast_hadamard_transform, {
        "+----+----++--++-++-",
        "-+----+---+++---+-++",
        "--+----+---+++-+-+-+",
        "---+----+---+++++-+-",
        "----+----++--++-++-+",
        "-+++++-----+--+++--+",
        "+-+++-+---+-+--+++--",
        "++-++--+---+-+--+++-",
        "+++-+---+---+-+--+++",
        "++++-----++--+-+--++",
        "--++-+-++-+-----++++",
        "---++-+-++-+---+-+++",
        "+---++-+-+--+--++-++",
        "++---++-+----+-+++-+",
        "-++---++-+----+++++-",
        "-+--+--++-+----+----",
        "+-+-----++-+----+---",
        "-+-+-+---+--+----+--",
        "--+-+++------+----+-",
        "+--+--++------+----+",
    }},
    {28, hadamard_matrices::fast_hadamard_transform, {
        "+------++----++-+--+-+--++--",
        "-+-----+++-----+-+--+-+--++-",
        "--+-----+++---+-+-+----+--++",
        "---+-----+++---+-+-+-+--+--+",
        "----+-----+++---+-+-+++--+--",
        "-----+-----++++--+-+--++--+-",
        "------++----++-+--+-+--++--+",
        "--++++-+-------++--+++-+--+-",
        "---++++-+-----+-++--+-+-+--+",
        "+---+++--+----++-++--+-+-+--",
        "++---++---+----++-++--+-+-+-",
        "+++---+----+----++-++--+-+-+",
        "++++--------+-+--++-++--+-+-",
        "-++++--------+++--++--+--+-+",
        "-+-++-++--++--+--------++++-",
        "+-+-++--+--++--+--------++++",
        "-+-+-++--+--++--+----+---+++",
        "+-+-+-++--+--+---+---++---++",
        "++-+-+-++--+------+--+++---+",
        "-++-+-+-++--+------+-++++---",
        "+-++-+---++--+------+-++++--",
        "-++--++-+-++-+++----++------",
        "+-++--++-+-++-+++-----+-----",
        "++-++---+-+-++-+++-----+----",
        "-++-++-+-+-+-+--+++-----+---",
        "--++-++++-+-+----+++-----+--",
        "+--++-+-++-+-+----+++-----+-",
        "++--++-+-++-+-+----++------+",
    }},
    {40, hadamard_matrices::fast_hadamard_transform, {
        "+-------------------+-------------------",
        "++-++----+-+-++++--+++-++----+-+-++++--+",
        "+++-++----+-+-++++--+++-++----+-+-++++--",
        "+-++-++----+-+-++++-+-++-++----+-+-++++-",
        "+--++-++----+-+-+++++--++-++----+-+-++++",
        "++--++-++----+-+-+++++--++-++----+-+-+++",
        "+++--++-++----+-+-+++++--++-++----+-+-++",
        "++++--++-++----+-+-+++++--++-++----+-+-+",
        "+++++--++-++----+-+-+++++--++-++----+-+-",
        "+-++++--++-++----+-++-++++--++-++----+-+",
        "++-++++--++-++----+-++-++++--++-++----+-",
        "+-+-++++--++-++----++-+-++++--++-++----+",
        "++-+-++++--++-++----++-+-++++--++-++----",
        "+-+-+-++++--++-++---+-+-+-++++--++-++---",
        "+--+-+-++++--++-++--+--+-+-++++--++-++--",
        "+---+-+-++++--++-++-+---+-+-++++--++-++-",
        "+----+-+-++++--++-+++----+-+-++++--++-++",
        "++----+-+-++++--++-+++----+-+-++++--++-+",
        "+++----+-+-++++--++-+++----+-+-++++--++-",
        "+-++----+-+-++++--+++-++----+-+-++++--++",
        "+--------------------+++++++++++++++++++",
        "++-++----+-+-++++--+--+--++++-+-+----++-",
        "+++-++----+-+-++++-----+--++++-+-+----++",
        "+-++-++----+-+-++++--+--+--++++-+-+----+",
        "+--++-++----+-+-++++-++--+--++++-+-+----",
        "++--++-++----+-+-+++--++--+--++++-+-+---",
        "+++--++-++----+-+-++---++--+--++++-+-+--",
        "++++--++-++----+-+-+----++--+--++++-+-+-",
        "+++++--++-++----+-+------++--+--++++-+-+",
        "+-++++--++-++----+-+-+----++--+--++++-+-",
        "++-++++--++-++----+---+----++--+--++++-+",
        "+-+-++++--++-++----+-+-+----++--+--++++-",
        "++-+-++++--++-++------+-+----++--+--++++",
        "+-+-+-++++--++-++----+-+-+----++--+--+++",
        "+--+-+-++++--++-++---++-+-+----++--+--++",
        "+---+-+-++++--++-++--+++-+-+----++--+--+",
        "+----+-+-++++--++-++-++++-+-+----++--+--",
        "++----+-+-++++--++-+--++++-+-+----++--+-",
        "+++----+-+-++++--++----++++-+-+----++--+",
        "+-++----+-+-++++--++-+--++++-+-+----++--",
    }},
    {12, hadamard_matrices::quarot, {
        "+-----------",
        "++-+---+++-+",
        "+++-+---+++-",
        "+-++-+---+++",
        "++-++-+---++",
        "+++-++-+---+",
        "++++-++-+---",
        "+-+++-++-+--",
        "+--+++-++-+-",
        "+---+++-++-+",
        "++---+++-++-",
        "+-+---+++-++",
    }},
    {20, hadamard_matrices::quarot, {
        "+-------------------",
        "++-++----+-+-++++--+",
        "+++-++----+-+-++++--",
        "+-++-++----+-+-++++-",
        "+--++-++----+-+-++++",
        "++--++-++----+-+-+++",
        "+++--++-++----+-+-++",
        "++++--++-++----+-+-+",
        "+++++--++-++----+-+-",
        "+-++++--++-++----+-+",
        "++-++++--++-++----+-",
        "+-+-++++--++-++----+",
        "++-+-++++--++-++----",
        "+-+-+-++++--++-++---",
        "+--+-+-++++--++-++--",
        "+---+-+-++++--++-++-",
        "+----+-+-++++--++-++",
        "++----+-+-++++--++-+",
        "+++----+-+-++++--++-",
        "+-++----+-+-++++--++",
    }},
    {28, hadamard_matrices::quarot, {
        "++++++++++++++-+++++++++++++",
        "+++-++----++-++-+-++----++-+",
        "++++-++----++-++-+-++----++-",
        "+-+++-++----+++-+-+-++----++",
        "++-+++-++----+++-+-+-++----+",
        "+++-+++-++----+++-+-+-++----",
        "+-++-+++-++---+-++-+-+-++---",
        "+--++-+++-++--+--++-+-+-++--",
        "+---++-+++-++-+---++-+-+-++-",
        "+----++-+++-+++----++-+-+-++",
        "++----++-+++-+++----++-+-+-+",
        "+++----++-+++-+++----++-+-+-",
        "+-++----++-++++-++----++-+-+",
        "++-++----++-++++-++----++-+-",
        "-+++++++++++++--------------",
        "+-+-++----++-+---+--++++--+-",
        "++-+-++----++-----+--++++--+",
        "+-+-+-++----++-+---+--++++--",
        "++-+-+-++----+--+---+--++++-",
        "+++-+-+-++-------+---+--++++",
        "+-++-+-+-++----+--+---+--+++",
        "+--++-+-+-++---++--+---+--++",
        "+---++-+-+-++--+++--+---+--+",
        "+----++-+-+-++-++++--+---+--",
        "++----++-+-+-+--++++--+---+-",
        "+++----++-+-+----++++--+---+",
        "+-++----++-+-+-+--++++--+---",
        "++-++----++-+---+--++++--+--",
    }},
    {40, hadamard_matrices::quarot, {
        "+-------------------+-------------------",
        "++-++----+-+-++++--+++-++----+-+-++++--+",
        "+++-++----+-+-++++--+++-++----+-+-++++--",
        "+-++-++----+-+-++++-+-++-++----+-+-++++-",
        "+--++-++----+-+-+++++--++-++----+-+-++++",
        "++--++-++----+-+-+++++--++-++----+-+-+++",
        "+++--++-++----+-+-+++++--++-++----+-+-++",
        "++++--++-++----+-+-+++++--++-++----+-+-+",
        "+++++--++-++----+-+-+++++--++-++----+-+-",
        "+-++++--++-++----+-++-++++--++-++----+-+",
        "++-++++--++-++----+-++-++++--++-++----+-",
        "+-+-++++--++-++----++-+-++++--++-++----+",
        "++-+-++++--++-++----++-+-++++--++-++----",
        "+-+-+-++++--++-++---+-+-+-++++--++-++---",
        "+--+-+-++++--++-++--+--+-+-++++--++-++--",
        "+---+-+-++++--++-++-+---+-+-++++--++-++-",
        "+----+-+-++++--++-+++----+-+-++++--++-++",
        "++----+-+-++++--++-+++----+-+-++++--++-+",
        "+++----+-+-++++--++-+++----+-+-++++--++-",
        "+-++----+-+-++++--+++-++----+-+-++++--++",
        "+--------------------+++++++++++++++++++",
        "++-++----+-+-++++--+--+--++++-+-+----++-",
        "+++-++----+-+-++++-----+--++++-+-+----++",
        "+-++-++----+-+-++++--+--+--++++-+-+----+",
        "+--++-++----+-+-++++-++--+--++++-+-+----",
        "++--++-++----+-+-+++--++--+--++++-+-+---",
        "+++--++-++----+-+-++---++--+--++++-+-+--",
        "++++--++-++----+-+-+----++--+--++++-+-+-",
        "+++++--++-++----+-+------++--+--++++-+-+",
        "+-++++--++-++----+-+-+----++--+--++++-+-",
        "++-++++--++-++----+---+----++--+--++++-+",
        "+-+-++++--++-++----+-+-+----++--+--++++-",
        "++-+-++++--++-++------+-+----++--+--++++",
        "+-+-+-++++--++-++----+-+-+----++--+--+++",
        "+--+-+-++++--++-++---++-+-+----++--+--++",
        "+---+-+-++++--++-++--+++-+-+----++--+--+",
        "+----+-+-++++--++-++-++++-+-+----++--+--",
        "++----+-+-++++--++-+--++++-+-+----++--+-",
        "+++----+-+-++++--++----++++-+-+----++--+",
        "+-++----+-+-++++--++-+--++++-+-+----++--",
    }},
  };
  return all;
}
// clang-format on

}  // namespace

TEST_CASE("hadamard matrices: every entry as published", "[hadamard][host]") {
  for (const auto& p : published_matrices()) {
    CAPTURE(p.m, int(p.set));
    REQUIRE(p.rows.size() == std::size_t(p.m));
    for (int a = 0; a < p.m; ++a) {
      REQUIRE(p.rows[a].size() == std::size_t(p.m));
      for (int j = 0; j < p.m; ++j) {
        CAPTURE(a, j);
        REQUIRE(wham::reference::hadamard_entry(p.m, p.set, a, j) ==
                (p.rows[a][j] == '+' ? 1 : -1));
      }
    }
  }
}

TEST_CASE("hadamard matrices: H H^T = m I, and the stated symmetries", "[hadamard][host]") {
  using wham::reference::hadamard_entry;
  for (const auto set : {hadamard_matrices::fast_hadamard_transform, hadamard_matrices::quarot}) {
    for (const int m : {12, 20, 28, 40}) {
      CAPTURE(m, int(set));
      bool symmetric = true;
      for (int a = 0; a < m; ++a) {
        for (int b = 0; b < m; ++b) {
          int dot = 0;
          for (int j = 0; j < m; ++j)
            dot += hadamard_entry(m, set, a, j) * hadamard_entry(m, set, b, j);
          CAPTURE(a, b);
          REQUIRE(dot == (a == b ? m : 0));
          symmetric = symmetric && hadamard_entry(m, set, a, b) == hadamard_entry(m, set, b, a);
        }
      }
      // wham/hadamard.cuh: only fast-hadamard-transform's 12 and QuaRot's 28 are symmetric.
      const bool documented = (set == hadamard_matrices::fast_hadamard_transform && m == 12) ||
                              (set == hadamard_matrices::quarot && m == 28);
      CHECK(symmetric == documented);
    }
  }
  // Both sets' H_40 is had.40.tpal = H_2 (x) QuaRot's H_20 (Paley I, q = 19).
  for (int a = 0; a < 40; ++a) {
    for (int j = 0; j < 40; ++j) {
      CAPTURE(a, j);
      const int h2 = (a >= 20 && j >= 20) ? -1 : 1;
      const int kron = h2 * hadamard_entry(20, hadamard_matrices::quarot, a % 20, j % 20);
      REQUIRE(hadamard_entry(40, hadamard_matrices::quarot, a, j) == kron);
      REQUIRE(hadamard_entry(40, hadamard_matrices::fast_hadamard_transform, a, j) == kron);
    }
  }
}

TEST_CASE("hadamard reference: the definition, and the transposed call as the inverse",
          "[hadamard][host]") {
  using wham::reference::hadamard_entry;
  const int m = GENERATE(1, 12, 20, 28, 40);
  const int log_k = GENERATE(0, 1, 3, 5);
  const auto set = GENERATE(hadamard_matrices::fast_hadamard_transform, hadamard_matrices::quarot);
  const bool transpose = GENERATE(false, true);
  CAPTURE(m, log_k, int(set), transpose, wham_test::seed());
  const std::size_t seg = std::size_t(1) << log_k, n = seg * std::size_t(m);
  const std::int64_t batch = 2;
  auto gen = wham_test::rng(0x4ad + 100 * m + log_k);
  std::normal_distribution<double> normal;
  std::vector<double> x(n * batch);
  for (auto& v : x) v = normal(gen);
  const double scale = 0.5;
  const auto got =
      wham::reference::hadamard_batched<double>(x.data(), m, log_k, batch, scale, set, transpose);
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::size_t i = 0; i < n; ++i) {
      const int a = int(i / seg);
      const std::size_t c = i % seg;
      double want = 0.0;
      for (std::size_t k = 0; k < n; ++k) {
        const int a2 = int(k / seg);
        const std::size_t b2 = k % seg;
        const int h = m == 1      ? 1
                      : transpose ? hadamard_entry(m, set, a2, a)
                                  : hadamard_entry(m, set, a, a2);
        const int s = wham::reference::parity(b2 & c) ? -h : h;
        want += s * x[b * n + k];
      }
      CAPTURE(b, i);
      REQUIRE(std::fabs(got[b * n + i] - scale * want) <= 1e-12 * std::sqrt(double(n)) * 8);
    }
  }
  // H (H^T x) = n x: the transposed call undoes the other.
  const auto back = wham::reference::hadamard_batched<double>(
      got.data(), m, log_k, batch, 1.0 / (scale * double(n)), set, !transpose);
  REQUIRE(wham_test::relative_error(back.data(), x.data(), x.size()) <= 1e-13);
}

namespace {

/// The kernels' mixing of one column by H_m (hadamard_m_mix, run here on the host in R)
/// against the signed sums in double: the same infinities and NaN, the finite values within
/// rounding.
template <int M, class R>
void check_mix_with_infinities(hadamard_matrices set, bool transpose, std::mt19937_64& gen) {
  using wham::reference::hadamard_entry;
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> pick(0, M - 1);
  const double inf = INFINITY;
  for (int trial = 0; trial < 64; ++trial) {
    R x[M];
    for (auto& v : x) v = R(normal(gen));
    // trial 0: finite; then one to three infinities of either sign, now and then a NaN
    const int count = trial == 0 ? 0 : 1 + trial % 3;
    for (int k = 0; k < count; ++k) x[pick(gen)] = R((trial + k) % 2 ? -inf : inf);
    if (trial % 16 == 15) x[pick(gen)] = R(NAN);
    R y[M];
    const auto store = [&](int a, R v) { y[a] = v; };
    if (set == hadamard_matrices::fast_hadamard_transform) {
      if (transpose) {
        wham::detail::wht::hadamard_m_mix<M, 0, true, R>(x, store);
      } else {
        wham::detail::wht::hadamard_m_mix<M, 0, false, R>(x, store);
      }
    } else if (transpose) {
      wham::detail::wht::hadamard_m_mix<M, 1, true, R>(x, store);
    } else {
      wham::detail::wht::hadamard_m_mix<M, 1, false, R>(x, store);
    }
    for (int a = 0; a < M; ++a) {
      double want = 0.0, size = 0.0;
      for (int j = 0; j < M; ++j) {
        const int h = transpose ? hadamard_entry(M, set, j, a) : hadamard_entry(M, set, a, j);
        want += h * double(x[j]);
        size += std::fabs(double(x[j]));
      }
      CAPTURE(M, int(set), transpose, trial, a, want, double(y[a]));
      if (std::isnan(want)) {
        REQUIRE(std::isnan(y[a]));
      } else if (std::isinf(want)) {
        REQUIRE(double(y[a]) == want);
      } else {
        REQUIRE(std::fabs(double(y[a]) - want) <=
                8 * double(std::numeric_limits<R>::epsilon()) * size);
      }
    }
  }
}

}  // namespace

TEMPLATE_TEST_CASE("hadamard: H_m's mixing gives the exact sum's infinities, NaN only where "
                   "+inf and -inf meet",
                   "[hadamard][host][nonfinite]", float, double) {
  using R = TestType;
  const auto set = GENERATE(hadamard_matrices::fast_hadamard_transform, hadamard_matrices::quarot);
  const bool transpose = GENERATE(false, true);
  auto gen = wham_test::rng(0x1f8 + 2 * int(set) + transpose + sizeof(R));
  check_mix_with_infinities<12, R>(set, transpose, gen);
  check_mix_with_infinities<20, R>(set, transpose, gen);
  check_mix_with_infinities<28, R>(set, transpose, gen);
  check_mix_with_infinities<40, R>(set, transpose, gen);
}

TEST_CASE("hadamard: the common path leaves a column with an infinity to the signed sums",
          "[hadamard][host][nonfinite]") {
  // sum - 2 acc is inf - inf wherever the infinity is among the minority-sign entries: the
  // common path must not be taken for such a column.
  float x[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  x[5] = INFINITY;
  float y[12];
  const bool finite = wham::detail::wht::hadamard_m_mix_finite<12, 0, false, false, float>(
      x, [&](int a, float v) { y[a] = v; });
  CHECK_FALSE(finite);
  wham::detail::wht::hadamard_m_mix<12, 0, false, float>(x, [&](int a, float v) { y[a] = v; });
  for (int a = 0; a < 12; ++a) {
    CAPTURE(a);
    CHECK(std::isinf(y[a]));
  }
}
