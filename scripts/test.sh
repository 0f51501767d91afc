#!/usr/bin/env bash
# Configures, builds and runs wham's test suite (the README's test command): installs and
# requires Catch2, Google Benchmark, pytest and NumPy (configure.sh all), so that a missing
# one fails the build instead of leaving tests out. On a machine without a GPU the GPU
# tests are reported as skipped.
#   scripts/test.sh [BUILD_DIR=build]      (WHAM_CUDA_ARCHITECTURES: see configure.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
scripts/configure.sh "$build" all
cmake --build "$build" -j "$(nproc)"
cd "$build" && ctest --output-on-failure
