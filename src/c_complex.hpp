// The C interface's complex arrays as the C++ library's: wham_complex64 / wham_complex128
// have cuda::std::complex<float|double>'s layout (checked here), so a pointer converts.
#pragma once

#include <wham/wham.h>

#include <cuda/std/complex>
#include <cuda_runtime_api.h>

#include <type_traits>

namespace wham::c {

using c64 = cuda::std::complex<float>;
using c128 = cuda::std::complex<double>;

static_assert(std::is_same_v<wham_stream, cudaStream_t>, "wham_stream must be cudaStream_t");
// Same size and alignment: every C array is a C++ one. (A C99 compiler without an
// alignment attribute gets 4 bytes; the launchers' alignment check refuses what it misaligns.)
static_assert(sizeof(wham_complex64) == sizeof(c64) && alignof(c64) == alignof(wham_complex64),
              "wham_complex64 must have cuda::std::complex<float>'s layout");
static_assert(sizeof(wham_complex128) == sizeof(c128) &&
                  alignof(c128) % alignof(wham_complex128) == 0,
              "wham_complex128 must have cuda::std::complex<double>'s layout");

inline const c64* cpp(const wham_complex64* p) { return reinterpret_cast<const c64*>(p); }
inline c64* cpp(wham_complex64* p) { return reinterpret_cast<c64*>(p); }
inline const c128* cpp(const wham_complex128* p) { return reinterpret_cast<const c128*>(p); }
inline c128* cpp(wham_complex128* p) { return reinterpret_cast<c128*>(p); }

}  // namespace wham::c
