// Prebuilt instantiations (wham/detail/instantiations.hpp), one translation unit each so
// that a parallel build spreads them.
#include <wham/fwht.cuh>
#include <wham/detail/instantiations.hpp>

WHAM_INSTANTIATE_FWHT(template, __nv_bfloat16)
