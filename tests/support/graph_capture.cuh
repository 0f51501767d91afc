// A stream capture for the graph tests: what a caller's first call inside a CUDA graph meets.
#pragma once

#include "device_buffer.cuh"

#include <cuda_runtime_api.h>

namespace wham_test {

/// Captures `call(stream)` into a graph (global mode: any unsafe call anywhere in the
/// process breaks the capture), replays it once and waits.
template <class Call>
void capture_and_replay(Call&& call) {
  cudaStream_t stream;
  WHAM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  WHAM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  call(stream);
  WHAM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  WHAM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  WHAM_TEST_CUDA(cudaGraphLaunch(exec, stream));
  WHAM_TEST_CUDA(cudaStreamSynchronize(stream));
  WHAM_TEST_CUDA(cudaGraphExecDestroy(exec));
  WHAM_TEST_CUDA(cudaGraphDestroy(graph));
  WHAM_TEST_CUDA(cudaStreamDestroy(stream));
}

}  // namespace wham_test
