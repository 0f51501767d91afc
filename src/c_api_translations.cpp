// The C interface's M2M and L2L (wham/wham.h) over the prebuilt instantiations: plain C++,
// compiled against the declarations of wham/prebuilt.hpp only.
#pragma GCC visibility push(default)
#include <wham/wham.h>
#pragma GCC visibility pop

#include <wham/prebuilt.hpp>

#include "c_complex.hpp"
#include "c_guard.hpp"

namespace {

using wham::c::cpp;
using wham::c::guarded;

static_assert(WHAM_TRANSLATION_AUTOMATIC == int(wham::translation_path::automatic) &&
                  WHAM_TRANSLATION_DIRECT == int(wham::translation_path::direct) &&
                  WHAM_TRANSLATION_THREAD == int(wham::translation_path::thread) &&
                  WHAM_TRANSLATION_SPLIT == int(wham::translation_path::split) &&
                  WHAM_TRANSLATION_WARP == int(wham::translation_path::warp),
              "wham.h's WHAM_TRANSLATION_* must match wham::translation_path");

// Out-of-range values stay out of range through the cast; the C++ side's check_enum names them.
wham::translation_path path_of(int32_t v) { return static_cast<wham::translation_path>(v); }

}  // namespace

extern "C" {

wham_status wham_m2m_f32(const wham_complex64* multipoles, const float* deltas,
                         wham_complex64* out, int32_t p, int64_t num_pairs, int32_t path,
                         wham_stream stream) {
  return guarded(
      [&] { wham::m2m(cpp(multipoles), deltas, cpp(out), p, num_pairs, stream, path_of(path)); });
}
wham_status wham_m2m_f64(const wham_complex128* multipoles, const double* deltas,
                         wham_complex128* out, int32_t p, int64_t num_pairs, int32_t path,
                         wham_stream stream) {
  return guarded(
      [&] { wham::m2m(cpp(multipoles), deltas, cpp(out), p, num_pairs, stream, path_of(path)); });
}

wham_status wham_l2l_f32(const wham_complex64* locals, const float* deltas, wham_complex64* out,
                         int32_t p, int64_t num_pairs, int32_t path, wham_stream stream) {
  return guarded(
      [&] { wham::l2l(cpp(locals), deltas, cpp(out), p, num_pairs, stream, path_of(path)); });
}
wham_status wham_l2l_f64(const wham_complex128* locals, const double* deltas,
                         wham_complex128* out, int32_t p, int64_t num_pairs, int32_t path,
                         wham_stream stream) {
  return guarded(
      [&] { wham::l2l(cpp(locals), deltas, cpp(out), p, num_pairs, stream, path_of(path)); });
}

wham_status wham_m2m_accumulate_f32(const wham_complex64* multipoles, const float* deltas,
                                    const int32_t* src, const int32_t* tgt,
                                    wham_complex64* parents, int32_t p, int64_t num_pairs,
                                    int64_t num_multipoles, int64_t num_parents, int32_t path,
                                    wham_stream stream) {
  return guarded([&] {
    wham::m2m_accumulate(cpp(multipoles), deltas, src, tgt, cpp(parents), p, num_pairs,
                         num_multipoles, num_parents, stream, path_of(path));
  });
}
wham_status wham_m2m_accumulate_f64(const wham_complex128* multipoles, const double* deltas,
                                    const int32_t* src, const int32_t* tgt,
                                    wham_complex128* parents, int32_t p, int64_t num_pairs,
                                    int64_t num_multipoles, int64_t num_parents, int32_t path,
                                    wham_stream stream) {
  return guarded([&] {
    wham::m2m_accumulate(cpp(multipoles), deltas, src, tgt, cpp(parents), p, num_pairs,
                         num_multipoles, num_parents, stream, path_of(path));
  });
}

wham_status wham_l2l_accumulate_f32(const wham_complex64* locals, const float* deltas,
                                    const int32_t* src, const int32_t* tgt,
                                    wham_complex64* children, int32_t p, int64_t num_pairs,
                                    int64_t num_locals, int64_t num_children, int32_t path,
                                    wham_stream stream) {
  return guarded([&] {
    wham::l2l_accumulate(cpp(locals), deltas, src, tgt, cpp(children), p, num_pairs, num_locals,
                         num_children, stream, path_of(path));
  });
}
wham_status wham_l2l_accumulate_f64(const wham_complex128* locals, const double* deltas,
                                    const int32_t* src, const int32_t* tgt,
                                    wham_complex128* children, int32_t p, int64_t num_pairs,
                                    int64_t num_locals, int64_t num_children, int32_t path,
                                    wham_stream stream) {
  return guarded([&] {
    wham::l2l_accumulate(cpp(locals), deltas, src, tgt, cpp(children), p, num_pairs, num_locals,
                         num_children, stream, path_of(path));
  });
}

}  // extern "C"
