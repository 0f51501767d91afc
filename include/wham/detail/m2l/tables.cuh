/// \file wham/detail/m2l/tables.cuh
/// \brief Compile-time constants of the M2L kernels: Dehnen's swap matrices
/// B_l (folded to m, k >= 0) and the factorials of the z-translation.
///
/// B_l is real, depends on the degree only, and has the parities
///   B_l[-m][k] = (-1)^(l+k) B_l[m][k],   B_l[m][-k] = (-1)^(l+m) B_l[m][k],
/// so the quarter m, k >= 0 holds all of it: swap_table::b[offset(l) + m*(l+1) + k],
/// offset(l) = l(l+1)(2l+1)/6, 3311 entries up to l = 20. The tables are built by
/// constexpr evaluation at compile time and live in `__constant__` memory
/// (`c_swap_double`, `c_swap_float`): a warp that reads one entry with one address
/// gets it broadcast, which is how the unrolled one-thread-per-pair schedule
/// reads them (every thread of a warp runs the same degree and entry).
#pragma once

#include <type_traits>

namespace wham::detail::m2l {

/// Largest order any M2L table serves.
inline constexpr int max_table_order = 20;

/// Offset of degree l in the folded table.
__host__ __device__ constexpr int swap_offset(int l) { return l * (l + 1) * (2 * l + 1) / 6; }
inline constexpr int swap_entries = swap_offset(max_table_order + 1);  // 3311

template <class T>
struct swap_table {
  T b[swap_entries];                ///< folded B_l, m, k >= 0
  T fact[2 * max_table_order + 1];  ///< 0! .. 40!
};

/// Builds the table by the spec's recursion (docs/specs/m2l.md), in double.
template <class T>
constexpr swap_table<T> make_swap_table() {
  constexpr int N = max_table_order;
  constexpr int W = 2 * N + 3;  // indices -N-1..N+1 shifted by N+1
  swap_table<T> t{};
  double cur[W][W] = {};
  double nxt[W][W] = {};
  cur[N + 1][N + 1] = 1.0;
  for (int l = 0; l <= N; ++l) {
    for (int m = 0; m <= l; ++m) {
      for (int k = 0; k <= l; ++k) {
        t.b[swap_offset(l) + m * (l + 1) + k] = T(cur[m + N + 1][k + N + 1]);
      }
    }
    if (l == N) break;
    const int n = l;
    auto at = [&](int m, int k) -> double {
      if (m < -n || m > n || k < -n || k > n) return 0.0;
      return cur[m + N + 1][k + N + 1];
    };
    for (int m = -(n + 1); m <= n + 1; ++m) {
      for (int k = -(n + 1); k <= n + 1; ++k) {
        double v = 0.0;
        if (m == n + 1) {
          v = 0.5 * (at(n, k - 1) + at(n, k + 1) + 2.0 * at(n, k));
        } else if (m == -(n + 1)) {
          v = 0.5 * (at(-n, k - 1) + at(-n, k + 1) - 2.0 * at(-n, k));
        } else {
          v = 0.5 * (at(m, k - 1) - at(m, k + 1));
        }
        nxt[m + N + 1][k + N + 1] = v;
      }
    }
    for (int i = 0; i < W; ++i) {
      for (int j = 0; j < W; ++j) cur[i][j] = nxt[i][j];
    }
  }
  double f = 1.0;
  for (int i = 0; i <= 2 * N; ++i) {
    if (i > 0) f *= i;
    t.fact[i] = (sizeof(T) < sizeof(double) && f > 3.0e38) ? T(0) : T(f);  // float: 0! .. 34!
  }
  return t;
}

// One copy per translation unit (internal linkage: header-only library).
static __constant__ swap_table<double> c_swap_double = make_swap_table<double>();
static __constant__ swap_table<float> c_swap_float = make_swap_table<float>();

/// The table for T: __constant__ memory in device code, a static copy on the host
/// (so the building blocks also run, and are tested, on the host).
template <class T>
__host__ __device__ __forceinline__ const swap_table<T>& swap_constants() {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, double>) {
    return c_swap_double;
  } else {
    return c_swap_float;
  }
#else
  static const swap_table<T> host = make_swap_table<T>();
  return host;
#endif
}

}  // namespace wham::detail::m2l
