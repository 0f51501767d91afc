// Benchmark support: CUDA-event timing, the memory floors measured in the same
// run, and the counters every wham benchmark reports.
#pragma once

#include <benchmark/benchmark.h>

#include "device_buffer.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace wham_bench {

/// Times one enqueue of `work` on `stream` with CUDA events, in seconds.
template <class Work>
double time_once(cudaStream_t stream, Work&& work) {
  cudaEvent_t start, stop;
  WHAM_TEST_CUDA(cudaEventCreate(&start));
  WHAM_TEST_CUDA(cudaEventCreate(&stop));
  WHAM_TEST_CUDA(cudaEventRecord(start, stream));
  work();
  WHAM_TEST_CUDA(cudaEventRecord(stop, stream));
  WHAM_TEST_CUDA(cudaEventSynchronize(stop));
  float ms = 0.0f;
  WHAM_TEST_CUDA(cudaEventElapsedTime(&ms, start, stop));
  WHAM_TEST_CUDA(cudaEventDestroy(start));
  WHAM_TEST_CUDA(cudaEventDestroy(stop));
  return double(ms) * 1e-3;
}

/// Median of `reps` timed enqueues after `warmup` untimed ones.
template <class Work>
double median_time(cudaStream_t stream, Work&& work, int reps = 15, int warmup = 3) {
  for (int i = 0; i < warmup; ++i) work();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) t.push_back(time_once(stream, work));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// Runs the Google Benchmark loop with manual (CUDA-event) time per iteration;
/// returns the median iteration time in seconds, which the counters use.
template <class Work>
double run_manual(benchmark::State& state, cudaStream_t stream, Work&& work) {
  work();  // warm-up: module load, shared-memory attribute, caches
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  std::vector<double> t;
  for (auto _ : state) {
    const double s = time_once(stream, work);
    state.SetIterationTime(s);
    t.push_back(s);
  }
  std::sort(t.begin(), t.end());
  return t.empty() ? 0.0 : t[t.size() / 2];
}

__global__ void write_floor_kernel(int4* out, std::int64_t n16, int4 value) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n16;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    out[i] = value;
  }
}

__global__ void copy_floor_kernel(const int4* in, int4* out, std::int64_t n16) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n16;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    out[i] = in[i];
  }
}

/// Writes every 16-byte chunk of out and reads every chunk of in (n_in16 <= n_out16), the
/// reads spread evenly over the writes: chunk j of in is read by the thread that writes
/// chunk i with j = floor(i * ratio), ratio = n_in16 / n_out16 in 32.32 fixed point. The
/// stores never wait for the loads: each thread issues the loads of four of its chunks,
/// stores the four, then folds the loaded values into a sum it stores only if it takes
/// a value no input of ours makes (so the loads cannot be dropped).
__global__ void read_write_floor_kernel(const int4* in, std::int64_t n_in16, int4* out,
                                        std::int64_t n_out16, std::uint64_t ratio) {
  constexpr int unroll = 4;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  int acc = 0;
  for (std::int64_t i0 = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i0 < n_out16;
       i0 += unroll * stride) {
    int4 v[unroll];
#pragma unroll
    for (int u = 0; u < unroll; ++u) {
      const std::int64_t i = i0 + u * stride;
      const std::uint64_t j = (std::uint64_t(i) * ratio) >> 32;
      const bool first = i == 0 || ((std::uint64_t(i - 1) * ratio) >> 32) != j;
      v[u] = (i < n_out16 && first && std::int64_t(j) < n_in16) ? in[j] : make_int4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < unroll; ++u) {
      const std::int64_t i = i0 + u * stride;
      if (i < n_out16) out[i] = make_int4(0x3f800000, 1, 2, 3);
    }
#pragma unroll
    for (int u = 0; u < unroll; ++u) acc += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (acc == 0x7fffffff) out[0] = make_int4(acc, acc, acc, acc);
}

inline int floor_grid() {
  int device = 0, sms = 0;
  WHAM_TEST_CUDA(cudaGetDevice(&device));
  WHAM_TEST_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms * 8;
}

/// The write floor: the faster median of a plain 16-byte-wide write kernel and
/// cudaMemsetAsync over the `bytes` at `out`. Whichever the hardware runs faster is the
/// floor, so a fraction of it never flatters a kernel because our own kernel is slow
/// (H200, 2026-12-03: 512 MiB written in 121-122 us, 4.4 TB/s, by the faster of the two).
inline double write_floor(void* out, std::size_t bytes, cudaStream_t stream) {
  const std::int64_t n16 = std::int64_t(bytes / 16);
  const int grid = floor_grid();
  const double kernel = median_time(stream, [&] {
    write_floor_kernel<<<grid, 256, 0, stream>>>(static_cast<int4*>(out), n16,
                                                 make_int4(0x3f800000, 1, 2, 3));
    WHAM_TEST_CUDA(cudaGetLastError());
  });
  const double driver =
      median_time(stream, [&] { WHAM_TEST_CUDA(cudaMemsetAsync(out, 0x3f, bytes, stream)); });
  return std::min(kernel, driver);
}

/// The copy floor: the faster median of a plain 16-byte-wide copy kernel and
/// cudaMemcpyAsync (device to device) of `bytes` from in to out (see write_floor).
/// H200, 2026-12-03: the kernel copied 1 GiB in 549 us (3.9 TB/s), cudaMemcpy in 509 us
/// (4.2 TB/s).
inline double copy_floor(const void* in, void* out, std::size_t bytes, cudaStream_t stream) {
  const std::int64_t n16 = std::int64_t(bytes / 16);
  const int grid = floor_grid();
  const double kernel = median_time(stream, [&] {
    copy_floor_kernel<<<grid, 256, 0, stream>>>(static_cast<const int4*>(in),
                                                static_cast<int4*>(out), n16);
    WHAM_TEST_CUDA(cudaGetLastError());
  });
  const double driver = median_time(stream, [&] {
    WHAM_TEST_CUDA(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, stream));
  });
  return std::min(kernel, driver);
}

/// The read-and-write floor: one kernel that writes the `out_bytes` at out while it reads
/// the `in_bytes` at in (in_bytes <= out_bytes; what a kernel that reads its inputs once and
/// writes its outputs once cannot beat). The IQP encoder reads its parameters as it writes
/// the states: at small n they are a large share of the traffic (complex128 n = 4, double
/// parameters: 80 bytes read for 256 written), which the write floor does not count.
inline double read_write_floor(const void* in, std::size_t in_bytes, void* out,
                               std::size_t out_bytes, cudaStream_t stream) {
  const std::int64_t n_in16 = std::int64_t(in_bytes / 16);
  const std::int64_t n_out16 = std::int64_t(out_bytes / 16);
  if (n_out16 == 0 || n_in16 > n_out16) return 0.0;
  const std::uint64_t ratio =
      static_cast<std::uint64_t>((static_cast<unsigned __int128>(n_in16) << 32) / n_out16);
  const int grid = floor_grid();
  return median_time(stream, [&] {
    read_write_floor_kernel<<<grid, 256, 0, stream>>>(static_cast<const int4*>(in), n_in16,
                                                      static_cast<int4*>(out), n_out16, ratio);
    WHAM_TEST_CUDA(cudaGetLastError());
  });
}

template <class R>
__global__ void fill_uniform_kernel(R* p, std::int64_t count, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    // splitmix64 of (seed, i): uniform in [-1, 1), never a run of zeros.
    std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * std::uint64_t(i + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    p[i] = R(double(z >> 11) * (2.0 / 9007199254740992.0) - 1.0);
  }
}

/// Fills `count` real lanes (float or double) at p with uniform [-1, 1) values,
/// on the device: gigabyte buffers would take seconds to fill from the host.
template <class R>
void fill_uniform(R* p, std::size_t count, std::uint64_t seed = 12345) {
  fill_uniform_kernel<<<floor_grid(), 256>>>(p, std::int64_t(count), seed);
  WHAM_TEST_CUDA(cudaGetLastError());
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
}

/// Sets the counters every wham benchmark reports, from the median time:
///   median_us   the median CUDA-event time of one call
///   GB/s        `bytes` (the minimal traffic the caller counts) over that time
///   floor_frac  the floor's median time over ours (1 = as fast as the plain write/copy)
inline void set_common_counters(benchmark::State& state, double median_s, double bytes,
                                double floor_s) {
  state.counters["median_us"] = median_s * 1e6;
  state.counters["GB/s"] = median_s > 0 ? bytes / median_s * 1e-9 : 0.0;
  state.counters["floor_us"] = floor_s * 1e6;
  state.counters["floor_frac"] = median_s > 0 ? floor_s / median_s : 0.0;
}

}  // namespace wham_bench
