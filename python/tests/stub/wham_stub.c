/* A stand-in for libwham.so with wham.h's exact prototypes (the compiler checks them): it
 * records each call's arguments as text and returns the status the test sets. Lets the
 * Python tests check the ctypes plumbing (argument order, types, errors) without a GPU. */
#include <stdio.h>
#include <string.h>

#include "wham/wham.h"

static char g_call[1024];
static char g_error[512];
static int g_status;
static int32_t g_version = WHAM_VERSION;
static char g_version_text[32] = WHAM_VERSION_STRING;

void stub_set_status(int status, const char* message) {
  g_status = status;
  snprintf(g_error, sizeof g_error, "%s", message ? message : "");
}
const char* stub_last_call(void) { return g_call; }
/* The version the stub reports (wham.h's by default), to test the package's load check. */
void stub_set_version(int32_t number, const char* text) {
  g_version = number;
  snprintf(g_version_text, sizeof g_version_text, "%s", text);
}

static wham_status done(void) { return (wham_status)g_status; }

const char* wham_last_error(void) { return g_status ? g_error : ""; }
const char* wham_version(void) { return g_version_text; }
int32_t wham_version_number(void) { return g_version; }

const char* wham_status_string(wham_status status) {
  switch (status) {
    case WHAM_SUCCESS: return "success";
    case WHAM_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case WHAM_ERROR_CUDA: return "CUDA error";
    case WHAM_ERROR_INTERNAL: return "internal error";
    case WHAM_ERROR_NOT_SUPPORTED: return "not supported on this device or build";
    case WHAM_ERROR_NO_DEVICE: return "no CUDA device or driver available";
  }
  return "unknown wham_status";
}

#define P(x) ((unsigned long long)(size_t)(x))

#define FWHT(name, T, S)                                                                   \
  wham_status name(const T* in, T* out, int32_t log_n, int64_t batch, S scale, int32_t path, \
                   wham_stream stream) {                                                    \
    snprintf(g_call, sizeof g_call, #name " %llx %llx %d %lld %.17g %d %llx", P(in), P(out), \
             log_n, (long long)batch, (double)scale, path, P(stream));                      \
    return done();                                                                          \
  }
FWHT(wham_fwht_f32, float, float)
FWHT(wham_fwht_f64, double, double)
FWHT(wham_fwht_c64, wham_complex64, float)
FWHT(wham_fwht_c128, wham_complex128, double)
FWHT(wham_fwht_f16, wham_float16, float)
FWHT(wham_fwht_bf16, wham_bfloat16, float)

#define HADAMARD(name, T, S)                                                                 \
  wham_status name(const T* in, T* out, int32_t m, int32_t log_k, int64_t batch, S scale,     \
                   int32_t matrices, int32_t transpose, wham_stream stream) {                \
    snprintf(g_call, sizeof g_call, #name " %llx %llx %d %d %lld %.17g %d %d %llx", P(in),    \
             P(out), m, log_k, (long long)batch, (double)scale, matrices, transpose, P(stream)); \
    return done();                                                                           \
  }
HADAMARD(wham_hadamard_f32, float, float)
HADAMARD(wham_hadamard_f64, double, double)
HADAMARD(wham_hadamard_c64, wham_complex64, float)
HADAMARD(wham_hadamard_c128, wham_complex128, double)
HADAMARD(wham_hadamard_f16, wham_float16, float)
HADAMARD(wham_hadamard_bf16, wham_bfloat16, float)

wham_status wham_hadamard_matrix(int32_t m, int32_t matrices, int8_t* entries) {
  int i;
  for (i = 0; i < m * m; ++i) entries[i] = 1;
  snprintf(g_call, sizeof g_call, "wham_hadamard_matrix %d %d", m, matrices);
  return done();
}

wham_status wham_iqp_num_params(int32_t n, int32_t variant, int64_t* num_params) {
  *num_params = variant == WHAM_IQP ? n + (int64_t)n * (n - 1) / 2 : n;
  return done();
}

#define IQP(name, P_, O)                                                                     \
  wham_status name(const P_* params, O* states, int32_t n, int64_t batch, int32_t variant,   \
                   int32_t path, wham_stream stream) {                                       \
    snprintf(g_call, sizeof g_call, #name " %llx %llx %d %lld %d %d %llx", P(params),        \
             P(states), n, (long long)batch, variant, path, P(stream));                      \
    return done();                                                                           \
  }
IQP(wham_iqp_encode_f32_c64, float, wham_complex64)
IQP(wham_iqp_encode_f32_c128, float, wham_complex128)
IQP(wham_iqp_encode_f64_c64, double, wham_complex64)
IQP(wham_iqp_encode_f64_c128, double, wham_complex128)

wham_status wham_m2l_num_coeffs(int32_t p, int64_t* c) {
  *c = (int64_t)(p + 1) * (p + 1);
  return done();
}
int32_t wham_m2l_max_order_f32(void) { return 16; }
int32_t wham_m2l_max_order_f64(void) { return 20; }

#define M2L(name, C, T)                                                                       \
  wham_status name(const C* m, const T* d, C* l, int32_t p, int64_t pairs, int32_t path,      \
                   wham_stream stream) {                                                      \
    snprintf(g_call, sizeof g_call, #name " %llx %llx %llx %d %lld %d %llx", P(m), P(d), P(l), \
             p, (long long)pairs, path, P(stream));                                           \
    return done();                                                                            \
  }
M2L(wham_m2l_f32, wham_complex64, float)
M2L(wham_m2l_f64, wham_complex128, double)

#define ACC(name, C, T)                                                                        \
  wham_status name(const C* m, const T* g, const int32_t* src, const int32_t* tgt, C* l,       \
                   int32_t p, int64_t pairs, int64_t nm, int64_t nl, int32_t method,           \
                   wham_stream stream) {                                                       \
    snprintf(g_call, sizeof g_call, #name " %llx %llx %llx %llx %llx %d %lld %lld %lld %d %llx", \
             P(m), P(g), P(src), P(tgt), P(l), p, (long long)pairs, (long long)nm,             \
             (long long)nl, method, P(stream));                                                \
    return done();                                                                             \
  }
ACC(wham_m2l_accumulate_f32, wham_complex64, float)
ACC(wham_m2l_accumulate_f64, wham_complex128, double)
ACC(wham_m2l_accumulate_centers_f32, wham_complex64, float)
ACC(wham_m2l_accumulate_centers_f64, wham_complex128, double)

#define CLS(name, C, T)                                                                        \
  wham_status name(const C* m, const T* k, const int32_t* cls, const int32_t* src,             \
                   const int32_t* tgt, C* l, int32_t p, int64_t pairs, int32_t nc, int64_t nm, \
                   int64_t nl, int32_t method, wham_stream stream) {                           \
    snprintf(g_call, sizeof g_call,                                                            \
             #name " %llx %llx %llx %llx %llx %llx %d %lld %d %lld %lld %d %llx", P(m), P(k),  \
             P(cls), P(src), P(tgt), P(l), p, (long long)pairs, nc, (long long)nm,             \
             (long long)nl, method, P(stream));                                                \
    return done();                                                                             \
  }
CLS(wham_m2l_accumulate_classes_f32, wham_complex64, float)
CLS(wham_m2l_accumulate_classes_f64, wham_complex128, double)

#define GRP(name, C, T)                                                                        \
  wham_status name(const C* m, const T* k, const int32_t* cls, const int32_t* src,             \
                   const int32_t* tgt, C* l, int32_t p, int64_t pairs, int32_t nc, int64_t nm, \
                   int64_t nl, wham_stream stream) {                                           \
    snprintf(g_call, sizeof g_call,                                                            \
             #name " %llx %llx %llx %llx %llx %llx %d %lld %d %lld %lld %llx", P(m), P(k),     \
             P(cls), P(src), P(tgt), P(l), p, (long long)pairs, nc, (long long)nm,             \
             (long long)nl, P(stream));                                                        \
    return done();                                                                             \
  }
GRP(wham_m2l_accumulate_class_groups_f32, wham_complex64, float)
GRP(wham_m2l_accumulate_class_groups_f64, wham_complex128, double)

wham_status wham_check_interaction_list(const int32_t* src, const int32_t* tgt,
                                        const int32_t* cls, int64_t pairs, int64_t nm,
                                        int64_t nl, int32_t nc, unsigned long long* out,
                                        wham_stream stream) {
  snprintf(g_call, sizeof g_call,
           "wham_check_interaction_list %llx %llx %llx %lld %lld %lld %d %llx %llx", P(src),
           P(tgt), P(cls), (long long)pairs, (long long)nm, (long long)nl, nc, P(out),
           P(stream));
  return done();
}

/* The FMM's other operators (translations and particles); left out with
 * -DWHAM_STUB_WITHOUT_FMM, a library of the same version that lacks them. */
#ifndef WHAM_STUB_WITHOUT_FMM
#define TRANSLATE(name, C, T)                                                                  \
  wham_status name(const C* in, const T* d, C* out, int32_t p, int64_t pairs, int32_t path,    \
                   wham_stream stream) {                                                       \
    snprintf(g_call, sizeof g_call, #name " %llx %llx %llx %d %lld %d %llx", P(in), P(d),      \
             P(out), p, (long long)pairs, path, P(stream));                                    \
    return done();                                                                             \
  }
TRANSLATE(wham_m2m_f32, wham_complex64, float)
TRANSLATE(wham_m2m_f64, wham_complex128, double)
TRANSLATE(wham_l2l_f32, wham_complex64, float)
TRANSLATE(wham_l2l_f64, wham_complex128, double)

#define TRANSLATE_ACC(name, C, T)                                                              \
  wham_status name(const C* in, const T* d, const int32_t* src, const int32_t* tgt, C* out,    \
                   int32_t p, int64_t pairs, int64_t n_in, int64_t n_out, int32_t path,        \
                   wham_stream stream) {                                                       \
    snprintf(g_call, sizeof g_call, #name " %llx %llx %llx %llx %llx %d %lld %lld %lld %d %llx", \
             P(in), P(d), P(src), P(tgt), P(out), p, (long long)pairs, (long long)n_in,        \
             (long long)n_out, path, P(stream));                                               \
    return done();                                                                             \
  }
TRANSLATE_ACC(wham_m2m_accumulate_f32, wham_complex64, float)
TRANSLATE_ACC(wham_m2m_accumulate_f64, wham_complex128, double)
TRANSLATE_ACC(wham_l2l_accumulate_f32, wham_complex64, float)
TRANSLATE_ACC(wham_l2l_accumulate_f64, wham_complex128, double)

#define P2M(name, C, T)                                                                        \
  wham_status name(const T* x, const T* q, int64_t np, const int64_t* off, const T* ctr,       \
                   int64_t nc, C* m, int32_t p, wham_stream stream) {                          \
    snprintf(g_call, sizeof g_call, #name " %llx %llx %lld %llx %llx %lld %llx %d %llx", P(x), \
             P(q), (long long)np, P(off), P(ctr), (long long)nc, P(m), p, P(stream));          \
    return done();                                                                             \
  }
P2M(wham_p2m_f32, wham_complex64, float)
P2M(wham_p2m_f64, wham_complex128, double)

#define L2P(name, C, T)                                                                        \
  wham_status name(const C* l, const T* ctr, const int64_t* off, int64_t nc, const T* x,       \
                   int64_t np, T* phi, T* grad, int32_t p, wham_stream stream) {               \
    snprintf(g_call, sizeof g_call, #name " %llx %llx %llx %lld %llx %lld %llx %llx %d %llx",  \
             P(l), P(ctr), P(off), (long long)nc, P(x), (long long)np, P(phi), P(grad), p,     \
             P(stream));                                                                       \
    return done();                                                                             \
  }
L2P(wham_l2p_f32, wham_complex64, float)
L2P(wham_l2p_f64, wham_complex128, double)

#define P2P(name, T)                                                                           \
  wham_status name(const T* x, const T* q, int64_t np, const int64_t* off, int64_t nc,         \
                   const int64_t* near_off, const int32_t* near, int64_t nn, T* phi, T* grad,  \
                   wham_stream stream) {                                                       \
    snprintf(g_call, sizeof g_call,                                                            \
             #name " %llx %llx %lld %llx %lld %llx %llx %lld %llx %llx %llx", P(x), P(q),      \
             (long long)np, P(off), (long long)nc, P(near_off), P(near), (long long)nn,        \
             P(phi), P(grad), P(stream));                                                      \
    return done();                                                                             \
  }
P2P(wham_p2p_f32, float)
P2P(wham_p2p_f64, double)
#endif
