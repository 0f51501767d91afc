// What the argument-check tests share: the message a call throws, pinned device limits
// (so the rules that read them run without a device), byte offsets for misaligned pointers.
#pragma once

#include <wham/detail/device.cuh>
#include <wham/error.hpp>

#include <cstddef>
#include <string>

namespace wham_test {

/// The message of the wham::error that f throws, or "(no throw)".
template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const wham::error& e) {
    return e.what();
  }
  return "(no throw)";
}

/// Pins made-up device limits for the calling thread, as detail::device_scope pins the real
/// ones: compute capability, shared memory a block may opt in to, multiprocessors.
class fake_device {
 public:
  fake_device(int cc_major, int cc_minor, std::size_t smem_per_block_optin, int sm_count = 84)
      : previous_(wham::detail::scoped_device_limits()) {
    limits_.device = 0;
    limits_.cc_major = cc_major;
    limits_.cc_minor = cc_minor;
    limits_.sm_count = sm_count;
    limits_.smem_per_block_optin = smem_per_block_optin;
    limits_.l2_bytes = std::size_t(6) << 20;
    wham::detail::scoped_device_limits() = &limits_;
  }
  ~fake_device() { wham::detail::scoped_device_limits() = previous_; }
  fake_device(const fake_device&) = delete;
  fake_device& operator=(const fake_device&) = delete;

 private:
  wham::detail::device_limits limits_;
  const wham::detail::device_limits* previous_;
};

/// `p` moved by `bytes` (a misaligned pointer for the alignment checks).
template <class T>
T* offset_bytes(T* p, std::size_t bytes) {
  return reinterpret_cast<T*>(reinterpret_cast<unsigned char*>(p) + bytes);
}

}  // namespace wham_test
