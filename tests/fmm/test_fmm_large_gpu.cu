// The accumulate forms past 2^31 coefficients (in total, and in source offsets) and inside a
// captured CUDA graph, against the double host reference.
#include "fmm_cases.cuh"

#include "catch.hpp"
#include "device_buffer.cuh"
#include "test_util.hpp"

using namespace fmm_test;

TEST_CASE("m2l accumulate with more than 2^31 coefficients in total", "[fmm][gpu][large]") {
  // 2^31 / 25 + 10^5 pairs at p = 4 (double, centres form): 86M pairs, 690 MB of
  // indices; 64 sources, 64 targets, every target one long run of 1.34M pairs.
  if (wham_test::reduced()) return;
  using cT = cuda::std::complex<double>;
  const int p = 4, C = 25;
  const std::int64_t n = (std::int64_t(1) << 31) / C + 100000;
  std::size_t free_b = 0, total_b = 0;
  WHAM_TEST_CUDA(cudaMemGetInfo(&free_b, &total_b));
  if (free_b < std::size_t(2) << 30) {
    WARN("skipped: less than 2 GB of device memory free");
    return;
  }
  CAPTURE(n, wham_test::seed());
  auto gen = wham_test::rng(7500);
  const int S = 64;
  std::vector<std::int32_t> src(static_cast<std::size_t>(n)), tgt(static_cast<std::size_t>(n));
  const std::int64_t per = (n + S - 1) / S;
  for (std::int64_t i = 0; i < n; ++i) {
    src[std::size_t(i)] = std::int32_t(i % S);
    tgt[std::size_t(i)] = std::int32_t(S + i / per);  // grouped by target
  }
  // Target t receives, from each source s, the pairs i with i % S == s inside its run.
  std::vector<std::vector<std::int64_t>> mult(S, std::vector<std::int64_t>(S, 0));
  for (int t = 0; t < S; ++t) {
    const std::int64_t a = t * per, b = std::min(n, (t + 1) * per);
    for (std::int64_t i = a; i < b; ++i) ++mult[std::size_t(t)][std::size_t(i % S)];
  }
  std::vector<double> centers(3 * 2 * S);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int c = 0; c < 2 * S; ++c)
    for (int k = 0; k < 3; ++k) centers[std::size_t(3 * c + k)] = u(gen) + (c >= S ? 3.0 : 0.0);
  const auto Mh = random_coefficients<double>(std::size_t(2 * S) * C, gen);
  const auto M = to_device_type<double>(Mh);
  std::vector<std::complex<double>> expected = Mh;  // the locals start as a copy of M
  for (int t = 0; t < S; ++t)
    for (int s = 0; s < S; ++s) {
      double dlt[3];
      for (int k = 0; k < 3; ++k)
        dlt[k] = centers[std::size_t(3 * (S + t) + k)] - centers[std::size_t(3 * s + k)];
      const auto one = ref::m2l_direct(p, Mh.data() + std::size_t(s) * C, dlt);
      for (int c = 0; c < C; ++c)
        expected[std::size_t(S + t) * C + c] +=
            double(mult[std::size_t(t)][std::size_t(s)]) * one[std::size_t(c)];
    }
  wham_test::device_buffer<std::int32_t> dsrc(src), dtgt(tgt);
  wham_test::device_buffer<double> dc(centers);
  wham_test::device_buffer<cT> dM(M), dL(M.size());
  for (const method how : {method::atomic, method::deterministic}) {
    CAPTURE(int(how));
    dL.upload(M);
    wham::m2l_accumulate_centers(dM.data(), dc.data(), dsrc.data(), dtgt.data(), dL.data(), p, n,
                                 2 * S, 2 * S, 0, how);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = dL.download();
    const double err = wham_test::relative_error(got.data(), expected.data(), got.size());
    // 1.34M terms a target, 64 values repeated: their rounding errors need not average
    // out, so the sum's allowance is n eps, not eps sqrt(n).
    const double tol = tolerance<double>(p) + double(per) * std::numeric_limits<double>::epsilon();
    CAPTURE(err, tol);
    CHECK(err <= tol);
  }
}

TEST_CASE("m2l accumulate with source offsets past 2^31 coefficients", "[fmm][gpu][large]") {
  // float, p = 1: 2^29 + 2^20 source cells (17 GB of multipoles, most of them zero);
  // the pairs read the last cells, whose coefficient offsets pass 2^31.
  if (wham_test::reduced()) return;
  using cT = cuda::std::complex<float>;
  const int p = 1, C = 4;
  const std::int64_t cells = (std::int64_t(1) << 29) + (std::int64_t(1) << 20);
  std::size_t free_b = 0, total_b = 0;
  WHAM_TEST_CUDA(cudaMemGetInfo(&free_b, &total_b));
  if (free_b < std::size_t(cells) * C * sizeof(cT) + (std::size_t(1) << 30)) {
    WARN("skipped: not enough device memory for 17 GB of multipoles");
    return;
  }
  CAPTURE(cells, wham_test::seed());
  auto gen = wham_test::rng(7600);
  wham_test::device_buffer<cT> dM(std::size_t(cells) * C);
  WHAM_TEST_CUDA(cudaMemset(dM.data(), 0, dM.bytes()));
  const int used = 8;
  const auto Mh = random_coefficients<float>(std::size_t(used) * C, gen);
  const auto Mf = to_device_type<float>(Mh);
  WHAM_TEST_CUDA(cudaMemcpy(dM.data() + std::size_t(cells - used) * C, Mf.data(),
                            sizeof(cT) * Mf.size(), cudaMemcpyHostToDevice));
  test_list h;
  h.num_cells = 4;
  for (int s = 0; s < used; ++s)
    for (int t = 0; t < 4; ++t) {
      h.src.push_back(std::int32_t(cells - used + s));
      h.tgt.push_back(t);
      h.deltas.insert(h.deltas.end(), {1.5 + t, -2.0 + 0.25 * s, 0.5});
    }
  const auto L0 = to_device_type<float>(random_coefficients<float>(4 * std::size_t(C), gen));
  std::vector<std::complex<double>> expected = widen_all(L0);
  for (std::size_t i = 0; i < h.src.size(); ++i) {
    double dlt[3];
    for (int k = 0; k < 3; ++k) dlt[k] = double(float(h.deltas[3 * i + k]));
    const std::int64_t s = h.src[i] - (cells - used);
    std::vector<std::complex<double>> Ms(C);
    for (int c = 0; c < C; ++c) Ms[std::size_t(c)] = wham_test::widen(Mf[std::size_t(s * C + c)]);
    const auto one = ref::m2l_direct(p, Ms.data(), dlt);
    for (int c = 0; c < C; ++c) expected[std::size_t(h.tgt[i]) * C + c] += one[std::size_t(c)];
  }
  wham_test::device_buffer<std::int32_t> dsrc(h.src), dtgt(h.tgt);
  wham_test::device_buffer<float> dd(narrow<float>(h.deltas));
  wham_test::device_buffer<cT> dL(L0);
  for (const method how : {method::atomic, method::deterministic}) {
    CAPTURE(int(how));
    // deterministic needs grouped targets: sort by target on the host
    std::vector<std::int32_t> s2 = h.src, t2 = h.tgt;
    std::vector<float> d2 = narrow<float>(h.deltas);
    if (how == method::deterministic) {
      std::vector<std::size_t> o(h.src.size());
      std::iota(o.begin(), o.end(), 0);
      std::stable_sort(o.begin(), o.end(), [&](auto a, auto b) { return h.tgt[a] < h.tgt[b]; });
      for (std::size_t i = 0; i < o.size(); ++i) {
        s2[i] = h.src[o[i]];
        t2[i] = h.tgt[o[i]];
        for (int k = 0; k < 3; ++k) d2[3 * i + k] = float(h.deltas[3 * o[i] + k]);
      }
    }
    dsrc.upload(s2);
    dtgt.upload(t2);
    dd.upload(d2);
    dL.upload(L0);
    wham::m2l_accumulate(dM.data(), dd.data(), dsrc.data(), dtgt.data(), dL.data(), p,
                         std::int64_t(s2.size()), cells, 4, 0, how);
    WHAM_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = dL.download();
    const double err = wham_test::relative_error(got.data(), expected.data(), got.size());
    CAPTURE(err);
    CHECK(err <= tolerance<float>(p, used));
  }
}

TEST_CASE("m2l accumulate launches inside a captured CUDA graph", "[fmm][gpu][graph]") {
  using cT = cuda::std::complex<double>;
  const int p = 5, C = 36;
  CAPTURE(p, wham_test::seed());
  auto gen = wham_test::rng(7700);
  const test_list h = uniform_list(2);
  const auto M =
      to_device_type<double>(random_coefficients<double>(std::size_t(h.num_cells) * C, gen));
  const auto L0 =
      to_device_type<double>(random_coefficients<double>(std::size_t(h.num_cells) * C, gen));
  device_list<double> d(h);
  wham_test::device_buffer<cT> dM(M), dL0(L0), dA(L0), dB(L0.size());
  dB.poison();  // the graph's copy of L0 must reach every row
  cudaStream_t stream;
  WHAM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  launch<double>(form::classes, p, dM.data(), dA.data(), h, d, method::deterministic, stream);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  WHAM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  WHAM_TEST_CUDA(
      cudaMemcpyAsync(dB.data(), dL0.data(), dB.bytes(), cudaMemcpyDeviceToDevice, stream));
  launch<double>(form::classes, p, dM.data(), dB.data(), h, d, method::deterministic, stream);
  WHAM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  WHAM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) WHAM_TEST_CUDA(cudaGraphLaunch(exec, stream));
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  const auto a = dA.download(), b = dB.download();
  REQUIRE(a == b);
  const double err = error_against_reference<double>(form::classes, p, h, M, L0, b);
  CAPTURE(err);
  CHECK(err <= tolerance<double>(p, most_per_target(h)));
  WHAM_TEST_CUDA(cudaGraphExecDestroy(exec));
  WHAM_TEST_CUDA(cudaGraphDestroy(graph));
  WHAM_TEST_CUDA(cudaStreamDestroy(stream));
}
