// Prebuilt instantiations (wham/detail/instantiations.hpp), one translation unit each so
// that a parallel build spreads them.
#include <wham/m2l.cuh>
#include <wham/detail/instantiations.hpp>

WHAM_INSTANTIATE_M2L(template, double)
