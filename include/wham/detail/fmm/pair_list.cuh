/// \file wham/detail/fmm/pair_list.cuh
/// \brief What every accumulate and class schedule reads: the pair list (device pointers,
/// the displacement's source), each pair's displacement or rotation data by that source,
/// and the two ways a value is added to its target (atomic, or by the target's owner).
///
/// Geometry: the displacement of pair i is `deltas[i]`, or
/// `centers[tgt[i]] - centers[src[i]]`, or `class_deltas[cls[i]]` (class form: each block
/// makes the rotation data of every class once, e^{i alpha}, e^{i beta}, 1/r, into shared
/// memory; threads raise them to the powers their order needs).
#pragma once

#include <wham/detail/m2l/blocks.cuh>

#include <cuda/std/complex>

#include <cstdint>

namespace wham::detail::fmm {

using m2l::cpx;

/// Where a pair's displacement comes from.
enum class geometry : int { pair_deltas = 0, centers = 1, classes = 2 };

/// Everything a launch needs (device pointers; `cls` only for the class form). The
/// schedules read a pair's indices through source_row and target_row: a pair with an index
/// out of range reads row 0 of multipoles (and of centers) and adds to nothing.
template <class T>
struct pair_list {
  // Every field named at construction: a list without its row counts would skip every pair.
  __host__ __device__ pair_list(const cpx<T>* multipoles_, cpx<T>* locals_,
                                const std::int32_t* src_, const std::int32_t* tgt_,
                                const std::int32_t* cls_, const T* geo_, int num_classes_,
                                geometry mode_, std::int64_t num_pairs_,
                                std::int64_t num_multipoles_, std::int64_t num_locals_)
      : multipoles(multipoles_),
        locals(locals_),
        src(src_),
        tgt(tgt_),
        cls(cls_),
        geo(geo_),
        num_classes(num_classes_),
        mode(mode_),
        num_pairs(num_pairs_),
        num_multipoles(num_multipoles_),
        num_locals(num_locals_) {}

  const cpx<T>* multipoles;
  cpx<T>* locals;
  const std::int32_t* src;
  const std::int32_t* tgt;
  const std::int32_t* cls;
  const T* geo;  ///< deltas [num_pairs][3] | centers [cells][3] | class deltas [classes][3]
  int num_classes;
  geometry mode;
  std::int64_t num_pairs;
  std::int64_t num_multipoles;  ///< rows of multipoles: src outside them skips the pair
  std::int64_t num_locals;      ///< rows of locals: tgt outside them skips the pair

  /// The row a pair reads: src, or row 0 when src is out of range (its result is dropped).
  __device__ __forceinline__ std::int32_t source_row(std::int32_t s) const {
    return std::uint64_t(std::int64_t(s)) < std::uint64_t(num_multipoles) ? s : 0;
  }
  /// The row a pair adds to: tgt, or -1 (nowhere) when src or tgt is out of range.
  __device__ __forceinline__ std::int32_t target_row(std::int32_t s, std::int32_t t) const {
    return std::uint64_t(std::int64_t(s)) < std::uint64_t(num_multipoles) &&
                   std::uint64_t(std::int64_t(t)) < std::uint64_t(num_locals)
               ? t
               : -1;
  }
};

/// Largest class table the class form takes (shared memory: 5 values a class).
inline constexpr int max_classes = 1024;

/// Largest pair count: 32 pairs a warp unit of a grid of at most 2^31 - 1 blocks, and
/// 64-bit coefficient offsets.
inline constexpr std::int64_t max_pairs = std::int64_t(0x7fffffff) * 32;

/// Rotation data of one displacement class, made once per block.
template <class T>
struct class_rotation {
  cpx<T> ea;  ///< e^{i alpha}
  cpx<T> eb;  ///< e^{i beta}
  T inv_r;    ///< 1 / r
  T pad;
};

template <class T>
__device__ __forceinline__ class_rotation<T> make_class_rotation(const T* d) {
  const m2l::geometry<T> g = m2l::make_geometry(d[0], d[1], d[2]);
  class_rotation<T> c;
  c.ea = g.ea;
  c.eb = g.eb;
  c.inv_r = g.inv_r;
  c.pad = T(0);
  return c;
}

/// Every block fills the class table (call before the block's first __syncthreads).
template <class T>
__device__ __forceinline__ void load_class_table(const pair_list<T>& l, class_rotation<T>* table) {
  if (l.mode != geometry::classes) return;
  for (int c = threadIdx.x; c < l.num_classes; c += blockDim.x) {
    table[c] = make_class_rotation(l.geo + 3 * std::int64_t(c));
  }
}

/// The direction powers and 1/r of pair i (source s, target t, class k).
template <int P, class T>
__device__ __forceinline__ void pair_direction(const pair_list<T>& l,
                                               const class_rotation<T>* table, std::int64_t i,
                                               std::int32_t s, std::int32_t t, std::int32_t k,
                                               m2l::direction<P, T>& dir, T& inv_r) {
  if (l.mode == geometry::classes) {
    class_rotation<T> c;
    if (k >= 0 && k < l.num_classes) {
      c = table[k];
    } else {  // a class id out of range: the pair's result is NaN, visibly
      const T nan = T(0) / T(0);
      c = {{nan, nan}, {nan, nan}, nan, nan};
    }
    dir.ea[0] = {T(1), T(0)};
    dir.eb[0] = {T(1), T(0)};
#pragma unroll
    for (int m = 1; m <= P; ++m) {
      dir.ea[m] = dir.ea[m - 1] * c.ea;
      dir.eb[m] = dir.eb[m - 1] * c.eb;
    }
    inv_r = c.inv_r;
    return;
  }
  T x, y, z;
  if (l.mode == geometry::pair_deltas) {
    const T* d = l.geo + 3 * i;
    x = d[0];
    y = d[1];
    z = d[2];
  } else {  // t < 0: a skipped pair (s is then row 0), read in bounds
    const T* a = l.geo + 3 * std::int64_t(t < 0 ? s : t);
    const T* b = l.geo + 3 * std::int64_t(s);
    x = a[0] - b[0];
    y = a[1] - b[1];
    z = a[2] - b[2];
  }
  dir = m2l::make_direction<P>(x, y, z);
  inv_r = m2l::inverse_distance(x, y, z);
}

/// The displacement of pair i (warp schedule: warp_m2l makes its own powers).
template <class T>
__device__ __forceinline__ void pair_delta(const pair_list<T>& l, std::int64_t i, std::int32_t s,
                                           std::int32_t t, std::int32_t k, T& x, T& y, T& z) {
  const T* d;
  if (l.mode == geometry::pair_deltas) {
    d = l.geo + 3 * i;
  } else if (l.mode == geometry::classes) {
    if (k < 0 || k >= l.num_classes) {
      x = y = z = T(0) / T(0);
      return;
    }
    d = l.geo + 3 * std::int64_t(k);
  } else {  // t < 0: a skipped pair (s is then row 0), read in bounds
    const T* a = l.geo + 3 * std::int64_t(t < 0 ? s : t);
    const T* b = l.geo + 3 * std::int64_t(s);
    x = a[0] - b[0];
    y = a[1] - b[1];
    z = a[2] - b[2];
    return;
  }
  x = d[0];
  y = d[1];
  z = d[2];
}

/// The unpowered rotation angles and 1/r of pair i (split schedule).
template <class T>
__device__ __forceinline__ void pair_angles(const pair_list<T>& l, const class_rotation<T>* table,
                                            std::int64_t i, std::int32_t s, std::int32_t t,
                                            std::int32_t k, m2l::angles<T>& a, T& inv_r) {
  if (l.mode == geometry::classes) {
    if (k >= 0 && k < l.num_classes) {
      const class_rotation<T> c = table[k];
      a = {c.ea, c.eb};
      inv_r = c.inv_r;
    } else {  // a class id out of range: the pair's result is NaN, visibly
      const T nan = T(0) / T(0);
      a = {{nan, nan}, {nan, nan}};
      inv_r = nan;
    }
    return;
  }
  T x, y, z;
  pair_delta(l, i, s, t, k, x, y, z);
  a = m2l::make_angles(x, y, z);
  inv_r = m2l::inverse_distance(x, y, z);
}

template <class T>
__device__ __forceinline__ void add_atomic(cpx<T>* locals, std::int64_t index, cpx<T> v) {
  atomicAdd(&locals[index].re, v.re);
  atomicAdd(&locals[index].im, v.im);
}

template <class T>
__device__ __forceinline__ void add_owned(cpx<T>* locals, std::int64_t index, cpx<T> v) {
  locals[index] = locals[index] + v;
}

/// The pair list of a form's arguments (checked by the caller).
template <class T>
pair_list<T> make_list(const cuda::std::complex<T>* multipoles, const T* geo,
                       const std::int32_t* cls, const std::int32_t* src, const std::int32_t* tgt,
                       cuda::std::complex<T>* locals, std::int64_t num_pairs,
                       std::int64_t num_multipoles, std::int64_t num_locals, int num_classes,
                       geometry mode) {
  return {reinterpret_cast<const cpx<T>*>(multipoles),
          reinterpret_cast<cpx<T>*>(locals),
          src,
          tgt,
          cls,
          geo,
          num_classes,
          mode,
          num_pairs,
          num_multipoles,
          num_locals};
}

}  // namespace wham::detail::fmm
