/// \file wham/detail/fmm/class_groups.cuh
/// \brief The class form over pairs grouped by class (wham::m2l_accumulate_class_groups):
/// the class's operator as real matrices made once in shared memory, applied to 32
/// pairs at a time (detail/m2l/class_operator.cuh for the algebra).
///
/// A block owns one contiguous stretch of 32-pair chunks, or on long lists in double
/// spans of them, the blocks in turn (launch_class_group_order): a class's chunks mostly
/// land in one block or a few spans, so its tables are made a few times. Per chunk: the
/// pairs' records are gathered into shared memory as columns (coefficient-major, one
/// column a pair);
/// then per run of one class (a chunk straddling two classes has two runs): the class
/// tables (d_l for every degree, folded by its parity, Psi's powers, 1/r powers) are
/// made if the class changed; each warp takes whole degrees of the way in (lane = pair,
/// its degree in registers, d broadcast from shared memory), a barrier, then whole
/// degrees of the way out, added to the target locals with atomics (pairs of one class
/// have distinct targets in a uniform tree: nothing to sum in the block), two
/// coefficients of a target from neighbouring lanes (a warp stage in shared memory).
///
/// Degrees go to warps by a longest-first greedy assignment on their cost (degree_cost);
/// warps per block by order and type (class_group_warps).
///
/// In double from p = 13 (class_group_tensor_min_order) the runs go to the tensor schedule
/// instead (detail/m2l/class_tensor.cuh): the same chunks, records and tables, but each
/// tile of four pairs (eight real columns) belongs to one warp, which applies the whole
/// operator to it as FP64 mma products (d_L Psi, the z products, Psi^* d_L^T)
/// with no block barrier between the phases, and adds each value to its target with an
/// atomic from the accumulator's lane: 1.25-1.35x the scalar schedule at p = 13-16.
///
/// In double from p = 1 to 10 (class_dense_max_order) launch_class_group_order takes a
/// third schedule, with its own kernel: each run of a class as one dense product with the
/// class's direct operator on the tensor cores (detail/fmm/class_dense.cuh), 1.5-2.0x
/// the scalar schedule there.
#pragma once

#include <wham/detail/fmm/accumulate.cuh>
#include <wham/detail/fmm/class_dense.cuh>
#include <wham/detail/m2l/class_operator.cuh>
#include <wham/detail/m2l/class_tensor.cuh>

namespace wham::detail::fmm {

/// Pairs a chunk (one lane each) and the padded column stride of the records.
inline constexpr int group_pairs = 32;
inline constexpr int group_stride = group_pairs + 1;

/// Cost of degree L at order p, in products a lane: the folded rotation both ways,
/// 2 (2L^2 + 2L + 1), and its z sums, sum over |m| <= L of (p - L - |m| + 1)^+.
constexpr int degree_cost(int p, int L) {
  int z = 0;
  for (int m = -L; m <= L; ++m) {
    const int k = p - L - (m < 0 ? -m : m) + 1;
    z += k > 0 ? k : 0;
  }
  return 2 * (2 * L * L + 2 * L + 1) + z;
}

/// Warps a block. Shared memory (the 32 records) holds one or two blocks on an SM from
/// p = 10 (double), so a block's warps are the SM's warps: take as many as the largest
/// degree allows, the total cost over the largest degree's, rounded (the greedy
/// assignment then keeps every warp near the largest degree's cost, the critical path
/// of a run). float holds two blocks an SM to p = 16 by shared memory, and more than six
/// warps would leave it one by registers: at most six.
/// H200, bench_fmm BM_class_groups_warps, 16^3 level, median us by warps (folded d,
/// 2026-12-01): double p = 8: W = 3, 4, 5: 809, 813, 868; p = 9: W = 4, 5: 1078, 1083;
/// p = 10: W = 4, 5, 6: 1494, 1419, 1394; p = 12: W = 5, 6: 2418, 3222; p = 13:
/// W = 5, 6, 7: 3821, 3764, 3874; p = 16: W = 6, 7, 8: 5822, 5810, 6076. float p = 12:
/// W = 4, 5, 6: 1894, 1862, 2180; p = 16: W = 6, 7, 8: 4472, 6080, 7100.
/// The one measured exception to the model: double p = 10 (total / largest = 4.6) takes
/// 6 warps: W = 5, 6: 1419, 1394 (2026-12-01), then 1414, 1389 and 1415, 1387 (two runs,
/// 2026-12-01, session 7: 1.31-1.35 vs 1.35-1.38 of pair streaming in the same run).
template <class T>
constexpr int class_group_warps(int p) {
  if (std::is_same_v<T, double> && p == 10) return 6;
  int total = 0, top = 1;
  for (int L = 0; L <= p; ++L) {
    total += degree_cost(p, L);
    top = degree_cost(p, L) > top ? degree_cost(p, L) : top;
  }
  int w = (2 * total + top) / (2 * top);
  if (std::is_same_v<T, float> && w > 6) w = 6;
  return w < 2 ? 2 : w;
}

/// Shared-memory layout (bytes from the dynamic base), all offsets 16-aligned. The tensor
/// schedule (double) keeps its records at m2l::class_tensor_stride, has a padded factorial
/// table (fz) and no stage.
template <class T>
struct group_layout {
  std::size_t records, dm, folded, psi, ir, geo, idx, fz, stage, total;
  __host__ __device__ group_layout(int p, int warps, bool tensor = false) {
    auto up = [](std::size_t b) { return (b + 15) / 16 * 16; };
    const int C = (p + 1) * (p + 1);
    const int stride = tensor ? m2l::class_tensor_stride : group_stride;
    records = 0;
    dm = up(records + std::size_t(C) * stride * sizeof(cpx<T>));
    folded = up(dm + std::size_t(m2l::fold_offset(p + 1)) * sizeof(T));
    psi = up(folded + std::size_t(m2l::swap_offset(p + 1)) * sizeof(double));
    ir = up(psi + std::size_t(p + 1) * sizeof(cpx<T>));
    geo = up(ir + std::size_t(p + 2) * sizeof(T));
    idx = up(geo + std::size_t(p + 1) * sizeof(cpx<double>) + sizeof(m2l::class_geometry));
    fz = up(idx + 3 * group_pairs * sizeof(std::int32_t));
    stage = up(fz + (tensor ? m2l::class_tensor_fact * sizeof(double) : 0));
    total = up(stage + (tensor ? 0 : std::size_t(warps) * 2 * group_pairs * sizeof(cpx<T>)));
  }
};

/// Warps a block of the tensor schedule: one a tile of four pairs.
inline constexpr int class_tensor_warps = group_pairs / m2l::class_tensor_pairs;

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
  auto* g = reinterpret_cast<m2l::class_geometry*>(pb + (P + 1));
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
    *g = m2l::make_class_geometry(x, y, z);
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
  // One (A, B) pair a thread (class_fold_pair: l + 1 real products for both). Made by
  // the definition (class_dmat_entry: a complex sum of 2l + 1 terms for each real), the
  // tables of a change of class cost about four 32-pair chunks' time at p = 12. H200,
  // 16^3 level, class-major list, one stretch a block, us, before -> after (2026-12-01):
  // p = 9 1090 -> 1030, 10 1413 -> 1345, 12 2418 -> 2077, 16 5598 -> 5382.
  for (int e = threadIdx.x; e < m2l::fold_offset(P + 1) / 2; e += blockDim.x) {
    int L = 0;
    while (m2l::fold_offset(L + 1) / 2 <= e) ++L;
    const int local = e - m2l::fold_offset(L) / 2;
    const m2l::fold_entries ab =
        m2l::class_fold_pair(folded, L, local / (L + 1), local % (L + 1), pb);
    dm[2 * e] = T(ab.a);
    dm[2 * e + 1] = T(ab.b);
  }
  __syncthreads();
}

/// The tensor schedule's shape. H200, 16^3 level grouped by class, double, median us of
/// an A/B probe (tensor / scalar grouped schedule in the same process, 2026-12-02):
///  - uncapped, one warp a tile, the kernel takes 172-194 registers at every order: one
///    block of 8 warps an SM: p = 8 1304, 9 1556, 10 1851, 11 2140, 12 2456, 13 2771,
///    16 4144;
///  - registers capped for two blocks an SM where shared memory holds two (p <= 11;
///    20-44 bytes of spills): p = 8 995, 9 1165, 10 1432-1446, 11 1621-1634 (three blocks
///    at p <= 9, 80 registers: 918, 1093);
///  - two warps a tile: 4-8% faster from p = 12, not kept (m2l::class_tensor_apply);
///  - plain stores in place of the atomics (wrong sums, a bound): p = 12 2159, 13 2436,
///    16 3787 (two warps a tile): the atomics are not what bounds it.
/// Hence __launch_bounds__'s minimum blocks an SM: the tensor schedule's 2 at p <= 11 (else
/// 1), and 0 (unspecified) for the scalar one, whose registers ptxas then chooses as before
/// the tensor schedule (class_group_tensor_min_order: an explicit 1 cost it a block an SM
/// at p = 10).
template <int P, bool Tensor>
constexpr int class_group_min_blocks() {
  return Tensor ? (P <= 11 ? 2 : 1) : 0;
}

/// Tensor: the runs go through m2l::class_tensor_apply (double only, one warp a tile of
/// four pairs: WARPS = class_tensor_warps), else the scalar degree schedule above.
template <int P, class T, int WARPS, bool Tensor = false>
__global__ void __launch_bounds__(WARPS * 32, class_group_min_blocks<P, Tensor>())
    class_group_kernel(const pair_list<T> l, std::int64_t num_chunks, std::int64_t span) {
  static_assert(!Tensor || (std::is_same_v<T, double> && WARPS == class_tensor_warps),
                "the tensor schedule: double, one warp a tile of four pairs");
  constexpr int C = (P + 1) * (P + 1);
  constexpr int S = Tensor ? m2l::class_tensor_stride : group_stride;
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
  [[maybe_unused]] cpx<T>* stage = reinterpret_cast<cpx<T>*>(fmm_smem_raw + lay.stage) + (threadIdx.x >> 5) * 2 * group_pairs;
  const m2l::swap_table<double>& tabd = m2l::swap_constants<double>();
  [[maybe_unused]] const m2l::swap_table<T>& tab = m2l::swap_constants<T>();
  for (int i = threadIdx.x; i < m2l::swap_offset(P + 1); i += blockDim.x) folded[i] = tabd.b[i];
  double* fz = reinterpret_cast<double*>(fmm_smem_raw + lay.fz);
  if constexpr (Tensor) {
    for (int i = threadIdx.x; i < m2l::class_tensor_fact; i += blockDim.x) {
      fz[i] = i <= P ? tabd.fact[i] : 0.0;
    }
  }

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const std::int64_t n = l.num_pairs;
  [[maybe_unused]] const unsigned owned = owned_degrees<P, WARPS>(warp);
  bool have = false;  // tables made for class `current`
  int current = 0;

  // Spans of `span` chunks in turn (launch_class_group_order): block b takes spans b,
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
      s_src[threadIdx.x] = l.src[first + threadIdx.x];
      s_tgt[threadIdx.x] = l.tgt[first + threadIdx.x];
      s_cls[threadIdx.x] = l.cls[first + threadIdx.x];
    }
    __syncthreads();
    // Gather: coefficient c of pair q to rec[c * stride + q]; a pair's record is
    // contiguous in global memory, so consecutive threads take consecutive c. (Its
    // division j / C is 14% of the instructions at p = 8 (Nsight Compute, H200,
    // 2026-12-01), yet a warp a pair instead ran 6-9% slower at p = 9 and 12, 2-3% faster
    // at p = 10, 13, 16, the same at p = 8, against this loop in one run.)
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
        const int col0 = warp * m2l::class_tensor_pairs;
        unsigned live = 0;
#pragma unroll
        for (int q = 0; q < m2l::class_tensor_pairs; ++q) {
          live |= (col0 + q >= q0 && col0 + q < q1) ? 1u << q : 0u;
        }
        if (live != 0) {
          const m2l::class_tensor_cols cols{rec, col0, live};
          // the lane's pair (lane % 4) is the pair of every value it emits
          double* const dst =
              reinterpret_cast<double*>(l.locals + std::int64_t(s_tgt[col0 + (lane & 3)]) * C);
          m2l::class_tensor_apply<P>(cols, dm, psi, ir, fz, [&](int c, int, cpx<double> v) {
            atomicAdd(dst + 2 * c, v.re);
            atomicAdd(dst + 2 * c + 1, v.im);
          });
        }
      } else {
        const bool mine = lane >= q0 && lane < q1;
        m2l::static_for<0, P + 1>([&](auto Lc) {
          constexpr int L = decltype(Lc)::value;
          if (mine && ((owned >> L) & 1u)) {
            m2l::class_forward_degree<L>(rec + lane, S, dm, psi, ir[L + 1]);
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
            m2l::class_backward_degree<L>(
                rec + lane, S, P, dm, psi, ir, tab.fact,
                [&](int c, cpx<T> v0, cpx<T> v1, bool two) {
                  stage[2 * lane] = v0;
                  stage[2 * lane + 1] = v1;
                  __syncwarp();
                  const T* reals = reinterpret_cast<const T*>(stage);
#pragma unroll
                  for (int it = 0; it < 4; ++it) {  // 32 pairs x 4 reals
                    const int idx = it * 32 + lane, q = idx >> 2, part = idx & 3;
                    if (q >= q0 && q < q1 && (two || part < 2)) {
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

/// Spans (launch_class_group_order): one wave of resident blocks takes spans of at most
/// class_group_span_max chunks in turn (block b: spans b, b + grid, ...), so that the
/// blocks in flight work on one window of the list, resident x span chunks, and sweep it
/// in order together; with the list grouped by target tiles
/// (wham::reference::group_by_tile_and_class) the window's sources and targets stay in
/// the L2 cache. Spans are sized so that every block takes the same number (balance).
/// Their cost is a table rebuild at each change of class, so the automatic choice takes
/// them only in double and on long lists, at least class_group_span_min_visits spans a
/// block; otherwise one contiguous stretch a block.
/// H200, 2026-12-01, bench_fmm BM_class_groups_span (tables by class_fold_pair), median
/// us, double, class-major list (group_by_class), one stretch a block / spans of 32 / 64:
///   16^3 level (18,255 chunks; 1-2 spans a block at 64): p = 9 1028 / - / 1037,
///   p = 12 2138 / - / 2087, p = 16 5480 / - / 5493 (and with spans of 32 in an earlier
///   run: 1030 vs 1069, 2077 vs 2163, 5382 vs 5703: slower);
///   32^3 level (168,716 chunks; 10-20 spans a block): p = 8 7474 / 7379 / 7292,
///   p = 10 13841 / 13081 / 13276, p = 12 21977 / 20652 / 21002, p = 16 53908 / 51150 /
///   51760; grouped by tiles of 4 z-planes, spans of 32 / 64 / 128: p = 8 6950 / 6867 /
///   6830, p = 10 12220 / 11768 / 11646, p = 12 19437 / 18147 / 17971, p = 16 54061 /
///   51049 / 49921 (8 planes, 64: 6798, 11403, 17511, 50207).
///   float, 32^3, p = 12 and 16: one stretch 10781, 23515; spans of 64 11167, 26610;
///   tiles of 4 planes 13370, 36465: slower, so float takes no spans.
inline constexpr std::int64_t class_group_span_max = 64;
inline constexpr std::int64_t class_group_span_min_visits = 4;

/// span_max: < 0 automatic (above), 0 one contiguous stretch a block, > 0 spans of at
/// most that many chunks (the benchmark's and the tests' explicit choices).
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


/// Orders at which double runs the tensor schedule (m2l::class_tensor_apply) instead of
/// the scalar one. H200, 16^3 level grouped by class, median us, tensor vs scalar, bench_fmm
/// BM_class_groups_tensor (2026-12-02 08:35 UTC; the tensor kernel uncapped, with a fold
/// pass): p = 9 1177 vs 1063, 10 1802 vs 1302, 11 2073 vs 1682, 12 2384 vs 2069, 13 2685
/// vs 3603, 14 3253 vs 4192, 15 3600 vs 4487, 16 4073 vs 5141. Capped as above, p = 10-12
/// took 1432, 1621, 2466 (A/B probe): still no clear win below 13. (Later runs timed the
/// scalar kernel at 1580, 2330, 3110 us at p = 10-12: a build that gave it an explicit
/// minimum of one block an SM in __launch_bounds__, on which ptxas took 176 instead of
/// 166 registers at p = 10, one block an SM instead of two. Its bound is left unspecified.)
inline constexpr int class_group_tensor_min_order = 13;

template <class T>
constexpr bool class_group_tensor_serves(int p) {
  return std::is_same_v<T, double> && p >= class_group_tensor_min_order;
}

/// The grouped schedule at order P: in double to p = 10 the dense operator on tensor
/// cores (detail/fmm/class_dense.cuh; it takes one contiguous stretch a block and no
/// spans) where the device's shared memory holds it, else the tensor schedule where it
/// serves, else the scalar one (class_group_warps warps).
template <int P, class T>
void launch_class_group_order(const pair_list<T>& l, cudaStream_t stream,
                              std::int64_t span_max = -1) {
  if constexpr (class_dense_serves<T>(P)) {
    if (launch_class_dense_order<P>(l, stream)) return;
  }
  if constexpr (class_group_tensor_serves<T>(P)) {
    launch_class_group_schedule<P, T, class_tensor_warps, true>(l, stream, span_max);
  } else {
    launch_class_group_schedule<P, T>(l, stream, span_max);
  }
}

/// Orders the grouped schedule serves (shared memory: 32 records, the d table).
inline constexpr int class_group_min_order = 1;
template <class T>
constexpr int class_group_max_order() {
  return 16;
}

/// Whether m2l_accumulate_class_groups runs this schedule at order p (else the class
/// form's own schedules, which win at low order). Its time follows its products (sum of
/// degree_cost) from p = 8 to 16, and it is not bound by its atomics, although Nsight
/// Compute puts L2 at 76% of peak at p = 8 (66% at p = 10, 40% at p = 16): a probe of
/// this kernel at p = 8 (H200, 2026-12-01) took 809 us with the atomics, 805 with plain
/// stores in their place, 753 with no stores (p = 10, six warps: 1385, 1298, 1310;
/// p = 12: 2506, 2301, 2341). It is latency-bound: at p = 8, 16 warps an SM, 13.4
/// cycles a warp between instructions (short scoreboard 3.4, instruction-cache misses
/// 2.7, fixed-latency waits 2.1, barriers 1.7, long scoreboard 1.3), 227 M instructions,
/// 31% of them FP64, about ten times the DFMAs' own issue.
/// H200, bench_fmm, 16^3 uniform level (584,136 pairs), median us, grouped (folded d)
/// vs class_atomic (2026-12-01): double p = 8: 815 vs 540; 9: 1086 vs 1263; 10: 1424
/// vs 2236; 12: 2422 vs 3168; 16: 5655 vs 11729. float p = 9: 788 vs 650; 10: 985 vs
/// 911; 11: 1346 vs 1659; 12: 1818 vs 1964; 16: 4472 (six warps) vs 9134.
/// With the tables made by class_fold_pair (eighth session, same day): double p = 8:
/// 788 vs 545, p = 9: 1034 vs 1270; float p = 9: 704 vs 641, p = 10: 873-930 vs 907
/// (16^3) and 7503 vs 8379 (32^3 level): float from p = 10.
template <class T>
constexpr int class_group_from_order() {
  return std::is_same_v<T, double> ? 9 : 10;
}
/// The dense schedule (double, p = 1..10) is faster than the class form's list-order
/// schedules on a grouped list at every order it serves (class_dense_tuning).
template <class T>
constexpr bool class_groups_serve(int p) {
  return class_dense_serves<T>(p) ||
         (p >= class_group_from_order<T>() && p <= class_group_max_order<T>());
}

/// Launches the grouped class form at order p (the caller checked p's range).
template <class T>
void launch_class_groups(const pair_list<T>& l, int p, cudaStream_t stream) {
  bool done = false;
  m2l::static_for_host<class_group_min_order, class_group_max_order<T>() + 1>([&](auto Pc) {
    constexpr int P = decltype(Pc)::value;
    if (P == p) {
      launch_class_group_order<P, T>(l, stream);
      done = true;
    }
  });
  if (!done) {
    throw_invalid_argument("m2l_accumulate_class_groups", "p", p,
                           std::to_string(class_group_min_order) + ".." +
                               std::to_string(class_group_max_order<T>()) +
                               " for the grouped class schedule");
  }
}

}  // namespace wham::detail::fmm
