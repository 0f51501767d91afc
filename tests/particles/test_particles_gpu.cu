// The particle operators (wham/particles.cuh) on the GPU against the double host references
// (reference::p2m, reference::l2p with reference::l2p_gradient, reference::p2p): every
// order band, cells of 0, 1, 33 and 100 points, overwritten outputs poisoned with NaN and
// added-to outputs started at known random values; bad offsets and near-cell ids add
// nothing and write nothing outside the outputs (sentinels around each output; the inputs
// are exact-size allocations, for compute-sanitizer to watch the reads); the first calls
// made under CUDA graph capture; host pointers rejected with the context left usable.
#include <wham/particles.cuh>

#include "api_checks.cuh"
#include "catch.hpp"
#include "device_buffer.cuh"
#include "graph_capture.cuh"
#include "particles_cases.hpp"
#include "test_util.hpp"

#include <cuda/std/complex>

#include <climits>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

namespace pt = particles_test;
template <class T>
using cT = cuda::std::complex<T>;

/// Order from a GENERATE value: -1 is the highest order of T.
template <class T>
int order(int code) {
  return code < 0 ? wham::m2l_max_order<T>() : code;
}

/// Cells of 0, 1, 33 and 100 points and a few sizes between, in a 4 x 3 lattice.
std::vector<int> cell_sizes() {
  if (wham_test::reduced()) return {0, 1, 33, 100};
  return {0, 1, 33, 100, 33, 0, 100, 1, 7, 64, 32, 65};
}

/// An output buffer with `guard` sentinel elements (random bits) on each side.
template <class E>
class guarded {
 public:
  static constexpr std::size_t guard = 48;
  guarded(const std::vector<E>& body, std::mt19937_64& gen)
      : all_(with_sentinels(body, gen)), dev_(all_) {}
  E* data() const { return dev_.data() + guard; }
  /// The body after the call; the sentinels checked byte for byte.
  std::vector<E> body_after() const {
    const std::vector<E> got = dev_.download();
    const std::size_t n = all_.size() - 2 * guard;
    CHECK(std::memcmp(got.data(), all_.data(), guard * sizeof(E)) == 0);
    CHECK(std::memcmp(got.data() + guard + n, all_.data() + guard + n, guard * sizeof(E)) == 0);
    return std::vector<E>(got.begin() + guard, got.begin() + guard + n);
  }

 private:
  static std::vector<E> with_sentinels(const std::vector<E>& body, std::mt19937_64& gen) {
    std::vector<E> all(body.size() + 2 * guard);
    std::vector<unsigned char> bytes(guard * sizeof(E) * 2);
    for (auto& b : bytes) b = static_cast<unsigned char>(gen());
    std::memcpy(static_cast<void*>(all.data()), bytes.data(), guard * sizeof(E));
    std::memcpy(static_cast<void*>(all.data() + guard + body.size()),
                bytes.data() + guard * sizeof(E), guard * sizeof(E));
    std::copy(body.begin(), body.end(), all.begin() + guard);
    return all;
  }
  std::vector<E> all_;
  wham_test::device_buffer<E> dev_;
};

/// A cell set's inputs on the device (exact-size allocations).
template <class T>
struct device_cells {
  wham_test::device_buffer<T> points, charges, centers;
  wham_test::device_buffer<std::int64_t> offsets;
  explicit device_cells(const pt::cell_set& s)
      : points(pt::narrow<T>(s.points)),
        charges(pt::narrow<T>(s.charges)),
        centers(pt::narrow<T>(s.centers)),
        offsets(s.offsets) {}
};

template <class T>
std::vector<cT<T>> to_device_type(const std::vector<std::complex<double>>& v) {
  std::vector<cT<T>> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = cT<T>(T(v[i].real()), T(v[i].imag()));
  return out;
}

/// Random start values for an added-to output, of the size of what will be added (the rms of
/// `want`), rounded to T.
template <class T>
std::vector<T> start_values(const std::vector<double>& want, std::mt19937_64& gen) {
  double rms = 0.0;
  for (const double v : want) rms += v * v;
  rms = want.empty() ? 1.0 : std::sqrt(rms / double(want.size())) + 1e-3;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> start(want.size());
  for (auto& v : start) v = T(rms * u(gen));
  return start;
}

/// The near list of a lattice of cells (x fastest, `side` a row, `rows` rows a plane): each
/// cell's neighbours within one step in every axis, itself included (27 in the interior).
void lattice_near_list(std::int64_t cells, int side, int rows, std::vector<std::int64_t>& offsets,
                       std::vector<std::int32_t>& ids) {
  offsets.assign(1, 0);
  ids.clear();
  auto coord = [&](std::int64_t c, int k) {
    return k == 0 ? int(c % side) : k == 1 ? int((c / side) % rows) : int(c / (side * rows));
  };
  for (std::int64_t t = 0; t < cells; ++t) {
    for (std::int64_t s = 0; s < cells; ++s) {
      bool near = true;
      for (int k = 0; k < 3; ++k) near = near && std::abs(coord(t, k) - coord(s, k)) <= 1;
      if (near) ids.push_back(std::int32_t(s));
    }
    offsets.push_back(std::int64_t(ids.size()));
  }
}

// ---- one call of each operator against its reference --------------------------------------

template <class T>
void check_p2m(int p, const pt::cell_set& s, std::mt19937_64& gen) {
  const std::size_t C = std::size_t(p + 1) * (p + 1);
  device_cells<T> d(s);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  guarded<cT<T>> M(std::vector<cT<T>>(C * std::size_t(s.num_cells()), cT<T>(nan, nan)), gen);
  wham::p2m(d.points.data(), d.charges.data(), s.num_points(), d.offsets.data(), d.centers.data(),
            s.num_cells(), M.data(), p);
  WHAM_TEST_CUDA(cudaGetLastError());
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const double err = pt::weighted_error(M.body_after(), pt::p2m_reference(p, s), p, s.radius);
  CAPTURE(err);
  CHECK(err <= pt::expansion_tolerance<T>());
}

template <class T>
void check_l2p(int p, const pt::cell_set& s, bool with_gradient, std::mt19937_64& gen,
               cudaStream_t stream = 0) {
  const auto L = pt::make_locals<T>(gen, p, s.num_cells(), s.radius);
  std::vector<double> phi_ref, grad_ref;
  pt::l2p_reference(p, L, s, phi_ref, grad_ref);
  const std::vector<T> phi0 = start_values<T>(phi_ref, gen), grad0 = start_values<T>(grad_ref, gen);
  device_cells<T> d(s);
  wham_test::device_buffer<cT<T>> dL(to_device_type<T>(L));
  guarded<T> phi(phi0, gen), grad(grad0, gen);
  wham::l2p(dL.data(), d.centers.data(), d.offsets.data(), s.num_cells(), d.points.data(),
            s.num_points(), phi.data(), with_gradient ? grad.data() : nullptr, p, stream);
  WHAM_TEST_CUDA(cudaGetLastError());
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const double e_phi = pt::added_error(phi.body_after(), phi0, phi_ref);
  const std::vector<T> g = grad.body_after();
  const double e_grad = with_gradient ? pt::added_error(g, grad0, grad_ref) : 0.0;
  CAPTURE(e_phi, e_grad);
  CHECK(e_phi <= pt::expansion_tolerance<T>());
  CHECK(e_grad <= pt::gradient_tolerance<T>());
  if (!with_gradient) CHECK(std::memcmp(g.data(), grad0.data(), g.size() * sizeof(T)) == 0);
}

template <class T>
void check_p2p(const pt::cell_set& s, const std::vector<std::int64_t>& near_offsets,
               const std::vector<std::int32_t>& near_cells, bool with_gradient,
               std::mt19937_64& gen) {
  std::vector<double> phi_ref, grad_ref;
  pt::p2p_reference(s, near_offsets, near_cells, phi_ref, grad_ref);
  const std::vector<T> phi0 = start_values<T>(phi_ref, gen), grad0 = start_values<T>(grad_ref, gen);
  device_cells<T> d(s);
  wham_test::device_buffer<std::int64_t> noff(near_offsets);
  wham_test::device_buffer<std::int32_t> ids(near_cells);
  guarded<T> phi(phi0, gen), grad(grad0, gen);
  wham::p2p(d.points.data(), d.charges.data(), s.num_points(), d.offsets.data(), s.num_cells(),
            noff.data(), ids.data(), std::int64_t(near_cells.size()), phi.data(),
            with_gradient ? grad.data() : nullptr);
  WHAM_TEST_CUDA(cudaGetLastError());
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  const double e_phi = pt::added_error(phi.body_after(), phi0, phi_ref);
  const std::vector<T> g = grad.body_after();
  const double e_grad = with_gradient ? pt::added_error(g, grad0, grad_ref) : 0.0;
  CAPTURE(e_phi, e_grad);
  CHECK(e_phi <= pt::p2p_tolerance<T>());
  CHECK(e_grad <= pt::p2p_tolerance<T>());
  if (!with_gradient) CHECK(std::memcmp(g.data(), grad0.data(), g.size() * sizeof(T)) == 0);
}

}  // namespace

TEMPLATE_TEST_CASE("p2m matches reference::p2m over cells of 0 to 100 points",
                   "[particles][gpu][p2m]", float, double) {
  using T = TestType;
  const int p = order<T>(GENERATE(0, 1, 2, 4, 8, 12, -1));
  CAPTURE(p, wham_test::seed());
  auto gen = wham_test::rng(0x92a + 64 * std::uint64_t(p) + sizeof(T));
  check_p2m<T>(p, pt::make_cells<T>(gen, cell_sizes()), gen);
}

TEMPLATE_TEST_CASE("l2p adds the potential and gradient of local expansions",
                   "[particles][gpu][l2p]", float, double) {
  using T = TestType;
  const int p = order<T>(GENERATE(0, 1, 2, 4, 8, 12, -1));
  const bool with_gradient = GENERATE(true, false);
  CAPTURE(p, with_gradient, wham_test::seed());
  auto gen = wham_test::rng(0x12b + 64 * std::uint64_t(p) + 2 * with_gradient + sizeof(T));
  const pt::cell_set s = pt::make_cells<T>(gen, cell_sizes());
  if (p == 8) {  // once on a stream of the caller's
    cudaStream_t stream;
    WHAM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    check_l2p<T>(p, s, with_gradient, gen, stream);
    WHAM_TEST_CUDA(cudaStreamDestroy(stream));
  } else {
    check_l2p<T>(p, s, with_gradient, gen);
  }
}

TEMPLATE_TEST_CASE("p2p adds the near field over a lattice's neighbour lists",
                   "[particles][gpu][p2p]", float, double) {
  using T = TestType;
  const bool with_gradient = GENERATE(true, false);
  CAPTURE(with_gradient, wham_test::seed());
  auto gen = wham_test::rng(0x929 + 2 * with_gradient + sizeof(T));
  pt::cell_set s = pt::make_cells<T>(gen, cell_sizes(), 4);
  // a point of cell 2 placed on one of cell 3: that pair is left out as the self pairs are
  s.points[3 * std::size_t(s.offsets[3])] = s.points[3 * std::size_t(s.offsets[2])];
  s.points[3 * std::size_t(s.offsets[3]) + 1] = s.points[3 * std::size_t(s.offsets[2]) + 1];
  s.points[3 * std::size_t(s.offsets[3]) + 2] = s.points[3 * std::size_t(s.offsets[2]) + 2];
  std::vector<std::int64_t> near_offsets;
  std::vector<std::int32_t> near_cells;
  lattice_near_list(s.num_cells(), 4, 3, near_offsets, near_cells);
  check_p2p<T>(s, near_offsets, near_cells, with_gradient, gen);
}

TEMPLATE_TEST_CASE("bad offsets and near-cell ids add nothing and write nothing outside",
                   "[particles][gpu][hardening]", float, double) {
  using T = TestType;
  auto gen = wham_test::rng(0xbad + sizeof(T));
  pt::cell_set s = pt::make_cells<T>(gen, {40, 0, 33, 36, 0, 0, 0, 0});
  const std::int64_t n = s.num_points();  // 109
  // Clamped to [0, n] and emptied where the end is below the begin: [0, 40), [40, 40),
  // [40, 73), [73, n), [n, n), [n, 0), [0, 0), [0, 0): the ranges make_cells gave its
  // cells, each point about its own cell's centre, no two ranges sharing a point.
  s.offsets = {INT64_MIN, 40, 40, 73, n + 500, INT64_MAX, -3, INT64_MIN, 0};
  // Near lists over 12 entries, ids out of range mixed in; clamped offsets give cell 0
  // [0, 4), cell 2 [4, 12), cell 4 [2, 8), cell 5 [8, 12), the others nothing.
  const std::vector<std::int64_t> near_offsets = {-100, 4, 4, 12, 2, 8, 1012, INT64_MAX, INT64_MIN};
  const std::vector<std::int32_t> near_cells = {0, -1,        2, 8, 3, INT32_MIN,
                                                2, INT32_MAX, 0, 3, 7, 5};
  for (const int p : {3, wham::m2l_max_order<T>()}) {
    CAPTURE(p, wham_test::seed());
    check_p2m<T>(p, s, gen);
    check_l2p<T>(p, s, true, gen);
  }
  check_p2p<T>(s, near_offsets, near_cells, true, gen);
  check_p2p<T>(s, near_offsets, near_cells, false, gen);
  // only ids out of range: nothing added anywhere
  const std::vector<std::int32_t> all_bad(12, -7);
  check_p2p<T>(s, near_offsets, all_bad, true, gen);
}

TEST_CASE("the first calls of p2m, l2p and p2p may be captured into a CUDA graph",
          "[particles][gpu][graph]") {
  // ctest also runs this case in a process of its own (tests/particles/CMakeLists.txt):
  // there its calls are the process's first wham calls.
  auto gen = wham_test::rng(0x6a9);
  const pt::cell_set sd = pt::make_cells<double>(gen, cell_sizes());
  const pt::cell_set sf = pt::make_cells<float>(gen, cell_sizes());
  const int pd = 8, pf = 12;
  const std::size_t Cd = std::size_t(pd + 1) * (pd + 1), Cf = std::size_t(pf + 1) * (pf + 1);
  std::vector<std::int64_t> near_offsets;
  std::vector<std::int32_t> near_cells;
  lattice_near_list(sd.num_cells(), 4, 3, near_offsets, near_cells);
  const auto L = pt::make_locals<float>(gen, pf, sf.num_cells(), sf.radius);
  device_cells<double> dd(sd);
  device_cells<float> df(sf);
  wham_test::device_buffer<std::int64_t> noff(near_offsets);
  wham_test::device_buffer<std::int32_t> ids(near_cells);
  wham_test::device_buffer<cT<double>> M(Cd * std::size_t(sd.num_cells()));
  wham_test::device_buffer<cT<float>> dL(to_device_type<float>(L));
  const std::vector<float> zf(3 * std::size_t(sf.num_points()), 0.0f);
  const std::vector<double> zd(3 * std::size_t(sd.num_points()), 0.0);
  wham_test::device_buffer<float> phi_f(
      std::vector<float>(zf.begin(), zf.begin() + sf.num_points())),
      grad_f(zf);
  wham_test::device_buffer<double> phi_d(
      std::vector<double>(zd.begin(), zd.begin() + sd.num_points())),
      grad_d(zd);
  M.poison();
  WHAM_TEST_CUDA(cudaDeviceSynchronize());
  wham_test::capture_and_replay([&](cudaStream_t stream) {
    wham::p2m(dd.points.data(), dd.charges.data(), sd.num_points(), dd.offsets.data(),
              dd.centers.data(), sd.num_cells(), M.data(), pd, stream);
    wham::l2p(dL.data(), df.centers.data(), df.offsets.data(), sf.num_cells(), df.points.data(),
              sf.num_points(), phi_f.data(), grad_f.data(), pf, stream);
    wham::p2p(dd.points.data(), dd.charges.data(), sd.num_points(), dd.offsets.data(),
              sd.num_cells(), noff.data(), ids.data(), std::int64_t(near_cells.size()),
              phi_d.data(), grad_d.data(), stream);
  });
  const double e_p2m = pt::weighted_error(M.download(), pt::p2m_reference(pd, sd), pd, sd.radius);
  std::vector<double> phi_ref, grad_ref;
  pt::l2p_reference(pf, L, sf, phi_ref, grad_ref);
  const std::vector<float> zero_f(zf);
  const double e_l2p = pt::added_error(phi_f.download(), zero_f, phi_ref);
  const double e_l2p_grad = pt::added_error(grad_f.download(), zero_f, grad_ref);
  pt::p2p_reference(sd, near_offsets, near_cells, phi_ref, grad_ref);
  const std::vector<double> zero_d(zd);
  const double e_p2p = pt::added_error(phi_d.download(), zero_d, phi_ref);
  const double e_p2p_grad = pt::added_error(grad_d.download(), zero_d, grad_ref);
  CAPTURE(e_p2m, e_l2p, e_l2p_grad, e_p2p, e_p2p_grad, Cf);
  CHECK(e_p2m <= pt::expansion_tolerance<double>());
  CHECK(e_l2p <= pt::expansion_tolerance<float>());
  CHECK(e_l2p_grad <= pt::gradient_tolerance<float>());
  CHECK(e_p2p <= pt::p2p_tolerance<double>());
  CHECK(e_p2p_grad <= pt::p2p_tolerance<double>());
}

TEST_CASE("host pointers throw naming the argument and leave the context usable",
          "[particles][gpu][errors]") {
  int device = 0, pageable = 0;
  WHAM_TEST_CUDA(cudaGetDevice(&device));
  WHAM_TEST_CUDA(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device));
  auto gen = wham_test::rng(0x4057);
  const pt::cell_set s = pt::make_cells<double>(gen, {5, 7});
  device_cells<double> d(s);
  wham_test::device_buffer<cT<double>> M(2 * 9);
  wham_test::device_buffer<double> phi(std::vector<double>(12, 0.0));
  const std::vector<std::int64_t> host_offsets = s.offsets;
  const std::vector<std::int32_t> host_ids = {0, 1, 0, 1};
  std::vector<double> host_phi(12, 0.0);
  const std::string tail =
      " = a host pointer (not device-accessible) is invalid (valid: device, managed or "
      "registered host memory)";
  if (pageable == 0) {
    CHECK(wham_test::message_of([&] {
            wham::p2m(d.points.data(), d.charges.data(), 12, host_offsets.data(), d.centers.data(),
                      2, M.data(), 2);
          }) == "wham::p2m: cell_offsets" + tail);
    CHECK(wham_test::message_of([&] {
            wham::l2p(M.data(), d.centers.data(), d.offsets.data(), 2, d.points.data(), 12,
                      host_phi.data(), static_cast<double*>(nullptr), 2);
          }) == "wham::l2p: potential" + tail);
    wham_test::device_buffer<std::int64_t> noff(std::vector<std::int64_t>{0, 2, 4});
    CHECK(wham_test::message_of([&] {
            wham::p2p(d.points.data(), d.charges.data(), 12, d.offsets.data(), 2, noff.data(),
                      host_ids.data(), 4, phi.data(), static_cast<double*>(nullptr));
          }) == "wham::p2p: near_cells" + tail);
  }
  WHAM_TEST_CUDA(cudaGetLastError());
  check_p2m<double>(2, s, gen);  // the context still works
}
