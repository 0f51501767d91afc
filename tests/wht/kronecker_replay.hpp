// The Kronecker split replayed on the host with the device's exact index mapping
// (wham/detail/wht/kronecker_index.hpp): one strided stage, the middle plan and the whole
// split, what test_kronecker_split checks the plans with.
#pragma once

#include <wham/detail/wht/fwht_host.hpp>
#include <wham/detail/wht/kronecker_index.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace wham::detail::wht::kron {

/// Host simulation of one strided stage with the device's exact index mapping
/// (tiles, threads, rounds), unnormalised, in place on `data` (total elements).
template <class T>
void simulate_strided_stage(T* data, std::int64_t total, int bit, int log_h, int elem_bytes) {
  const strided_shape_t s = strided_shape(log_h, elem_bytes);
  const int C = 1 << s.log_c;
  const int E = 1 << s.log_e;
  const int P = s.threads / C;
  const std::int64_t tile_elems = std::int64_t(1) << (log_h + s.log_c);
  if (s.log_c > bit || total % tile_elems != 0) {
    throw std::invalid_argument("simulate_strided_stage: tile does not divide the data");
  }
  const std::int64_t tiles = total / tile_elems;
  const std::int64_t stride = std::int64_t(1) << bit;
  std::vector<T> tile(static_cast<std::size_t>(tile_elems));
  std::vector<T> v(static_cast<std::size_t>(E));
  for (std::int64_t t = 0; t < tiles; ++t) {
    const std::int64_t base = tile_base(bit, log_h, s.log_c, t);
    for (std::int64_t h = 0; h < (std::int64_t(1) << log_h); ++h)
      for (int c = 0; c < C; ++c) tile[h * C + c] = data[base + h * stride + c];
    // Rounds from the top bits down, as the kernel runs them.
    int top = log_h;
    while (top > 0) {
      const int b = max_int(0, top - s.log_e);
      const int g_bits = top - b;
      const int R = E >> g_bits;
      for (int c = 0; c < C; ++c) {
        for (int p = 0; p < P; ++p) {
          for (int r = 0; r < R; ++r)
            for (int g = 0; g < (1 << g_bits); ++g)
              v[r * (1 << g_bits) + g] =
                  tile[round_row(b, g_bits, unsigned(r * P + p), unsigned(g)) * C + c];
          for (int hh = 1; hh < (1 << g_bits); hh <<= 1)
            for (int j = 0; j < E; ++j)
              if ((j & hh) == 0) {
                const T a = v[j], d = v[j + hh];
                v[j] = a + d;
                v[j + hh] = a - d;
              }
          for (int r = 0; r < R; ++r)
            for (int g = 0; g < (1 << g_bits); ++g)
              tile[round_row(b, g_bits, unsigned(r * P + p), unsigned(g)) * C + c] =
                  v[r * (1 << g_bits) + g];
        }
      }
      top = b;
    }
    for (std::int64_t h = 0; h < (std::int64_t(1) << log_h); ++h)
      for (int c = 0; c < C; ++c) data[base + h * stride + c] = tile[h * C + c];
  }
}

/// Host simulation of the middle plan over `total` elements (rows of 2^log_row),
/// unnormalised: the transform of every gathered row of 2^log_n (gathered_base,
/// gathered_offset), then the strided stage over the middle bits [log_run, log_run +
/// log_row - log_n) (simulate_strided_stage's one-block mapping; the device runs
/// 12 and 13 middle bits as clusters, which transform the same bits).
template <class T>
void simulate_middle(T* data, std::int64_t total, int log_row, int log_n, int log_run,
                     int elem_bytes) {
  if (log_run < 1 || log_run >= log_n || log_n >= log_row || log_row > 31 ||
      total % (std::int64_t(1) << log_row) != 0) {
    throw std::invalid_argument(
        "simulate_middle: need 1 <= log_run < log_n < log_row <= 31 and whole rows");
  }
  const std::int64_t n = std::int64_t(1) << log_n;
  const std::int64_t rows = total >> log_n;
  std::vector<T> v(static_cast<std::size_t>(n));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t base = gathered_base(log_row, log_n, log_run, r);
    for (std::int64_t x = 0; x < n; ++x) {
      v[x] = data[base + gathered_offset(log_row, log_n, log_run, unsigned(x))];
    }
    fwht_inplace(v.data(), log_n);
    for (std::int64_t x = 0; x < n; ++x) {
      data[base + gathered_offset(log_row, log_n, log_run, unsigned(x))] = v[x];
    }
  }
  simulate_strided_stage(data, total, log_run, log_row - log_n, elem_bytes);
}

/// Host simulation of the whole split: contiguous WHT of the `lo` low bits of every
/// segment, then each strided stage of the plan; unnormalised.
template <class T>
void simulate_split(T* data, std::int64_t total, const plan& p, int elem_bytes) {
  const std::int64_t seg = std::int64_t(1) << p.stages[0].bits;
  for (std::int64_t s0 = 0; s0 < total; s0 += seg) fwht_inplace(data + s0, p.stages[0].bits);
  for (int k = 1; k < p.num_stages; ++k) {
    simulate_strided_stage(data, total, p.stages[k].bit, p.stages[k].bits, elem_bytes);
  }
}

}  // namespace wham::detail::wht::kron
