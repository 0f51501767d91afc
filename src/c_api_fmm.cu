// wham_check_interaction_list: wham::check_interaction_list is an inline function of
// wham/fmm.cuh (no prebuilt instantiation to declare), so this part of the C interface
// compiles the header.
#pragma GCC visibility push(default)
#include <wham/wham.h>
#pragma GCC visibility pop

#include <wham/fmm.cuh>

#include "c_guard.hpp"

extern "C" wham_status wham_check_interaction_list(const int32_t* src, const int32_t* tgt,
                                                   const int32_t* cls, int64_t num_pairs,
                                                   int64_t num_multipoles, int64_t num_locals,
                                                   int32_t num_classes,
                                                   unsigned long long* out_of_range,
                                                   wham_stream stream) {
  return wham::c::guarded([&] {
    wham::check_interaction_list(src, tgt, cls, num_pairs, num_multipoles, num_locals, num_classes,
                                 out_of_range, stream);
  });
}
