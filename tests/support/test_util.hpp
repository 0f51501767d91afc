// Shared helpers for wham's tests: seeds, random inputs, relative errors,
// reduced sizes under the sanitizer. Host-only (compiles with g++ or nvcc).
#pragma once

#include <cuda/std/complex>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace wham_test {

/// A fresh seed per process (or WHAM_TEST_SEED to replay), printed once.
inline std::uint64_t seed() {
  static const std::uint64_t s = [] {
    std::uint64_t v;
    if (const char* env = std::getenv("WHAM_TEST_SEED")) {
      v = std::strtoull(env, nullptr, 10);
    } else {
      v = std::random_device{}();
      v = (v << 32) ^ std::random_device{}();
    }
    std::printf("wham test seed: %llu (replay with WHAM_TEST_SEED=%llu)\n",
                static_cast<unsigned long long>(v), static_cast<unsigned long long>(v));
    return v;
  }();
  return s;
}

/// A generator for one test section: the process seed mixed with a tag.
inline std::mt19937_64 rng(std::uint64_t tag) {
  return std::mt19937_64(seed() ^ (tag * 0x9E3779B97F4A7C15ull));
}

/// True when the GPU run script asks for small sizes (compute-sanitizer runs).
inline bool reduced() {
  const char* env = std::getenv("WHAM_TEST_REDUCED");
  return env != nullptr && env[0] == '1';
}

inline double abs2(double v) { return v * v; }
inline double abs2(float v) { return double(v) * double(v); }
template <class T>
inline double abs2(const std::complex<T>& v) {
  return double(v.real()) * double(v.real()) + double(v.imag()) * double(v.imag());
}

/// Every element type of the family, widened to std::complex<double>.
inline std::complex<double> widen(double v) { return {v, 0.0}; }
inline std::complex<double> widen(float v) { return {double(v), 0.0}; }
inline std::complex<double> widen(__half v) { return {double(__half2float(v)), 0.0}; }
inline std::complex<double> widen(__nv_bfloat16 v) { return {double(__bfloat162float(v)), 0.0}; }
template <class T>
inline std::complex<double> widen(const std::complex<T>& v) {
  return {double(v.real()), double(v.imag())};
}
template <class T>
inline std::complex<double> widen(const cuda::std::complex<T>& v) {
  return {double(v.real()), double(v.imag())};
}

/// ||out - ref|| / ||ref|| (||ref|| = 0 gives the absolute error); NaN anywhere gives +inf.
template <class A, class B>
inline double relative_error(const A* out, const B* ref, std::size_t n) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::complex<double> o = widen(out[i]), r = widen(ref[i]);
    const double e = abs2(o - r);
    if (!std::isfinite(e)) return INFINITY;
    num += e;
    den += abs2(r);
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace wham_test
