// fwht and iqp_encode on the GPU under conditions a plain call does not meet: kernels'
// attributes after cudaDeviceReset, first calls from two threads at once and calls across
// devices; host and misaligned pointers; IQP phases at huge and non-finite angles;
// iqp_automatic_path at the largest batch. Each case says what would go wrong unguarded.
// The first test case must stay first: it wants kernels no call of this process has used.
#include <wham/fwht.cuh>
#include <wham/iqp.cuh>
#include <wham/reference/fwht.hpp>
#include <wham/reference/iqp.hpp>

#include "api_checks.cuh"
#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <exception>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

using wham_test::message_of;
using wham_test::offset_bytes;
using c64 = cuda::std::complex<float>;
using c128 = cuda::std::complex<double>;

template <class T>
constexpr bool is_real_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

/// The documented accuracy (docs/specs/fwht.md, docs/specs/iqp.md): relative per row.
template <class T>
double tolerance() {
  return std::is_same_v<T, float> || std::is_same_v<T, c64> ? 1e-5 : 1e-12;
}

template <class T>
std::vector<T> random_values(std::mt19937_64& gen, std::size_t count) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> v(count);
  for (auto& x : v) {
    if constexpr (is_real_v<T>) {
      x = T(u(gen));
    } else {
      using R = typename T::value_type;
      const R re = R(u(gen));
      x = T(re, R(u(gen)));
    }
  }
  return v;
}

/// fwht of `batch` random rows (scale 2^(-log_n / 2)) against the host reference. Returns ""
/// or what went wrong: no Catch2 macro, so threads may call it.
template <class T>
std::string run_fwht(int log_n, std::int64_t batch, wham::fwht_path path, cudaStream_t stream,
                     std::uint64_t tag) {
  try {
    const std::size_t n = std::size_t(1) << log_n;
    auto gen = wham_test::rng(tag);
    const auto host = random_values<T>(gen, n * std::size_t(batch));
    const double scale = std::ldexp(1.0, -log_n / 2);
    wham_test::device_buffer<T> in(host);
    wham_test::device_buffer<T> out(host.size());
    out.poison();
    wham::fwht(in.data(), out.data(), log_n, batch, wham::fwht_scale_t<T>(scale), stream, path);
    WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
    const auto got = out.download();
    using D = std::conditional_t<is_real_v<T>, double, std::complex<double>>;
    std::vector<D> wide(host.size());
    for (std::size_t i = 0; i < host.size(); ++i) {
      if constexpr (is_real_v<T>) {
        wide[i] = host[i];
      } else {
        wide[i] = D(host[i].real(), host[i].imag());
      }
    }
    const auto ref = wham::reference::fwht_batched<D>(wide.data(), log_n, batch, scale);
    for (std::int64_t b = 0; b < batch; ++b) {
      const double e = wham_test::relative_error(got.data() + b * n, ref.data() + b * n, n);
      if (!(e <= tolerance<T>())) {
        return "fwht log_n = " + std::to_string(log_n) + " row " + std::to_string(b) +
               ": relative error " + std::to_string(e);
      }
    }
  } catch (const std::exception& e) {
    return std::string("fwht log_n = ") + std::to_string(log_n) + ": " + e.what();
  }
  return "";
}

/// One long row transformed twice (the second time scaled by 2^-log_n) gives its input
/// back: the check for rows too long for the host reference.
template <class T>
std::string run_fwht_involution(int log_n, wham::fwht_path path, std::uint64_t tag) {
  try {
    const std::size_t n = std::size_t(1) << log_n;
    auto gen = wham_test::rng(tag);
    const auto host = random_values<T>(gen, n);
    wham_test::device_buffer<T> in(host);
    wham_test::device_buffer<T> out(n);
    using S = wham::fwht_scale_t<T>;
    wham::fwht(in.data(), out.data(), log_n, 1, S(1), 0, path);
    wham::fwht(out.data(), out.data(), log_n, 1, S(std::ldexp(1.0, -log_n)), 0, path);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = out.download();
    const double e = wham_test::relative_error(got.data(), host.data(), n);
    if (!(e <= tolerance<T>())) {
      return "fwht log_n = " + std::to_string(log_n) + " twice: relative error " +
             std::to_string(e);
    }
  } catch (const std::exception& e) {
    return std::string("fwht log_n = ") + std::to_string(log_n) + " twice: " + e.what();
  }
  return "";
}

/// The states of `params` ([batch][iqp_num_params]) on the GPU, into a poisoned buffer.
template <class Out>
std::vector<Out> encode(const std::vector<double>& params, int n, std::int64_t batch,
                        wham::iqp_variant variant, wham::iqp_path path, cudaStream_t stream = 0) {
  wham_test::device_buffer<double> p(params);
  const wham::iqp_size<Out> size(n, batch);
  wham_test::device_buffer<Out> states(static_cast<std::size_t>(size.amplitudes));
  states.poison();
  wham::iqp_encode(p.data(), states.data(), n, batch, variant, stream, path);
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  return states.download();
}

/// "" where sample b of `got` is within the documented accuracy of the host reference and
/// has norm 1 within it, else what is wrong.
template <class Out>
std::string sample_error(const std::vector<Out>& got, const std::vector<double>& params, int n,
                         wham::iqp_variant variant, std::int64_t b) {
  const bool pairs = variant == wham::iqp_variant::iqp;
  const std::int64_t per = wham::iqp_num_params(n, variant);
  const std::size_t dim = std::size_t(1) << n;
  const auto ref = wham::reference::iqp_state(params.data() + b * per, n, pairs);
  const Out* s = got.data() + std::size_t(b) * dim;
  const double e = wham_test::relative_error(s, ref.data(), dim);
  double norm2 = 0.0;
  for (std::size_t k = 0; k < dim; ++k) norm2 += wham_test::abs2(wham_test::widen(s[k]));
  const double norm_error = std::fabs(std::sqrt(norm2) - 1.0);
  if (e <= tolerance<Out>() && norm_error <= tolerance<Out>()) return "";
  return "sample " + std::to_string(b) + ": relative error " + std::to_string(e) + ", |norm - 1| " +
         std::to_string(norm_error);
}

/// iqp_encode of `batch` random samples (parameters in [-1, 1]) against the host reference,
/// as run_fwht.
template <class Out>
std::string run_iqp(int n, std::int64_t batch, wham::iqp_variant variant, wham::iqp_path path,
                    cudaStream_t stream, std::uint64_t tag) {
  try {
    auto gen = wham_test::rng(tag);
    const std::int64_t per = wham::iqp_num_params(n, variant);
    const auto params = random_values<double>(gen, std::size_t(per * batch));
    const auto got = encode<Out>(params, n, batch, variant, path, stream);
    for (std::int64_t b = 0; b < batch; ++b) {
      const std::string e = sample_error(got, params, n, variant, b);
      if (!e.empty()) return "iqp_encode n = " + std::to_string(n) + " " + e;
    }
  } catch (const std::exception& e) {
    return std::string("iqp_encode n = ") + std::to_string(n) + ": " + e.what();
  }
  return "";
}

/// Calls whose kernels take more than 48 KB of shared memory a block (each sets the
/// kernel's attribute first), on the current device, each against its reference.
std::vector<std::string> large_smem_calls(std::uint64_t tag) {
  using wham::fwht_path;
  using wham::iqp_path;
  const auto iqp = wham::iqp_variant::iqp;
  std::vector<std::string> errors;
  auto add = [&](std::string e) {
    if (!e.empty()) errors.push_back(std::move(e));
  };
  add(run_fwht<float>(14, 3, fwht_path::fused, 0, tag + 1));  // 64 KB rows
  add(run_fwht<c128>(13, 2, fwht_path::fused, 0, tag + 2));   // 128 KB rows
  add(run_fwht<float>(20, 2, fwht_path::kronecker, 0, tag + 3));
  add(run_iqp<c128>(13, 2, iqp, iqp_path::fused, 0, tag + 4));
  if (wham::iqp_path_serves<c64>(iqp_path::fused, 16)) {  // clusters of parts (sm_90)
    add(run_iqp<c64>(16, 2, iqp, iqp_path::fused, 0, tag + 5));
  }
  if (!wham_test::reduced()) {
    // The Kronecker path's one-kernel schedule (batch 64 of 1 MiB rows), and a clustered
    // strided stage (float 2^27, where the device has clusters).
    add(run_iqp<c128>(16, 64, iqp, iqp_path::kronecker, 0, tag + 6));
    add(run_fwht_involution<float>(27, fwht_path::kronecker, tag + 7));
  }
  return errors;
}

std::string joined(const std::vector<std::string>& errors) {
  std::string all;
  for (const auto& e : errors) all += e + "\n";
  return all;
}

}  // namespace

TEST_CASE("first calls from two host threads at once", "[fwht][iqp][gpu]") {
  // Both threads make the first calls of this process on the same kernels, on streams of
  // their own, released together. A regression guard: the per-device attribute cache
  // passed it before as well (it took a lock); its replacement must too.
  std::atomic<int> ready{0};
  std::string errors[2];
  auto work = [&](int t) {
    cudaStream_t stream = nullptr;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
      errors[t] = "cudaStreamCreateWithFlags failed";
      ready.fetch_add(1);
      return;
    }
    ready.fetch_add(1);
    while (ready.load() < 2) {
    }
    const std::uint64_t tag = 5100 + 10 * std::uint64_t(t);
    errors[t] += run_fwht<double>(13, 3, wham::fwht_path::fused, stream, tag + 1);
    errors[t] +=
        run_iqp<c64>(14, 2, wham::iqp_variant::iqp, wham::iqp_path::automatic, stream, tag + 2);
    errors[t] += run_fwht<c64>(20, 1, wham::fwht_path::kronecker, stream, tag + 3);
    cudaStreamDestroy(stream);
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  CHECK(errors[0] == "");
  CHECK(errors[1] == "");
}

TEST_CASE("launches above 48 KB of shared memory still run after cudaDeviceReset",
          "[fwht][iqp][gpu]") {
  REQUIRE(joined(large_smem_calls(5200)) == "");
  // Every buffer of the calls above is gone: the reset frees nothing of the test's.
  REQUIRE(cudaDeviceReset() == cudaSuccess);
  // An attribute cache keyed by device number alone would still hold the grants of the
  // destroyed context, and each launch would fail with cudaErrorInvalidValue (wham::error).
  CHECK(joined(large_smem_calls(5300)) == "");
}

TEST_CASE("calls that switch the current device", "[fwht][iqp][gpu]") {
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  if (count < 2) {
    WARN("one device: the device-switching case is skipped");
    return;
  }
  // Each device, then back to the first: the kernels' attributes are each context's own.
  for (int round = 0; round < 2; ++round) {
    for (int d = 0; d < count; ++d) {
      CAPTURE(round, d);
      REQUIRE(cudaSetDevice(d) == cudaSuccess);
      CHECK(joined(large_smem_calls(5400 + 100 * std::uint64_t(d) + 10 * round)) == "");
    }
  }
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
}

TEST_CASE("host pointers are named, never launched on; pinned and managed memory run",
          "[fwht][iqp][gpu][errors]") {
  int device = 0, pageable = 0;
  REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  REQUIRE(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device) ==
          cudaSuccess);
  const int log_n = 10;
  const std::size_t n = std::size_t(1) << log_n;
  std::vector<float> host(n, 1.0f);
  std::vector<double> host_params(4, 0.5);
  std::vector<c64> host_states(16);
  wham_test::device_buffer<float> d(n);
  wham_test::device_buffer<double> d_params(host_params);
  wham_test::device_buffer<c64> d_states(16);
  const auto z = wham::iqp_variant::iqp_z;
  if (pageable != 0) {
    WARN("the device reads pageable host memory (HMM or ATS): host pointers are valid there");
  } else {
    // Unchecked, the kernel would run on a host address and the next synchronisation
    // would report a sticky illegal-address error.
    const std::string tail =
        " = a host pointer (not device-accessible) is invalid (valid: "
        "device, managed or registered host memory)";
    CHECK(message_of([&] { wham::fwht(host.data(), d.data(), log_n, 1); }) ==
          "wham::fwht: in" + tail);
    CHECK(message_of([&] { wham::fwht(d.data(), host.data(), log_n, 1); }) ==
          "wham::fwht: out" + tail);
    CHECK(message_of([&] { wham::fwht(host.data(), host.data(), log_n, 1); }) ==
          "wham::fwht: in" + tail);
    CHECK(message_of([&] { wham::iqp_encode(host_params.data(), d_states.data(), 4, 1, z); }) ==
          "wham::iqp_encode: params" + tail);
    CHECK(message_of([&] { wham::iqp_encode(d_params.data(), host_states.data(), 4, 1, z); }) ==
          "wham::iqp_encode: states" + tail);
  }
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cudaGetLastError() == cudaSuccess);

  // Pinned (cudaMallocHost), registered (cudaHostRegister) and managed memory pass.
  auto gen = wham_test::rng(5500);
  const auto input = random_values<float>(gen, n);
  const auto ref = wham::reference::fwht_batched<double>(input.data(), log_n, 1, 1.0);
  float* pinned = nullptr;
  REQUIRE(cudaMallocHost(&pinned, n * sizeof(float)) == cudaSuccess);
  std::copy(input.begin(), input.end(), pinned);
  CHECK(message_of([&] { wham::fwht(pinned, pinned, log_n, 1); }) == "(no throw)");
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(wham_test::relative_error(pinned, ref.data(), n) <= 1e-5);
  REQUIRE(cudaFreeHost(pinned) == cudaSuccess);

  std::vector<float> registered = input;
  REQUIRE(cudaHostRegister(registered.data(), n * sizeof(float), cudaHostRegisterDefault) ==
          cudaSuccess);
  CHECK(message_of([&] { wham::fwht(registered.data(), d.data(), log_n, 1); }) == "(no throw)");
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cudaHostUnregister(registered.data()) == cudaSuccess);
  const auto out = d.download();
  CHECK(wham_test::relative_error(out.data(), ref.data(), n) <= 1e-5);

  c64* managed = nullptr;
  REQUIRE(cudaMallocManaged(&managed, 16 * sizeof(c64)) == cudaSuccess);
  CHECK(message_of([&] { wham::iqp_encode(d_params.data(), managed, 4, 1, z); }) == "(no throw)");
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto zref = wham::reference::iqp_state(host_params.data(), 4, false);
  CHECK(wham_test::relative_error(managed, zref.data(), 16) <= 1e-5);
  REQUIRE(cudaFree(managed) == cudaSuccess);
}

TEST_CASE("misaligned device pointers throw and leave the context usable",
          "[fwht][iqp][gpu][errors]") {
  wham_test::device_buffer<c128> buf(2 * 1024 + 1);
  wham_test::device_buffer<double> params(16);
  c128* const shifted = offset_bytes(buf.data(), 8);
  // Unchecked, the kernels' 16-byte loads and stores of complex<double> would fault
  // (misaligned address, sticky) at the synchronisation below.
  CHECK(message_of([&] { wham::fwht(shifted, shifted, 10, 1); }) ==
        "wham::fwht: in = an address 8 bytes past a multiple of 16 is invalid (valid: a "
        "pointer aligned to 16 bytes, the element type's alignment)");
  CHECK(message_of(
            [&] { wham::iqp_encode(params.data(), shifted, 10, 1, wham::iqp_variant::iqp_z); }) ==
        "wham::iqp_encode: states = an address 8 bytes past a multiple of 16 is invalid "
        "(valid: a pointer aligned to 16 bytes, the element type's alignment)");
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(run_fwht<c128>(10, 2, wham::fwht_path::automatic, 0, 5600) == "");
}

namespace {

/// `a` rounded to 8 significant bits: sums of a few hundred small multiples of it are exact
/// in double, so the GPU's sums (in its own order) and the reference's give the same theta.
double coarse(double a) {
  const int e = std::ilogb(a);
  return std::ldexp(std::round(std::ldexp(a, 7 - e)), e - 7);
}

constexpr wham::iqp_path every_path[] = {wham::iqp_path::automatic, wham::iqp_path::fused,
                                         wham::iqp_path::kronecker, wham::iqp_path::baseline,
                                         wham::iqp_path::product};

template <class Out>
void check_large_angles(double angle) {
  const double a = coarse(angle);
  for (const auto variant : {wham::iqp_variant::iqp, wham::iqp_variant::iqp_z}) {
    for (const int n : {3, 9, 12}) {
      const std::int64_t per = wham::iqp_num_params(n, variant);
      // Sample 0 ordinary, samples 1 and 2 multiples of the angle (-3..3 and +-1 times).
      auto gen = wham_test::rng(5700 + std::uint64_t(n));
      std::uniform_int_distribution<int> m3(-3, 3), m1(0, 1);
      std::vector<double> params = random_values<double>(gen, std::size_t(3 * per));
      for (std::int64_t i = 0; i < per; ++i) {
        params[std::size_t(per + i)] = a * m3(gen);
        params[std::size_t(2 * per + i)] = m1(gen) != 0 ? a : -a;
      }
      for (const auto path : every_path) {
        if (!wham::iqp_path_serves<Out>(path, n, variant)) continue;
        CAPTURE(angle, n, variant == wham::iqp_variant::iqp, int(path));
        const auto got = encode<Out>(params, n, 3, variant, path);
        for (std::int64_t b = 0; b < 3; ++b) CHECK(sample_error(got, params, n, variant, b) == "");
      }
    }
  }
}

}  // namespace

TEMPLATE_TEST_CASE("iqp phases of huge angles are reduced exactly: norm 1 at any finite theta",
                   "[iqp][gpu]", c64, c128) {
  // From about 3.5e15 radians a reduction by one rounded product loses the quadrant and
  // digits (|norm - 1| about 6e-3 at 3.6e16, far worse beyond).
  for (const double angle : {1e15, 3.6e16, 1e17, 2e18, 1e300}) check_large_angles<TestType>(angle);
  // Between the complex64 single-step reduction's limit (2^28) and the fast double one's.
  check_large_angles<TestType>(1e9);
}

TEMPLATE_TEST_CASE("a non-finite parameter makes its own sample non-finite, no other",
                   "[iqp][gpu]", c64, c128) {
  // A regression guard for the new branch (NaN stays on the fast path, infinities take
  // the exact reduction): both gave non-finite samples before as well.
  using Out = TestType;
  const double inf = INFINITY;
  for (const auto variant : {wham::iqp_variant::iqp, wham::iqp_variant::iqp_z}) {
    for (const int n : {3, 9, 12}) {
      const std::int64_t per = wham::iqp_num_params(n, variant);
      const std::int64_t batch = 5;
      auto gen = wham_test::rng(5800 + std::uint64_t(n));
      std::vector<double> params = random_values<double>(gen, std::size_t(batch * per));
      params[std::size_t(1 * per)] = NAN;             // sample 1: a_0
      params[std::size_t(2 * per + per - 1)] = inf;   // sample 2: the last parameter
      params[std::size_t(3 * per + per / 2)] = -inf;  // sample 3: one in the middle
      for (const auto path : every_path) {
        if (!wham::iqp_path_serves<Out>(path, n, variant)) continue;
        CAPTURE(n, variant == wham::iqp_variant::iqp, int(path));
        const auto got = encode<Out>(params, n, batch, variant, path);
        const std::size_t dim = std::size_t(1) << n;
        for (std::int64_t b = 0; b < batch; ++b) {
          CAPTURE(b);
          if (b == 0 || b == 4) {
            CHECK(sample_error(got, params, n, variant, b) == "");
            continue;
          }
          std::size_t finite = 0;
          for (std::size_t k = 0; k < dim; ++k) {
            const auto v = got[std::size_t(b) * dim + k];
            if (std::isfinite(v.real()) && std::isfinite(v.imag())) ++finite;
          }
          CHECK(finite == 0);
        }
      }
    }
  }
}

TEST_CASE("iqp_automatic_path at the largest batch", "[iqp][gpu]") {
  // On a device with clusters, products such as batch * 8 would overflow here, and the
  // largest batches would look too small for clusters and get kronecker.
  constexpr int M = wham::detail::wht::block_compiled_max_log_n<c128>;
  for (const int n : {M + 1, M + 2}) {
    CAPTURE(n);
    const auto expected =
        n <= wham::iqp_fused_max_qubits<c128>() ? wham::iqp_path::fused : wham::iqp_path::kronecker;
    CHECK(wham::iqp_automatic_path<c128>(n, INT64_MAX) == expected);
    CHECK(wham::iqp_automatic_path<c128>(n, INT64_MAX / 2) == expected);
  }
}
