// wham_traffic: one call of iqp_encode or fwht for Nsight Compute to count its DRAM
// bytes (scripts/traffic.sh runs it under ncu and prints bytes per amplitude).
//
//   wham_traffic iqp  c64|c128                 n      BATCH [automatic|fused|kronecker|baseline]
//   wham_traffic fwht float|double|c64|c128    log_n  BATCH [automatic|fused|kronecker|baseline]
//
// BATCH is a row count, or 512MiB / 1GiB for the rows that fill that much output.
// The program makes one untimed call (module load, shared-memory attributes), writes a
// scratch buffer of twice the L2 so that no line of that call is left in the cache,
// then profiles (cudaProfilerStart/Stop, for `ncu --profile-from-start off`) one call,
// and, after another flush, the floor over the same output: a plain 16-byte write
// (IQP) or copy (FWHT) kernel from bench/common.cuh. Inputs are uniform in [-1, 1)
// (IQP: `iqp` variant, double parameters). It prints one line, `point key=value ...`,
// that the script joins with ncu's figures.
#include <wham/fwht.cuh>
#include <wham/iqp.cuh>

#include "common.cuh"

#include <cuda/std/complex>
#include <cuda_profiler_api.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace {

std::int64_t parse_batch(const std::string& arg, std::size_t row_bytes) {
  std::int64_t bytes = 0;
  if (arg == "512MiB") bytes = std::int64_t(1) << 29;
  if (arg == "1GiB") bytes = std::int64_t(1) << 30;
  if (bytes > 0) return std::max<std::int64_t>(1, bytes / std::int64_t(row_bytes));
  const long long b = std::strtoll(arg.c_str(), nullptr, 10);
  if (b < 1) throw std::invalid_argument("BATCH: a row count >= 1, 512MiB or 1GiB");
  return b;
}

/// Evicts every line the last call left in L2 (dirty lines go to DRAM here, outside
/// the profiled ranges).
void flush_l2(wham_test::device_buffer<int4>& scratch) {
  wham_bench::write_floor_kernel<<<wham_bench::floor_grid(), 256>>>(
      scratch.data(), std::int64_t(scratch.size()), make_int4(1, 2, 3, 4));
  WHAM_TEST_CUDA(cudaGetLastError());
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
}

wham_test::device_buffer<int4> make_scratch() {
  int device = 0, l2 = 0;
  WHAM_TEST_CUDA(cudaGetDevice(&device));
  WHAM_TEST_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  return wham_test::device_buffer<int4>(2 * std::size_t(l2) / sizeof(int4));
}

/// The call, then the floor kernel, each alone in a profiled range.
template <class Call, class Floor>
void profile(Call&& call, Floor&& floor) {
  auto scratch = make_scratch();
  call();  // module load and attributes, outside the ranges
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  flush_l2(scratch);
  WHAM_TEST_CUDA(cudaProfilerStart());
  call();
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  WHAM_TEST_CUDA(cudaProfilerStop());
  flush_l2(scratch);
  WHAM_TEST_CUDA(cudaProfilerStart());
  floor();
  WHAM_TEST_CUDA(cudaGetLastError());
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  WHAM_TEST_CUDA(cudaProfilerStop());
}

template <class Out>
int run_iqp(int n, const std::string& batch_arg, const std::string& path_name) {
  const std::int64_t batch = parse_batch(batch_arg, sizeof(Out) << n);
  wham::iqp_path path = wham::iqp_path::automatic;
  if (path_name == "fused") path = wham::iqp_path::fused;
  if (path_name == "kronecker") path = wham::iqp_path::kronecker;
  if (path_name == "baseline") path = wham::iqp_path::baseline;
  const auto variant = wham::iqp_variant::iqp;
  const wham::iqp_size<Out> size(n, batch);
  const std::int64_t per = wham::iqp_num_params(n, variant);
  wham_test::device_buffer<double> params(std::size_t(per * batch));
  wham_test::device_buffer<Out> states(std::size_t(size.amplitudes));
  wham_bench::fill_uniform(params.data(), params.size());
  const wham::iqp_path resolved =
      path == wham::iqp_path::automatic ? wham::iqp_automatic_path<Out>(n, batch, variant) : path;
  profile([&] { wham::iqp_encode(params.data(), states.data(), n, batch, variant, nullptr, path); },
          [&] {
            wham_bench::write_floor_kernel<<<wham_bench::floor_grid(), 256>>>(
                reinterpret_cast<int4*>(states.data()), std::int64_t(size.bytes / 16),
                make_int4(0x3f800000, 1, 2, 3));
          });
  const char* names[] = {"automatic", "fused", "kronecker", "baseline", "product"};
  std::printf(
      "point op=iqp type=c%d n=%d batch=%lld path=%s amplitudes=%lld out_bytes=%zu "
      "param_bytes=%zu floor=write\n",
      int(sizeof(Out) * 8), n, static_cast<long long>(batch), names[static_cast<int>(resolved)],
      static_cast<long long>(size.amplitudes), size.bytes, params.bytes());
  return 0;
}

template <class T>
int run_fwht(int log_n, const std::string& batch_arg, const std::string& path_name,
             const char* type_name) {
  const std::int64_t batch = parse_batch(batch_arg, sizeof(T) << log_n);
  wham::fwht_path path = wham::fwht_path::automatic;
  if (path_name == "fused") path = wham::fwht_path::fused;
  if (path_name == "kronecker") path = wham::fwht_path::kronecker;
  if (path_name == "baseline") path = wham::fwht_path::baseline;
  const std::size_t count = std::size_t(batch) << log_n;
  using R = wham::fwht_scale_t<T>;
  wham_test::device_buffer<T> in(count), out(count);
  wham_bench::fill_uniform(reinterpret_cast<R*>(in.data()), in.bytes() / sizeof(R));
  const char* resolved = path_name.c_str();
  if (path == wham::fwht_path::automatic) {  // fwht's own rule (wham/detail/wht/dispatch.cuh)
    const wham::fwht_path chosen = wham::detail::wht::automatic_path<T>(log_n, batch);
    resolved = chosen == wham::fwht_path::fused       ? "fused"
               : chosen == wham::fwht_path::kronecker ? "kronecker"
                                                      : "baseline";
  }
  profile([&] { wham::fwht(in.data(), out.data(), log_n, batch, R(1), nullptr, path); },
          [&] {
            wham_bench::copy_floor_kernel<<<wham_bench::floor_grid(), 256>>>(
                reinterpret_cast<const int4*>(in.data()), reinterpret_cast<int4*>(out.data()),
                std::int64_t(in.bytes() / 16));
          });
  std::printf(
      "point op=fwht type=%s n=%d batch=%lld path=%s amplitudes=%zu out_bytes=%zu "
      "param_bytes=0 floor=copy\n",
      type_name, log_n, static_cast<long long>(batch), resolved, count, out.bytes());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr,
                 "usage: %s iqp c64|c128 n BATCH [path]\n"
                 "       %s fwht float|double|c64|c128 log_n BATCH [path]\n"
                 "BATCH: rows, 512MiB or 1GiB; path: automatic (default), fused, kronecker, "
                 "baseline\n",
                 argv[0], argv[0]);
    return 2;
  }
  const std::string op = argv[1], type = argv[2], batch = argv[4];
  const int n = std::atoi(argv[3]);
  const std::string path = argc > 5 ? argv[5] : "automatic";
  try {
    if (op == "iqp" && type == "c64") return run_iqp<cuda::std::complex<float>>(n, batch, path);
    if (op == "iqp" && type == "c128") return run_iqp<cuda::std::complex<double>>(n, batch, path);
    if (op == "fwht" && type == "float") return run_fwht<float>(n, batch, path, "float");
    if (op == "fwht" && type == "double") return run_fwht<double>(n, batch, path, "double");
    if (op == "fwht" && type == "c64") {
      return run_fwht<cuda::std::complex<float>>(n, batch, path, "c64");
    }
    if (op == "fwht" && type == "c128") {
      return run_fwht<cuda::std::complex<double>>(n, batch, path, "c128");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wham_traffic: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "wham_traffic: unknown op or type: %s %s\n", op.c_str(), type.c_str());
  return 2;
}
