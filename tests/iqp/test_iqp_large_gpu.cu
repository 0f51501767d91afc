// IQP states of n = 25..30 qubits (one sample: up to 16 GiB of complex128): iqp against slices of the state computed on the host by the defining
// sum, iqp_z (the product path and the Kronecker transform) against the product form.
// Skipped under WHAM_TEST_REDUCED=1 (the sanitizer runs).
#include <wham/iqp.cuh>

#include "catch.hpp"
#include "device_buffer.cuh"
#include "iqp_sampled_reference.hpp"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <complex>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using c64 = cuda::std::complex<float>;
using c128 = cuda::std::complex<double>;

template <class Out>
double tolerance() {
  return std::is_same_v<Out, c64> ? 1e-5 : 1e-12;
}

/// Whether the device has `bytes` free (with 1 GiB to spare); warns where not.
bool fits(std::size_t bytes) {
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) return false;
  if (bytes + (std::size_t(1) << 30) <= free) return true;
  WARN("skipped: " << bytes << " bytes do not fit in the " << free << " free");
  return false;
}

/// Amplitudes [first, first + count) of a device state, to the host.
template <class Out>
std::vector<Out> part(const Out* states, std::uint64_t first, std::size_t count) {
  std::vector<Out> host(count);
  WHAM_TEST_CUDA(
      cudaMemcpy(host.data(), states + first, count * sizeof(Out), cudaMemcpyDeviceToHost));
  return host;
}

constexpr int slice_bits = 10;

template <class Out>
void check_iqp(int n, const std::vector<double>& params, const std::vector<std::uint64_t>& k_his,
               const std::vector<std::vector<std::complex<double>>>& slices) {
  const wham::iqp_size<Out> size(n, 1);
  if (!fits(size.bytes)) return;
  wham_test::device_buffer<double> d_params(params);
  wham_test::device_buffer<Out> states(static_cast<std::size_t>(size.amplitudes));
  states.poison();
  wham::iqp_encode(d_params.data(), states.data(), n, 1, wham::iqp_variant::iqp);
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  for (std::size_t s = 0; s < k_his.size(); ++s) {
    CAPTURE(s, k_his[s]);
    const auto got = part(states.data(), k_his[s] << slice_bits, std::size_t(1) << slice_bits);
    CHECK(wham_test::relative_error(got.data(), slices[s].data(), got.size()) <= tolerance<Out>());
  }
}

template <class Out>
void check_iqp_z(int n, const std::vector<double>& a, const std::vector<std::uint64_t>& ks) {
  const wham::iqp_size<Out> size(n, 1);
  if (!fits(size.bytes)) return;
  wham_test::device_buffer<double> d_params(a);
  wham_test::device_buffer<Out> states(static_cast<std::size_t>(size.amplitudes));
  std::vector<std::complex<double>> ref(ks.size());
  for (std::size_t i = 0; i < ks.size(); ++i)
    ref[i] = wham_test::iqp_z_amplitude(a.data(), n, ks[i]);
  for (const auto path : {wham::iqp_path::product, wham::iqp_path::kronecker}) {
    if (!wham::iqp_path_serves<Out>(path, n, wham::iqp_variant::iqp_z)) continue;
    CAPTURE(int(path));
    states.poison();
    wham::iqp_encode(d_params.data(), states.data(), n, 1, wham::iqp_variant::iqp_z, 0, path);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    std::vector<Out> got(ks.size());
    for (std::size_t i = 0; i < ks.size(); ++i) got[i] = part(states.data(), ks[i], 1)[0];
    CHECK(wham_test::relative_error(got.data(), ref.data(), ks.size()) <= tolerance<Out>());
  }
}

}  // namespace

TEST_CASE("iqp at n = 25..30 against slices computed by the definition",
          "[iqp][gpu][large]") {
  if (wham_test::reduced()) {
    WARN("WHAM_TEST_REDUCED: n = 25..30 skipped");
    return;
  }
  for (int n = 25; n <= 30; ++n) {
    CAPTURE(n, wham_test::seed());
    auto gen = wham_test::rng(5900 + std::uint64_t(n));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> params(
        static_cast<std::size_t>(wham::iqp_num_params(n, wham::iqp_variant::iqp)));
    for (auto& v : params) v = u(gen);
    // The first and last slices and one between, 2^10 amplitudes each.
    const std::uint64_t top = (std::uint64_t(1) << (n - slice_bits)) - 1;
    const std::vector<std::uint64_t> k_his = {0, top, gen() & top};
    const auto slices = wham_test::iqp_slices(params.data(), n, slice_bits, k_his);
    check_iqp<c64>(n, params, k_his, slices);
    check_iqp<c128>(n, params, k_his, slices);
  }
}

TEST_CASE("iqp_z at n = 25..30 against the product form", "[iqp][gpu][large]") {
  if (wham_test::reduced()) {
    WARN("WHAM_TEST_REDUCED: n = 25..30 skipped");
    return;
  }
  for (int n = 25; n <= 30; ++n) {
    CAPTURE(n, wham_test::seed());
    auto gen = wham_test::rng(6000 + std::uint64_t(n));
    std::uniform_real_distribution<double> u(-3.0, 3.0);
    std::vector<double> a(static_cast<std::size_t>(n));
    for (auto& v : a) v = u(gen);
    const std::uint64_t last = (std::uint64_t(1) << n) - 1;
    std::vector<std::uint64_t> ks = {0, 1, last, last >> 1, std::uint64_t(1) << (n - 1)};
    while (ks.size() < 512) ks.push_back(gen() & last);
    check_iqp_z<c64>(n, a, ks);
    check_iqp_z<c128>(n, a, ks);
  }
}
