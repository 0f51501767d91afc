// The device building blocks of the fused M2L (detail/m2l/blocks.cuh), run on the
// host: the whole factorised operator against the direct host reference, for
// every order the fused kernels serve, in double and float.
#include <wham/detail/arch/dispatch_int.cuh>
#include <wham/detail/fmm/class_operator.cuh>
#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/tensor.cuh>
#include <wham/detail/m2l/tensor_wide_tables.cuh>
#include <wham/reference/m2l.hpp>

#include "catch.hpp"
#include "test_util.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <vector>

namespace ref = wham::reference;
namespace arch = wham::detail::arch;
namespace fmm = wham::detail::fmm;
namespace m2l = wham::detail::m2l;

namespace {

/// Worst relative error (over 20 random pairs, a third of them on or near the z axis)
/// of m2l_inplace<P, T> against the direct reference.
template <int P, class T>
double blocks_error(std::mt19937_64& gen) {
  constexpr int C = (P + 1) * (P + 1);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double worst = 0.0;
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<ref::m2l_complex> M(C);
    m2l::cpx<T> a[C];
    for (int i = 0; i < C; ++i) {
      a[i] = {T(u(gen)), T(u(gen))};
      M[i] = {double(a[i].re), double(a[i].im)};
    }
    T d[3] = {T(u(gen)), T(u(gen)), T(u(gen) + (u(gen) > 0 ? 1.5 : -1.5))};
    if (trial % 3 == 0) d[0] = d[1] = T(0);
    if (trial % 3 == 1) {
      d[0] = T(1e-6 * u(gen));
      d[1] = T(1e-6 * u(gen));
    }
    const double dd[3] = {double(d[0]), double(d[1]), double(d[2])};
    const auto L = ref::m2l_direct(P, M.data(), dd);
    const auto dir = m2l::make_direction<P>(d[0], d[1], d[2]);
    m2l::m2l_inplace<P>(a, dir, m2l::inverse_distance(d[0], d[1], d[2]));
    std::vector<std::complex<double>> got(C);
    for (int i = 0; i < C; ++i) got[i] = {double(a[i].re), double(a[i].im)};
    worst = std::max(worst, wham_test::relative_error(got.data(), L.data(), C));
  }
  return worst;
}

template <class T, int... Ps>
void check_orders(double (*tol)(int)) {
  auto gen = wham_test::rng(sizeof(T));
  (
      [&] {
        const double err = blocks_error<Ps, T>(gen);
        std::printf("blocks %s p=%d worst err=%.3e\n", sizeof(T) == 8 ? "double" : "float", Ps,
                    err);
        CAPTURE(Ps, err, wham_test::seed());
        CHECK(err <= tol(Ps));
      }(),
      ...);
}

}  // namespace

TEST_CASE("m2l building blocks on the host: double", "[m2l][blocks]") {
  check_orders<double, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16, 20>(
      [](int p) { return p <= 12 ? 1e-13 : 1e-11; });
}

TEST_CASE("m2l building blocks on the host: float", "[m2l][blocks]") {
  check_orders<float, 0, 1, 2, 3, 4, 5, 8, 12, 16>(
      [](int p) { return p <= 8 ? 1e-4 : 1e-3; });  // measured: 7e-6 at p = 12, 9e-5 at 16
}

namespace {

/// The split schedule's per-degree steps (split.cuh: powers made on the way, each swap
/// written out by swap_store and read back) against rotate_to_z_degree /
/// rotate_from_z_degree with a table of powers: the same operations in the same
/// order, so the same bits.
template <int L, class T>
void check_split_degree(std::mt19937_64& gen) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 6; ++trial) {
    const T x = trial % 3 == 0 ? T(0) : T(u(gen)), y = trial % 3 == 0 ? T(0) : T(u(gen));
    const T z = T(u(gen) + (u(gen) > 0 ? 1.5 : -1.5));
    const auto dir = m2l::make_direction<L>(x, y, z);
    const auto ang = m2l::make_angles(x, y, z);
    const T s = T(0.5 + 0.25 * u(gen));
    m2l::cpx<T> want[2 * L + 1], v[2 * L + 1], slot[2 * L + 1];
    for (int i = 0; i < 2 * L + 1; ++i) want[i] = slot[i] = {T(u(gen)), T(u(gen))};
    // to z, then the r-scaling
    m2l::rotate_to_z_degree<L>(want, dir);
    for (auto& w : want) w = m2l::scale(w, s);
    for (int i = 0; i < 2 * L + 1; ++i) v[i] = slot[i];
    m2l::dz_powers_inplace<L, false>(v, ang.ea);
    m2l::swap_store<L, true, m2l::swap_post::dz, false>(v, slot, ang.eb, T(1));
    for (int i = 0; i < 2 * L + 1; ++i) v[i] = slot[i];
    m2l::swap_store<L, true, m2l::swap_post::none, true>(v, slot, ang.eb, s);
    bool same = true;
    for (int i = 0; i < 2 * L + 1; ++i)
      same = same && want[i].re == slot[i].re && want[i].im == slot[i].im;
    CAPTURE(L, trial, wham_test::seed());
    CHECK(same);
    // and back
    m2l::rotate_from_z_degree<L>(want, dir);
    for (int i = 0; i < 2 * L + 1; ++i) v[i] = slot[i];
    m2l::swap_store<L, false, m2l::swap_post::dz_conj, false>(v, slot, ang.eb, T(1));
    for (int i = 0; i < 2 * L + 1; ++i) v[i] = slot[i];
    m2l::swap_store<L, false, m2l::swap_post::dz_conj, false>(v, slot, ang.ea, T(1));
    for (int i = 0; i < 2 * L + 1; ++i)
      same = same && want[i].re == slot[i].re && want[i].im == slot[i].im;
    CHECK(same);
  }
}

template <class T, int... Ls>
void check_split_degrees() {
  auto gen = wham_test::rng(31 + sizeof(T));
  (check_split_degree<Ls, T>(gen), ...);
}

}  // namespace

TEST_CASE("m2l split-schedule rotations equal the table-of-powers rotations bit for bit",
          "[m2l][blocks]") {
  check_split_degrees<double, 0, 1, 2, 3, 5, 8, 12>();
  check_split_degrees<float, 0, 1, 4, 7, 12>();
}

namespace {

/// The class operator (class_operator.cuh: real d_l per degree, Psi, z-translation), as
/// the grouped class kernel runs it on one column, against the direct reference: worst
/// relative error over random multipoles and displacements (on and near the z axis,
/// both signs of z, and general ones).
template <int P, class T>
double class_operator_error(std::mt19937_64& gen) {
  constexpr int C = (P + 1) * (P + 1);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double* folded = m2l::swap_constants<double>().b;
  const T* fact = m2l::swap_constants<T>().fact;
  double worst = 0.0;
  for (int trial = 0; trial < 12; ++trial) {
    T d[3] = {T(u(gen)), T(u(gen)), T(u(gen) + (u(gen) > 0 ? 1.5 : -1.5))};
    if (trial % 3 == 0) d[0] = d[1] = T(0);
    if (trial % 3 == 1) {
      d[0] = T(1e-6 * u(gen));
      d[1] = T(1e-6 * u(gen));
    }
    const auto g = fmm::make_class_geometry(double(d[0]), double(d[1]), double(d[2]));
    m2l::cpx<double> pb[P + 1];
    m2l::cpx<T> psi[P + 1];
    T ir[P + 2];
    m2l::cpx<double> b{1.0, 0.0}, s{1.0, 0.0};
    double r = 1.0;
    for (int k = 0; k <= P + 1; ++k) {
      if (k <= P) {
        pb[k] = b;
        psi[k] = {T(s.re), T(s.im)};
      }
      ir[k] = T(r);
      b = b * g.eb;
      s = s * g.psi;
      r *= g.inv_r;
    }
    std::vector<T> dm(std::size_t(fmm::fold_offset(P + 1)));
    for (int l = 0; l <= P; ++l)
      for (int k = 0; k < fmm::fold_offset(l + 1) - fmm::fold_offset(l); ++k)
        dm[std::size_t(fmm::fold_offset(l) + k)] = T(fmm::class_fold_entry(folded, l, k, pb));
    std::vector<ref::m2l_complex> M(C);
    std::vector<m2l::cpx<T>> col(C);
    for (int i = 0; i < C; ++i) {
      col[std::size_t(i)] = {T(u(gen)), T(u(gen))};
      M[std::size_t(i)] = {double(col[std::size_t(i)].re), double(col[std::size_t(i)].im)};
    }
    m2l::static_for<0, P + 1>([&](auto Lc) {
      fmm::class_forward_degree<decltype(Lc)::value>(col.data(), 1, dm.data(), psi, ir[Lc + 1]);
    });
    std::vector<std::complex<double>> got(C);
    m2l::static_for<0, P + 1>([&](auto Lc) {
      fmm::class_backward_degree<decltype(Lc)::value>(
          col.data(), 1, P, dm.data(), psi, ir, fact,
          [&](int c, m2l::cpx<T> v0, m2l::cpx<T> v1, bool two) {
            got[std::size_t(c)] = {double(v0.re), double(v0.im)};
            if (two) got[std::size_t(c) + 1] = {double(v1.re), double(v1.im)};
          });
    });
    const double dd[3] = {double(d[0]), double(d[1]), double(d[2])};
    const auto want = ref::m2l_direct(P, M.data(), dd);
    worst = std::max(worst, wham_test::relative_error(got.data(), want.data(), C));
  }
  return worst;
}

template <class T, int... Ps>
void check_class_operator(double (*tol)(int)) {
  auto gen = wham_test::rng(57 + sizeof(T));
  (
      [&] {
        const double err = class_operator_error<Ps, T>(gen);
        std::printf("class operator %s p=%d worst err=%.3e\n", sizeof(T) == 8 ? "double" : "float",
                    Ps, err);
        CAPTURE(Ps, err, wham_test::seed());
        CHECK(err <= tol(Ps));
      }(),
      ...);
}

}  // namespace

TEST_CASE("m2l class operator (real d matrices) on the host", "[m2l][blocks]") {
  check_class_operator<double, 0, 1, 2, 3, 5, 8, 12, 16>(
      [](int p) { return p <= 12 ? 1e-13 : 1e-11; });
  check_class_operator<float, 1, 4, 8, 12, 16>([](int p) { return p <= 8 ? 1e-4 : 1e-3; });
}

namespace {
/// e^{i k beta}, k = 0..16, of a class geometry (class_dmat_entry's `pb`).
std::array<m2l::cpx<double>, 17> beta_powers(const fmm::class_geometry& g) {
  std::array<m2l::cpx<double>, 17> pb;
  m2l::cpx<double> b{1.0, 0.0};
  for (auto& v : pb) {
    v = b;
    b = b * g.eb;
  }
  return pb;
}
}  // namespace

TEST_CASE("m2l class operator: d_l has the parity its folded table relies on", "[m2l][blocks]") {
  // d_l[-i][-j] = (-1)^(i+j) d_l[i][j]; a sign or index slip in the table would break it
  // for some (l, i, j), and the folded products would be wrong there.
  auto gen = wham_test::rng(91);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double* folded = m2l::swap_constants<double>().b;
  for (int trial = 0; trial < 6; ++trial) {
    const double x = u(gen), y = trial == 0 ? 0.0 : u(gen), z = u(gen);
    const auto pb = beta_powers(fmm::make_class_geometry(trial == 0 ? 0.0 : x, y, z));
    for (int l = 0; l <= 16; ++l) {
      double worst = 0.0, scale = 0.0;
      for (int i = -l; i <= l; ++i)
        for (int j = -l; j <= l; ++j) {
          const double a = fmm::class_dmat_entry(folded, l, i, j, pb.data());
          const double m = fmm::class_dmat_entry(folded, l, -i, -j, pb.data());
          worst = std::max(worst, std::abs(m - (((i + j) & 1) ? -a : a)));
          scale = std::max(scale, std::abs(a));
        }
      CAPTURE(trial, l, worst, scale, wham_test::seed());
      CHECK(scale > 0.0);
      CHECK(worst <= 1e-13 * scale);
    }
  }
}

TEST_CASE("m2l class operator: the folded table by parity equals its definition", "[m2l][blocks]") {
  // class_fold_entry pairs the terms of k and -k (class_fold_pair); the definition is
  // class_dmat_entry's full complex sum, folded as the table's comment says. A slip in a
  // sign or a cos/sin choice gives errors of order 1; rounding, ~1e-13 at l = 16.
  auto gen = wham_test::rng(93);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double* folded = m2l::swap_constants<double>().b;
  for (int trial = 0; trial < 8; ++trial) {
    double x = u(gen), y = u(gen), z = u(gen);
    if (trial == 0) x = y = 0.0;  // on the z axis
    if (trial == 1) x = 1e-7, y = 0.0;
    if (trial == 2) z = 0.0;  // in the xy plane
    const auto pb = beta_powers(fmm::make_class_geometry(x, y, z));
    for (int l = 0; l <= 16; ++l) {
      double worst = 0.0, scale = 0.0;
      for (int k = 0; k < fmm::fold_offset(l + 1) - fmm::fold_offset(l); ++k) {
        const int i = k / (2 * (l + 1)), j = (k / 2) % (l + 1);
        const double a = fmm::class_dmat_entry(folded, l, i, j, pb.data());
        double want = (k & 1) ? 0.0 : a;
        if (j != 0) {
          const double m = fmm::class_dmat_entry(folded, l, i, -j, pb.data());
          const double sm = (j & 1) ? -m : m;
          want = 0.5 * ((k & 1) ? a - sm : a + sm);
        }
        worst = std::max(worst, std::abs(fmm::class_fold_entry(folded, l, k, pb.data()) - want));
        scale = std::max(scale, std::abs(want));
      }
      CAPTURE(trial, l, worst, scale, wham_test::seed());
      CHECK(scale > 0.0);
      CHECK(worst <= 1e-11 * scale);
    }
  }
}

namespace {
const m2l::tensor_frag_table& tensor_fragments() {
  static const m2l::tensor_frag_table table = m2l::make_tensor_frag_table();  // 258 KB
  return table;
}
}  // namespace

TEST_CASE("m2l tensor schedule: its fragments and folded-split order reproduce every swap",
          "[m2l][blocks]") {
  // The table the kernel reads (built here on the host by the same constexpr function),
  // applied as mma.m8n8k4 reads it (A: row lane / 4, column lane % 4), to the folded-split
  // input the kernel keeps, against blocks.cuh's swap. Operand rows past a block hold
  // 1e300: a nonzero fragment entry there would show.
  auto gen = wham_test::rng(4242);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  using C = m2l::cpx<double>;
  arch::static_for<0, m2l::max_table_order + 1>([&](auto Lc) {
    constexpr int L = decltype(Lc)::value;
    const m2l::tensor_frag_table& table = tensor_fragments();
    for (int tr = 0; tr < 2; ++tr) {
      CAPTURE(L, tr);
      C x[2 * L + 1], want[2 * L + 1];
      for (int i = 0; i < 2 * L + 1; ++i) want[i] = x[i] = {u(gen), u(gen)};
      if (tr) {
        m2l::swap_inplace<L, true>(want);
      } else {
        m2l::swap_inplace<L, false>(want);
      }
      std::vector<C> in(2 * L + 1 + 16, C{1e300, 1e300});
      for (int m = 0; m <= L; ++m) {
        in[m2l::tensor_pos_s(L, m)] = m > 0 ? x[L + m] + x[L - m] : x[L];
        if (m > 0) in[m2l::tensor_pos_d(L, m)] = x[L + m] - x[L - m];
      }
      const int row0[4] = {0, m2l::tensor_k_even(L), L + 1, L + 1 + m2l::tensor_k_deven(L)};
      C acc[4][16] = {};
      for (int blk = 0; blk < 4; ++blk) {
        for (int mt = 0; mt < m2l::tensor_mt; ++mt) {
          for (int kt = 0; kt < m2l::tensor_kt; ++kt) {
            for (int lane = 0; lane < 32; ++lane) {
              const double a = table.a[tr][L][blk][mt][kt][lane];
              if (a == 0.0) continue;
              const int i = mt * 8 + lane / 4, k = kt * 4 + lane % 4;
              acc[blk][i] = m2l::fma(a, in[row0[blk] + k], acc[blk][i]);
            }
          }
        }
      }
      std::vector<std::complex<double>> got(2 * L + 1), ref(2 * L + 1);
      for (int c = 0; c < 2; ++c) {
        const int rows = c ? m2l::tensor_rows_o(L) : m2l::tensor_rows_e(L);
        for (int i = 0; i < rows; ++i) {
          const int m = 2 * i + (c ? 1 - (L & 1) : (L & 1));
          const C E = acc[2 * c][i], O = acc[2 * c + 1][i];
          const C yp = E + O, yn = (L & 1) ? O - E : E - O;
          got[L + m] = {yp.re, yp.im};
          if (m > 0) got[L - m] = {yn.re, yn.im};
        }
      }
      for (int i = 0; i < 2 * L + 1; ++i) ref[i] = {want[i].re, want[i].im};
      const double err = wham_test::relative_error(got.data(), ref.data(), 2 * L + 1);
      CAPTURE(err);
      REQUIRE(err <= 1e-14);
    }
  });
}

namespace {
const m2l::wide_frag_table& wide_fragments() {
  static const m2l::wide_frag_table table = m2l::make_wide_frag_table();
  return table;
}
}  // namespace

TEST_CASE("m2l wide tensor schedule: its whole-matrix fragments reproduce the low swaps",
          "[m2l][blocks]") {
  // The table the wide kernel reads (built here on the host by the same constexpr
  // function), applied as mma.m16n8k4 reads its B operand (k = lane % 4, n = lane / 4;
  // column n of n tile nt is output 8 nt + wide_col_row(n)), against blocks.cuh's swap.
  // Inputs past the degree hold 1e300: a nonzero fragment entry there would show.
  auto gen = wham_test::rng(4343);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  using C = m2l::cpx<double>;
  arch::static_for<0, m2l::wide_fold_min_degree>([&](auto Lc) {  // higher: the folded test
    constexpr int L = decltype(Lc)::value;
    constexpr int NT = m2l::wide_tiles(L), KT = 2 * NT;
    const m2l::wide_frag_table& table = wide_fragments();
    for (int tr = 0; tr < 2; ++tr) {
      CAPTURE(L, tr);
      C x[2 * L + 1], want[2 * L + 1];
      for (int i = 0; i < 2 * L + 1; ++i) want[i] = x[i] = {u(gen), u(gen)};
      if (tr) {
        m2l::swap_inplace<L, true>(want);
      } else {
        m2l::swap_inplace<L, false>(want);
      }
      std::vector<C> in(4 * KT, C{1e300, 1e300}), acc(8 * NT, C{0.0, 0.0});
      for (int j = 0; j < 2 * L + 1; ++j) in[j] = x[j];
      for (int nt = 0; nt < NT; ++nt) {
        for (int kt = 0; kt < KT; ++kt) {
          for (int lane = 0; lane < 32; ++lane) {
            const double b = table.a[tr][m2l::wide_frag_offset(L) + nt * KT + kt][lane];
            if (b == 0.0) continue;
            const int i = nt * 8 + m2l::wide_col_row(lane / 4), j = kt * 4 + lane % 4;
            acc[i] = m2l::fma(b, in[j], acc[i]);
          }
        }
      }
      std::vector<std::complex<double>> got(2 * L + 1), ref(2 * L + 1);
      for (int i = 0; i < 2 * L + 1; ++i) {
        got[i] = {acc[i].re, acc[i].im};
        ref[i] = {want[i].re, want[i].im};
      }
      double past = 0.0;  // outputs past the degree must stay 0
      for (int i = 2 * L + 1; i < 8 * NT; ++i)
        past = std::max(past, std::abs(acc[i].re) + std::abs(acc[i].im));
      const double err = wham_test::relative_error(got.data(), ref.data(), 2 * L + 1);
      CAPTURE(err, past);
      CHECK(past == 0.0);
      REQUIRE(err <= 1e-14);
    }
  });
}

namespace {
const m2l::wide_fold_table& wide_fold_fragments() {
  static const m2l::wide_fold_table table = m2l::make_wide_fold_table();
  return table;
}
}  // namespace

TEST_CASE("m2l wide tensor schedule: its folded fragments reproduce every swap", "[m2l][blocks]") {
  // The folded table (degrees from wide_fold_min_degree), applied as the kernel applies it:
  // operands u_k = x_k + x_-k (class P) and v_k = x_k - x_-k (class M) at list position
  // kt * 4 + lane % 4 (k = 2 position + parity, clamped to L as the kernel reads), outputs
  // at position 8 nt + wide_col_row(lane / 4) of the class (m = wide_fold_m), then
  // y_m = E + O and y_-m = (-1)^L (E - O); against blocks.cuh's swap. Positions past the
  // degree must come out 0.
  auto gen = wham_test::rng(4344);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  using C = m2l::cpx<double>;
  arch::static_for<m2l::wide_fold_min_degree, m2l::max_table_order + 1>([&](auto Lc) {
    constexpr int L = decltype(Lc)::value;
    constexpr int NT = m2l::wide_fold_nt(L), KT = m2l::wide_fold_kt(L);
    const m2l::wide_fold_table& table = wide_fold_fragments();
    for (int tr = 0; tr < 2; ++tr) {
      CAPTURE(L, tr);
      C x[2 * L + 1], want[2 * L + 1];
      for (int i = 0; i < 2 * L + 1; ++i) want[i] = x[i] = {u(gen), u(gen)};
      if (tr) {
        m2l::swap_inplace<L, true>(want);
      } else {
        m2l::swap_inplace<L, false>(want);
      }
      std::vector<std::complex<double>> got(2 * L + 1, {0.0, 0.0}), ref(2 * L + 1);
      double past = 0.0;
      const double sgn = (L & 1) ? -1.0 : 1.0;
      for (int c = 0; c < 2; ++c) {
        for (int nt = 0; nt < NT; ++nt) {
          for (int col = 0; col < 8; ++col) {
            std::complex<double> eo[2];
            for (int e = 0; e < 2; ++e) {
              for (int kt = 0; kt < KT; ++kt) {
                for (int kk = 0; kk < 4; ++kk) {
                  const int lane = 4 * col + kk;  // B operand: k = lane % 4, n = lane / 4
                  const double b = table.a[tr][m2l::wide_fold_offset(L) +
                                               ((c * 2 + e) * NT + nt) * KT + kt][lane];
                  const int k = std::min(2 * (kt * 4 + kk) + e, L);
                  const std::complex<double> xp{x[L + k].re, x[L + k].im};
                  const std::complex<double> xm{x[L - k].re, x[L - k].im};
                  eo[e] += b * (c == 0 ? xp + xm : xp - xm);
                }
              }
            }
            const int m = m2l::wide_fold_m(L, c, nt * 8 + m2l::wide_col_row(col));
            if (m > L) {
              past = std::max(past, std::abs(eo[0]) + std::abs(eo[1]));
              continue;
            }
            got[L + m] = eo[0] + eo[1];
            if (m > 0) got[L - m] = sgn * (eo[0] - eo[1]);
          }
        }
      }
      for (int i = 0; i < 2 * L + 1; ++i) ref[i] = {want[i].re, want[i].im};
      const double err = wham_test::relative_error(got.data(), ref.data(), 2 * L + 1);
      CAPTURE(err, past);
      CHECK(past == 0.0);
      REQUIRE(err <= 1e-14);
    }
  });
}
