// Prebuilt instantiations (wham/detail/instantiations.hpp), one translation unit each so
// that a parallel build spreads them.
#include <wham/iqp.cuh>
#include <wham/detail/instantiations.hpp>

WHAM_INSTANTIATE_IQP_ENCODE(template, double, cuda::std::complex<double>)
