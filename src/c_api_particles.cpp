// The C interface's P2M, L2P and P2P (wham/wham.h) over the prebuilt instantiations: plain
// C++, compiled against the declarations of wham/prebuilt.hpp only.
#pragma GCC visibility push(default)
#include <wham/wham.h>
#pragma GCC visibility pop

#include <wham/prebuilt.hpp>

#include "c_complex.hpp"
#include "c_guard.hpp"

using wham::c::cpp;
using wham::c::guarded;

extern "C" {

wham_status wham_p2m_f32(const float* points, const float* charges, int64_t num_points,
                         const int64_t* cell_offsets, const float* centers, int64_t num_cells,
                         wham_complex64* multipoles, int32_t p, wham_stream stream) {
  return guarded([&] {
    wham::p2m(points, charges, num_points, cell_offsets, centers, num_cells, cpp(multipoles), p,
              stream);
  });
}
wham_status wham_p2m_f64(const double* points, const double* charges, int64_t num_points,
                         const int64_t* cell_offsets, const double* centers, int64_t num_cells,
                         wham_complex128* multipoles, int32_t p, wham_stream stream) {
  return guarded([&] {
    wham::p2m(points, charges, num_points, cell_offsets, centers, num_cells, cpp(multipoles), p,
              stream);
  });
}

wham_status wham_l2p_f32(const wham_complex64* locals, const float* centers,
                         const int64_t* cell_offsets, int64_t num_cells, const float* points,
                         int64_t num_points, float* potential, float* gradient, int32_t p,
                         wham_stream stream) {
  return guarded([&] {
    wham::l2p(cpp(locals), centers, cell_offsets, num_cells, points, num_points, potential,
              gradient, p, stream);
  });
}
wham_status wham_l2p_f64(const wham_complex128* locals, const double* centers,
                         const int64_t* cell_offsets, int64_t num_cells, const double* points,
                         int64_t num_points, double* potential, double* gradient, int32_t p,
                         wham_stream stream) {
  return guarded([&] {
    wham::l2p(cpp(locals), centers, cell_offsets, num_cells, points, num_points, potential,
              gradient, p, stream);
  });
}

wham_status wham_p2p_f32(const float* points, const float* charges, int64_t num_points,
                         const int64_t* cell_offsets, int64_t num_cells,
                         const int64_t* near_offsets, const int32_t* near_cells,
                         int64_t num_near, float* potential, float* gradient,
                         wham_stream stream) {
  return guarded([&] {
    wham::p2p(points, charges, num_points, cell_offsets, num_cells, near_offsets, near_cells,
              num_near, potential, gradient, stream);
  });
}
wham_status wham_p2p_f64(const double* points, const double* charges, int64_t num_points,
                         const int64_t* cell_offsets, int64_t num_cells,
                         const int64_t* near_offsets, const int32_t* near_cells,
                         int64_t num_near, double* potential, double* gradient,
                         wham_stream stream) {
  return guarded([&] {
    wham::p2p(points, charges, num_points, cell_offsets, num_cells, near_offsets, near_cells,
              num_near, potential, gradient, stream);
  });
}

}  // extern "C"
