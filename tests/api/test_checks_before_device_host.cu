// fwht's and iqp_encode's argument checks that must fire before any device query, run with
// no CUDA device (CI) as well as on the GPU machine: the message names the argument with or
// without a driver (a check after the device lookup would throw a CUDA error there,
// cudaErrorInsufficientDriver or cudaErrorNoDevice); and the cluster rules at any batch.
// The pointers are host addresses no check dereferences.
#include <wham/fwht.cuh>
#include <wham/iqp.cuh>

#include "api_checks.cuh"
#include "catch.hpp"

#include <cstdint>
#include <string>

namespace {

using wham_test::fake_device;
using wham_test::message_of;
using wham_test::offset_bytes;
using c64 = cuda::std::complex<float>;
using c128 = cuda::std::complex<double>;

}  // namespace

TEST_CASE("fwht: an invalid path is named before any device query", "[fwht][errors]") {
  alignas(16) float data[16] = {};
  const std::string msg =
      "wham::fwht: path = 9 is invalid (valid: automatic, fused, kronecker or baseline)";
  // A pure argument check: the same message without a driver.
  CHECK(message_of([&] { wham::fwht(data, data, 4, 1, 1.0f, 0, wham::fwht_path(9)); }) == msg);
  CHECK(message_of([&] { wham::fwht(data, data, 4, 1, 1.0f, 0, wham::fwht_path(-1)); }) ==
        "wham::fwht: path = -1 is invalid (valid: automatic, fused, kronecker or baseline)");
  // One past the last enumerator: the range comes from the enum, not a literal.
  CHECK(message_of([&] {
          wham::fwht(data, data, 4, 1, 1.0f, 0, wham::fwht_path(wham::detail::fwht_path_count));
        }) == "wham::fwht: path = 4 is invalid (valid: automatic, fused, kronecker or baseline)");
}

TEST_CASE("iqp_encode: an invalid path or variant is named before any device query",
          "[iqp][errors]") {
  alignas(16) double params[8] = {};
  alignas(16) c128 states[16] = {};
  const auto v = wham::iqp_variant::iqp;
  // Pure argument checks: the same messages without a driver.
  CHECK(message_of([&] { wham::iqp_encode(params, states, 2, 1, v, 0, wham::iqp_path(9)); }) ==
        "wham::iqp_encode: path = 9 is invalid (valid: automatic, fused, kronecker, baseline "
        "or product)");
  CHECK(message_of([&] {
          wham::iqp_encode(params, states, 2, 1, v, 0,
                           wham::iqp_path(wham::detail::iqp_path_count));
        }) ==
        "wham::iqp_encode: path = 5 is invalid (valid: automatic, fused, kronecker, "
        "baseline or product)");
  // product serves iqp_z only: a pure argument check too.
  CHECK(
      message_of([&] { wham::iqp_encode(params, states, 2, 1, v, 0, wham::iqp_path::product); }) ==
      "wham::iqp_encode: path = 4 is invalid (valid: automatic, fused, kronecker or baseline "
      "for the iqp variant (product serves iqp_z only))");
  CHECK(message_of([&] {
          wham::iqp_encode(params, states, 2, 1,
                           wham::iqp_variant(wham::detail::iqp_variant_count));
        }) ==
        "wham::iqp_encode: variant = 2 is invalid (valid: iqp_variant::iqp or "
        "iqp_variant::iqp_z)");
  CHECK(message_of([&] { wham::iqp_encode(params, states, 2, 1, wham::iqp_variant(-1)); }) ==
        "wham::iqp_encode: variant = -1 is invalid (valid: iqp_variant::iqp or "
        "iqp_variant::iqp_z)");
}

TEST_CASE("iqp_automatic_path validates its arguments", "[iqp][errors]") {
  // Checked before the device's rules see n or the batch.
  CHECK(message_of([] { wham::iqp_automatic_path<c128>(0); }) ==
        "wham::iqp_automatic_path: num_qubits = 0 is invalid (valid: 1..30)");
  CHECK(message_of([] { wham::iqp_automatic_path<c64>(31); }) ==
        "wham::iqp_automatic_path: num_qubits = 31 is invalid (valid: 1..30)");
  CHECK(message_of([] { wham::iqp_automatic_path<c64>(10, 0); }) ==
        "wham::iqp_automatic_path: batch = 0 is invalid (valid: 1..9223372036854775807)");
  CHECK(message_of([] { wham::iqp_automatic_path<c64>(10, 1, wham::iqp_variant(5)); }) ==
        "wham::iqp_automatic_path: variant = 5 is invalid (valid: iqp_variant::iqp or "
        "iqp_variant::iqp_z)");
}

TEST_CASE("the cluster rules take any batch without overflow", "[iqp][fwht][dispatch]") {
  // A made-up sm_90 part: only the SM count matters to these rules (no CUDA call).
  namespace iqp = wham::detail::iqp;
  namespace wht = wham::detail::wht;
  const std::int64_t huge = INT64_MAX;
  for (const int sms : {1, 7, 8, 9, 78, 114, 132, 133}) {
    const fake_device dev(9, 0, 232448, sms);
    CAPTURE(sms);
    // The largest batch fills any GPU: clusters pay. A product such as batch * 8 or rows * C
    // would overflow here (signed: undefined; in practice negative, "too small for clusters").
    CHECK(wht::cluster_pays(2, huge));
    CHECK(wht::cluster_pays(4, huge));
    CHECK(iqp::clusters_pay<c128>(wht::block_compiled_max_log_n<c128> + 2, huge));
    CHECK(iqp::clusters_pay<c64>(wht::block_compiled_max_log_n<c64> + 1, huge));
    CHECK(iqp::cluster_parts<c128>(wht::block_compiled_max_log_n<c128>, huge) == 2);
    // The overflow-free forms agree with the products wherever those do not overflow.
    for (std::int64_t rows = 1; rows <= 4 * sms + 2; ++rows) {
      CAPTURE(rows);
      CHECK(wht::cluster_pays(1, rows) == (rows >= sms / 2));
      CHECK(wht::cluster_pays(2, rows) == (rows * 2 >= sms / 2));
      CHECK(wht::cluster_pays(4, rows) == (rows * 4 >= 4 * sms));
      CHECK(iqp::clusters_pay<c128>(wht::block_compiled_max_log_n<c128> + 2, rows) ==
            (rows * 8 >= 2 * sms));
      const bool small = rows * 8 <= sms;
      CHECK(iqp::cluster_parts<c128>(wht::block_compiled_max_log_n<c128>, rows) == (small ? 4 : 2));
      CHECK(iqp::cluster_parts<c128>(wht::block_compiled_max_log_n<c128> - 1, rows) ==
            (small ? 4 : 1));
    }
  }
}

TEST_CASE("misaligned pointers are named before anything reaches a kernel",
          "[fwht][iqp][errors]") {
  // Unchecked, the call would go on to the device (here: a CUDA error without a driver; on
  // the GPU, a misaligned-address fault in the kernel).
  alignas(16) static c128 cbuf[64] = {};
  alignas(16) static float fbuf[64] = {};
  alignas(16) static double dparams[64] = {};
  alignas(16) static c64 fstates[64] = {};
  c128* const c8 = offset_bytes(cbuf, 8);
  CHECK(message_of([&] { wham::fwht(c8, cbuf + 32, 3, 1); }) ==
        "wham::fwht: in = an address 8 bytes past a multiple of 16 is invalid (valid: a "
        "pointer aligned to 16 bytes, the element type's alignment)");
  CHECK(message_of([&] { wham::fwht(cbuf, c8 + 16, 3, 1); }) ==
        "wham::fwht: out = an address 8 bytes past a multiple of 16 is invalid (valid: a "
        "pointer aligned to 16 bytes, the element type's alignment)");
  CHECK(message_of([&] { wham::fwht(c8, c8, 3, 1); }) ==
        "wham::fwht: in = an address 8 bytes past a multiple of 16 is invalid (valid: a "
        "pointer aligned to 16 bytes, the element type's alignment)");
  float* const f2 = offset_bytes(fbuf, 2);
  CHECK(message_of([&] { wham::fwht(f2, f2, 2, 1); }) ==
        "wham::fwht: in = an address 2 bytes past a multiple of 4 is invalid (valid: a "
        "pointer aligned to 4 bytes, the element type's alignment)");
  const auto v = wham::iqp_variant::iqp_z;
  CHECK(message_of([&] { wham::iqp_encode(offset_bytes(dparams, 4), fstates, 2, 1, v); }) ==
        "wham::iqp_encode: params = an address 4 bytes past a multiple of 8 is invalid (valid: "
        "a pointer aligned to 8 bytes, the element type's alignment)");
  CHECK(message_of([&] { wham::iqp_encode(dparams, offset_bytes(cbuf, 8), 2, 1, v); }) ==
        "wham::iqp_encode: states = an address 8 bytes past a multiple of 16 is invalid "
        "(valid: a pointer aligned to 16 bytes, the element type's alignment)");
  CHECK(message_of([&] { wham::iqp_encode(dparams, offset_bytes(fstates, 4), 2, 1, v); }) ==
        "wham::iqp_encode: states = an address 4 bytes past a multiple of 8 is invalid (valid: "
        "a pointer aligned to 8 bytes, the element type's alignment)");
}
