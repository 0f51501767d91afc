// One include for Catch2 v2 (Debian 12: single header) and v3 (Ubuntu 24.04:
// split headers); CMake defines WHAM_CATCH2_V3 when it found v3.
#pragma once

#if defined(WHAM_CATCH2_V3)
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif
