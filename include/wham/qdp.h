/* wham/qdp.h: Apache Mahout QDP's IQP launchers, implemented by wham (libwham.so, CMake
 * target wham::wham_c). Same names, signatures and semantics as QDP's qdp-kernels
 * (qdp/qdp-kernels/src/iqp.cu), so a build of QDP can link wham's instead.
 *
 * Contract (QDP's):
 *   - data [num_samples][data_len] float64 on the device: a_0..a_{n-1}, then with
 *     enable_zz != 0 the couplings J_ij for i < j in the order (0,1), (0,2), ..., (n-2,n-1)
 *     (QDP's order, and wham's). enable_zz = 0: n values, wham's iqp_z variant;
 *     enable_zz != 0: n + n(n-1)/2 values, wham's iqp variant.
 *   - state [num_samples][state_len] complex128 (interleaved re, im; cuDoubleComplex) on
 *     the device: amp[k] = 2^-n sum_x exp(i theta(x)) (-1)^popcount(x & k),
 *     theta(x) = sum_i a_i x_i + sum_{i<j} J_ij x_i x_j, qubit i = bit i of x (the same
 *     normalisation and signs as wham::iqp_encode).
 *   - Enqueued on `stream` (NULL: the legacy default stream); returns a cudaError_t value,
 *     0 (cudaSuccess) when the work was enqueued.
 *
 * Where wham is stricter: QDP checks only that num_samples, state_len and num_qubits are
 * nonzero; wham also returns cudaErrorInvalidValue (1), enqueuing nothing, for
 * num_qubits > 30, state_len != 2^num_qubits, data_len other than the parameter count
 * above (every QDP caller passes that count), and null, misaligned, host-only or
 * overlapping buffers. wham_last_error() (wham/wham.h) then names the argument. A CUDA
 * failure returns that call's cudaError_t value; so does a missing GPU or driver
 * (cudaErrorNoDevice, cudaErrorInsufficientDriver, ...), wham_last_error() then saying
 * which in plain words. A path this device cannot serve returns cudaErrorNotSupported.
 */
#ifndef WHAM_QDP_H
#define WHAM_QDP_H

#include <stddef.h>

#include <wham/wham.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One sample: data [n or n + n(n-1)/2], state [state_len]. */
int launch_iqp_encode(const double* data_d, void* state_d, size_t state_len,
                      unsigned int num_qubits, int enable_zz, wham_stream stream);

/* A batch: data [num_samples][data_len], states [num_samples][state_len]. */
int launch_iqp_encode_batch(const double* data_batch_d, void* state_batch_d, size_t num_samples,
                            size_t state_len, unsigned int num_qubits, unsigned int data_len,
                            int enable_zz, wham_stream stream);

#ifdef __cplusplus
}
#endif

#endif /* WHAM_QDP_H */
