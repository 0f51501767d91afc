/// \file wham/detail/fmm/class_dense.cuh
/// \brief The class form over pairs grouped by class as one dense product per class on
/// FP64 tensor cores (double): L = A_k M, with the direct operator of class k,
///   A[(n, m), (k, l)] = (-1)^l S_{n+k}^{m-l}(delta_k)  for n + k <= p, else 0,
/// made once per run of the class in shared memory from the class's (p+1)^2 singular
/// harmonics, and applied to eight pairs at a time (N = the eight pairs) as mma.m16n8k4
/// on sm_90 (two row tiles a product; 66 TFLOP/s on an H200 against 33 for m8n8k4) and
/// mma.m8n8k4 below.
///
/// Why the direct operator and not the rotations: it has more arithmetic (O(p^4) a pair,
/// 1,365 complex multiply-adds at p = 8, against O(p^3)), but it is one matrix shared by
/// every pair of a class, which is what tensor cores need; the factorised form is three
/// small products a degree with a chain between them (detail/m2l/class_tensor.cuh).
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
/// Shapes by order: class_dense_tuning.
#pragma once

#include <wham/detail/fmm/accumulate.cuh>
#include <wham/detail/m2l/split.cuh>
#include <wham/detail/m2l/tensor.cuh>

#include <type_traits>

namespace wham::detail::fmm {

/// Pairs a tile (the N of mma.m8n8k4).
inline constexpr int dense_pairs = 8;

/// Degree of complex coefficient index i = n^2 + n + m.
__host__ __device__ constexpr int dense_degree(int i) {
  int d = 0;
  while ((d + 1) * (d + 1) <= i) ++d;
  return d;
}

/// The same at run time without the loop (exact for i < 2^26).
__device__ __forceinline__ int dense_degree_fast(int i) {
  int d = int(sqrtf(float(i)));
  d -= d * d > i;
  d += (d + 1) * (d + 1) <= i;
  return d;
}

/// Kept column tiles of row tile r: c with deg(2c) <= p - deg(4r), a prefix (2c <=
/// (room + 1)^2 - 1), at most the (C + 1) / 2 column tiles.
__host__ __device__ constexpr int dense_cols(int p, int r) {
  const int C = (p + 1) * (p + 1), ct = (C + 1) / 2;
  const int room = p - dense_degree(4 * r);
  const int c = ((room + 1) * (room + 1) + 1) / 2;
  return c < ct ? c : ct;
}

/// First tile of row tile r in the table; dense_offset(p, row tiles) tiles in all.
__host__ __device__ constexpr int dense_offset(int p, int r) {
  int o = 0;
  for (int q = 0; q < r; ++q) o += dense_cols(p, q);
  return o;
}

template <int P>
struct dense_shape {
  static constexpr int C = (P + 1) * (P + 1);
  static constexpr int row_tiles = (C + 3) / 4;
  static constexpr int col_tiles = (C + 1) / 2;
  static constexpr int tiles = dense_offset(P, row_tiles);
  /// A pair's record in doubles: four real columns a column tile, padded so that the
  /// four pairs of a half-warp's B load start 4 doubles apart modulo 16 (no bank
  /// conflicts).
  static constexpr int record =
      (4 * col_tiles) % 16 == 4 || (4 * col_tiles) % 16 == 12 ? 4 * col_tiles : 4 * col_tiles + 4;
};

/// The dense schedule's shape: WARPS warps a block, NP tiles of eight pairs a warp at
/// once (each operator load feeds NP products), G row tiles a group (their column loads
/// shared; 2 G NP accumulators), BUF record buffers a warp (2: the next tiles' copies
/// in flight during the products), M16: pairs of row tiles as one mma.m16n8k4, BULK:
/// the results staged in shared memory and added to each target by one bulk reduction
/// (cp.reduce.async.bulk .add.f64, sm_90; else one atomic a value from the accumulator's
/// lane), SPAN: the most pairs a block takes at once (0: one contiguous stretch a block;
/// else spans of at most SPAN pairs, the blocks taking them in turn, so that the pairs
/// in flight keep to one part of a list grouped by tiles of targets), LOAD_BULK: each
/// pair's record gathered by one bulk copy (cp.async.bulk, completion counted on a
/// per-warp mbarrier; sm_90) instead of one cp.async per coefficient (one buffer only).
template <int WARPS_, int NP_, int G_, int BUF_, bool M16_, bool BULK_ = false, int SPAN_ = 0,
          bool LOAD_BULK_ = false>
struct dense_config {
  static constexpr int warps = WARPS_, np = NP_, g = G_, buf = BUF_, span = SPAN_;
  static constexpr bool m16 = M16_, bulk = BULK_, load_bulk = LOAD_BULK_;
  static_assert(!M16_ || G_ % 2 == 0, "m16n8k4 takes row tiles in pairs");
  static_assert(!LOAD_BULK_ || (BUF_ == 1 && NP_ == 1), "bulk gathers fill one buffer");
  static_assert(NP_ * 8 <= 32, "a lane holds the indices of one pair of the warp's tiles");
};

/// Shared memory (bytes from the dynamic base): the operator tiles, S, then each warp's
/// record buffers.
template <int P, class K>
struct dense_layout {
  using shape = dense_shape<P>;
  static constexpr std::size_t tiles = 0;
  static constexpr std::size_t s = tiles + std::size_t(shape::tiles) * 32 * sizeof(double);
  static constexpr std::size_t buffers = s + std::size_t(shape::C) * sizeof(cpx<double>);
  static constexpr int warp_pairs = K::np * dense_pairs;
  static constexpr std::size_t buffer_doubles = std::size_t(warp_pairs) * shape::record;
  static constexpr std::size_t stage =
      buffers + std::size_t(K::warps) * K::buf * buffer_doubles * sizeof(double);
  /// A pair's staged result in doubles (BULK): 2C, even so that every pair's row starts
  /// 16-byte aligned for the bulk copy, and 2 or 6 modulo 8 so that the accumulator
  /// lanes' stores (eight rows of four pairs two rows apart) meet no bank conflicts.
  /// With every row tile in one group (all results in registers when the products are
  /// done) and one record buffer, the results are staged in the records themselves.
  static constexpr bool stage_in_records =
      K::bulk && K::g >= shape::row_tiles && K::buf == 1 && K::np == 1;
  static constexpr int stage_stride =
      stage_in_records ? shape::record
                       : ((2 * shape::C) % 8 == 0 ? 2 * shape::C + 2 : 2 * shape::C);
  static constexpr std::size_t stage_doubles =
      K::bulk && !stage_in_records ? std::size_t(warp_pairs) * stage_stride : 0;
  /// Each warp's mbarrier (LOAD_BULK).
  static constexpr std::size_t bars =
      stage + std::size_t(K::warps) * stage_doubles * sizeof(double);
  static constexpr std::size_t total =
      bars + (K::load_bulk ? std::size_t(K::warps) * sizeof(unsigned long long) : 0);
};

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
    const double r2 = x * x + y * y + z * z, inv_r2 = 1.0 / r2;
    const cpx<double> xy{x, y};
    cpx<double> s{1.0 / sqrt(r2), 0.0};  // S_0^0, then S_j^j up to j = m
    for (int j = 1; j <= m; ++j) s = scale(s * xy, double(2 * j - 1) * inv_r2);
    cpx<double> prev2{0.0, 0.0}, prev = s;
    S[m * m + 2 * m] = s;
    for (int n = m + 1; n <= P; ++n) {
      const cpx<double> v = scale(
          scale(prev, double(2 * n - 1) * z) - scale(prev2, double((n + m - 1) * (n - m - 1))),
          inv_r2);
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

/// D += A B with A 16 x 4 (rows of two row tiles), B 4 x 8, FP64 (sm_90).
__device__ __forceinline__ void dense_mma16(double (&d0)[2], double (&d1)[2], double a0, double a1,
                                            double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
      "{%0, %1, %2, %3};"
      : "+d"(d0[0]), "+d"(d0[1]), "+d"(d1[0]), "+d"(d1[1])
      : "d"(a0), "d"(a1), "d"(b));
#else
  (void)d0;
  (void)d1;
  (void)a0;
  (void)a1;
  (void)b;
  __trap();
#endif
}

/// dst[0, bytes / 8) += src[...] as one asynchronous bulk reduction (sm_90; each element
/// added atomically in the L2, so blocks adding to one target concurrently is fine): one
/// request for a whole expansion instead of a red.f64 per value. Both 16-byte aligned,
/// bytes a multiple of 16. The writes to src must be fenced for the async proxy first.
__device__ __forceinline__ void bulk_reduce_add(double* dst, const double* src, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned s = unsigned(__cvta_generic_to_shared(src));
  asm volatile(
      "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f64 [%0], [%1], %2;\n\t"
      "cp.async.bulk.commit_group;" ::"l"(dst),
      "r"(s), "r"(bytes)
      : "memory");
#else  // no bulk copies before sm_90: the same sums by atomics, one lane a target
  for (unsigned i = 0; i < bytes / sizeof(double); ++i) atomicAdd(dst + i, src[i]);
#endif
}

/// Makes this thread's shared-memory writes visible to its later bulk operations.
__device__ __forceinline__ void bulk_fence() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

/// Waits until this thread's bulk reductions have read their shared-memory source
/// (READ) or completed.
template <bool READ>
__device__ __forceinline__ void bulk_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (READ) {
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  } else {
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
#endif
}

/// Initialises the mbarrier at `bar` (shared memory) for `count` arrivals a phase.
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned a = unsigned(__cvta_generic_to_shared(bar));
  asm volatile(
      "mbarrier.init.shared::cta.b64 [%0], %1;\n\t"
      "fence.mbarrier_init.release.cluster;" ::"r"(a),
      "r"(count)
      : "memory");
#else
  (void)bar;
  (void)count;
#endif
}

/// Invalidates the mbarrier at `bar` (its memory is free for other uses after this).
__device__ __forceinline__ void mbar_inval(unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned a = unsigned(__cvta_generic_to_shared(bar));
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(a) : "memory");
#else
  (void)bar;
#endif
}

/// Arrives on `bar`, first adding `bytes` to the transfers its phase waits for.
__device__ __forceinline__ void mbar_arrive_expect(unsigned long long* bar, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned a = unsigned(__cvta_generic_to_shared(bar));
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(a), "r"(bytes)
               : "memory");
#else
  (void)bar;
  (void)bytes;
#endif
}

/// Waits until the phase of `bar` with this parity has completed.
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned a = unsigned(__cvta_generic_to_shared(bar));
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "WHAM_MBAR_WAIT:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra WHAM_MBAR_WAIT;\n\t}" ::"r"(a),
      "r"(parity)
      : "memory");
#else
  (void)bar;
  (void)parity;
#endif
}

/// dst[0, bytes) = src[0, bytes) as one bulk copy into shared memory, counted on `bar`
/// (sm_90; both 16-byte aligned, bytes a multiple of 16).
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes,
                                          unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned d = unsigned(__cvta_generic_to_shared(dst));
  const unsigned b = unsigned(__cvta_generic_to_shared(bar));
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(d),
      "l"(src), "r"(bytes), "r"(b)
      : "memory");
#else
  (void)dst;
  (void)src;
  (void)bytes;
  (void)bar;
  __trap();
#endif
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
  constexpr bool use_m16 = false;  // m16n8k4 in FP64 is sm_90's: pairs of m8n8k4 below
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
          for (int u = 0; u < NP; ++u) dense_mma16(acc[u][g], acc[u][g + 1], a0, a1, b[u]);
        } else if constexpr (kept && !(use_m16 && g % 2 == 1 && c < dense_cols(P, r - 1))) {
          const double a = a_lane[(dense_offset(P, r) + c) * 32];
#pragma unroll
          for (int u = 0; u < NP; ++u) m2l::tensor_mma(acc[u][g], a, b[u]);
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
      auto pair_index = [&](const std::int32_t* a, std::int64_t t) {
        const std::int64_t i = s0 + t * WP + lane;
        return i < s1 ? a[i] : 0;
      };
      // Tile t's records into dst; src: pair_index(l.src, t).
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
      int src_next = K::buf == 1 && warp < num_tiles ? pair_index(l.src, warp) : 0;
      if (K::buf == 2 && warp < num_tiles) gather(warp, buf, pair_index(l.src, warp));
      for (std::int64_t t = warp; t < num_tiles; t += WARPS) {
        const int tgt = K::bulk ? pair_index(l.tgt, t) : 0;
        if constexpr (K::bulk) {  // the last tile's results are read out of the stage
          bulk_wait<true>();
          __syncwarp();
        }
        if constexpr (K::buf == 2) {
          if (t + WARPS < num_tiles) {
            gather(t + WARPS, buf + (slot ^ 1) * layout::buffer_doubles,
                   pair_index(l.src, t + WARPS));
            asm volatile("cp.async.wait_group 1;" ::: "memory");
          } else {
            asm volatile("cp.async.wait_group 0;" ::: "memory");
          }
        } else {
          gather(t, buf, src_next);
          src_next = t + WARPS < num_tiles ? pair_index(l.src, t + WARPS) : 0;
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
          if (lane < count) {
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
              dst[u][h] =
                  q < count
                      ? reinterpret_cast<double*>(l.locals + std::int64_t(l.tgt[first + q]) * C) +
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

/// Shapes by order. H200, 16^3 level grouped by class (584,136 pairs), double, median us
/// of an A/B probe (every shape against the grouped schedule of the time and pair
/// streaming on the same pairs, 2026-12-02; shape = warps / tiles a warp / row tiles a
/// group / buffers):
///  - m8n8k4 for every product (8/1/2/2): p = 6 313, 7 360, 8 545 (33 TFLOP/s for
///    m8n8k4 against 66 for m16n8k4 in a loop of independent products on this GPU);
///  - m16n8k4: p = 6: 8/1/2/2 309, 16/1/2/1 304, 12/1/2/1 306, 8/2/2/1 305, 8/1/2/1 281,
///    6/1/2/1 285; p = 7: 331, 319, 325, 328, 343, 6/1/2/1 299; p = 8: 486-503, 495,
///    496, 497-513, 514, 6/1/2/1 463-466, 6/1/4/1 458; p = 9: 12/1/2/1 819, 8/1/2/1 839,
///    6/1/2/1 968; p = 10: 8/1/2/1 1206, 6/1/2/1 1345. The grouped schedule before it:
///    p = 6 437, 7 692, 8 905, 9 1038, 10 1310 us; pair streaming 241, 437, 513, 1474,
///    1865 us. p <= 5 (m8n8k4, 4/1/4/2 and 8/1/2/2): p = 2 70 / 74, 3 84 / 84, 4 156 /
///    157, 5 177 / 179.
/// The probe's operator build still counted each row's kept tiles by a loop (since
/// replaced by dense_cols' closed form); bench_fmm times the chosen shapes of the final
/// code at p = 8, 9, 10 in 458-461, 523-528, 765-775 us (2026-12-02, two runs), so the
/// probe's p = 9, 10 figures above carry that loop and their ranking may not hold.
/// At p = 8 Nsight Compute puts the L2 at 73% of its peak (the gathers and the atomics;
/// 99% hits), the tensor pipe at 32%, and 0.29 instructions a cycle per scheduler: more
/// warps or more pairs a warp do not help; fewer L2 requests would.
///
/// Bulk reductions and spans (sixteenth session, 2026-12-02, H200, an A/B probe of each
/// order's shape as above, atomics without spans / atomics with spans of 4096 / bulk
/// reductions with spans of 4096, median us; 16^3 grouped by class, then 32^3 = 5,398,920
/// pairs grouped by tiles of four target z-planes, then class):
///  - 16^3: p = 1 33.9 / 34.5 / 38.6, 2 67.8 / 68.0 / 64.3, 3 82.0 / 81.8 / 83.4, 4 152 /
///    152 / 134, 5 174 / 174 / 182, 6 276 / 276 / 299, 7 288 / 290 / 384, 8 457 / 462 /
///    509 (bulk with 8 warps and 6 row tiles a group 447-455), 9 520 / 522, 10 768 / 783;
///  - 32^3 by tiles: p = 1 270 / 274 / 343, 2 517 / 523 / 551, 3 625 / 647 / 631, 4 1255
///    / 1240 / 1094, 5 1349 / 1341 / 1428, 6 2318 / 2302 / 2858, 7 2901 / 2415 / 3664, 8
///    4976 / 3800 / 4426, 9 5869 / 4338, 10 8724 / 6520 (p = 9, 10: no room for the
///    stage). Pair streaming on the same pairs: 16^3 p = 8 516 us, 32^3 p = 8 4520 us.
/// So spans of 4096 at every order (one contiguous stretch a block already holds fewer
/// pairs at 16^3; a tiled 32^3 list runs 1.2-1.35x faster from p = 7). Bulk reductions
/// on their own win only at p = 4: their stage costs shared memory, hence blocks.
///
/// Every row tile in one group (the same day and probe, "all rows": the warp keeps all
/// its results in registers until the products are done, loads each B fragment once,
/// and stages the results for the bulk reductions in its record buffer, so the stage
/// costs no shared memory; median us, 16^3 by class / 32^3 by tiles, against the shapes
/// above with spans): p = 2 all rows with 4 warps 61.6 / 499 (66.8 / 522), 3 83.1 / 620
/// (82.7 / 647), 4 129.5 / 1042 (130.5 / 1101), 5 176 / 1352 (174 / 1334: kept), 6 238
/// / 1945 (276 / 2302), 7 284 / 2384 (291 / 2425); p = 8 with 6 warps 399 / 3325 (460 /
/// 3801; 4 warps 426 / 3733, 8 warps one block an SM 474 / 4159); p = 9 with 12 warps 520
/// / 4111 (525 / 4347); p = 10 with 8 warps 736 / 6192 (781 / 6537). Pair streaming on
/// the same pairs at p = 8: 516 / 4520 us.
///
/// Latency (seventeenth session, 2026-12-02, H200). Nsight Compute on the p = 8 shape: L2
/// at 67% of peak, issue slots 24% busy, 10.8 cycles between a warp's instructions, a
/// third of them long-scoreboard stalls; the largest were waits on loads issued just
/// before their use: the run's end found 32 class ids a round (5.6% of the samples),
/// each tile's target ids loaded when its bulk reductions were issued (3.8% + 5.8% in
/// the reduction loop), its source ids just before the gather (4%). Now the run's end is
/// found 256 ids a round (dense_run), the sources are loaded one tile ahead and the
/// targets when the tile's gather is issued. A/B probe, old / new, median us, 16^3 by
/// class; 32^3 by tiles: p = 2 64.2 / 61.4; 492 / 429, 4 133.7 / 128.8; 1041 / 1015, 5
/// 178 / 167; 1326 / 1296, 6 240 / 239; 1939 / 1908, 7 290 / 288; 2387 / 2330, 8 406 /
/// 392; 3296 / 3212, 9 515 / 511; 4117 / 3836, 10 737 / 721; 6155 / 5601 (pair
/// streaming at p = 8: 517; 4524 us). Each pair's record by one bulk copy instead of
/// cp.async a coefficient (LOAD_BULK): p = 10 702 / 5376 (kept), p = 8 394 / 3263, p =
/// 4 128.5 / 1004 (within noise: not taken), p = 9 +1.2-1.4% (the first probe).
inline constexpr int class_dense_span = 4096;

/// A shape with every row tile of order P in one group (bulk reductions staged in the
/// record buffer): WARPS warps a block; LOAD_BULK as dense_config.
template <int P, int WARPS, bool LOAD_BULK = false>
using dense_all_rows = dense_config<WARPS, 1, (dense_shape<P>::row_tiles + 1) / 2 * 2, 1, true,
                                    true, class_dense_span, LOAD_BULK>;

template <int P>
struct class_dense_tuning {
  using type = std::conditional_t<
      (P == 1 || P == 5), dense_config<4, 1, 4, 2, true, false, class_dense_span>,
      std::conditional_t<(P <= 7), dense_all_rows<P, 4>,
                         std::conditional_t<(P == 8), dense_all_rows<P, 6>,
                                            std::conditional_t<(P == 9), dense_all_rows<P, 12>,
                                                               dense_all_rows<P, 8, true>>>>>;
};

/// Orders the dense schedule is built for (double): the operator tiles and records of
/// p = 10 take 224 KB of shared memory with eight warps; p = 11 would not fit four.
inline constexpr int class_dense_max_order = 10;

template <class T>
constexpr bool class_dense_serves(int p) {
  return std::is_same_v<T, double> && p >= 1 && p <= class_dense_max_order;
}

/// The dense schedule at order P if the device's shared memory per block holds its
/// shape (an H100 or H200 does at every order; an A100 not from p = 9); false otherwise.
template <int P>
bool launch_class_dense_order(const pair_list<double>& l, cudaStream_t stream) {
  using K = typename class_dense_tuning<P>::type;
  if (dense_layout<P, K>::total > current_device_limits().smem_per_block_optin) return false;
  launch_class_dense<P, K>(l, stream);
  return true;
}

}  // namespace wham::detail::fmm
