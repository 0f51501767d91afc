// Prebuilt instantiations (wham/detail/instantiations.hpp), one translation unit each so
// that a parallel build spreads them.
#include <wham/translations.cuh>
#include <wham/detail/instantiations.hpp>

WHAM_INSTANTIATE_TRANSLATIONS(template, double)
