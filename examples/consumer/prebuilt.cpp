// A plain C++ call site of wham::wham_kernels: declarations only, the kernels from the archive.
#include <wham/prebuilt.hpp>

#include <cstdio>

int main(int argc, char**) {
  std::printf("iqp parameters for 4 qubits: %lld\n",
              static_cast<long long>(wham::iqp_num_params(4, wham::iqp_variant::iqp)));
  if (argc > 1) {  // links the call; runs only on request (needs a GPU and device buffers)
    wham::fwht<float>(nullptr, nullptr, 10, 1);
  }
  return 0;
}
