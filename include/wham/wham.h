/* wham/wham.h: wham's C interface, over the prebuilt library (libwham.so / libwham.a,
 * CMake target wham::wham_c).
 *
 * Plain C (C99 and later; also valid C++): every operator of the C++ headers for the standard
 * element types, named by those types. Conventions of every function:
 *
 *   - Arrays are device pointers (device, managed or registered host memory). Complex arrays
 *     are interleaved (real, imaginary) pairs: wham_complex64 / wham_complex128, the layout
 *     of cuda::std::complex<float|double>, std::complex and C99 float/double _Complex.
 *   - Sizes and counts are int64_t; orders, qubit counts and enumerations int32_t.
 *   - Calls run on the calling thread's current device (cudaSetDevice, or the framework's
 *     device guard); every pointer and the stream must belong to it.
 *   - Work is enqueued on `stream` (NULL: the legacy default stream) and nothing else; no
 *     function allocates or synchronises, so calls may be recorded in a CUDA graph.
 *   - Zero-size calls (batch = 0, num_pairs = 0, num_cells = 0) check their scalar arguments, then return
 *     WHAM_SUCCESS without reading their pointers (NULL is fine) or touching the device:
 *     they succeed on a machine without a GPU. (wham_check_interaction_list still stores
 *     its count, 0, through out_of_range.)
 *   - The enumerations' values are those of the C++ enums (wham/fwht.cuh, wham/iqp.cuh,
 *     wham/m2l.cuh, wham/fmm.cuh, wham/translations.cuh); a value outside them is an
 *     invalid argument.
 *
 * Errors. Every function that returns a wham_status returns WHAM_SUCCESS or one of:
 *   WHAM_ERROR_INVALID_ARGUMENT  an argument outside its documented range, or a pointer
 *                                the current device cannot address (NULL, misaligned, plain
 *                                host memory, another device's memory without peer access);
 *   WHAM_ERROR_NOT_SUPPORTED     valid arguments this device or build cannot serve (an
 *                                explicit path beyond what it serves here): try
 *                                WHAM_*_AUTOMATIC;
 *   WHAM_ERROR_CUDA              a CUDA call failed; the message names the call, its
 *                                cudaError_t name and where;
 *   WHAM_ERROR_NO_DEVICE         no CUDA device is visible, or no NVIDIA driver able to run
 *                                this build (missing, too old, mismatched); the message says
 *                                which in plain words;
 *   WHAM_ERROR_INTERNAL          anything else (out of host memory, say).
 * On an error nothing has been enqueued, and wham_last_error() returns the message (the
 * C++ library's wham::error text, for example "wham::fwht: log_n = 31 is invalid (valid:
 * 0..30)"); a successful call clears it to "". wham_status_string() names a status. No C++
 * exception crosses this interface. Values are only ever appended to wham_status: a
 * caller treats an unknown nonzero value as an error.
 *
 * The shared library links the CUDA runtime statically, so that it loads beside any
 * framework's own CUDA runtime (PyTorch, CuPy, JAX); streams and device pointers of the
 * caller's runtime are valid in it (one driver, one primary context a device).
 */
#ifndef WHAM_WHAM_H
#define WHAM_WHAM_H

#include <stddef.h>
#include <stdint.h>

/* The version this header belongs to (CMake's project version; a test keeps them equal). */
#define WHAM_VERSION_MAJOR 0
#define WHAM_VERSION_MINOR 3
#define WHAM_VERSION_PATCH 0
#define WHAM_VERSION_STRING "0.3.0"
/* The same as one integer, MAJOR * 10000 + MINOR * 100 + PATCH, for #if comparisons;
 * wham_version_number() is the loaded library's. */
#define WHAM_VERSION (WHAM_VERSION_MAJOR * 10000 + WHAM_VERSION_MINOR * 100 + WHAM_VERSION_PATCH)

/* wham_complex64's alignment: 8 bytes, that of cuda::std::complex<float>, which the
 * launchers require (a misaligned array is an invalid argument). A C99 compiler that is
 * neither GCC, Clang nor MSVC gets the members' 4 bytes: align such arrays yourself. */
#if defined(__cplusplus)
#define WHAM_ALIGN_8 alignas(8)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define WHAM_ALIGN_8 _Alignas(8)
#elif defined(__GNUC__) || defined(__clang__)
#define WHAM_ALIGN_8 __attribute__((aligned(8)))
#elif defined(_MSC_VER)
#define WHAM_ALIGN_8 __declspec(align(8))
#else
#define WHAM_ALIGN_8
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* cudaStream_t without the CUDA headers (the same type as cuda_runtime_api.h's). */
typedef struct CUstream_st* wham_stream;

typedef struct {
  WHAM_ALIGN_8 float re;
  float im;
} wham_complex64;

typedef struct {
  double re, im;
} wham_complex128;

/* IEEE binary16 (CUDA's __half) and bfloat16 (__nv_bfloat16) elements: their 16 bits. */
typedef struct {
  uint16_t bits;
} wham_float16;

typedef struct {
  uint16_t bits;
} wham_bfloat16;

typedef enum {
  WHAM_SUCCESS = 0,
  WHAM_ERROR_INVALID_ARGUMENT = 1, /* an argument out of its documented range */
  WHAM_ERROR_CUDA = 2,             /* a CUDA call failed (the message names it) */
  WHAM_ERROR_INTERNAL = 3,         /* anything else (out of host memory, say) */
  WHAM_ERROR_NOT_SUPPORTED = 4,    /* valid arguments this device or build cannot serve */
  WHAM_ERROR_NO_DEVICE = 5         /* no CUDA device, or no driver able to run this build */
} wham_status;

/* The message of this thread's last call that returned a wham_status: its error, or ""
 * after a success (every WHAM_SUCCESS clears it). Valid until this thread's next wham call. */
const char* wham_last_error(void);

/* A short constant description of a status ("invalid argument", ...); "unknown wham_status"
 * for a value this library does not define. Never NULL; needs no GPU. */
const char* wham_status_string(wham_status status);

/* The library's version, "MAJOR.MINOR.PATCH": a caller may compare it with the header's
 * WHAM_VERSION_STRING. */
const char* wham_version(void);

/* The library's version as WHAM_VERSION encodes it: a program built against this header
 * checks wham_version_number() == WHAM_VERSION (or its MAJOR part) at start-up. */
int32_t wham_version_number(void);

/* ---- Walsh-Hadamard transform (wham/fwht.cuh) ---------------------------------------- */

enum { WHAM_FWHT_AUTOMATIC = 0, WHAM_FWHT_FUSED = 1, WHAM_FWHT_KRONECKER = 2, WHAM_FWHT_BASELINE = 3 };

/* out = scale * H (rows of in): batch rows of 2^log_n elements, 0 <= log_n <= 30, batch >= 0;
 * out may equal in (in place) but must not otherwise overlap it. */
wham_status wham_fwht_f32(const float* in, float* out, int32_t log_n, int64_t batch, float scale,
                          int32_t path, wham_stream stream);
wham_status wham_fwht_f64(const double* in, double* out, int32_t log_n, int64_t batch,
                          double scale, int32_t path, wham_stream stream);
wham_status wham_fwht_c64(const wham_complex64* in, wham_complex64* out, int32_t log_n,
                          int64_t batch, float scale, int32_t path, wham_stream stream);
wham_status wham_fwht_c128(const wham_complex128* in, wham_complex128* out, int32_t log_n,
                           int64_t batch, double scale, int32_t path, wham_stream stream);
/* 16-bit rows: computed in float, rounded to nearest on each store. */
wham_status wham_fwht_f16(const wham_float16* in, wham_float16* out, int32_t log_n, int64_t batch,
                          float scale, int32_t path, wham_stream stream);
wham_status wham_fwht_bf16(const wham_bfloat16* in, wham_bfloat16* out, int32_t log_n,
                           int64_t batch, float scale, int32_t path, wham_stream stream);

/* ---- Hadamard transform of rows of m * 2^k (wham/hadamard.cuh) ----------------------- */

enum { WHAM_HADAMARD_FAST_HADAMARD_TRANSFORM = 0, WHAM_HADAMARD_QUAROT = 1 };

/* out = scale * (H_m (x) H_(2^log_k)) (rows of in), H_m^T where transpose != 0: batch rows
 * of m * 2^log_k elements, m in {1, 12, 20, 28, 40}, 0 <= log_k <= 25 (30 for m = 1),
 * batch >= 0;
 * matrices: which published H_m (WHAM_HADAMARD_*); in place or apart, as wham_fwht_*. */
/* H_m itself (host only, no GPU): entries[a * m + j] = H_m[a][j], +1 or -1, m in {12, 20,
 * 28, 40}. For rotating weights offline with the matrices the transform uses. */
wham_status wham_hadamard_matrix(int32_t m, int32_t matrices, int8_t* entries);

wham_status wham_hadamard_f32(const float* in, float* out, int32_t m, int32_t log_k,
                              int64_t batch, float scale, int32_t matrices, int32_t transpose,
                              wham_stream stream);
wham_status wham_hadamard_f64(const double* in, double* out, int32_t m, int32_t log_k,
                              int64_t batch, double scale, int32_t matrices, int32_t transpose,
                              wham_stream stream);
wham_status wham_hadamard_c64(const wham_complex64* in, wham_complex64* out, int32_t m,
                              int32_t log_k, int64_t batch, float scale, int32_t matrices,
                              int32_t transpose, wham_stream stream);
wham_status wham_hadamard_c128(const wham_complex128* in, wham_complex128* out, int32_t m,
                               int32_t log_k, int64_t batch, double scale, int32_t matrices,
                               int32_t transpose, wham_stream stream);
wham_status wham_hadamard_f16(const wham_float16* in, wham_float16* out, int32_t m,
                              int32_t log_k, int64_t batch, float scale, int32_t matrices,
                              int32_t transpose, wham_stream stream);
wham_status wham_hadamard_bf16(const wham_bfloat16* in, wham_bfloat16* out, int32_t m,
                               int32_t log_k, int64_t batch, float scale, int32_t matrices,
                               int32_t transpose, wham_stream stream);

/* ---- IQP encoding (wham/iqp.cuh) ------------------------------------------------------- */

enum { WHAM_IQP = 0, WHAM_IQP_Z = 1 };
enum {
  WHAM_IQP_AUTOMATIC = 0,
  WHAM_IQP_FUSED = 1,
  WHAM_IQP_KRONECKER = 2,
  WHAM_IQP_BASELINE = 3,
  WHAM_IQP_PRODUCT = 4
};

/* Parameters a sample: n (WHAM_IQP_Z) or n + n(n-1)/2 (WHAM_IQP), 1 <= n <= 30. */
wham_status wham_iqp_num_params(int32_t num_qubits, int32_t variant, int64_t* num_params);

/* states[b] = H^n diag(exp(i theta_b)) H^n |0> for b < batch (batch >= 0): params
 * [batch][num_params], states [batch][2^n]. Suffix: parameter type, state type. */
wham_status wham_iqp_encode_f32_c64(const float* params, wham_complex64* states,
                                    int32_t num_qubits, int64_t batch, int32_t variant,
                                    int32_t path, wham_stream stream);
wham_status wham_iqp_encode_f32_c128(const float* params, wham_complex128* states,
                                     int32_t num_qubits, int64_t batch, int32_t variant,
                                     int32_t path, wham_stream stream);
wham_status wham_iqp_encode_f64_c64(const double* params, wham_complex64* states,
                                    int32_t num_qubits, int64_t batch, int32_t variant,
                                    int32_t path, wham_stream stream);
wham_status wham_iqp_encode_f64_c128(const double* params, wham_complex128* states,
                                     int32_t num_qubits, int64_t batch, int32_t variant,
                                     int32_t path, wham_stream stream);

/* ---- M2L (wham/m2l.cuh) and its FMM forms (wham/fmm.cuh) ------------------------------- */

enum {
  WHAM_M2L_AUTOMATIC = 0,
  WHAM_M2L_THREAD = 1,
  WHAM_M2L_WARP = 2,
  WHAM_M2L_SPLIT = 3,
  WHAM_M2L_DIRECT = 4,
  WHAM_M2L_TENSOR = 5
};
enum { WHAM_ACCUMULATE_AUTOMATIC = 0, WHAM_ACCUMULATE_ATOMIC = 1, WHAM_ACCUMULATE_DETERMINISTIC = 2 };

/* (p + 1)^2 coefficients an expansion of order p (0 <= p <= 46339). */
wham_status wham_m2l_num_coeffs(int32_t p, int64_t* num_coeffs);
/* Highest order wham_m2l_* serves: 16 (f32), 20 (f64). */
int32_t wham_m2l_max_order_f32(void);
int32_t wham_m2l_max_order_f64(void);

/* locals[i] = M2L_p(multipoles[i], deltas[i]), i < num_pairs; [num_pairs][(p+1)^2] and
 * deltas [num_pairs][3]. */
wham_status wham_m2l_f32(const wham_complex64* multipoles, const float* deltas,
                         wham_complex64* locals, int32_t p, int64_t num_pairs, int32_t path,
                         wham_stream stream);
wham_status wham_m2l_f64(const wham_complex128* multipoles, const double* deltas,
                         wham_complex128* locals, int32_t p, int64_t num_pairs, int32_t path,
                         wham_stream stream);

/* locals[tgt[i]] += M2L_p(multipoles[src[i]], deltas[i]); pairs with src or tgt out of range
 * add nothing. */
wham_status wham_m2l_accumulate_f32(const wham_complex64* multipoles, const float* deltas,
                                    const int32_t* src, const int32_t* tgt,
                                    wham_complex64* locals, int32_t p, int64_t num_pairs,
                                    int64_t num_multipoles, int64_t num_locals, int32_t method,
                                    wham_stream stream);
wham_status wham_m2l_accumulate_f64(const wham_complex128* multipoles, const double* deltas,
                                    const int32_t* src, const int32_t* tgt,
                                    wham_complex128* locals, int32_t p, int64_t num_pairs,
                                    int64_t num_multipoles, int64_t num_locals, int32_t method,
                                    wham_stream stream);
/* The same with delta = centers[tgt[i]] - centers[src[i]]. */
wham_status wham_m2l_accumulate_centers_f32(const wham_complex64* multipoles, const float* centers,
                                            const int32_t* src, const int32_t* tgt,
                                            wham_complex64* locals, int32_t p, int64_t num_pairs,
                                            int64_t num_multipoles, int64_t num_locals,
                                            int32_t method, wham_stream stream);
wham_status wham_m2l_accumulate_centers_f64(const wham_complex128* multipoles,
                                            const double* centers, const int32_t* src,
                                            const int32_t* tgt, wham_complex128* locals, int32_t p,
                                            int64_t num_pairs, int64_t num_multipoles,
                                            int64_t num_locals, int32_t method,
                                            wham_stream stream);
/* The same with delta = class_deltas[cls[i]], 1 <= num_classes <= 1024. */
wham_status wham_m2l_accumulate_classes_f32(const wham_complex64* multipoles,
                                            const float* class_deltas, const int32_t* cls,
                                            const int32_t* src, const int32_t* tgt,
                                            wham_complex64* locals, int32_t p, int64_t num_pairs,
                                            int32_t num_classes, int64_t num_multipoles,
                                            int64_t num_locals, int32_t method,
                                            wham_stream stream);
wham_status wham_m2l_accumulate_classes_f64(const wham_complex128* multipoles,
                                            const double* class_deltas, const int32_t* cls,
                                            const int32_t* src, const int32_t* tgt,
                                            wham_complex128* locals, int32_t p, int64_t num_pairs,
                                            int32_t num_classes, int64_t num_multipoles,
                                            int64_t num_locals, int32_t method,
                                            wham_stream stream);
/* The class form on pairs grouped by class (wham/fmm.cuh: m2l_accumulate_class_groups). */
wham_status wham_m2l_accumulate_class_groups_f32(
    const wham_complex64* multipoles, const float* class_deltas, const int32_t* cls,
    const int32_t* src, const int32_t* tgt, wham_complex64* locals, int32_t p,
    int64_t num_pairs, int32_t num_classes, int64_t num_multipoles, int64_t num_locals,
    wham_stream stream);
wham_status wham_m2l_accumulate_class_groups_f64(
    const wham_complex128* multipoles, const double* class_deltas, const int32_t* cls,
    const int32_t* src, const int32_t* tgt, wham_complex128* locals, int32_t p,
    int64_t num_pairs, int32_t num_classes, int64_t num_multipoles, int64_t num_locals,
    wham_stream stream);

/* Counts the pairs the accumulate forms skip into *out_of_range (a device pointer; set, not
 * added to). cls may be NULL (then num_classes is ignored). */
wham_status wham_check_interaction_list(const int32_t* src, const int32_t* tgt, const int32_t* cls,
                                        int64_t num_pairs, int64_t num_multipoles,
                                        int64_t num_locals, int32_t num_classes,
                                        unsigned long long* out_of_range, wham_stream stream);

/* ---- M2M and L2L (wham/translations.cuh) ----------------------------------------------- */

enum {
  WHAM_TRANSLATION_AUTOMATIC = 0,
  WHAM_TRANSLATION_DIRECT = 1,
  WHAM_TRANSLATION_THREAD = 2,
  WHAM_TRANSLATION_SPLIT = 3,
  WHAM_TRANSLATION_WARP = 4
};

/* out[i] = M2M_p(multipoles[i], deltas[i]) (child to parent), i < num_pairs:
 * [num_pairs][(p+1)^2] and deltas [num_pairs][3] (parent minus child centre);
 * 0 <= p <= wham_m2l_max_order_*(); out must not overlap an input. path: WHAM_TRANSLATION_*
 * (DIRECT serves p <= 4, THREAD p <= 12, SPLIT 7 <= p <= 12). */
wham_status wham_m2m_f32(const wham_complex64* multipoles, const float* deltas,
                         wham_complex64* out, int32_t p, int64_t num_pairs, int32_t path,
                         wham_stream stream);
wham_status wham_m2m_f64(const wham_complex128* multipoles, const double* deltas,
                         wham_complex128* out, int32_t p, int64_t num_pairs, int32_t path,
                         wham_stream stream);
/* out[i] = L2L_p(locals[i], deltas[i]) (parent to child); as wham_m2m_*. */
wham_status wham_l2l_f32(const wham_complex64* locals, const float* deltas, wham_complex64* out,
                         int32_t p, int64_t num_pairs, int32_t path, wham_stream stream);
wham_status wham_l2l_f64(const wham_complex128* locals, const double* deltas,
                         wham_complex128* out, int32_t p, int64_t num_pairs, int32_t path,
                         wham_stream stream);

/* parents[tgt[i]] += M2M_p(multipoles[src[i]], deltas[i]) by atomics; multipoles
 * [num_multipoles][(p+1)^2], parents [num_parents][(p+1)^2] (row counts 1..2^31, 0 without
 * pairs); pairs with src or tgt out of range add nothing. */
wham_status wham_m2m_accumulate_f32(const wham_complex64* multipoles, const float* deltas,
                                    const int32_t* src, const int32_t* tgt,
                                    wham_complex64* parents, int32_t p, int64_t num_pairs,
                                    int64_t num_multipoles, int64_t num_parents, int32_t path,
                                    wham_stream stream);
wham_status wham_m2m_accumulate_f64(const wham_complex128* multipoles, const double* deltas,
                                    const int32_t* src, const int32_t* tgt,
                                    wham_complex128* parents, int32_t p, int64_t num_pairs,
                                    int64_t num_multipoles, int64_t num_parents, int32_t path,
                                    wham_stream stream);
/* children[tgt[i]] += L2L_p(locals[src[i]], deltas[i]); as wham_m2m_accumulate_*. */
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

/* ---- P2M, L2P and P2P (wham/particles.cuh) --------------------------------------------- */

/* Cells of contiguous points: points [num_points][3], charges [num_points], cell_offsets
 * [num_cells + 1] (cell c holds points cell_offsets[c] .. cell_offsets[c+1] - 1; clamped to
 * 0..num_points), centers [num_cells][3], expansions [num_cells][(p+1)^2];
 * 0 <= num_cells <= 2^31 - 1 (0 enqueues nothing), 0 <= p <= wham_m2l_max_order_*(). */

/* multipoles[c] = sum over cell c of charges[i] R(points[i] - centers[c]), overwritten
 * (points and charges may be NULL when num_points = 0; every cell then gets zeros). */
wham_status wham_p2m_f32(const float* points, const float* charges, int64_t num_points,
                         const int64_t* cell_offsets, const float* centers, int64_t num_cells,
                         wham_complex64* multipoles, int32_t p, wham_stream stream);
wham_status wham_p2m_f64(const double* points, const double* charges, int64_t num_points,
                         const int64_t* cell_offsets, const double* centers, int64_t num_cells,
                         wham_complex128* multipoles, int32_t p, wham_stream stream);

/* potential[j] += the local expansion of j's cell at points[j], gradient[3j..3j+2] += its
 * gradient (gradient may be NULL: not computed); both added to. */
wham_status wham_l2p_f32(const wham_complex64* locals, const float* centers,
                         const int64_t* cell_offsets, int64_t num_cells, const float* points,
                         int64_t num_points, float* potential, float* gradient, int32_t p,
                         wham_stream stream);
wham_status wham_l2p_f64(const wham_complex128* locals, const double* centers,
                         const int64_t* cell_offsets, int64_t num_cells, const double* points,
                         int64_t num_points, double* potential, double* gradient, int32_t p,
                         wham_stream stream);

/* For each target cell t and source cell s in near_cells[near_offsets[t] ..
 * near_offsets[t+1] - 1] (near_offsets [num_cells + 1], clamped to 0..num_near; ids outside
 * 0..num_cells-1 skipped), each target j of t and source i of s, x_j != x_i:
 * potential[j] += q_i / r, gradient[j] += -q_i (x_j - x_i) / r^3 (gradient may be NULL);
 * added to. */
wham_status wham_p2p_f32(const float* points, const float* charges, int64_t num_points,
                         const int64_t* cell_offsets, int64_t num_cells,
                         const int64_t* near_offsets, const int32_t* near_cells,
                         int64_t num_near, float* potential, float* gradient,
                         wham_stream stream);
wham_status wham_p2p_f64(const double* points, const double* charges, int64_t num_points,
                         const int64_t* cell_offsets, int64_t num_cells,
                         const int64_t* near_offsets, const int32_t* near_cells,
                         int64_t num_near, double* potential, double* gradient,
                         wham_stream stream);

#ifdef __cplusplus
}
#endif

#endif /* WHAM_WHAM_H */
