/* The C interface from C99 without a GPU: argument errors are reported before any device
 * query, so every check here runs on a machine without a driver. */
#include <wham/qdp.h>
#include <wham/wham.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* wham_complex64 is aligned like cuda::std::complex<float> (8 bytes), which the launchers
 * require: checked at compile time where C11 allows, and at run time below everywhere. */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(_Alignof(wham_complex64) == 8, "wham_complex64 must be 8-byte aligned");
#endif
/* C99: a negative array size fails to compile where the alignment is wrong. */
struct wham_complex64_alignment_probe {
  char c;
  wham_complex64 z;
};
typedef char wham_complex64_is_8_byte_aligned
    [offsetof(struct wham_complex64_alignment_probe, z) == 8 && sizeof(wham_complex64) == 8 ? 1
                                                                                               : -1];

/* The version as one integer: WHAM_VERSION's formula. */
#if WHAM_VERSION != WHAM_VERSION_MAJOR * 10000 + WHAM_VERSION_MINOR * 100 + WHAM_VERSION_PATCH
#error "WHAM_VERSION must be MAJOR * 10000 + MINOR * 100 + PATCH"
#endif

static int failures = 0;

static void expect(int ok, const char* what, int line) {
  if (!ok) {
    fprintf(stderr, "line %d: %s (last error: \"%s\")\n", line, what, wham_last_error());
    ++failures;
  }
}
#define EXPECT(cond) expect((cond), #cond, __LINE__)

/* The call fails as an invalid argument whose message names `argument`. */
static void expect_invalid(wham_status s, const char* argument, int line) {
  expect(s == WHAM_ERROR_INVALID_ARGUMENT, "status is WHAM_ERROR_INVALID_ARGUMENT", line);
  expect(strstr(wham_last_error(), argument) != NULL, argument, line);
}
#define EXPECT_INVALID(call, argument) expect_invalid((call), (argument), __LINE__)

/* QDP's launchers return cudaErrorInvalidValue (1) and name the argument. */
static void expect_qdp_invalid(int status, const char* argument, int line) {
  expect(status == 1, "QDP status is cudaErrorInvalidValue (1)", line);
  expect(strstr(wham_last_error(), argument) != NULL, argument, line);
}
#define EXPECT_QDP_INVALID(call, argument) expect_qdp_invalid((call), (argument), __LINE__)

int main(void) {
  int64_t count = -1;
  /* A pointer aligned to 8 bytes but not to a complex128's 16. */
  wham_complex128* misaligned = (wham_complex128*)(uintptr_t)8;

  EXPECT(strcmp(wham_last_error(), "") == 0);
  EXPECT(strcmp(wham_version(), WHAM_EXPECTED_VERSION) == 0);
  EXPECT(strcmp(WHAM_VERSION_STRING, WHAM_EXPECTED_VERSION) == 0);
  EXPECT(wham_version_number() == WHAM_VERSION);
  {
    char text[32];
    sprintf(text, "%d.%d.%d", (int)(wham_version_number() / 10000),
            (int)(wham_version_number() / 100 % 100), (int)(wham_version_number() % 100));
    EXPECT(strcmp(text, wham_version()) == 0);
  }

  /* Statuses: the original values kept, the new ones appended, each described. */
  EXPECT(WHAM_SUCCESS == 0 && WHAM_ERROR_INVALID_ARGUMENT == 1 && WHAM_ERROR_CUDA == 2 &&
         WHAM_ERROR_INTERNAL == 3 && WHAM_ERROR_NOT_SUPPORTED == 4 && WHAM_ERROR_NO_DEVICE == 5);
  EXPECT(strcmp(wham_status_string(WHAM_SUCCESS), "success") == 0);
  EXPECT(strcmp(wham_status_string(WHAM_ERROR_INVALID_ARGUMENT), "invalid argument") == 0);
  EXPECT(strcmp(wham_status_string(WHAM_ERROR_CUDA), "CUDA error") == 0);
  EXPECT(strcmp(wham_status_string(WHAM_ERROR_INTERNAL), "internal error") == 0);
  EXPECT(strcmp(wham_status_string(WHAM_ERROR_NOT_SUPPORTED),
                "not supported on this device or build") == 0);
  EXPECT(strcmp(wham_status_string(WHAM_ERROR_NO_DEVICE), "no CUDA device or driver available") ==
         0);
  EXPECT(strcmp(wham_status_string((wham_status)42), "unknown wham_status") == 0);
  EXPECT(strcmp(wham_status_string((wham_status)-1), "unknown wham_status") == 0);

  /* wham_complex64 arrays are 8-byte aligned at run time too. */
  {
    wham_complex64 pair[2];
    EXPECT((uintptr_t)&pair[0] % 8 == 0 && (uintptr_t)&pair[1] % 8 == 0);
  }

  /* A success clears the last error; a failure sets it; a query that succeeds clears it. */
  EXPECT_INVALID(wham_m2l_num_coeffs(-1, &count), "p = -1");
  EXPECT(wham_m2l_num_coeffs(5, &count) == WHAM_SUCCESS && count == 36);
  EXPECT(strcmp(wham_last_error(), "") == 0);
  EXPECT_INVALID(wham_fwht_f32(NULL, NULL, 31, 1, 1.0f, WHAM_FWHT_AUTOMATIC, NULL), "log_n");
  EXPECT(wham_fwht_f32(NULL, NULL, 5, 0, 1.0f, WHAM_FWHT_AUTOMATIC, NULL) == WHAM_SUCCESS);
  EXPECT(strcmp(wham_last_error(), "") == 0);

  /* Zero-size calls: a successful no-op for every operator, with NULL pointers and without
   * a GPU (they return before any device query); the other scalars are still checked. */
  EXPECT(wham_fwht_f64(NULL, NULL, 4, 0, 1.0, WHAM_FWHT_AUTOMATIC, NULL) == WHAM_SUCCESS);
  EXPECT(wham_fwht_c64(NULL, NULL, 30, 0, 1.0f, WHAM_FWHT_FUSED, NULL) == WHAM_SUCCESS);
  EXPECT(wham_fwht_bf16(NULL, NULL, 0, 0, 1.0f, WHAM_FWHT_BASELINE, NULL) == WHAM_SUCCESS);
  EXPECT(wham_hadamard_c64(NULL, NULL, 20, 3, 0, 1.0f, 0, 0, NULL) == WHAM_SUCCESS);
  EXPECT(wham_hadamard_f16(NULL, NULL, 1, 30, 0, 1.0f, 0, 1, NULL) == WHAM_SUCCESS);
  EXPECT(wham_iqp_encode_f32_c64(NULL, NULL, 5, 0, WHAM_IQP, WHAM_IQP_AUTOMATIC, NULL) ==
         WHAM_SUCCESS);
  EXPECT(wham_iqp_encode_f64_c128(NULL, NULL, 30, 0, WHAM_IQP_Z, WHAM_IQP_PRODUCT, NULL) ==
         WHAM_SUCCESS);
  EXPECT(wham_m2l_f32(NULL, NULL, NULL, 4, 0, WHAM_M2L_AUTOMATIC, NULL) == WHAM_SUCCESS);
  EXPECT(wham_m2l_accumulate_f64(NULL, NULL, NULL, NULL, NULL, 4, 0, 1, 1,
                                 WHAM_ACCUMULATE_AUTOMATIC, NULL) == WHAM_SUCCESS);
  EXPECT(strcmp(wham_last_error(), "") == 0);
  EXPECT_INVALID(wham_fwht_f64(NULL, NULL, 31, 0, 1.0, WHAM_FWHT_AUTOMATIC, NULL), "log_n = 31");
  EXPECT_INVALID(wham_fwht_f64(NULL, NULL, 4, -1, 1.0, WHAM_FWHT_AUTOMATIC, NULL), "batch = -1");
  EXPECT_INVALID(wham_hadamard_c64(NULL, NULL, 20, 3, -2, 1.0f, 0, 0, NULL), "batch = -2");
  EXPECT_INVALID(wham_iqp_encode_f32_c64(NULL, NULL, 5, 0, WHAM_IQP, WHAM_IQP_PRODUCT, NULL),
                 "path = 4");
  EXPECT_INVALID(wham_iqp_encode_f32_c64(NULL, NULL, 5, -1, WHAM_IQP, WHAM_IQP_AUTOMATIC, NULL),
                 "batch = -1");

  /* Walsh-Hadamard transform */
  EXPECT_INVALID(wham_fwht_f32(NULL, NULL, 31, 1, 1.0f, WHAM_FWHT_AUTOMATIC, NULL), "log_n");
  EXPECT(strstr(wham_last_error(), "31") != NULL && strstr(wham_last_error(), "0..30") != NULL);
  EXPECT_INVALID(wham_fwht_c64(NULL, NULL, 4, 1, 1.0f, 7, NULL), "path = 7");
  EXPECT_INVALID(wham_fwht_c64(NULL, NULL, 4, 1, 1.0f, -1, NULL), "path = -1");
  EXPECT_INVALID(wham_fwht_c128(NULL, NULL, 4, 1, 1.0, WHAM_FWHT_FUSED, NULL), "in = nullptr");
  EXPECT_INVALID(wham_fwht_c128(misaligned, misaligned, 4, 1, 1.0, WHAM_FWHT_FUSED, NULL),
                 "in = an address 8 bytes past a multiple of 16");

  EXPECT_INVALID(wham_fwht_f16(NULL, NULL, 31, 1, 1.0f, WHAM_FWHT_AUTOMATIC, NULL), "log_n");
  EXPECT_INVALID(wham_fwht_bf16(NULL, NULL, 4, 1, 1.0f, 9, NULL), "path = 9");

  /* Hadamard transform of m * 2^k rows */
  EXPECT_INVALID(wham_hadamard_f32(NULL, NULL, 24, 3, 1, 1.0f, 0, 0, NULL), "m = 24");
  EXPECT(strstr(wham_last_error(), "1, 12, 20, 28 or 40") != NULL);
  EXPECT_INVALID(wham_hadamard_f64(NULL, NULL, 12, 26, 1, 1.0, 0, 0, NULL), "log_k = 26");
  EXPECT_INVALID(wham_hadamard_c64(NULL, NULL, 20, 3, -1, 1.0f, 0, 0, NULL), "batch = -1");
  EXPECT_INVALID(wham_hadamard_c128(NULL, NULL, 28, 3, 1, 1.0, 2, 0, NULL), "matrices = 2");
  EXPECT_INVALID(wham_hadamard_f16(NULL, NULL, 40, 3, 1, 1.0f, 0, 1, NULL), "in = nullptr");
  EXPECT_INVALID(wham_hadamard_bf16(NULL, NULL, 1, 31, 1, 1.0f, 0, 0, NULL), "log_k = 31");
  {
    /* H_m itself, host only: rows orthogonal, fast-hadamard-transform's H_12 symmetric,
     * QuaRot's H_12 (Sloane's had.12) with a first row of one + and eleven -. */
    int8_t h[40 * 40];
    const int32_t orders[4] = {12, 20, 28, 40};
    int i, set;
    for (set = 0; set < 2; ++set) {
      for (i = 0; i < 4; ++i) {
        const int32_t m = orders[i];
        int a, b, j, orthogonal = 1;
        EXPECT(wham_hadamard_matrix(m, set, h) == WHAM_SUCCESS);
        for (a = 0; a < m; ++a) {
          for (b = 0; b < m; ++b) {
            int dot = 0;
            for (j = 0; j < m; ++j) dot += h[a * m + j] * h[b * m + j];
            orthogonal = orthogonal && dot == (a == b ? m : 0);
          }
        }
        EXPECT(orthogonal);
      }
    }
    EXPECT(wham_hadamard_matrix(12, WHAM_HADAMARD_QUAROT, h) == WHAM_SUCCESS);
    EXPECT(h[0] == 1 && h[1] == -1 && h[11] == -1 && h[12] == 1);
    EXPECT_INVALID(wham_hadamard_matrix(16, WHAM_HADAMARD_QUAROT, h), "m = 16");
    EXPECT_INVALID(wham_hadamard_matrix(12, 5, h), "matrices = 5");
    EXPECT_INVALID(wham_hadamard_matrix(12, WHAM_HADAMARD_QUAROT, NULL), "entries = NULL");
  }

  /* IQP encoding */
  EXPECT(wham_iqp_num_params(4, WHAM_IQP, &count) == WHAM_SUCCESS && count == 10);
  EXPECT(wham_iqp_num_params(30, WHAM_IQP_Z, &count) == WHAM_SUCCESS && count == 30);
  EXPECT(wham_iqp_num_params(30, WHAM_IQP, &count) == WHAM_SUCCESS && count == 465);
  EXPECT_INVALID(wham_iqp_num_params(31, WHAM_IQP, &count), "num_qubits = 31");
  EXPECT_INVALID(wham_iqp_num_params(4, 2, &count), "variant = 2");
  EXPECT_INVALID(wham_iqp_num_params(4, WHAM_IQP, NULL), "num_params = NULL");
  EXPECT_INVALID(wham_iqp_encode_f32_c64(NULL, NULL, 0, 1, WHAM_IQP, WHAM_IQP_AUTOMATIC, NULL),
                 "num_qubits = 0");
  EXPECT_INVALID(wham_iqp_encode_f64_c128(NULL, NULL, 4, 1, WHAM_IQP, WHAM_IQP_PRODUCT, NULL),
                 "path = 4");
  EXPECT_INVALID(wham_iqp_encode_f32_c128(NULL, NULL, 4, 1, 5, WHAM_IQP_AUTOMATIC, NULL),
                 "variant = 5");
  EXPECT_INVALID(wham_iqp_encode_f64_c64(NULL, NULL, 4, 1, WHAM_IQP_Z, WHAM_IQP_AUTOMATIC, NULL),
                 "params = nullptr");

  /* M2L and its FMM forms */
  EXPECT(wham_m2l_num_coeffs(5, &count) == WHAM_SUCCESS && count == 36);
  EXPECT_INVALID(wham_m2l_num_coeffs(-1, &count), "p = -1");
  EXPECT_INVALID(wham_m2l_num_coeffs(3, NULL), "num_coeffs = NULL");
  EXPECT(wham_m2l_max_order_f32() == 16);
  EXPECT(wham_m2l_max_order_f64() == 20);
  EXPECT_INVALID(wham_m2l_f64(NULL, NULL, NULL, 21, 1, WHAM_M2L_AUTOMATIC, NULL), "p = 21");
  EXPECT_INVALID(wham_m2l_f32(NULL, NULL, NULL, 17, 1, WHAM_M2L_AUTOMATIC, NULL), "p = 17");
  EXPECT_INVALID(wham_m2l_f32(NULL, NULL, NULL, 4, 1, 6, NULL), "path = 6");
  EXPECT(wham_m2l_f64(NULL, NULL, NULL, 4, 0, WHAM_M2L_AUTOMATIC, NULL) == WHAM_SUCCESS);
  EXPECT_INVALID(wham_m2l_accumulate_f32(NULL, NULL, NULL, NULL, NULL, 4, 1, 1, 1, 3, NULL),
                 "method = 3");
  EXPECT_INVALID(wham_m2l_accumulate_centers_f64(NULL, NULL, NULL, NULL, NULL, 4, 1, 0, 1,
                                                 WHAM_ACCUMULATE_AUTOMATIC, NULL),
                 "num_multipoles = 0");
  EXPECT_INVALID(wham_m2l_accumulate_classes_f64(NULL, NULL, NULL, NULL, NULL, NULL, 4, 1, 0, 1, 1,
                                                 WHAM_ACCUMULATE_ATOMIC, NULL),
                 "num_classes = 0");
  EXPECT_INVALID(wham_m2l_accumulate_class_groups_f32(NULL, NULL, NULL, NULL, NULL, NULL, 4, 1, 316,
                                                      1, 1, NULL),
                 "cls = nullptr");
  EXPECT_INVALID(wham_check_interaction_list(NULL, NULL, NULL, 1, 1, 1, 0, NULL, NULL),
                 "out_of_range = nullptr");

  /* M2M and L2L: scalars, the path, pointers; host arrays never reach the device (every
   * call below fails before the device query) */
  {
    wham_complex64 in[2 * 25], out[2 * 25];
    wham_complex128 in2[2 * 25], out2[2 * 25];
    float d[6] = {0};
    double d2[6] = {0};
    int32_t idx[2] = {0, 0};
    EXPECT(WHAM_TRANSLATION_AUTOMATIC == 0 && WHAM_TRANSLATION_DIRECT == 1 &&
           WHAM_TRANSLATION_THREAD == 2 && WHAM_TRANSLATION_SPLIT == 3 &&
           WHAM_TRANSLATION_WARP == 4);
    EXPECT(wham_m2m_f32(NULL, NULL, NULL, 4, 0, WHAM_TRANSLATION_AUTOMATIC, NULL) == WHAM_SUCCESS);
    EXPECT(wham_l2l_accumulate_f64(NULL, NULL, NULL, NULL, NULL, 20, 0, 0, 0,
                                   WHAM_TRANSLATION_WARP, NULL) == WHAM_SUCCESS);
    EXPECT(strcmp(wham_last_error(), "") == 0);
    EXPECT_INVALID(wham_m2m_f32(in, d, out, 17, 2, WHAM_TRANSLATION_AUTOMATIC, NULL), "p = 17");
    EXPECT(strstr(wham_last_error(), "wham::m2m") != NULL &&
           strstr(wham_last_error(), "0..16") != NULL);
    EXPECT_INVALID(wham_m2m_f64(in2, d2, out2, 21, 2, WHAM_TRANSLATION_AUTOMATIC, NULL), "p = 21");
    EXPECT_INVALID(wham_l2l_f32(in, d, out, 4, 2, 5, NULL), "path = 5");
    EXPECT_INVALID(wham_l2l_f64(in2, d2, out2, 4, 2, -1, NULL), "path = -1");
    EXPECT_INVALID(wham_m2m_f32(in, d, out, 4, -1, WHAM_TRANSLATION_AUTOMATIC, NULL),
                   "num_pairs = -1");
    /* an explicit path outside its orders: direct serves 0..4, split 7..12 */
    EXPECT_INVALID(wham_m2m_f64(in2, d2, out2, 5, 2, WHAM_TRANSLATION_DIRECT, NULL), "0..4");
    EXPECT_INVALID(wham_l2l_f32(in, d, out, 4, 2, WHAM_TRANSLATION_SPLIT, NULL), "7..12");
    EXPECT_INVALID(wham_m2m_f32(NULL, d, out, 4, 2, WHAM_TRANSLATION_AUTOMATIC, NULL),
                   "multipoles = nullptr");
    EXPECT_INVALID(wham_l2l_f64(in2, NULL, out2, 4, 2, WHAM_TRANSLATION_AUTOMATIC, NULL),
                   "deltas = nullptr");
    EXPECT_INVALID(wham_l2l_f32(in, d, in + 25, 4, 2, WHAM_TRANSLATION_AUTOMATIC, NULL),
                   "out = a range overlapping locals");
    EXPECT_INVALID(wham_m2m_accumulate_f32(in, d, idx, idx, out, 4, 2, 0, 1,
                                           WHAM_TRANSLATION_AUTOMATIC, NULL),
                   "num_multipoles = 0");
    EXPECT_INVALID(wham_m2m_accumulate_f64(in2, d2, idx, idx, out2, 4, 2, 1, 0,
                                           WHAM_TRANSLATION_AUTOMATIC, NULL),
                   "num_parents = 0");
    EXPECT_INVALID(wham_m2m_accumulate_f32(in, d, idx, idx, out, 4, 2, 2, 2, 9, NULL), "path = 9");
    EXPECT_INVALID(wham_l2l_accumulate_f32(in, d, idx, idx, out, 4, 2, 0, 1,
                                           WHAM_TRANSLATION_AUTOMATIC, NULL),
                   "num_locals = 0");
    EXPECT_INVALID(wham_l2l_accumulate_f64(in2, d2, NULL, idx, out2, 4, 2, 2, 2,
                                           WHAM_TRANSLATION_AUTOMATIC, NULL),
                   "src = nullptr");
    EXPECT_INVALID(wham_l2l_accumulate_f32(in, d, idx, NULL, out, 4, 2, 2, 2,
                                           WHAM_TRANSLATION_AUTOMATIC, NULL),
                   "tgt = nullptr");
    EXPECT_INVALID(wham_l2l_accumulate_f64(in2, d2, idx, idx, NULL, 4, 2, 2, 2,
                                           WHAM_TRANSLATION_AUTOMATIC, NULL),
                   "children = nullptr");
  }

  /* P2M, L2P and P2P */
  {
    float x[6] = {0}, q[2] = {0}, c[3] = {0}, phi[2] = {0}, g[6] = {0};
    double x2[6] = {0}, q2[2] = {0}, c2[3] = {0}, phi2[2] = {0}, g2[6] = {0};
    int64_t off[2] = {0, 2};
    int32_t near[1] = {0};
    wham_complex64 m[25];
    wham_complex128 m2[25];
    EXPECT(wham_p2m_f32(NULL, NULL, 0, NULL, NULL, 0, NULL, 4, NULL) == WHAM_SUCCESS);
    EXPECT(wham_l2p_f64(NULL, NULL, NULL, 3, NULL, 0, NULL, NULL, 4, NULL) == WHAM_SUCCESS);
    EXPECT(wham_p2p_f32(NULL, NULL, 2, NULL, 1, NULL, NULL, 0, NULL, NULL, NULL) == WHAM_SUCCESS);
    EXPECT(strcmp(wham_last_error(), "") == 0);
    EXPECT_INVALID(wham_p2m_f32(x, q, 2, off, c, 1, m, 17, NULL), "p = 17");
    EXPECT(strstr(wham_last_error(), "wham::p2m") != NULL);
    EXPECT_INVALID(wham_p2m_f64(x2, q2, 2, off, c2, 1, m2, -1, NULL), "p = -1");
    EXPECT_INVALID(wham_p2m_f32(x, q, -1, off, c, 1, m, 4, NULL), "num_points = -1");
    EXPECT_INVALID(wham_p2m_f64(x2, q2, 2, off, c2, -1, m2, 4, NULL), "num_cells = -1");
    EXPECT_INVALID(wham_p2m_f32(x, NULL, 2, off, c, 1, m, 4, NULL), "charges = nullptr");
    EXPECT_INVALID(wham_p2m_f64(x2, q2, 2, NULL, c2, 1, m2, 4, NULL), "cell_offsets = nullptr");
    /* points read from the multipoles' own bytes (8-byte aligned, as multipoles must be) */
    EXPECT_INVALID(wham_p2m_f32((const float*)(const void*)m, q, 2, off, c, 1, m, 0, NULL),
                   "multipoles = a range overlapping points");
    EXPECT_INVALID(wham_l2p_f32(m, c, off, 1, x, 2, phi, g, 21, NULL), "p = 21");
    EXPECT_INVALID(wham_l2p_f64(m2, c2, off, 1, x2, -3, phi2, g2, 4, NULL), "num_points = -3");
    EXPECT_INVALID(wham_l2p_f32(m, c, off, 1, x, 2, NULL, g, 4, NULL), "potential = nullptr");
    EXPECT_INVALID(wham_l2p_f64(m2, c2, off, 1, x2, 2, phi2, x2, 4, NULL),
                   "gradient = a range overlapping points");
    EXPECT_INVALID(wham_l2p_f32(m, c, off, 1, x, 2, g + 1, g, 4, NULL),
                   "potential = a range overlapping gradient");
    EXPECT_INVALID(wham_p2p_f32(x, q, 2, off, 1, off, near, -1, phi, g, NULL), "num_near = -1");
    EXPECT_INVALID(wham_p2p_f64(x2, q2, 2, off, 1, off, NULL, 1, phi2, g2, NULL),
                   "near_cells = nullptr");
    EXPECT_INVALID(wham_p2p_f64(x2, q2, 2, off, 1, NULL, near, 1, phi2, NULL, NULL),
                   "near_offsets = nullptr");
    EXPECT_INVALID(wham_p2p_f32(x, q, 2, off, 1, off, near, 1, q, NULL, NULL),
                   "potential = a range overlapping charges");
  }

  /* Apache Mahout QDP's launchers */
  EXPECT_QDP_INVALID(launch_iqp_encode_batch(NULL, NULL, 0, 16, 4, 4, 0, NULL), "num_samples = 0");
  EXPECT_QDP_INVALID(launch_iqp_encode_batch(NULL, NULL, 2, 16, 0, 4, 0, NULL), "num_qubits = 0");
  EXPECT_QDP_INVALID(launch_iqp_encode_batch(NULL, NULL, 2, 0, 4, 4, 0, NULL), "state_len = 0");
  EXPECT_QDP_INVALID(launch_iqp_encode_batch(NULL, NULL, 2, 16, 31, 4, 0, NULL), "num_qubits = 31");
  EXPECT_QDP_INVALID(launch_iqp_encode_batch(NULL, NULL, 2, 8, 4, 4, 0, NULL), "state_len = 8");
  EXPECT_QDP_INVALID(launch_iqp_encode_batch(NULL, NULL, 2, 16, 4, 10, 0, NULL), "data_len = 10");
  EXPECT_QDP_INVALID(launch_iqp_encode_batch(NULL, NULL, 2, 16, 4, 4, 1, NULL), "data_len = 4");
  EXPECT_QDP_INVALID(launch_iqp_encode_batch(NULL, NULL, 2, 16, 4, 10, 1, NULL),
                     "params = nullptr");
  EXPECT_QDP_INVALID(launch_iqp_encode(NULL, NULL, 16, 4, 1, NULL), "params = nullptr");
  EXPECT_QDP_INVALID(launch_iqp_encode(NULL, NULL, 16, 5, 0, NULL), "state_len = 16");

  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("all C interface argument checks passed\n");
  return 0;
}
