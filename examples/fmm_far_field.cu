// The far field of one uniform octree level, as an FMM computes it:
//   random charges in the unit cube, one level of 16^3 cells;
//   P2M on the host (wham::reference::p2m), M2L over the interaction lists on the GPU
//   (wham::m2l_accumulate_centers, one call for every target cell), L2P on the host;
//   the potential at sample points compared with the direct sum over the charges of
//   the well-separated cells (the interaction list of the sample's cell).
// Prints the relative error and the M2L time for p = 2..14.
#include <wham/fmm.cuh>
#include <wham/fmm_lists.hpp>
#include <wham/reference/m2l.hpp>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>
#include <thrust/device_vector.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

// Exits with the failing call's name and CUDA's message: an example has no caller to recover.
void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", call, cudaGetErrorString(status));
    std::exit(1);
  }
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("fmm_far_field: no CUDA device here, nothing to run\n");
    return 0;
  }
  namespace ref = wham::reference;
  const int level = 4, n = 1 << level;
  const int cells = n * n * n;
  const int per_cell = 8;
  const double h = 1.0 / n;
  std::mt19937_64 gen(2024);
  std::uniform_real_distribution<double> unit(0.0, 1.0);

  // Charges, sorted into cells.
  std::vector<std::vector<double>> pos(cells), q(cells);
  for (int c = 0; c < cells; ++c) {
    const auto ijk = wham::cell_coords(level, c);
    for (int j = 0; j < per_cell; ++j) {
      for (int k = 0; k < 3; ++k) pos[c].push_back((ijk[k] + unit(gen)) * h);
      q[c].push_back(unit(gen) - 0.5);
    }
  }
  const auto list = wham::uniform_interaction_lists(level);
  const auto centers = wham::cell_centers(level);
  std::printf("level %d: %d cells, %d charges, %zu M2L pairs\n", level, cells, cells * per_cell,
              list.size());

  // Sample points: one random charge position in 64 random cells.
  std::vector<int> sample_cell;
  std::vector<double> sample_pos;
  std::uniform_int_distribution<int> any_cell(0, cells - 1);
  for (int s = 0; s < 64; ++s) {
    const int c = any_cell(gen);
    sample_cell.push_back(c);
    for (int k = 0; k < 3; ++k) sample_pos.push_back(pos[c][k] + 0.1 * h * (unit(gen) - 0.5));
  }
  // The direct far field at each sample: the charges of the cells in its list.
  std::vector<double> direct(sample_cell.size(), 0.0);
  for (std::size_t s = 0; s < sample_cell.size(); ++s) {
    const int t = sample_cell[s];
    for (std::int64_t i = list.offsets[t]; i < list.offsets[t + 1]; ++i) {
      const int src = list.src[std::size_t(i)];
      for (int j = 0; j < per_cell; ++j) {
        double r2 = 0.0;
        for (int k = 0; k < 3; ++k) {
          const double d = sample_pos[3 * s + k] - pos[src][3 * j + k];
          r2 += d * d;
        }
        direct[s] += q[src][j] / std::sqrt(r2);
      }
    }
  }

  using cT = cuda::std::complex<double>;
  const thrust::device_vector<std::int32_t> d_src(list.src), d_tgt(list.tgt);
  const thrust::device_vector<double> d_centers(centers);
  const std::int32_t* src_ptr = thrust::raw_pointer_cast(d_src.data());
  const std::int32_t* tgt_ptr = thrust::raw_pointer_cast(d_tgt.data());
  const double* centers_ptr = thrust::raw_pointer_cast(d_centers.data());
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");

  std::printf("%4s %12s %12s %14s\n", "p", "rel. error", "M2L us", "Mpairs/s");
  for (int p = 2; p <= 14; p += 2) {
    const int C = (p + 1) * (p + 1);
    std::vector<cT> M(std::size_t(cells) * C);
    for (int c = 0; c < cells; ++c) {
      const auto m = ref::p2m(p, &centers[3 * std::size_t(c)], pos[c].data(), q[c].data(),
                              std::size_t(per_cell));
      for (int i = 0; i < C; ++i) M[std::size_t(c) * C + i] = {m[i].real(), m[i].imag()};
    }
    const thrust::device_vector<cT> d_M(M);
    thrust::device_vector<cT> d_L(M.size());
    const cT* M_ptr = thrust::raw_pointer_cast(d_M.data());
    cT* L_ptr = thrust::raw_pointer_cast(d_L.data());
    const std::size_t L_bytes = d_L.size() * sizeof(cT);
    // Warm-up call (module load), then the timed one on zeroed locals.
    check(cudaMemsetAsync(L_ptr, 0, L_bytes, stream), "cudaMemsetAsync");
    wham::m2l_accumulate_centers(M_ptr, centers_ptr, src_ptr, tgt_ptr, L_ptr, p,
                                 std::int64_t(list.size()), cells, cells, stream);
    check(cudaMemsetAsync(L_ptr, 0, L_bytes, stream), "cudaMemsetAsync");
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    wham::m2l_accumulate_centers(M_ptr, centers_ptr, src_ptr, tgt_ptr, L_ptr, p,
                                 std::int64_t(list.size()), cells, cells, stream);
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    std::vector<cT> L(d_L.size());
    check(cudaMemcpyAsync(L.data(), L_ptr, L_bytes, cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");

    double num = 0.0, den = 0.0;
    for (std::size_t s = 0; s < sample_cell.size(); ++s) {
      const int t = sample_cell[s];
      std::vector<std::complex<double>> Lt(static_cast<std::size_t>(C));
      for (int i = 0; i < C; ++i) {
        const cT v = L[std::size_t(t) * C + i];
        Lt[std::size_t(i)] = {v.real(), v.imag()};
      }
      const double phi = ref::l2p(p, Lt.data(), &centers[3 * std::size_t(t)], &sample_pos[3 * s]);
      num += (phi - direct[s]) * (phi - direct[s]);
      den += direct[s] * direct[s];
    }
    std::printf("%4d %12.3e %12.1f %14.1f\n", p, std::sqrt(num / den), ms * 1e3,
                double(list.size()) / (ms * 1e-3) * 1e-6);
  }
  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return 0;
}
