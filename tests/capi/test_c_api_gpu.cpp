// The C interface (wham/wham.h) and the QDP launchers (wham/qdp.h) on device data, against
// the host references. Plain C++: everything runs through libwham.so.
#include "catch.hpp"
#include "device_buffer.cuh"

#include <wham/qdp.h>
#include <wham/reference/fwht.hpp>
#include <wham/reference/iqp.hpp>
#include <wham/reference/m2l.hpp>
#include <wham/wham.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using wham_test::device_buffer;
using cd = std::complex<double>;

namespace {

template <class T>
std::vector<T> uniform(std::size_t count, double lo, double hi, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> v(count);
  for (auto& x : v) x = T(u(rng));
  return v;
}

/// Largest |a - b| over the largest |b|.
template <class A, class B>
double relative_error(const std::vector<A>& a, const std::vector<B>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(cd(a[i]) - cd(b[i])));
    scale = std::max(scale, std::abs(cd(b[i])));
  }
  return diff / scale;
}

std::vector<cd> to_cd(const std::vector<wham_complex128>& v) {
  std::vector<cd> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = cd(v[i].re, v[i].im);
  return out;
}
std::vector<cd> to_cd(const std::vector<wham_complex64>& v) {
  std::vector<cd> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = cd(v[i].re, v[i].im);
  return out;
}

#define REQUIRE_OK(call) REQUIRE_MESSAGE((call) == WHAM_SUCCESS, wham_last_error())
#define REQUIRE_MESSAGE(cond, message) \
  do {                                 \
    INFO(message);                     \
    REQUIRE(cond);                     \
  } while (0)

}  // namespace

TEST_CASE("wham_fwht_f32 and _c128 match the reference") {
  const int log_n = 10;
  const std::int64_t batch = 3;
  const auto in = uniform<float>(std::size_t(batch) << log_n, -1, 1, 1);
  device_buffer<float> d_in(in), d_out(in.size());
  const float scale = 1.0f / 32.0f;
  REQUIRE_OK(
      wham_fwht_f32(d_in.data(), d_out.data(), log_n, batch, scale, WHAM_FWHT_AUTOMATIC, nullptr));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto want = wham::reference::fwht_batched<double>(in.data(), log_n, batch, scale);
  CHECK(relative_error(d_out.download(), want) < 1e-5);

  // In place, complex double, the baseline path by name.
  const int log_c = 5;
  const auto parts = uniform<double>(2 * (std::size_t(batch) << log_c), -1, 1, 2);
  std::vector<wham_complex128> c(parts.size() / 2);
  std::vector<cd> c_ref(c.size());
  for (std::size_t i = 0; i < c.size(); ++i) {
    c[i] = {parts[2 * i], parts[2 * i + 1]};
    c_ref[i] = cd(parts[2 * i], parts[2 * i + 1]);
  }
  device_buffer<wham_complex128> d_c(c);
  REQUIRE_OK(
      wham_fwht_c128(d_c.data(), d_c.data(), log_c, batch, 1.0, WHAM_FWHT_BASELINE, nullptr));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(relative_error(to_cd(d_c.download()),
                       wham::reference::fwht_batched<cd>(c_ref.data(), log_c, batch)) < 1e-14);
}

TEST_CASE("wham_hadamard_f16 and wham_fwht_bf16 match the reference") {
  // 16-bit rows through their C structs: H_20 (x) H_16 (QuaRot's set, transposed), and a
  // power of two in bfloat16; bounds: one rounding, u = 2^-11 and 2^-8, with room.
  const int m = 20, log_k = 4;
  const std::int64_t batch = 5;
  const std::size_t n = std::size_t(m) << log_k;
  const auto x = uniform<double>(n * batch, -1, 1, 3);
  std::vector<wham_float16> h(x.size());
  std::vector<double> rounded(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const __half v = __double2half(x[i]);
    h[i].bits = __half_raw(v).x;
    rounded[i] = double(__half2float(v));
  }
  device_buffer<wham_float16> d_h(h);
  const float scale = float(1.0 / std::sqrt(double(n)));
  REQUIRE_OK(wham_hadamard_f16(d_h.data(), d_h.data(), m, log_k, batch, scale,
                               WHAM_HADAMARD_QUAROT, 1, nullptr));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto got_bits = d_h.download();
  std::vector<double> got(got_bits.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    __half_raw raw;
    raw.x = got_bits[i].bits;
    got[i] = double(__half2float(__half(raw)));
  }
  const auto want = wham::reference::hadamard_batched<double>(
      rounded.data(), m, log_k, batch, scale, wham::hadamard_matrices::quarot, true);
  CHECK(relative_error(got, want) < 4.0 / 2048);

  const int log_n = 12;
  std::vector<wham_bfloat16> b(std::size_t(3) << log_n);
  std::vector<double> b_rounded(b.size());
  const auto y = uniform<double>(b.size(), -1, 1, 4);
  for (std::size_t i = 0; i < b.size(); ++i) {
    const __nv_bfloat16 v = __double2bfloat16(y[i]);
    b[i].bits = __nv_bfloat16_raw(v).x;
    b_rounded[i] = double(__bfloat162float(v));
  }
  device_buffer<wham_bfloat16> d_b(b), d_bo(b.size());
  REQUIRE_OK(wham_fwht_bf16(d_b.data(), d_bo.data(), log_n, 3, 1.0f / 64.0f, WHAM_FWHT_AUTOMATIC,
                            nullptr));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto bo = d_bo.download();
  std::vector<double> b_got(bo.size());
  for (std::size_t i = 0; i < bo.size(); ++i) {
    __nv_bfloat16_raw raw;
    raw.x = bo[i].bits;
    b_got[i] = double(__bfloat162float(__nv_bfloat16(raw)));
  }
  CHECK(relative_error(b_got, wham::reference::fwht_batched<double>(b_rounded.data(), log_n, 3,
                                                                     1.0 / 64.0)) < 4.0 / 256);
}

TEST_CASE("wham_iqp_encode matches the reference state") {
  const int n = 6;
  const std::int64_t batch = 4;
  SECTION("f64 parameters, complex128 states, with pairs") {
    const auto params = uniform<double>(std::size_t(batch) * (n + n * (n - 1) / 2), -3, 3, 3);
    device_buffer<double> d_params(params);
    device_buffer<wham_complex128> d_states(std::size_t(batch) << n);
    REQUIRE_OK(wham_iqp_encode_f64_c128(d_params.data(), d_states.data(), n, batch, WHAM_IQP,
                                        WHAM_IQP_AUTOMATIC, nullptr));
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(relative_error(to_cd(d_states.download()),
                         wham::reference::iqp_states(params.data(), n, batch, true)) < 1e-12);
  }
  SECTION("f32 parameters, complex64 states, iqp_z") {
    const auto params = uniform<float>(std::size_t(batch) * n, -3, 3, 4);
    device_buffer<float> d_params(params);
    device_buffer<wham_complex64> d_states(std::size_t(batch) << n);
    REQUIRE_OK(wham_iqp_encode_f32_c64(d_params.data(), d_states.data(), n, batch, WHAM_IQP_Z,
                                       WHAM_IQP_AUTOMATIC, nullptr));
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(relative_error(to_cd(d_states.download()),
                         wham::reference::iqp_states(params.data(), n, batch, false)) < 1e-5);
  }
}

TEST_CASE("wham_m2l_f64 and wham_m2l_accumulate_f64 match the direct sum") {
  const int p = 5;
  const int C = (p + 1) * (p + 1);
  const std::int64_t pairs = 3;
  const auto parts = uniform<double>(2 * std::size_t(pairs) * C, -1, 1, 5);
  std::vector<wham_complex128> M(std::size_t(pairs) * C);
  std::vector<cd> M_ref(M.size());
  for (std::size_t i = 0; i < M.size(); ++i) {
    M[i] = {parts[2 * i], parts[2 * i + 1]};
    M_ref[i] = cd(parts[2 * i], parts[2 * i + 1]);
  }
  const std::vector<double> deltas = {3.0, -1.0, 2.0, 0.5, 4.0, -2.5, -3.0, 0.0, 0.0};
  device_buffer<wham_complex128> d_M(M), d_L(M.size());
  device_buffer<double> d_deltas(deltas);
  REQUIRE_OK(
      wham_m2l_f64(d_M.data(), d_deltas.data(), d_L.data(), p, pairs, WHAM_M2L_AUTOMATIC, nullptr));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::vector<cd> want;
  for (std::int64_t i = 0; i < pairs; ++i) {
    const auto L = wham::reference::m2l_direct(p, M_ref.data() + i * C, deltas.data() + 3 * i);
    want.insert(want.end(), L.begin(), L.end());
  }
  CHECK(relative_error(to_cd(d_L.download()), want) < 1e-12);

  // All three pairs into local 0 (sources 0, 1, 2), plus one pair out of range: skipped,
  // and counted by wham_check_interaction_list.
  const std::vector<std::int32_t> src = {0, 1, 2, 7}, tgt = {0, 0, 0, 0};
  std::vector<double> deltas4 = deltas;
  deltas4.insert(deltas4.end(), {1.0, 1.0, 1.0});
  device_buffer<std::int32_t> d_src(src), d_tgt(tgt);
  device_buffer<double> d_deltas4(deltas4);
  device_buffer<wham_complex128> d_acc(std::vector<wham_complex128>(C, wham_complex128{0, 0}));
  REQUIRE_OK(wham_m2l_accumulate_f64(d_M.data(), d_deltas4.data(), d_src.data(), d_tgt.data(),
                                     d_acc.data(), p, 4, pairs, 1, WHAM_ACCUMULATE_DETERMINISTIC,
                                     nullptr));
  device_buffer<unsigned long long> d_count(1);
  REQUIRE_OK(wham_check_interaction_list(d_src.data(), d_tgt.data(), nullptr, 4, pairs, 1, 0,
                                         d_count.data(), nullptr));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::vector<cd> sum(C);
  for (int i = 0; i < pairs * C; ++i) sum[i % C] += want[i];
  CHECK(relative_error(to_cd(d_acc.download()), sum) < 1e-12);
  CHECK(d_count.download()[0] == 1);
}

TEST_CASE("a plain host pointer is an invalid argument, named") {
  std::vector<float> host(16);
  REQUIRE(wham_fwht_f32(host.data(), host.data(), 4, 1, 1.0f, WHAM_FWHT_AUTOMATIC, nullptr) ==
          WHAM_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(wham_last_error()).find("in = a host pointer") != std::string::npos);
}

TEST_CASE("an explicit path the device cannot serve is not supported; a success clears it") {
  // No launch happens: the dispatch refuses before it, so 16 floats stand for 2^30.
  device_buffer<float> d(16);
  REQUIRE(wham_fwht_f32(d.data(), d.data(), 30, 1, 1.0f, WHAM_FWHT_FUSED, nullptr) ==
          WHAM_ERROR_NOT_SUPPORTED);
  const std::string message = wham_last_error();
  CAPTURE(message);
  CHECK(message.find("wham::fwht: log_n = 30 is invalid") != std::string::npos);
  CHECK(message.find("(fused path)") != std::string::npos);
  CHECK(std::string(wham_status_string(WHAM_ERROR_NOT_SUPPORTED)) ==
        "not supported on this device or build");
  REQUIRE(wham_fwht_f32(d.data(), d.data(), 4, 1, 1.0f, WHAM_FWHT_AUTOMATIC, nullptr) ==
          WHAM_SUCCESS);
  CHECK(std::string(wham_last_error()).empty());
}

TEST_CASE("zero-size calls on device buffers leave them untouched") {
  const auto in = uniform<float>(32, -1, 1, 7);
  device_buffer<float> d(in);
  std::vector<wham_complex64> zeros(32, wham_complex64{0, 0});
  device_buffer<wham_complex64> s(zeros);
  CHECK(wham_fwht_f32(d.data(), d.data(), 5, 0, 2.0f, WHAM_FWHT_AUTOMATIC, nullptr) ==
        WHAM_SUCCESS);
  CHECK(wham_hadamard_f32(d.data(), d.data(), 1, 5, 0, 2.0f, 0, 0, nullptr) == WHAM_SUCCESS);
  CHECK(wham_iqp_encode_f32_c64(d.data(), s.data(), 5, 0, WHAM_IQP_Z, WHAM_IQP_AUTOMATIC,
                                nullptr) == WHAM_SUCCESS);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(d.download() == in);
  for (const auto& z : s.download()) CHECK((z.re == 0 && z.im == 0));
}

TEST_CASE("QDP's launch_iqp_encode_batch matches the reference, enable_zz 0 and 1") {
  const unsigned n = 5;
  const std::size_t batch = 3, state_len = std::size_t(1) << n;
  for (int enable_zz : {0, 1}) {
    INFO("enable_zz = " << enable_zz);
    const unsigned data_len = enable_zz != 0 ? n + n * (n - 1) / 2 : n;
    const auto params = uniform<double>(batch * data_len, -2, 2, 6 + enable_zz);
    device_buffer<double> d_params(params);
    device_buffer<wham_complex128> d_states(batch * state_len);
    REQUIRE_MESSAGE(launch_iqp_encode_batch(d_params.data(), d_states.data(), batch, state_len, n,
                                            data_len, enable_zz, nullptr) == 0,
                    wham_last_error());
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto want =
        wham::reference::iqp_states(params.data(), int(n), std::int64_t(batch), enable_zz != 0);
    CHECK(relative_error(to_cd(d_states.download()), want) < 1e-12);

    // One sample: the first of the batch.
    device_buffer<wham_complex128> d_one(state_len);
    REQUIRE(launch_iqp_encode(d_params.data(), d_one.data(), state_len, n, enable_zz, nullptr) ==
            0);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(relative_error(to_cd(d_one.download()),
                         std::vector<cd>(want.begin(), want.begin() + state_len)) < 1e-12);
  }
  // Any nonzero enable_zz is QDP's "with pairs".
  const unsigned data_len = n + n * (n - 1) / 2;
  const auto params = uniform<double>(data_len, -2, 2, 9);
  device_buffer<double> d_params(params);
  device_buffer<wham_complex128> d_state(state_len);
  REQUIRE(launch_iqp_encode_batch(d_params.data(), d_state.data(), 1, state_len, n, data_len, 7,
                                  nullptr) == 0);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(relative_error(to_cd(d_state.download()),
                       wham::reference::iqp_state(params.data(), int(n), true)) < 1e-12);
}

// Last: if the check ever let the pointer through, the kernel's fault would ruin the context.
TEST_CASE("another GPU's memory is refused, named, until peer access is enabled") {
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  if (count < 2) {
    WARN("one GPU: test_error_model_host covers the decision on made-up pointer attributes");
    return;
  }
  const int log_n = 6;
  const auto rows = uniform<float>(std::size_t(1) << log_n, -1, 1, 11);
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  device_buffer<float> on_1(rows);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  device_buffer<float> on_0(rows.size());
  if (cudaDeviceDisablePeerAccess(1) != cudaSuccess) (void)cudaGetLastError();  // not enabled

  CHECK(wham_fwht_f32(on_1.data(), on_0.data(), log_n, 1, 1.0f, WHAM_FWHT_AUTOMATIC, nullptr) ==
        WHAM_ERROR_INVALID_ARGUMENT);
  const std::string message = wham_last_error();
  CAPTURE(message);
  CHECK(message.find("wham::fwht: in = memory of device 1 (the current device is 0") == 0);
  CHECK(wham_fwht_f32(on_0.data(), on_1.data(), log_n, 1, 1.0f, WHAM_FWHT_AUTOMATIC, nullptr) ==
        WHAM_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(wham_last_error()).find("out = memory of device 1") != std::string::npos);

  int can = 0;
  REQUIRE(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess);
  if (can == 0) return;
  REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
  REQUIRE_OK(wham_fwht_f32(on_1.data(), on_0.data(), log_n, 1, 1.0f, WHAM_FWHT_AUTOMATIC, nullptr));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(relative_error(on_0.download(), wham::reference::fwht_batched<double>(rows.data(), log_n,
                                                                              1, 1.0)) < 1e-5);
  REQUIRE(cudaDeviceDisablePeerAccess(1) == cudaSuccess);
}
