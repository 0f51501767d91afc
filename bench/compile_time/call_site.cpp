// A call site of three entry points, to time its compilation (scripts/compile_time.sh):
//   nvcc -x cu                         the public headers: every kernel compiled here
//   nvcc -x cu -DWHAM_PREBUILT         the headers, instantiations from wham::wham_kernels
//   g++ -DWHAM_PREBUILT -DWHAM_NO_CUH  declarations only, no nvcc
#ifndef WHAM_NO_CUH
#include <wham/fwht.cuh>
#include <wham/iqp.cuh>
#include <wham/m2l.cuh>
#endif
#ifdef WHAM_PREBUILT
#include <wham/prebuilt.hpp>
#endif

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <cstdint>

void call_site(float* rows, const double* params, cuda::std::complex<float>* states,
               const cuda::std::complex<double>* multipoles, const double* deltas,
               cuda::std::complex<double>* locals, cudaStream_t stream) {
  wham::fwht(rows, rows, 10, 64, 1.0f / 32.0f, stream);
  wham::iqp_encode(params, states, 12, 64, wham::iqp_variant::iqp, stream);
  wham::m2l(multipoles, deltas, locals, 8, 1024, stream);
}
