/// \file wham/detail/fmm/class_dense.cuh
/// \brief The class form over pairs grouped by class as one dense product per class on
/// FP64 tensor cores (double): L = A_k M, with the direct operator of class k,
///   A[(n, m), (k, l)] = (-1)^l S_{n+k}^{m-l}(delta_k)  for n + k <= p, else 0,
/// made once per run of the class in shared memory from the class's (p+1)^2 singular
/// harmonics, and applied to eight pairs at a time (N = the eight pairs) as mma.m16n8k4
/// on sm_90 (two row tiles a product, twice m8n8k4's FP64 rate on an H200) and
/// mma.m8n8k4 below.
///
/// Why the direct operator and not the rotations: it has more arithmetic (O(p^4) a pair,
/// 1,365 complex multiply-adds at p = 8, against O(p^3)), but it is one matrix shared by
/// every pair of a class, which is what tensor cores need; the factorised form is three
/// small products a degree with a chain between them (class_tensor.cuh).
///
/// Real form: a complex row i becomes the real rows (Re L_i, Im L_i), a complex column j
/// the real columns (Re M_j, Im M_j), and the 2 x 2 block is [[a_re, -a_im], [a_im, a_re]].
/// Row tile r holds complex rows 4r..4r+3 (eight real rows), column tile c complex
/// columns 2c, 2c+1 (four real columns); tile (r, c) is kept iff deg(4r) + deg(2c) <= p
/// (the smallest degrees of the tiles; entries past the truncation are zeros). The kept
/// tiles of row tile r are c < dense_cols(P, r), stored one after another in lane order
/// (256 bytes a tile, one conflict-free 8-byte load a lane).
///
/// A block owns equal spans of the list in turn (at most class_dense_span pairs each, so
/// that on a list grouped by tiles of targets the pairs in flight keep their data in
/// the L2). Per run of one class in a span: the block makes S and A (barriers), then
/// each warp takes tiles of eight pairs in turn, gathers their records (cp.async a
/// coefficient, or at p = 10 one bulk copy a record; with two buffers the next tile's
/// while it multiplies the current one; the pairs' indices loaded ahead) and adds the
/// results to their targets: by an atomic a value from the accumulator's lane (p = 1,
/// 5), or staged in shared memory and sent as one bulk reduction a target (the other
/// orders: all of a warp's results stay in registers until its products are done, then
/// go to its record buffer). Pairs of one class have distinct targets in a uniform tree.
/// Shapes: class_dense_layout.cuh, by order in tuning.cuh (class_dense_tuning).
#pragma once

#include <wham/detail/arch/mma.cuh>
#include <wham/detail/device.cuh>
#include <wham/detail/fmm/bulk.cuh>
#include <wham/detail/fmm/class_dense_layout.cuh>
#include <wham/detail/fmm/pair_list.cuh>
#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/staging.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace wham::detail::fmm {

/// Makes S_n^m(delta) of class k (threads 0..P, one order m each, by the spec's
/// recurrences) and then the operator tiles (the whole block). Barriers inside; the
/// caller has a barrier before (the previous run's readers are done).
template <int P>
__device__ void make_dense_operator(const pair_list<double>& l, int k, double* tiles,
                                    cpx<double>* S) {
  using shape = dense_shape<P>;
  constexpr int C = shape::C;
  if (threadIdx.x <= P) {
    double x, y, z;
    if (k >= 0 && k < l.num_classes) {
      x = l.geo[3 * std::int64_t(k)];
      y = l.geo[3 * std::int64_t(k) + 1];
      z = l.geo[3 * std::int64_t(k) + 2];
    } else {  // a class id out of range: NaN in that pair's target, visibly
      x = y = z = 0.0 / 0.0;
    }
    const int m = threadIdx.x;
    // in u = delta / r and 1 / r (m2l::make_unit): r^2 over- or underflows first
    const m2l::unit<double> u = m2l::make_unit(x, y, z);
    const double ir = u.inv_r;
    const cpx<double> xy{u.x, u.y};
    cpx<double> s{ir, 0.0};  // S_0^0, then S_j^j up to j = m
    for (int j = 1; j <= m; ++j) s = scale(s * xy, double(2 * j - 1) * ir);
    cpx<double> prev2{0.0, 0.0}, prev = s;
    S[m * m + 2 * m] = s;
    for (int n = m + 1; n <= P; ++n) {
      const cpx<double> v = scale(scale(prev, double(2 * n - 1) * u.z) -
                                      scale(prev2, double((n + m - 1) * (n - m - 1)) * ir),
                                  ir);
      S[n * n + n + m] = v;
      prev2 = prev;
      prev = v;
    }
    if (m > 0) {  // S_n^{-m} = (-1)^m conj(S_n^m)
      for (int n = m; n <= P; ++n) {
        const cpx<double> v = S[n * n + n + m];
        S[n * n + n - m] = (m & 1) ? cpx<double>{-v.re, v.im} : cpx<double>{v.re, -v.im};
      }
    }
  }
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
  // Lane ln of a tile: real row ln / 4 (complex row 4r + ln / 8, part ln / 4 % 2), real
  // column ln % 4 (complex column 2c + ln % 4 / 2, part ln % 2).
  const int i_off = lane >> 3, row_part = (lane >> 2) & 1, j_off = (lane & 3) >> 1,
            col_part = lane & 1;
  int t0 = 0;
  for (int r = 0; r < shape::row_tiles; ++r) {
    const int cols = dense_cols(P, r);
    const int i = 4 * r + i_off;
    const int n = dense_degree_fast(i), m = i - n * n - n;
    for (int c = (warp - t0 % warps + warps) % warps; c < cols; c += warps) {
      const int j = 2 * c + j_off;
      const int kk = dense_degree_fast(j), ll = j - kk * kk - kk;
      double v = 0.0;
      if (i < C && j < C && n + kk <= P) {
        const int d = n + kk;
        cpx<double> a = S[d * d + d + m - ll];
        if (ll & 1) a = {-a.re, -a.im};
        v = row_part == col_part ? a.re : (row_part == 0 ? -a.im : a.im);
      }
      tiles[(t0 + c) * 32 + lane] = v;
    }
    t0 += cols;
  }
  __syncthreads();
}

/// The warp's NP tiles of eight pairs through the operator: B from the warp's record
/// buffer, G row tiles at a time, then the values to the targets.
template <int P, class K, class Emit>
__device__ __forceinline__ void dense_tiles(const double* __restrict__ tiles,
                                            const double* __restrict__ records, Emit&& emit) {
  using shape = dense_shape<P>;
  constexpr int G = K::g, NP = K::np;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr bool use_m16 = K::m16;
#else
  constexpr bool use_m16 = false;    // m16n8k4 in FP64 is sm_90's: pairs of m8n8k4 below
#endif
  const int lane = threadIdx.x & 31;
  const double* b_lane = records + (lane >> 2) * shape::record + (lane & 3);
  const double* a_lane = tiles + lane;
  m2l::static_for<0, (shape::row_tiles + G - 1) / G>([&](auto Gc) {
    constexpr int r0 = decltype(Gc)::value * G;
    double acc[NP][G][2];
#pragma unroll
    for (int u = 0; u < NP; ++u)
#pragma unroll
      for (int g = 0; g < G; ++g) acc[u][g][0] = acc[u][g][1] = 0.0;
    constexpr int cols = dense_cols(P, r0);
    m2l::static_for<0, cols>([&](auto Cc) {
      constexpr int c = decltype(Cc)::value;
      double b[NP];
#pragma unroll
      for (int u = 0; u < NP; ++u) b[u] = b_lane[u * dense_pairs * shape::record + 4 * c];
      m2l::static_for<0, G>([&](auto Rc) {
        constexpr int g = decltype(Rc)::value, r = r0 + g;
        constexpr bool kept = r < shape::row_tiles && c < dense_cols(P, r);
        constexpr bool next_kept = r + 1 < shape::row_tiles && c < dense_cols(P, r + 1);
        if constexpr (use_m16 && g % 2 == 0 && kept && next_kept) {
          const double a0 = a_lane[(dense_offset(P, r) + c) * 32];
          const double a1 = a_lane[(dense_offset(P, r + 1) + c) * 32];
#pragma unroll
          for (int u = 0; u < NP; ++u) {
            arch::mma_m16n8k4_f64(acc[u][g][0], acc[u][g][1], acc[u][g + 1][0], acc[u][g + 1][1],
                                  a0, a1, b[u]);
          }
        } else if constexpr (kept && !(use_m16 && g % 2 == 1 && c < dense_cols(P, r - 1))) {
          const double a = a_lane[(dense_offset(P, r) + c) * 32];
#pragma unroll
          for (int u = 0; u < NP; ++u) arch::mma_m8n8k4_f64(acc[u][g][0], acc[u][g][1], a, b[u]);
        }
      });
    });
    m2l::static_for<0, G>([&](auto Rc) {
      constexpr int r = r0 + decltype(Rc)::value;
      if constexpr (r < shape::row_tiles) {
#pragma unroll
        for (int u = 0; u < NP; ++u) emit(u, 4 * r + (lane >> 3), acc[u][decltype(Rc)::value]);
      }
    });
  });
}

/// The class k = cls[s0] and the end of its run from s0 (the first i in (s0, b1) with
/// cls[i] != k, else b1), by a warp: eight loads a lane in flight a round (256 pairs),
/// since a run is hundreds to thousands of pairs and each round is an L2 latency (one
/// round of 32 pairs was 5.6% of the p = 8 kernel's stall samples, Nsight Compute, H200).
__device__ __forceinline__ std::int64_t dense_run(const std::int32_t* __restrict__ cls,
                                                  std::int64_t s0, std::int64_t b1, int& k) {
  constexpr int depth = 8;
  const int lane = threadIdx.x & 31;
  for (std::int64_t s1 = s0;; s1 += 32 * depth) {
    int c[depth];
#pragma unroll
    for (int j = 0; j < depth; ++j) {
      const std::int64_t i = s1 + 32 * j + lane;
      c[j] = i < b1 ? cls[i] : 0;
    }
    if (s1 == s0) k = __shfl_sync(0xffffffffu, c[0], 0);
#pragma unroll
    for (int j = 0; j < depth; ++j) {
      const unsigned other = __ballot_sync(0xffffffffu, s1 + 32 * j + lane >= b1 || c[j] != k);
      if (other != 0u) return s1 + 32 * j + __ffs(int(other)) - 1;
    }
  }
}

template <int P, class K>
__global__ void __launch_bounds__(K::warps * 32, 1)
    class_dense_kernel(const pair_list<double> l, std::int64_t per_block, std::int64_t num_spans) {
  using shape = dense_shape<P>;
  using layout = dense_layout<P, K>;
  constexpr int C = shape::C, R = shape::record, WARPS = K::warps, WP = layout::warp_pairs;
  extern __shared__ __align__(16) unsigned char fmm_smem_raw[];
  double* tiles = reinterpret_cast<double*>(fmm_smem_raw + layout::tiles);
  cpx<double>* S = reinterpret_cast<cpx<double>*>(fmm_smem_raw + layout::s);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  double* buf = reinterpret_cast<double*>(fmm_smem_raw + layout::buffers) +
                std::size_t(warp) * K::buf * layout::buffer_doubles;
  // The columns past C (an odd C's last column tile) meet zero operator entries: keep
  // them finite. The copies never write there.
  for (int e = lane; e < K::buf * WP * (R - 2 * C); e += 32) {
    const int q = e / (R - 2 * C);
    buf[q * R + 2 * C + (e - q * (R - 2 * C))] = 0.0;
  }

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr bool load_bulk = K::load_bulk;
#else
  constexpr bool load_bulk = false;  // no bulk copies before sm_90: cp.async
#endif
  unsigned long long* bar =
      reinterpret_cast<unsigned long long*>(fmm_smem_raw + layout::bars) + warp;
  unsigned phase = 0;
  if constexpr (load_bulk) {
    if (lane == 0) mbar_init(bar, 1);
    __syncwarp();
  }

  double* stage = layout::stage_in_records
                      ? buf
                      : reinterpret_cast<double*>(fmm_smem_raw + layout::stage) +
                            std::size_t(warp) * layout::stage_doubles;

  for (std::int64_t span = blockIdx.x; span < num_spans; span += gridDim.x) {
    const std::int64_t b0 = span * per_block;
    const std::int64_t b1 = b0 + per_block < l.num_pairs ? b0 + per_block : l.num_pairs;
    for (std::int64_t s0 = b0; s0 < b1;) {
      // The run of class k from s0 and its end (every warp the same).
      int k;
      const std::int64_t s1 = dense_run(l.cls, s0, b1, k);
      __syncthreads();  // the previous run's readers of the operator are done
      make_dense_operator<P>(l, k, tiles, S);

      const std::int64_t num_tiles = (s1 - s0 + WP - 1) / WP;
      // Lane q's entry of a[] for pair q of tile t (0 past the run).
      // Lane q's source row (row 0 for a skipped pair, as past the run) and target row
      // (-1: nowhere) for pair q of tile t.
      auto source_of = [&](std::int64_t t) {
        const std::int64_t i = s0 + t * WP + lane;
        return i < s1 ? l.source_row(l.src[i]) : 0;
      };
      auto target_of = [&](std::int64_t i) { return l.target_row(l.src[i], l.tgt[i]); };
      // Tile t's records into dst; src: source_of(t).
      auto gather = [&](std::int64_t t, double* dst, int src) {
        const std::int64_t first = s0 + t * WP;
        const int count = int(s1 - first < WP ? s1 - first : WP);
        if constexpr (load_bulk) {  // one copy a record, counted on the warp's mbarrier
          constexpr unsigned bytes = unsigned(C * sizeof(cpx<double>));
          if (lane == 0) mbar_arrive_expect(bar, unsigned(count) * bytes);
          if (lane < count) {
            bulk_load(dst + lane * R, l.multipoles + std::int64_t(src) * C, bytes, bar);
          }
        } else {
          for (int e0 = 0; e0 < count * C; e0 += 32) {  // warp-uniform trips: the shuffle
            const int e = e0 + lane, q = e / C, c = e - q * C;
            const int s = __shfl_sync(0xffffffffu, src, q & 31);
            if (e < count * C) {
              m2l::copy_async(reinterpret_cast<cpx<double>*>(dst + q * R) + c,
                              l.multipoles + std::int64_t(s) * C + c);
            }
          }
          asm volatile("cp.async.commit_group;" ::: "memory");
        }
      };
      int slot = 0;
      // BUF 1: the next tile's sources are loaded one tile ahead, and the tile's targets
      // when its gather is issued, so that neither load's latency meets its use.
      int src_next = K::buf == 1 && warp < num_tiles ? source_of(warp) : 0;
      if (K::buf == 2 && warp < num_tiles) gather(warp, buf, source_of(warp));
      for (std::int64_t t = warp; t < num_tiles; t += WARPS) {
        const std::int64_t ti = s0 + t * WP + lane;
        const int tgt = K::bulk && ti < s1 ? target_of(ti) : -1;
        if constexpr (K::bulk) {  // the last tile's results are read out of the stage
          bulk_wait<true>();
          __syncwarp();
        }
        if constexpr (K::buf == 2) {
          if (t + WARPS < num_tiles) {
            gather(t + WARPS, buf + (slot ^ 1) * layout::buffer_doubles, source_of(t + WARPS));
            asm volatile("cp.async.wait_group 1;" ::: "memory");
          } else {
            asm volatile("cp.async.wait_group 0;" ::: "memory");
          }
        } else {
          gather(t, buf, src_next);
          src_next = t + WARPS < num_tiles ? source_of(t + WARPS) : 0;
          if constexpr (load_bulk) {
            mbar_wait(bar, phase);
            phase ^= 1;
          } else {
            asm volatile("cp.async.wait_group 0;" ::: "memory");
          }
        }
        __syncwarp();
        const std::int64_t first = s0 + t * WP;
        const int count = int(s1 - first < WP ? s1 - first : WP);
        // The accumulator lane's pairs: columns 2 (lane % 4) and 2 (lane % 4) + 1 of each
        // tile of eight.
        const int q0 = 2 * (lane & 3);
        if constexpr (K::bulk) {
          constexpr int SS = layout::stage_stride;
          double* st = stage + q0 * SS + ((lane >> 2) & 1);
          dense_tiles<P, K>(tiles, buf + slot * layout::buffer_doubles,
                            [&](int u, int i, const double(&v)[2]) {
                              // staged in the records: every lane's last B load is done
                              if constexpr (layout::stage_in_records) __syncwarp();
                              if (i < C) {
                                st[u * dense_pairs * SS + 2 * i] = v[0];
                                st[u * dense_pairs * SS + SS + 2 * i] = v[1];
                              }
                            });
          bulk_fence();
          __syncwarp();
          if (lane < count && tgt >= 0) {
            bulk_reduce_add(reinterpret_cast<double*>(l.locals + std::int64_t(tgt) * C),
                            stage + lane * SS, unsigned(C * sizeof(cpx<double>)));
          }
        } else {
          double* dst[K::np][2];
#pragma unroll
          for (int u = 0; u < K::np; ++u)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int q = u * dense_pairs + q0 + h;
              const std::int32_t tq = q < count ? target_of(first + q) : -1;
              dst[u][h] = tq >= 0 ? reinterpret_cast<double*>(l.locals + std::int64_t(tq) * C) +
                                        ((lane >> 2) & 1)
                                  : nullptr;
            }
          dense_tiles<P, K>(tiles, buf + slot * layout::buffer_doubles,
                            [&](int u, int i, const double(&v)[2]) {
                              if (i < C) {
#pragma unroll
                                for (int h = 0; h < 2; ++h) {
                                  if (dst[u][h] != nullptr) atomicAdd(dst[u][h] + 2 * i, v[h]);
                                }
                              }
                            });
          __syncwarp();  // every lane is done with this buffer before it is refilled
        }
        if constexpr (K::buf == 2) slot ^= 1;
      }
      s0 = s1;
    }
  }
  if constexpr (K::bulk) bulk_wait<false>();
  if constexpr (load_bulk) {  // every phase is complete: no copy is pending on it
    __syncwarp();
    if (lane == 0) mbar_inval(bar);
  }
}

/// Launches the dense schedule on `l` (double; the caller checked the arguments): the
/// list split evenly over the resident blocks, one contiguous stretch each, or with
/// K::span, equal spans of at most that many pairs taken by the blocks in turn.
template <int P, class K>
void launch_class_dense(const pair_list<double>& l, cudaStream_t stream) {
  if (l.num_pairs == 0) return;
  auto kernel = class_dense_kernel<P, K>;
  constexpr std::size_t smem = dense_layout<P, K>::total;
  ensure_dynamic_smem(kernel, smem);
  int per_sm = 0;
  WHAM_CUDA_TRY(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, K::warps * 32, smem));
  const std::int64_t resident =
      std::int64_t(current_device_limits().sm_count) * std::max(per_sm, 1);
  std::int64_t per_block =
      std::max<std::int64_t>(dense_pairs, (l.num_pairs + resident - 1) / resident);
  if constexpr (K::span > 0) {
    if (per_block > K::span) {
      // Equal spans, the same number for every block: a few blocks with one span more
      // than the rest would double the time of the launch's tail.
      const std::int64_t rounds = (per_block + K::span - 1) / K::span;
      per_block = (l.num_pairs + resident * rounds - 1) / (resident * rounds);
    }
  }
  const std::int64_t spans = (l.num_pairs + per_block - 1) / per_block;
  const std::int64_t grid = std::min(spans, resident);
  kernel<<<dim3(unsigned(grid)), K::warps * 32, smem, stream>>>(l, per_block, spans);
  WHAM_CHECK_LAUNCH("fmm class_dense_kernel");
}

}  // namespace wham::detail::fmm
