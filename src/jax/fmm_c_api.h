/* The C interface's FMM translations and particle operators (wham/translations.cuh,
 * wham/particles.cuh), declared as wham/wham.h declares them, for the handlers of
 * translations.cpp and particles.cpp. Identical redeclarations: once wham.h has them, this
 * file may go. Enumeration of `path`: wham::translation_path (automatic 0, direct 1,
 * thread 2, split 3, warp 4). */
#pragma once

#include <wham/wham.h>

#ifdef __cplusplus
extern "C" {
#endif

wham_status wham_m2m_f32(const wham_complex64* multipoles, const float* deltas, wham_complex64* out,
                         int32_t p, int64_t num_pairs, int32_t path, wham_stream stream);
wham_status wham_m2m_f64(const wham_complex128* multipoles, const double* deltas,
                         wham_complex128* out, int32_t p, int64_t num_pairs, int32_t path,
                         wham_stream stream);
wham_status wham_l2l_f32(const wham_complex64* locals, const float* deltas, wham_complex64* out,
                         int32_t p, int64_t num_pairs, int32_t path, wham_stream stream);
wham_status wham_l2l_f64(const wham_complex128* locals, const double* deltas, wham_complex128* out,
                         int32_t p, int64_t num_pairs, int32_t path, wham_stream stream);

wham_status wham_m2m_accumulate_f32(const wham_complex64* multipoles, const float* deltas,
                                    const int32_t* src, const int32_t* tgt, wham_complex64* parents,
                                    int32_t p, int64_t num_pairs, int64_t num_multipoles,
                                    int64_t num_parents, int32_t path, wham_stream stream);
wham_status wham_m2m_accumulate_f64(const wham_complex128* multipoles, const double* deltas,
                                    const int32_t* src, const int32_t* tgt,
                                    wham_complex128* parents, int32_t p, int64_t num_pairs,
                                    int64_t num_multipoles, int64_t num_parents, int32_t path,
                                    wham_stream stream);
wham_status wham_l2l_accumulate_f32(const wham_complex64* locals, const float* deltas,
                                    const int32_t* src, const int32_t* tgt,
                                    wham_complex64* children, int32_t p, int64_t num_pairs,
                                    int64_t num_locals, int64_t num_children, int32_t path,
                                    wham_stream stream);
wham_status wham_l2l_accumulate_f64(const wham_complex128* locals, const double* deltas,
                                    const int32_t* src, const int32_t* tgt,
                                    wham_complex128* children, int32_t p, int64_t num_pairs,
                                    int64_t num_locals, int64_t num_children, int32_t path,
                                    wham_stream stream);

wham_status wham_p2m_f32(const float* points, const float* charges, int64_t num_points,
                         const int64_t* cell_offsets, const float* centers, int64_t num_cells,
                         wham_complex64* multipoles, int32_t p, wham_stream stream);
wham_status wham_p2m_f64(const double* points, const double* charges, int64_t num_points,
                         const int64_t* cell_offsets, const double* centers, int64_t num_cells,
                         wham_complex128* multipoles, int32_t p, wham_stream stream);

wham_status wham_l2p_f32(const wham_complex64* locals, const float* centers,
                         const int64_t* cell_offsets, int64_t num_cells, const float* points,
                         int64_t num_points, float* potential, float* gradient, int32_t p,
                         wham_stream stream);
wham_status wham_l2p_f64(const wham_complex128* locals, const double* centers,
                         const int64_t* cell_offsets, int64_t num_cells, const double* points,
                         int64_t num_points, double* potential, double* gradient, int32_t p,
                         wham_stream stream);

wham_status wham_p2p_f32(const float* points, const float* charges, int64_t num_points,
                         const int64_t* cell_offsets, int64_t num_cells,
                         const int64_t* near_offsets, const int32_t* near_cells, int64_t num_near,
                         float* potential, float* gradient, wham_stream stream);
wham_status wham_p2p_f64(const double* points, const double* charges, int64_t num_points,
                         const int64_t* cell_offsets, int64_t num_cells,
                         const int64_t* near_offsets, const int32_t* near_cells, int64_t num_near,
                         double* potential, double* gradient, wham_stream stream);

#ifdef __cplusplus
}
#endif
