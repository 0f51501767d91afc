// RAII device memory and checked CUDA calls for tests, benchmarks and examples.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#define WHAM_TEST_CUDA(call)                                                                  \
  do {                                                                                        \
    const cudaError_t wham_test_status_ = (call);                                             \
    if (wham_test_status_ != cudaSuccess) {                                                   \
      throw std::runtime_error(std::string(#call) +                                           \
                               " failed: " + cudaGetErrorString(wham_test_status_) + " at " + \
                               __FILE__ + ":" + std::to_string(__LINE__));                    \
    }                                                                                         \
  } while (0)

namespace wham_test {

template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t count) : count_(count) {
    if (count_ > 0) WHAM_TEST_CUDA(cudaMalloc(reinterpret_cast<void**>(&ptr_), count_ * sizeof(T)));
  }
  explicit device_buffer(const std::vector<T>& host) : device_buffer(host.size()) { upload(host); }
  ~device_buffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) {
    o.ptr_ = nullptr;
    o.count_ = 0;
  }

  T* data() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw std::runtime_error("device_buffer::upload: size mismatch");
    WHAM_TEST_CUDA(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    WHAM_TEST_CUDA(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  /// All bytes 0xFF: a NaN in every float and double lane, so an element the
  /// kernel failed to write fails every comparison.
  void poison() { WHAM_TEST_CUDA(cudaMemset(ptr_, 0xFF, bytes())); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace wham_test
