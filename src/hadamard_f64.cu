// Prebuilt instantiations (wham/detail/instantiations.hpp), one translation unit each so
// that a parallel build spreads them.
// fwht_checked<T> from fwht's translation unit (prebuilt.hpp: extern), not compiled again here.
#include <wham/prebuilt.hpp>
#include <wham/hadamard.cuh>
#include <wham/detail/instantiations.hpp>

WHAM_INSTANTIATE_HADAMARD(template, double)
