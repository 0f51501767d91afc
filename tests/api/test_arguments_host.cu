// The public functions' argument checks, run on the host with no CUDA device: every check
// below fires before the dispatch looks the device up or enqueues anything, so these run
// in CI (no GPU) as well as on the GPU machine, and each message is compared whole: the
// function, the argument, its value and the valid range. A check that stopped firing
// would reach the device lookup instead; without a device that throws a CUDA error, whose
// message differs, so the test fails either way rather than passing on the wrong throw.
// The pointers are host addresses that no check dereferences.
#include <wham/fmm.cuh>
#include <wham/fwht.cuh>
#include <wham/iqp.cuh>
#include <wham/m2l.cuh>

#include "api_checks.cuh"
#include "catch.hpp"

#include <cstdint>
#include <string>

namespace {

using wham_test::fake_device;
using wham_test::message_of;
using c64 = cuda::std::complex<float>;
using c128 = cuda::std::complex<double>;

}  // namespace

TEST_CASE("iqp_encode and its size helpers check their arguments first", "[iqp][errors]") {
  double params[4] = {};
  float fparams[4] = {};
  c128 states[4] = {};
  c64 fstates[4] = {};
  const auto v = wham::iqp_variant::iqp;
  const auto msg = [](const char* what) { return std::string("wham::iqp_encode: ") + what; };
  CHECK(message_of([&] { wham::iqp_encode(params, states, 0, 1, v); }) ==
        msg("num_qubits = 0 is invalid (valid: 1..30)"));
  CHECK(message_of([&] { wham::iqp_encode(params, states, 31, 1, v); }) ==
        msg("num_qubits = 31 is invalid (valid: 1..30)"));
  CHECK(message_of([&] { wham::iqp_encode(params, states, 4, 1, wham::iqp_variant(7)); }) ==
        msg("variant = 7 is invalid (valid: iqp_variant::iqp or iqp_variant::iqp_z)"));
  CHECK(message_of([&] {
          wham::iqp_encode(params, states, 4, -3, v);
        }).rfind(msg("batch = -3 is invalid (valid: 0.."), 0) == 0);
  // The byte count must fit in int64: batch * 2^30 * 16 bytes allows batch <= (2^63 - 1) /
  // 16 >> 30 = 536870911 (complex128), and (2^63 - 1) / 8 >> 30 = 1073741823 (complex64).
  CHECK(message_of([&] { wham::iqp_encode(params, states, 30, 536870912, v); }) ==
        msg("batch = 536870912 is invalid (valid: 0..536870911)"));
  CHECK(message_of([&] { wham::iqp_encode(fparams, fstates, 30, 1073741824, v); }) ==
        msg("batch = 1073741824 is invalid (valid: 0..1073741823)"));
  // The largest batch passes that check and stops at the next one.
  CHECK(message_of([&] {
          wham::iqp_encode(static_cast<const double*>(nullptr), states, 30, 536870911, v);
        }) == msg("params = nullptr is invalid (valid: a device pointer)"));
  CHECK(message_of([&] { wham::iqp_encode(params, static_cast<c128*>(nullptr), 4, 1, v); }) ==
        msg("states = nullptr is invalid (valid: a device pointer)"));
  // States written over the parameters (n = 1: one parameter, two amplitudes a sample).
  CHECK(message_of([&] { wham::iqp_encode(params, reinterpret_cast<c128*>(params), 1, 1, v); }) ==
        msg("states = a range overlapping params is invalid (valid: a buffer apart from "
            "every other argument)"));
  CHECK(message_of([&] {
          wham::iqp_encode(params + 3, reinterpret_cast<c128*>(params), 1, 1, v);
        }) == msg("states = a range overlapping params is invalid (valid: a buffer apart from "
                  "every other argument)"));

  CHECK(message_of([] { wham::iqp_size<c128>(31, 1); }) ==
        "wham::iqp_size: num_qubits = 31 is invalid (valid: 1..30)");
  CHECK(message_of([] { wham::iqp_size<c128>(30, 536870912); }) ==
        "wham::iqp_size: batch = 536870912 is invalid (valid: 0..536870911)");
  CHECK(message_of([] { wham::iqp_num_params(0, wham::iqp_variant::iqp_z); }) ==
        "wham::iqp_num_params: num_qubits = 0 is invalid (valid: 1..30)");
  const wham::iqp_size<c128> none(30, 0);  // iqp_encode's zero-batch no-op has zero bytes
  CHECK(none.amplitudes == 0);
  CHECK(none.bytes == 0);
  const wham::iqp_size<c128> largest(30, 536870911);
  CHECK(largest.amplitudes == std::int64_t(536870911) << 30);
  CHECK(largest.bytes == (std::size_t(536870911) << 30) * 16);
  CHECK(wham::iqp_num_params(30, wham::iqp_variant::iqp) == 30 + 435);
}

TEST_CASE("fwht checks its arguments first", "[fwht][errors]") {
  float data[4] = {};
  c128 cdata[4] = {};
  CHECK(message_of([&] { wham::fwht(data, data, -1, 1); }) ==
        "wham::fwht: log_n = -1 is invalid (valid: 0..30)");
  CHECK(message_of([&] { wham::fwht(data, data, 31, 1); }) ==
        "wham::fwht: log_n = 31 is invalid (valid: 0..30)");
  // batch * 2^log_n * sizeof(T) must fit in int64: (2^63 - 1) / 4 >> 30 = 2147483647 rows
  // of 2^30 floats, (2^63 - 1) / 16 >> 0 rows of one complex<double>.
  CHECK(message_of([&] { wham::fwht(data, data, 30, 2147483648); }) ==
        "wham::fwht: batch = 2147483648 is invalid (valid: 0..2147483647)");
  CHECK(message_of([&] { wham::fwht(cdata, cdata, 0, -1); }) ==
        "wham::fwht: batch = -1 is invalid (valid: 0..576460752303423487)");
  CHECK(message_of([&] { wham::fwht(static_cast<const float*>(nullptr), data, 30, 2147483647); }) ==
        "wham::fwht: in = nullptr is invalid (valid: a device pointer)");
  CHECK(message_of([&] { wham::fwht(data, static_cast<float*>(nullptr), 4, 1); }) ==
        "wham::fwht: out = nullptr is invalid (valid: a device pointer)");
  // Out of place over part of the input (in == out is the overlap that is allowed).
  float row[16] = {};
  const std::string overlap =
      "wham::fwht: out = a range overlapping in is invalid (valid: in itself (in place) or a "
      "buffer apart from in)";
  CHECK(message_of([&] { wham::fwht(row, row + 1, 3, 1); }) == overlap);
  CHECK(message_of([&] { wham::fwht(row + 7, row, 3, 1); }) == overlap);
  CHECK(message_of([&] { wham::fwht(row, row + 4, 2, 2); }) == overlap);
}

TEST_CASE("a batch beyond the fused path's grid names that path, fwht's or iqp_encode's",
          "[fwht][iqp][errors]") {
  // Rows of two amplitudes (iqp_encode, n = 1) or four floats (fwht, log_n = 2) go 256 to a
  // block of the fused kernel, so 2^40 rows would take 2^32 blocks, past the grid's 2^31 - 1.
  // The check comes after the device lookup (a fake sm_86 here: no clusters, no streamed
  // rows) and before anything is enqueued, so the pointers are made-up addresses, never
  // dereferenced.
  const fake_device sm86(8, 6, 101376);
  const std::int64_t rows = std::int64_t(1) << 40;
  const std::string beyond =
      "wham::fused path: number of segments = 1099511627776 is invalid (valid: at most "
      "549755813632: 2^31 - 1 thread blocks of 256 segments)";
  const auto* params = reinterpret_cast<const double*>(std::uintptr_t(1) << 60);
  auto* states = reinterpret_cast<c128*>(std::uintptr_t(16));
  // The dispatch layers themselves: the public functions would first ask the driver
  // whether these made-up pointers are device memory.
  CHECK(message_of([&] {
          wham::detail::iqp::dispatch(params, wham::iqp_num_params(1, wham::iqp_variant::iqp),
                                      states, 1, rows, wham::iqp_variant::iqp, 0,
                                      wham::iqp_path::automatic);
        }) == beyond);
  auto* data = reinterpret_cast<float*>(std::uintptr_t(16));
  CHECK(message_of([&] {
          wham::detail::wht::dispatch<float>(data, data, 2, rows, 1.0f, 0,
                                             wham::fwht_path::automatic);
        }) == beyond);
}

TEST_CASE("m2l checks its arguments first", "[m2l][errors]") {
  // Room for one pair at every order: the overlap check compares the ranges that
  // num_pairs * (p + 1)^2 coefficients would span.
  static c128 m[441] = {};
  static c128 l[441] = {};
  double d[3] = {};
  c64 fm[64] = {};
  c64 fl[64] = {};
  float fd[3] = {};
  CHECK(message_of([&] { wham::m2l(m, d, l, -1, 1); }) ==
        "wham::m2l: p = -1 is invalid (valid: 0..20)");
  CHECK(message_of([&] { wham::m2l(m, d, l, 21, 1); }) ==
        "wham::m2l: p = 21 is invalid (valid: 0..20)");
  CHECK(message_of([&] { wham::m2l(fm, fd, fl, 17, 1); }) ==
        "wham::m2l: p = 17 is invalid (valid: 0..16)");
  CHECK(message_of([&] { wham::m2l(m, d, l, 4, -1); }) ==
        "wham::m2l: num_pairs = -1 is invalid (valid: 0..68719476704)");
  // 32 pairs a thread-grid unit: 32 * (2^31 - 1) pairs at most.
  CHECK(message_of([&] { wham::m2l(m, d, l, 4, 68719476705); }) ==
        "wham::m2l: num_pairs = 68719476705 is invalid (valid: 0..68719476704)");
  // No pairs: nothing is enqueued, and null pointers are allowed (no device is needed).
  CHECK(message_of([] {
          wham::m2l(static_cast<const c128*>(nullptr), static_cast<const double*>(nullptr),
                    static_cast<c128*>(nullptr), 20, 0);
        }) == "(no throw)");
  CHECK(message_of([&] { wham::m2l(static_cast<const c128*>(nullptr), d, l, 4, 1); }) ==
        "wham::m2l: multipoles = nullptr is invalid (valid: a device pointer)");
  CHECK(message_of([&] { wham::m2l(m, static_cast<const double*>(nullptr), l, 4, 1); }) ==
        "wham::m2l: deltas = nullptr is invalid (valid: a device pointer)");
  CHECK(message_of([&] { wham::m2l(m, d, static_cast<c128*>(nullptr), 4, 1); }) ==
        "wham::m2l: locals = nullptr is invalid (valid: a device pointer)");
  // locals overlapping multipoles (in place, or one coefficient apart) or the deltas.
  const auto overlap = [](const char* input) {
    return std::string("wham::m2l: locals = a range overlapping ") + input +
           " is invalid (valid: a buffer apart from every other argument)";
  };
  CHECK(message_of([&] { wham::m2l(m, d, m, 2, 1); }) == overlap("multipoles"));
  CHECK(message_of([&] { wham::m2l(m, d, m + 8, 2, 1); }) == overlap("multipoles"));
  CHECK(message_of([&] { wham::m2l(m + 8, d, m, 2, 1); }) == overlap("multipoles"));
  CHECK(message_of([&] { wham::m2l(m, reinterpret_cast<const double*>(l + 2), l, 2, 1); }) ==
        overlap("deltas"));
  // Explicit paths outside their orders.
  CHECK(message_of([&] { wham::m2l(m, d, l, 13, 1, 0, wham::m2l_path::thread); }) ==
        "wham::m2l: p = 13 is invalid (valid: 0..12 for m2l_path::thread)");
  CHECK(message_of([&] { wham::m2l(m, d, l, 6, 1, 0, wham::m2l_path::split); }) ==
        "wham::m2l: p = 6 is invalid (valid: 7..12 for m2l_path::split)");
  {
    // Float on tensor cores needs the sm_90 wide schedule (a device's answer: a fake one).
    const fake_device sm86(8, 6, 101376);
    CHECK(message_of([&] { wham::m2l(fm, fd, fl, 4, 1, 0, wham::m2l_path::tensor); }) ==
          "wham::m2l: path = m2l_path::tensor is invalid (valid: a path other than tensor for "
          "float below compute capability 9.0 (float runs the sm_90 wide tensor schedule "
          "only))");
  }
  CHECK(message_of([&] { wham::m2l(m, d, l, 4, 1, 0, wham::m2l_path(9)); }) ==
        "wham::m2l: path = 9 is invalid (valid: automatic, thread, warp, split, direct or tensor)");
}

TEST_CASE("shared memory beyond the device's is an argument error, not a launch failure",
          "[m2l][errors]") {
  // The thread schedule's block at each order (the tuning table's threads and slots):
  // compute capability 8.6 and 8.9 let a block take 101376 bytes, 8.0 166912, 9.0 232448.
  CHECK(wham::detail::m2l::thread_schedule_smem_bytes<double>(8) == 101376);
  CHECK(wham::detail::m2l::thread_schedule_smem_bytes<double>(9) == 123904);
  CHECK(wham::detail::m2l::thread_schedule_smem_bytes<double>(10) == 146432);
  CHECK(wham::detail::m2l::thread_schedule_smem_bytes<double>(11) == 173056);
  CHECK(wham::detail::m2l::thread_schedule_smem_bytes<double>(12) == 199680);
  CHECK(wham::detail::m2l::thread_schedule_smem_bytes<float>(8) == 101376);
  CHECK(wham::detail::m2l::thread_schedule_smem_bytes<float>(12) == 199680);
  // automatic's thread orders (6 in double, 8 in float) fit every supported device.
  for (int p = 0; p <= 8; ++p) {
    CAPTURE(p);
    CHECK(wham::detail::m2l::thread_schedule_smem_bytes<float>(p) <= 101376);
    if (p <= 6) CHECK(wham::detail::m2l::thread_schedule_smem_bytes<double>(p) <= 101376);
  }
  static c128 m[441] = {};
  static c128 l[441] = {};
  double d[3] = {};
  {
    const fake_device sm86(8, 6, 101376);
    CHECK(message_of([&] { wham::m2l(m, d, l, 9, 1, 0, wham::m2l_path::thread); }) ==
          "wham::m2l: path = m2l_path::thread is invalid (valid: automatic, split or warp at p "
          "= 9 on this device: the thread schedule needs 123904 bytes of shared memory a "
          "block, the device allows 101376)");
    CHECK(message_of([] { wham::detail::check_smem_fits("a kernel", 101377); }) ==
          "wham: a kernel needs 101377 bytes of shared memory a block; device 0 (compute "
          "capability 8.6) allows 101376");
    CHECK(message_of([] { wham::detail::check_smem_fits("a kernel", 101376); }) == "(no throw)");
  }
  {
    const fake_device sm80(8, 0, 166912);
    CHECK(message_of([&] { wham::m2l(m, d, l, 11, 1, 0, wham::m2l_path::thread); }) ==
          "wham::m2l: path = m2l_path::thread is invalid (valid: automatic, split or warp at p "
          "= 11 on this device: the thread schedule needs 173056 bytes of shared memory a "
          "block, the device allows 166912)");
  }
}

TEST_CASE("automatic's M2L schedule by order below sm_90, pair streaming and FMM forms",
          "[m2l][fmm][dispatch]") {
  // A fake sm_80 device: the wide tensor schedule is out, and no CUDA call is made.
  const fake_device sm80(8, 0, 166912);
  namespace m2l = wham::detail::m2l;
  namespace fmm = wham::detail::fmm;
  using s = wham::m2l_path;
  for (int p = 0; p <= 20; ++p) {
    CAPTURE(p);
    const s scalar = p <= 6 ? s::thread : p <= 12 ? s::split : s::warp;
    const s with_tensor = p <= 6 ? s::thread : p <= 12 ? s::split : s::tensor;
    CHECK(m2l::automatic_path<double>(p) == with_tensor);
    CHECK(fmm::accumulate_path<double>(p, false) == with_tensor);
    CHECK(fmm::accumulate_path<double>(p, true) == scalar);
    CHECK(fmm::class_groups_serve<double>(p) == (p >= 1 && p <= 16));
    if (p > 16) continue;
    const s f = p <= 8 ? s::thread : p <= 12 ? s::split : s::warp;
    CHECK(m2l::automatic_path<float>(p) == f);
    CHECK(fmm::accumulate_path<float>(p, false) == f);
    CHECK(fmm::accumulate_path<float>(p, true) == f);
    CHECK(fmm::class_groups_serve<float>(p) == (p >= 10 && p <= 16));
  }
}

TEST_CASE("m2l_accumulate and its class forms check their arguments first", "[fmm][errors]") {
  c128 m[64] = {};
  c128 l[64] = {};
  double geo[3] = {};
  std::int32_t idx[1] = {};
  using method = wham::m2l_accumulate_method;
  CHECK(message_of([&] { wham::m2l_accumulate(m, geo, idx, idx, l, 21, 1, 1, 1); }) ==
        "wham::m2l_accumulate: p = 21 is invalid (valid: 0..20)");
  CHECK(message_of([&] { wham::m2l_accumulate(m, geo, idx, idx, l, 4, -1, 1, 1); }) ==
        "wham::m2l_accumulate: num_pairs = -1 is invalid (valid: 0..68719476704)");
  CHECK(message_of([&] { wham::m2l_accumulate(m, geo, idx, idx, l, 4, 1, 1, 1, 0, method(7)); }) ==
        "wham::m2l_accumulate: method = 7 is invalid (valid: automatic, atomic or deterministic)");
  CHECK(message_of([&] { wham::m2l_accumulate(m, geo, nullptr, idx, l, 4, 1, 1, 1); }) ==
        "wham::m2l_accumulate: src = nullptr is invalid (valid: a device pointer)");
  CHECK(message_of([&] { wham::m2l_accumulate(m, geo, idx, nullptr, l, 4, 1, 1, 1); }) ==
        "wham::m2l_accumulate: tgt = nullptr is invalid (valid: a device pointer)");
  CHECK(message_of([&] {
          wham::m2l_accumulate(m, static_cast<const double*>(nullptr), idx, idx, l, 4, 1, 1, 1);
        }) == "wham::m2l_accumulate: deltas = nullptr is invalid (valid: a device pointer)");
  CHECK(message_of([&] { wham::m2l_accumulate(m, geo, idx, idx, m, 4, 1, 1, 1); }) ==
        "wham::m2l_accumulate: locals = a range overlapping multipoles is invalid (valid: a "
        "buffer apart from every other argument)");
  CHECK(message_of([&] {
          wham::m2l_accumulate_centers(m, static_cast<const double*>(nullptr), idx, idx, l, 4, 1, 1,
                                       1);
        }) ==
        "wham::m2l_accumulate_centers: centers = nullptr is invalid (valid: a device "
        "pointer)");
  CHECK(message_of([&] {
          wham::m2l_accumulate_classes(m, geo, idx, idx, idx, l, 4, 1, 0, 1, 1);
        }) == "wham::m2l_accumulate_classes: num_classes = 0 is invalid (valid: 1..1024)");
  CHECK(message_of([&] {
          wham::m2l_accumulate_class_groups(m, geo, idx, idx, idx, l, 4, 1, 1025, 1, 1);
        }) == "wham::m2l_accumulate_class_groups: num_classes = 1025 is invalid (valid: 1..1024)");
  CHECK(message_of([&] {
          wham::m2l_accumulate_classes(m, geo, nullptr, idx, idx, l, 4, 1, 1, 1, 1);
        }) == "wham::m2l_accumulate_classes: cls = nullptr is invalid (valid: a device pointer)");
  // No pairs: nothing is enqueued, and the pointers may be null.
  const c128* no_m = nullptr;
  c128* no_l = nullptr;
  const double* no_geo = nullptr;
  CHECK(message_of([&] {
          wham::m2l_accumulate(no_m, no_geo, nullptr, nullptr, no_l, 20, 0, 0, 0);
        }) == "(no throw)");
  CHECK(message_of([&] {
          wham::m2l_accumulate_centers(no_m, no_geo, nullptr, nullptr, no_l, 20, 0, 0, 0);
        }) == "(no throw)");
  CHECK(message_of([&] {
          wham::m2l_accumulate_classes(no_m, no_geo, nullptr, nullptr, nullptr, no_l, 20, 0, 1, 0,
                                       0);
        }) == "(no throw)");
  CHECK(message_of([&] {
          wham::m2l_accumulate_class_groups(no_m, no_geo, nullptr, nullptr, nullptr, no_l, 20, 0, 1,
                                            0, 0);
        }) == "(no throw)");
}
