/// \file wham/detail/fmm/class_groups.cuh
/// \brief The class form over pairs grouped by class (wham::m2l_accumulate_class_groups):
/// the class's operator as real matrices made once in shared memory, applied to 32
/// pairs at a time (class_operator.cuh for the algebra).
///
/// A block owns one contiguous stretch of 32-pair chunks, or on long lists in double
/// spans of them, the blocks in turn (launch_class_group_schedule): a class's chunks
/// mostly land in one block or a few spans, so its tables are made a few times. Per
/// chunk: the pairs' records are gathered into shared memory as columns
/// (coefficient-major, one column a pair); then per run of one class (a chunk straddling
/// two classes has two runs): the class tables (d_l for every degree, folded by its
/// parity, Psi's powers, 1/r powers) are made if the class changed; each warp takes whole
/// degrees of the way in (lane = pair, its degree in registers, d broadcast from shared
/// memory), a barrier, then whole degrees of the way out, added to the target locals
/// with atomics (pairs of one class have distinct targets in a uniform tree: nothing to
/// sum in the block), two coefficients of a target from neighbouring lanes (a warp stage
/// in shared memory).
///
/// Degrees go to warps by a longest-first greedy assignment on their cost (degree_cost);
/// warps per block by order and type (tuning.cuh's class_group_warps).
///
/// In double from p = 13 (class_group_tensor_min_order) the runs go to the tensor schedule
/// instead (class_tensor.cuh): the same chunks, records and tables, but each tile of four
/// pairs (eight real columns) belongs to one warp, which applies the whole operator to it
/// as FP64 mma products (d_L Psi, the z products, Psi^* d_L^T) with no block barrier
/// between the phases, and adds each value to its target with an
/// atomic from the accumulator's lane: 1.25-1.35x the scalar schedule at p = 13-16.
///
/// In double from p = 1 to 10 (class_dense_max_order) dispatch.cuh takes a third
/// schedule, with its own kernel: each run of a class as one dense product with the
/// class's direct operator on the tensor cores (class_dense.cuh), 1.5-2.0x the scalar
/// schedule there.
#pragma once

#include <wham/detail/device.cuh>
#include <wham/detail/fmm/class_operator.cuh>
#include <wham/detail/fmm/class_tensor.cuh>
#include <wham/detail/fmm/pair_list.cuh>
#include <wham/detail/fmm/tuning.cuh>
#include <wham/detail/m2l/blocks.cuh>
#include <wham/detail/m2l/staging.cuh>
#include <wham/error.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace wham::detail::fmm {

/// Pairs a chunk (one lane each) and the padded column stride of the records.
inline constexpr int group_pairs = 32;
inline constexpr int group_stride = group_pairs + 1;

/// Shared-memory layout (bytes from the dynamic base), all offsets 16-aligned. The tensor
/// schedule (double) keeps its records at class_tensor_stride, has a padded factorial
/// table (fz) and no stage.
template <class T>
struct group_layout {
  std::size_t records, dm, folded, psi, ir, geo, idx, fz, stage, total;
  __host__ __device__ group_layout(int p, int warps, bool tensor = false) {
    auto up = [](std::size_t b) { return (b + 15) / 16 * 16; };
    const int C = (p + 1) * (p + 1);
    const int stride = tensor ? class_tensor_stride : group_stride;
    records = 0;
    dm = up(records + std::size_t(C) * stride * sizeof(cpx<T>));
    folded = up(dm + std::size_t(fold_offset(p + 1)) * sizeof(T));
    psi = up(folded + std::size_t(m2l::swap_offset(p + 1)) * sizeof(double));
    ir = up(psi + std::size_t(p + 1) * sizeof(cpx<T>));
    geo = up(ir + std::size_t(p + 2) * sizeof(T));
    idx = up(geo + std::size_t(p + 1) * sizeof(cpx<double>) + sizeof(class_geometry));
    fz = up(idx + 3 * group_pairs * sizeof(std::int32_t));
    stage = up(fz + (tensor ? class_tensor_fact * sizeof(double) : 0));
    total = up(stage + (tensor ? 0 : std::size_t(warps) * 2 * group_pairs * sizeof(cpx<T>)));
  }
};

/// Warps a block of the tensor schedule: one a tile of four pairs.
inline constexpr int class_tensor_warps = group_pairs / class_tensor_pairs;

/// Degrees owned by warp `warp` as a bit mask: longest first, each to the least
/// loaded warp (every thread computes the same assignment).
template <int P, int WARPS>
__device__ __forceinline__ unsigned owned_degrees(int warp) {
  int load[WARPS] = {};
  unsigned mask = 0;
  for (int L = P; L >= 0; --L) {
    int best = 0;
    for (int w = 1; w < WARPS; ++w) best = load[w] < load[best] ? w : best;
    if (best == warp) mask |= 1u << L;
    load[best] += degree_cost(P, L);
  }
  return mask;
}

/// Makes the tables of class k (the whole block; barriers inside).
template <int P, class T>
__device__ void make_group_tables(const pair_list<T>& l, int k, unsigned char* smem,
                                  const group_layout<T>& lay) {
  T* dm = reinterpret_cast<T*>(smem + lay.dm);
  const double* folded = reinterpret_cast<const double*>(smem + lay.folded);
  cpx<T>* psi = reinterpret_cast<cpx<T>*>(smem + lay.psi);
  T* ir = reinterpret_cast<T*>(smem + lay.ir);
  cpx<double>* pb = reinterpret_cast<cpx<double>*>(smem + lay.geo);
  auto* g = reinterpret_cast<class_geometry*>(pb + (P + 1));
  __syncthreads();  // the previous class's readers are done
  if (threadIdx.x == 0) {
    double x, y, z;
    if (k >= 0 && k < l.num_classes) {
      const T* d = l.geo + 3 * std::int64_t(k);
      x = double(d[0]);
      y = double(d[1]);
      z = double(d[2]);
    } else {  // a class id out of range: NaN in that pair's target, visibly
      x = y = z = 0.0 / 0.0;
    }
    *g = make_class_geometry(x, y, z);
  }
  __syncthreads();
  if (threadIdx.x <= P + 1) {
    const int t = threadIdx.x;
    cpx<double> b{1.0, 0.0}, s{1.0, 0.0};
    double r = 1.0;
    for (int j = 0; j < t; ++j) {
      b = b * g->eb;
      s = s * g->psi;
      r *= g->inv_r;
    }
    if (t <= P) {
      pb[t] = b;
      psi[t] = {T(s.re), T(s.im)};
    }
    ir[t] = T(r);
  }
  __syncthreads();
  // One (A, B) pair a thread (class_fold_pair: l + 1 real products for both, where the
  // definition, class_dmat_entry, sums 2l + 1 complex terms for each real).
  for (int e = threadIdx.x; e < fold_offset(P + 1) / 2; e += blockDim.x) {
    int L = 0;
    while (fold_offset(L + 1) / 2 <= e) ++L;
    const int local = e - fold_offset(L) / 2;
    const fold_entries ab = class_fold_pair(folded, L, local / (L + 1), local % (L + 1), pb);
    dm[2 * e] = T(ab.a);
    dm[2 * e + 1] = T(ab.b);
  }
  __syncthreads();
}

/// Tensor: the runs go through class_tensor_apply (double only, one warp a tile of
/// four pairs: WARPS = class_tensor_warps), else the scalar degree schedule above.
template <int P, class T, int WARPS, bool Tensor = false>
__global__ void __launch_bounds__(WARPS * 32, class_group_min_blocks<P, Tensor>())
    class_group_kernel(const pair_list<T> l, std::int64_t num_chunks, std::int64_t span) {
  static_assert(!Tensor || (std::is_same_v<T, double> && WARPS == class_tensor_warps),
                "the tensor schedule: double, one warp a tile of four pairs");
  constexpr int C = (P + 1) * (P + 1);
  constexpr int S = Tensor ? class_tensor_stride : group_stride;
  extern __shared__ __align__(16) unsigned char fmm_smem_raw[];
  const group_layout<T> lay(P, WARPS, Tensor);
  cpx<T>* rec = reinterpret_cast<cpx<T>*>(fmm_smem_raw + lay.records);
  const T* dm = reinterpret_cast<const T*>(fmm_smem_raw + lay.dm);
  double* folded = reinterpret_cast<double*>(fmm_smem_raw + lay.folded);
  const cpx<T>* psi = reinterpret_cast<const cpx<T>*>(fmm_smem_raw + lay.psi);
  const T* ir = reinterpret_cast<const T*>(fmm_smem_raw + lay.ir);
  std::int32_t* s_src = reinterpret_cast<std::int32_t*>(fmm_smem_raw + lay.idx);
  std::int32_t* s_tgt = s_src + group_pairs;
  std::int32_t* s_cls = s_tgt + group_pairs;
  [[maybe_unused]] cpx<T>* stage =
      reinterpret_cast<cpx<T>*>(fmm_smem_raw + lay.stage) + (threadIdx.x >> 5) * 2 * group_pairs;
  const m2l::swap_table<double>& tabd = m2l::swap_constants<double>();
  [[maybe_unused]] const m2l::swap_table<T>& tab = m2l::swap_constants<T>();
  for (int i = threadIdx.x; i < m2l::swap_offset(P + 1); i += blockDim.x) folded[i] = tabd.b[i];
  double* fz = reinterpret_cast<double*>(fmm_smem_raw + lay.fz);
  if constexpr (Tensor) {
    for (int i = threadIdx.x; i < class_tensor_fact; i += blockDim.x) {
      fz[i] = i <= P ? tabd.fact[i] : 0.0;
    }
  }

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const std::int64_t n = l.num_pairs;
  [[maybe_unused]] const unsigned owned = owned_degrees<P, WARPS>(warp);
  bool have = false;  // tables made for class `current`
  int current = 0;

  // Spans of `span` chunks in turn (launch_class_group_schedule): block b takes spans b,
  // b + grid, b + 2 grid, ...; at the end of a span, on to the block's next one.
  // (A counter, not (chunk + 1) % span: a 64-bit remainder a chunk was 1.2% of the
  // instructions at p = 8.)
  const std::int64_t skip = 1 + (std::int64_t(gridDim.x) - 1) * span;
  std::int64_t in_span = 0;
  for (std::int64_t chunk = std::int64_t(blockIdx.x) * span; chunk < num_chunks;
       chunk += ++in_span == span ? (in_span = 0, skip) : 1) {
    const std::int64_t first = chunk * group_pairs;
    const int count = int(n - first < group_pairs ? n - first : group_pairs);
    __syncthreads();  // the previous chunk's readers are done
    if (threadIdx.x < count) {
      const std::int32_t si = l.src[first + threadIdx.x];
      s_src[threadIdx.x] = l.source_row(si);
      s_tgt[threadIdx.x] = l.target_row(si, l.tgt[first + threadIdx.x]);  // -1: skipped
      s_cls[threadIdx.x] = l.cls[first + threadIdx.x];
    }
    __syncthreads();
    // Gather: coefficient c of pair q to rec[c * stride + q]; a pair's record is
    // contiguous in global memory, so consecutive threads take consecutive c (a warp a
    // pair, without the division, was no faster overall).
    for (int j = threadIdx.x; j < count * C; j += blockDim.x) {
      const int q = j / C, c = j - q * C;
      m2l::copy_async(rec + c * S + q, l.multipoles + std::int64_t(s_src[q]) * C + c);
    }
    m2l::stage_records_wait();
    for (int q0 = 0; q0 < count;) {
      const int k = s_cls[q0];
      // The run's end by one ballot (every warp finds the same; lanes past count vote
      // no). A scan by each thread was 8.5% of the instructions at p = 8 (same profile).
      const unsigned same = __ballot_sync(0xffffffffu, lane < count && s_cls[lane] == k);
      const unsigned other = ~same & (0xffffffffu << q0);
      const int q1 = other != 0u ? __ffs(int(other)) - 1 : group_pairs;
      if (!have || k != current) {
        make_group_tables<P, T>(l, k, fmm_smem_raw, lay);  // barriers inside
        current = k;
        have = true;
      } else {
        __syncthreads();  // the gather (first run) or the previous run's way out is done
      }
      if constexpr (Tensor) {
        // One warp a tile of four pairs, no barrier between the phases (its columns only).
        const int col0 = warp * class_tensor_pairs;
        unsigned live = 0;
#pragma unroll
        for (int q = 0; q < class_tensor_pairs; ++q) {
          live |= (col0 + q >= q0 && col0 + q < q1) ? 1u << q : 0u;
        }
        if (live != 0) {
          const class_tensor_cols cols{rec, col0, live};
          // the lane's pair (lane % 4) is the pair of every value it emits
          const std::int32_t tl = s_tgt[col0 + (lane & 3)];
          double* const dst =
              tl >= 0 ? reinterpret_cast<double*>(l.locals + std::int64_t(tl) * C) : nullptr;
          class_tensor_apply<P>(cols, dm, psi, ir, fz, [&](int c, int, cpx<double> v) {
            if (dst != nullptr) {
              atomicAdd(dst + 2 * c, v.re);
              atomicAdd(dst + 2 * c + 1, v.im);
            }
          });
        }
      } else {
        const bool mine = lane >= q0 && lane < q1;
        m2l::static_for<0, P + 1>([&](auto Lc) {
          constexpr int L = decltype(Lc)::value;
          if (mine && ((owned >> L) & 1u)) {
            class_forward_degree<L>(rec + lane, S, dm, psi, ir[L + 1]);
          }
        });
        __syncthreads();
        // The way out: every lane of an owning warp runs (lanes outside the run on stale
        // columns, never written), so that each pair of rows leaves through the warp's
        // stage as 32 targets x 2 coefficients, lanes on consecutive reals of one target:
        // a quarter of the atomic requests of one lane a pair.
        m2l::static_for<0, P + 1>([&](auto Lc) {
          constexpr int L = decltype(Lc)::value;
          if ((owned >> L) & 1u) {
            class_backward_degree<L>(
                rec + lane, S, P, dm, psi, ir, tab.fact,
                [&](int c, cpx<T> v0, cpx<T> v1, bool two) {
                  stage[2 * lane] = v0;
                  stage[2 * lane + 1] = v1;
                  __syncwarp();
                  const T* reals = reinterpret_cast<const T*>(stage);
#pragma unroll
                  for (int it = 0; it < 4; ++it) {  // 32 pairs x 4 reals
                    const int idx = it * 32 + lane, q = idx >> 2, part = idx & 3;
                    if (q >= q0 && q < q1 && (two || part < 2) && s_tgt[q] >= 0) {
                      T* dst = reinterpret_cast<T*>(l.locals + std::int64_t(s_tgt[q]) * C + c);
                      atomicAdd(dst + part, reals[idx]);
                    }
                  }
                  __syncwarp();
                });
          }
        });
      }
      q0 = q1;
    }
  }
}

/// Spans: one wave of resident blocks takes spans of at most span_max chunks in turn
/// (block b: spans b, b + grid, ...), so that the blocks in flight work on one window of
/// the list and sweep it in order together; with the list grouped by target tiles
/// (wham::group_by_tile_and_class) the window's sources and targets stay in the L2 cache.
/// Spans are sized so that every block takes the same number. span_max < 0: automatic
/// (tuning.cuh: spans only in double and on long lists), 0: one contiguous stretch a
/// block, > 0: spans of at most that many chunks (the benchmark's and the tests' choices).
/// Tensor: the tensor schedule (double; W is then class_tensor_warps).
template <int P, class T, int W = class_group_warps<T>(P), bool Tensor = false>
void launch_class_group_schedule(const pair_list<T>& l, cudaStream_t stream,
                                 std::int64_t span_max = -1) {
  static_assert(W >= 1 && W <= 32, "one warp per degree at most");
  auto kernel = class_group_kernel<P, T, W, Tensor>;
  const std::size_t smem = group_layout<T>(P, W, Tensor).total;
  ensure_dynamic_smem(kernel, smem);
  int per_sm = 0;
  WHAM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, W * 32, smem));
  const std::int64_t chunks = (l.num_pairs + group_pairs - 1) / group_pairs;
  if (chunks == 0) return;
  const std::int64_t resident =
      std::int64_t(current_device_limits().sm_count) * std::max(per_sm, 1);
  const bool automatic = span_max < 0;
  if (automatic) span_max = class_group_span_max;
  // Spans a block: enough that no span passes span_max; then the span that splits the
  // chunks evenly over resident x visits.
  std::int64_t visits =
      span_max > 0 ? (chunks + resident * span_max - 1) / (resident * span_max) : 1;
  if (automatic && (!std::is_same_v<T, double> || visits < class_group_span_min_visits)) {
    visits = 1;
  }
  visits = std::max<std::int64_t>(visits, 1);
  const std::int64_t span =
      std::max<std::int64_t>(1, (chunks + resident * visits - 1) / (resident * visits));
  const std::int64_t grid = std::min(resident, (chunks + span - 1) / span);
  kernel<<<dim3(unsigned(grid)), W * 32, smem, stream>>>(l, chunks, span);
  WHAM_CHECK_LAUNCH("fmm class_group_kernel");
}

}  // namespace wham::detail::fmm
