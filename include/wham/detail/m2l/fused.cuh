/// \file wham/detail/m2l/fused.cuh
/// \brief The fused pair-streaming M2L kernels and their dispatch by order.
///
/// The thread and warp schedules, one kernel each, and the dispatch of the split
/// schedule (split.cuh); the tensor-core schedules are in tensor.cuh and
/// tensor_wide.cuh. Everything on chip, no trigonometry, no padding of the z-core,
/// nothing per pair in device memory but the pair's own input and output:
///
///   thread: one thread per pair, compile-time order P (0..thread_max_order), the
///           building blocks of blocks.cuh fully unrolled. A block stages its pairs'
///           multipoles through shared memory so that global loads and stores are
///           coalesced (a pair's record is (P+1)^2 * 2 sizeof(T) bytes), then each
///           thread works on its record either in registers (low P) or in its
///           shared-memory slot (slot stride (P+1)^2 rounded up to odd: no bank
///           conflicts).
///   warp:   one warp per pair, runtime order (0..20), lanes over the row pairs
///           (l, +-m) of the folded swaps (the same parities as blocks.cuh) and over
///           the coefficients of the z-translation; swap matrices and factorials
///           copied once per (persistent) block into shared memory. The schedule
///           above the thread schedule's orders.
///
/// Exposed for other M2L forms: `warp_load_tables`, `warp_m2l` (a whole pair by
/// one warp from a shared-memory buffer), `thread_config`.
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/split.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace wham::detail::m2l {

/// Highest order served by the one-thread-per-pair schedule (compiled for 0..12).
inline constexpr int thread_max_order = 12;

// ---- the tuning table (H200, sm_90; pair-streaming, 100k..1M pairs) --------------
// automatic's choice by order (m2l.cuh) reads three parts of one table: here the thread,
// split and warp schedules (automatic_thread_max_order, split_max_order); tensor.cuh's
// tensor_min_order and register caps (the four-pair schedule, below sm_90); and
// tensor_wide.cuh's wide_min_order and shapes (sm_90), each with its measured figures.
/// Threads per block and where a thread keeps its record, per order and type.
struct thread_config {
  int threads;     ///< threads (= pairs) per block
  bool registers;  ///< whole record in registers (else worked on in shared memory)
};
// Figures: H200, wham's bench_m2l, 1e5 pairs, median us (first GPU run, 2026-11-30).
template <class T>
constexpr thread_config thread_schedule_config(int p) {
  if constexpr (std::is_same_v<T, double>) {
    // ptxas (sm_90): p = 4 in registers 140 regs; p = 6 254 regs, no spill; p = 8 in
    // registers spills 1.7 KB, in shared memory 0.2 KB.
    if (p <= 4) return {128, true};  // p = 2, 3, 4: 11.2, 19.1, 30.4 us (0.80-0.89 of the copy floor)
    if (p <= 6) return {64, true};   // p = 5, 6: 43.9, 59.6 us (0.86, 0.85)
    return {64, false};              // p = 7, 8: 131, 380 us (0.50, 0.21): shared-memory slots
                                     // cap the SM at ~4 warps; p = 9: 821 us
  } else {
    // ptxas: p = 7 in registers 192 regs, no spill; p = 8 in registers spills 236 B
    if (p <= 6) return {128, true};  // p = 2, 4, 6: 8.8, 15.0, 37.8 us (0.84, 0.73, 0.72)
    return {128, false};             // p = 7, 8: 63, 83 us (0.54, 0.52); p = 12: 968 us
  }
}
/// Automatic choice: the thread schedule up to this order, the split schedule above
/// it to split_max_order, the warp schedule beyond.
template <class T>
constexpr int automatic_thread_max_order() {
  // H200, bench_m2l, 1e5 pairs, median us over three runs (2026-11-30, session 3),
  // thread vs split schedule:
  //   double p = 6: 56.8-59.6 vs 73-100 (G = 3); p = 7: 111-131 vs 95-103 (G = 2)
  //   float  p = 8: 75-82 vs 73-74 (G = 2);      p = 9: 266-296 vs 103-128 (G = 4)
  // split vs the folded-swap warp schedule at p = 12: double 619-662 vs 942;
  // float 290-362 vs 762-768.
  return std::is_same_v<T, double> ? 6 : 8;
}
/// Warps per block of the warp schedule.
inline constexpr int warp_schedule_warps = 4;  // not tuned (the only value measured)

/// Orders the degree-split schedule (split.cuh) is compiled for.
inline constexpr int split_min_order = 7;
inline constexpr int split_max_order = 12;
/// Warps per block (degree groups) of the split schedule, and the blocks per SM its
/// registers must allow (__launch_bounds__' second argument; 0 = no cap).
struct split_config {
  int warps;
  int min_blocks;
};
// Figures: H200, bench_m2l, 1e5 pairs, median us over three runs (2026-11-30, session 3).
// Register caps lose: double p = 8 G = 4 capped at 96 registers (5 blocks/SM) 158 us
// against 125-156 uncapped (194 registers, 2-3 blocks); p = 10 G = 4 capped 344 vs
// 312-340; float p = 8 G = 4 capped 76 vs 75-78. More warps lose to the imbalance of
// the degree partition (the degree p alone is 24% of the flops at p = 8).
template <class T>
constexpr split_config split_schedule_config(int p) {
  if constexpr (std::is_same_v<T, double>) {
    // p = 7: G = 2, 3, 4: 95-103, 104-109, 103-134 us (0.61 of the copy floor at G = 2)
    // p = 8: G = 1, 2, 3, 4, 6: 142, 115-128, 147-172, 125-168, 154-157 us (0.57-0.67
    // of the copy floor at G = 2)
    if (p <= 8) return {2, 0};
    // p = 9, 10, 11, 12 at G = 4: 248-268, 312-343, 458-498, 619-677 us;
    // G = 2: p = 9 287, p = 10 451, p = 12 986; p = 12 G = 1: 1801;
    // p = 10 G = 6: 387-487; p = 12 G = 6, 8: 660-780, 693-777
    return {4, 0};
  } else {
    // p = 8: G = 2, 4: 73-74, 75-78 us (the thread schedule: 75-82)
    // p = 9..12 at G = 4: 103-128, 149-168, 215-230, 290-362 us; p = 12 G = 6: 306-602;
    // G = 2: p = 10 212, p = 12 401
    return {p <= 8 ? 2 : 4, 0};
  }
}
// ----------------------------------------------------------------------------------

/// Host-side compile-time loop: f(std::integral_constant<int, I>) for I = Begin..End-1.
template <int Begin, int End, class F>
inline void static_for_host(F&& f) {
  if constexpr (Begin < End) {
    f(std::integral_constant<int, Begin>{});
    static_for_host<Begin + 1, End>(std::forward<F>(f));
  }
}

/// A thread's slot in shared memory, in cpx<T> units, rounded up to odd (no bank
/// conflicts): the record, and in shared-memory mode also the direction's powers.
template <int P, class T, bool Registers>
inline constexpr int slot_stride =
    ((P + 1) * (P + 1) + (Registers ? 0 : int(sizeof(direction<P, T>) / sizeof(cpx<T>)))) | 1;

template <int P, class T, int NT, bool Registers>
constexpr std::size_t thread_smem_bytes() {
  return std::size_t(NT) * slot_stride<P, T, Registers> * sizeof(cpx<T>);
}

template <int P, class T, int NT, bool Registers>
__global__ void __launch_bounds__(NT)
    m2l_thread_kernel(const cpx<T>* __restrict__ multipoles, const T* __restrict__ deltas,
                      cpx<T>* __restrict__ locals, std::int64_t num_pairs) {
  constexpr int C = (P + 1) * (P + 1);
  constexpr int S = slot_stride<P, T, Registers>;
  extern __shared__ __align__(16) unsigned char m2l_smem_raw[];
  cpx<T>* sm = reinterpret_cast<cpx<T>*>(m2l_smem_raw);
  const std::int64_t first = std::int64_t(blockIdx.x) * NT;
  const int count = int(min(std::int64_t(NT), num_pairs - first));
  stage_records<C, S, NT>(sm, multipoles + first * C, count);
  const int t = threadIdx.x;
  T x = T(0), y = T(0), z = T(1);
  if (t < count) {  // in flight with the records
    const T* d = deltas + 3 * (first + t);
    x = d[0];
    y = d[1];
    z = d[2];
  }
  stage_records_wait();
  __syncthreads();
  if (t < count) {
    const T inv_r = inverse_distance(x, y, z);
    cpx<T>* slot = sm + t * S;
    if constexpr (Registers) {
      const direction<P, T> dir = make_direction<P>(x, y, z);
      cpx<T> a[C];
#pragma unroll
      for (int i = 0; i < C; ++i) a[i] = slot[i];
      m2l_inplace<P>(a, dir, inv_r);
#pragma unroll
      for (int i = 0; i < C; ++i) slot[i] = a[i];
    } else {
      // the powers beside the record, in shared memory: registers go to the swaps
      auto* dir = reinterpret_cast<direction<P, T>*>(slot + C);
      *dir = make_direction<P>(x, y, z);
      m2l_inplace<P>(slot, *dir, inv_r);
    }
  }
  __syncthreads();
  cpx<T>* dst = locals + first * C;
  if (count == NT) {
#pragma unroll 8
    for (int r = 0; r < C; ++r) {
      const int j = r * NT + threadIdx.x;
      const int q = j / C;
      dst[j] = sm[q * S + (j - q * C)];
    }
  } else {
    for (int j = threadIdx.x; j < count * C; j += NT) {
      const int q = j / C;
      dst[j] = sm[q * S + (j - q * C)];
    }
  }
}

template <int P, class T, int NT, bool Registers>
void launch_thread_variant(const cpx<T>* multipoles, const T* deltas, cpx<T>* locals,
                           std::int64_t num_pairs, cudaStream_t stream) {
  constexpr std::size_t smem = thread_smem_bytes<P, T, NT, Registers>();
  auto kernel = m2l_thread_kernel<P, T, NT, Registers>;
  ensure_dynamic_smem(kernel, smem);
  const std::int64_t blocks = (num_pairs + NT - 1) / NT;
  kernel<<<dim3(unsigned(blocks)), NT, smem, stream>>>(multipoles, deltas, locals, num_pairs);
  WHAM_CHECK_LAUNCH("m2l_thread_kernel");
}

template <int P, class T>
void launch_thread_order(const cpx<T>* multipoles, const T* deltas, cpx<T>* locals,
                         std::int64_t num_pairs, cudaStream_t stream) {
  constexpr thread_config cfg = thread_schedule_config<T>(P);
  launch_thread_variant<P, T, cfg.threads, cfg.registers>(multipoles, deltas, locals, num_pairs,
                                                          stream);
}

/// Dynamic shared memory of one block of the thread schedule at order p
/// (0..thread_max_order): double p = 12 takes 199,680 bytes, more than compute
/// capability 8.x gives a block.
template <class T>
std::size_t thread_schedule_smem_bytes(int p) {
  std::size_t bytes = 0;
  static_for_host<0, thread_max_order + 1>([&](auto Pc) {
    constexpr int P = decltype(Pc)::value;
    constexpr thread_config cfg = thread_schedule_config<T>(P);
    if (P == p) bytes = thread_smem_bytes<P, T, cfg.threads, cfg.registers>();
  });
  return bytes;
}

/// One thread per pair, order p in 0..thread_max_order (checked by the caller).
template <class T>
void launch_thread(int p, const cpx<T>* multipoles, const T* deltas, cpx<T>* locals,
                   std::int64_t num_pairs, cudaStream_t stream) {
  bool done = false;
  static_for_host<0, thread_max_order + 1>([&](auto Pc) {
    constexpr int P = decltype(Pc)::value;
    if (P == p) {
      launch_thread_order<P, T>(multipoles, deltas, locals, num_pairs, stream);
      done = true;
    }
  });
  if (!done) throw_invalid_argument("m2l", "p", p, "0..12 for the thread schedule");
}

// ---- degree-split schedule ---------------------------------------------------------

template <int P, class T, int G, int MinBlocks>
void launch_split_variant(const cpx<T>* multipoles, const T* deltas, cpx<T>* locals,
                          std::int64_t num_pairs, cudaStream_t stream) {
  constexpr std::size_t smem = split_smem_bytes<P, T>();
  auto kernel = m2l_split_kernel<P, T, G, MinBlocks>;
  ensure_dynamic_smem(kernel, smem);
  const std::int64_t blocks = (num_pairs + split_pairs - 1) / split_pairs;
  kernel<<<dim3(unsigned(blocks)), 32 * G, smem, stream>>>(multipoles, deltas, locals,
                                                          num_pairs);
  WHAM_CHECK_LAUNCH("m2l_split_kernel");
}

/// One pair per lane, degrees over warps, order p in split_min_order..split_max_order
/// (checked by the caller).
template <class T>
void launch_split(int p, const cpx<T>* multipoles, const T* deltas, cpx<T>* locals,
                  std::int64_t num_pairs, cudaStream_t stream) {
  bool done = false;
  static_for_host<split_min_order, split_max_order + 1>([&](auto Pc) {
    constexpr int P = decltype(Pc)::value;
    if (P == p) {
      constexpr split_config cfg = split_schedule_config<T>(P);
      launch_split_variant<P, T, cfg.warps, cfg.min_blocks>(multipoles, deltas, locals,
                                                            num_pairs, stream);
      done = true;
    }
  });
  if (!done) {
    throw_invalid_argument("m2l", "p", p,
                           std::to_string(split_min_order) + ".." +
                               std::to_string(split_max_order) + " for the split schedule");
  }
}

// ---- warp schedule ------------------------------------------------------------------

/// Shared-memory tables of the warp schedule: folded swap matrices to degree p, factorials.
template <class T>
struct warp_tables {
  T* b;     ///< swap_offset(p + 1) entries
  T* fact;  ///< 2p + 1 entries
};

/// Copies the tables for order p from __constant__ memory (whole block; then __syncthreads).
template <class T>
__device__ __forceinline__ void warp_load_tables(warp_tables<T> t, int p) {
  const swap_table<T>& c = swap_constants<T>();
  for (int i = threadIdx.x; i < swap_offset(p + 1); i += blockDim.x) t.b[i] = c.b[i];
  for (int i = threadIdx.x; i <= 2 * p; i += blockDim.x) t.fact[i] = c.fact[i];
}

__device__ __forceinline__ void degree_order(int idx, int& l, int& m) {
  l = int(sqrtf(float(idx)));
  while (l * l > idx) --l;
  while ((l + 1) * (l + 1) <= idx) ++l;
  m = idx - l * l - l;
}

/// Per-warp scratch of the warp schedule: two expansions and the pair's powers.
template <class T>
struct warp_scratch {
  cpx<T>* a;   ///< (p+1)^2
  cpx<T>* b;   ///< (p+1)^2
  cpx<T>* pa;  ///< p+1: e^{i m alpha}
  cpx<T>* pb;  ///< p+1: e^{i m beta}
  T* ir;       ///< p+2: r^-j
};

template <class T>
__host__ __device__ constexpr std::size_t warp_scratch_elems(int p) {
  // in units of cpx<T>: two expansions, two power tables, r powers (rounded up)
  return std::size_t(2 * (p + 1) * (p + 1) + 2 * (p + 1) + (p + 3) / 2);
}

template <class T>
__device__ __forceinline__ warp_scratch<T> warp_scratch_at(cpx<T>* base, int p) {
  const int C = (p + 1) * (p + 1);
  return {base, base + C, base + 2 * C, base + 2 * C + p + 1,
          reinterpret_cast<T*>(base + 2 * C + 2 * (p + 1))};
}

/// (l, m >= 0) of the j-th row pair, j = 0..(p+1)(p+2)/2 - 1.
__device__ __forceinline__ void degree_row(int j, int& l, int& m) {
  l = int((sqrtf(8.0f * float(j) + 1.0f) - 1.0f) * 0.5f);
  while (l * (l + 1) / 2 > j) --l;
  while ((l + 1) * (l + 2) / 2 <= j) ++l;
  m = j - l * (l + 1) / 2;
}

/// dst <- the folded form of Dz src: dst[l, 0] = v_0, dst[l, k] = v_k + v_-k,
/// dst[l, -k] = v_k - v_-k (k > 0), v_m = src[l, m] e^{+-i m a} (pw = null: no Dz).
template <class T>
__device__ __forceinline__ void warp_fold(const cpx<T>* src, cpx<T>* dst, int rows,
                                          const cpx<T>* pw, bool conj) {
  for (int j = threadIdx.x & 31; j < rows; j += 32) {
    int l, m;
    degree_row(j, l, m);
    const int c = l * l + l;
    cpx<T> xp = src[c + m];
    if (m == 0) {
      dst[c] = xp;
      continue;
    }
    cpx<T> xn = src[c - m];
    if (pw != nullptr) {
      xp = conj ? mul_conj(xp, pw[m]) : xp * pw[m];
      xn = conj ? xn * pw[m] : mul_conj(xn, pw[m]);
    }
    dst[c + m] = xp + xn;
    dst[c - m] = xp - xn;
  }
}

/// dst[l] <- A src[l] per degree, A = B_l (Transpose = false) or B_l^T, src folded
/// (warp_fold); then dst[l, m] *= post_m: Dz(+-pw) when pw != null, r^-(l+1) when ir != null.
template <bool Transpose, class T>
__device__ __forceinline__ void warp_swap(const T* b, const cpx<T>* src, cpx<T>* dst, int rows,
                                          const cpx<T>* pw, bool conj, const T* ir) {
  for (int j = threadIdx.x & 31; j < rows; j += 32) {
    int l, m;
    degree_row(j, l, m);
    const int c = l * l + l;
    const int par = (l + m) & 1;
    const T* row = b + swap_offset(l);
    cpx<T> E{T(0), T(0)}, O{T(0), T(0)};
    if (!par) E = fma(Transpose ? row[m] : row[m * (l + 1)], src[c], E);
    for (int k = 1; k <= l; ++k) {
      const T v = Transpose ? row[k * (l + 1) + m] : row[m * (l + 1) + k];
      const cpx<T> x = par ? src[c - k] : src[c + k];
      if (k & 1) {
        O = fma(v, x, O);
      } else {
        E = fma(v, x, E);
      }
    }
    cpx<T> yp = E + O, yn = (l & 1) ? O - E : E - O;
    if (pw != nullptr) {
      yp = conj ? mul_conj(yp, pw[m]) : yp * pw[m];
      yn = conj ? yn * pw[m] : mul_conj(yn, pw[m]);
    }
    if (ir != nullptr) {
      yp = scale(yp, ir[l + 1]);
      yn = scale(yn, ir[l + 1]);
    }
    dst[c + m] = yp;
    if (m > 0) dst[c - m] = yn;
  }
}

/// One pair by one warp: s.a holds the multipole (all lanes synchronised);
/// writes the local to out (global or shared, (p+1)^2 contiguous, coalesced).
/// Ten passes over the expansion, separated by __syncwarp; the swaps work on row
/// pairs (m, -m) of the folded vectors, (p+1)(p+2)/2 rows of l+1 terms a degree.
template <class T>
__device__ __forceinline__ void warp_m2l(warp_tables<T> tab, warp_scratch<T> s, int p, T x, T y,
                                         T z, cpx<T>* out) {
  const int lane = threadIdx.x & 31;
  const int C = (p + 1) * (p + 1);
  const int rows = (p + 1) * (p + 2) / 2;
  if (lane == 0) {
    const T rho2 = x * x + y * y;
    const T rho = sqrt(rho2);
    const T inv_r = T(1) / sqrt(rho2 + z * z);
    cpx<T> ea{T(1), T(0)};
    if (rho > T(0)) ea = {y / rho, x / rho};
    const cpx<T> eb{z * inv_r, -rho * inv_r};
    cpx<T> qa{T(1), T(0)}, qb{T(1), T(0)};
    T ir = T(1);
    for (int m = 0; m <= p; ++m) {
      s.pa[m] = qa;
      s.pb[m] = qb;
      s.ir[m] = ir;
      qa = qa * ea;
      qb = qb * eb;
      ir *= inv_r;
    }
    s.ir[p + 1] = ir;
  }
  __syncwarp();
  // to z: M_rot = r^-(l+1) B^T Dz(beta) B^T Dz(alpha) M
  warp_fold(s.a, s.b, rows, s.pa, false);
  __syncwarp();
  warp_swap<true>(tab.b, s.b, s.a, rows, s.pb, false, static_cast<const T*>(nullptr));
  __syncwarp();
  warp_fold(s.a, s.b, rows, static_cast<const cpx<T>*>(nullptr), false);
  __syncwarp();
  warp_swap<true>(tab.b, s.b, s.a, rows, static_cast<const cpx<T>*>(nullptr), false, s.ir);
  __syncwarp();
  // z: b[n, m] = (-1)^m r^-n sum_{k=|m|}^{p-n} (n+k)! a[k, m]
  for (int idx = lane; idx < C; idx += 32) {
    int n, m;
    degree_order(idx, n, m);
    const int am = m < 0 ? -m : m;
    cpx<T> acc{T(0), T(0)};
    for (int k = am; k <= p - n; ++k) acc = fma(tab.fact[n + k], s.a[k * k + k + m], acc);
    s.b[idx] = scale(acc, (m & 1) ? -s.ir[n] : s.ir[n]);
  }
  __syncwarp();
  // back: L = Dz(-alpha) B Dz(-beta) B L_z
  warp_fold(s.b, s.a, rows, static_cast<const cpx<T>*>(nullptr), false);
  __syncwarp();
  warp_swap<false>(tab.b, s.a, s.b, rows, s.pb, true, static_cast<const T*>(nullptr));
  __syncwarp();
  warp_fold(s.b, s.a, rows, static_cast<const cpx<T>*>(nullptr), false);
  __syncwarp();
  warp_swap<false>(tab.b, s.a, s.b, rows, s.pa, true, static_cast<const T*>(nullptr));
  __syncwarp();
  for (int idx = lane; idx < C; idx += 32) out[idx] = s.b[idx];
  __syncwarp();
}

template <class T>
__host__ __device__ constexpr std::size_t warp_smem_bytes(int p, int warps) {
  const std::size_t tab = (std::size_t(swap_offset(p + 1)) + 2 * p + 1) * sizeof(T);
  const std::size_t tab_rounded = (tab + sizeof(cpx<T>) - 1) / sizeof(cpx<T>) * sizeof(cpx<T>);
  return tab_rounded + std::size_t(warps) * warp_scratch_elems<T>(p) * sizeof(cpx<T>);
}

template <class T, int WARPS>
__global__ void __launch_bounds__(WARPS * 32)
    m2l_warp_kernel(const cpx<T>* __restrict__ multipoles, const T* __restrict__ deltas,
                    cpx<T>* __restrict__ locals, std::int64_t num_pairs, int p) {
  extern __shared__ __align__(16) unsigned char m2l_smem_raw[];
  const int C = (p + 1) * (p + 1);
  T* tb = reinterpret_cast<T*>(m2l_smem_raw);
  const warp_tables<T> tab{tb, tb + swap_offset(p + 1)};
  const std::size_t tab_bytes = (std::size_t(swap_offset(p + 1)) + 2 * p + 1) * sizeof(T);
  cpx<T>* scratch_base = reinterpret_cast<cpx<T>*>(
      m2l_smem_raw + (tab_bytes + sizeof(cpx<T>) - 1) / sizeof(cpx<T>) * sizeof(cpx<T>));
  warp_load_tables(tab, p);
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const warp_scratch<T> s = warp_scratch_at(scratch_base + warp * warp_scratch_elems<T>(p), p);
  for (std::int64_t pair = std::int64_t(blockIdx.x) * WARPS + warp; pair < num_pairs;
       pair += std::int64_t(gridDim.x) * WARPS) {
    const cpx<T>* src = multipoles + pair * C;
    for (int i = lane; i < C; i += 32) s.a[i] = src[i];
    __syncwarp();
    const T* d = deltas + 3 * pair;
    warp_m2l(tab, s, p, d[0], d[1], d[2], locals + pair * C);
  }
}

template <class T>
void launch_warp(int p, const cpx<T>* multipoles, const T* deltas, cpx<T>* locals,
                 std::int64_t num_pairs, cudaStream_t stream) {
  constexpr int W = warp_schedule_warps;
  auto kernel = m2l_warp_kernel<T, W>;
  const std::size_t smem = warp_smem_bytes<T>(p, W);
  ensure_dynamic_smem(kernel, smem);
  const auto& lim = current_device_limits();
  int per_sm = 0;
  WHAM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, W * 32, smem));
  const std::int64_t needed = (num_pairs + W - 1) / W;
  const std::int64_t grid =
      std::max<std::int64_t>(1, std::min<std::int64_t>(needed, std::int64_t(lim.sm_count) *
                                                                   std::max(per_sm, 1)));
  kernel<<<dim3(unsigned(grid)), W * 32, smem, stream>>>(multipoles, deltas, locals, num_pairs,
                                                         p);
  WHAM_CHECK_LAUNCH("m2l_warp_kernel");
}

}  // namespace wham::detail::m2l
