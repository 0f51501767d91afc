#!/usr/bin/env bash
# Configures, builds and runs wham's test suite (the README's test command).
# On a machine without a GPU the GPU tests are reported as skipped.
#   scripts/test.sh [BUILD_DIR=build]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
scripts/configure.sh "$build"
cmake --build "$build" -j "$(nproc)"
cd "$build" && ctest --output-on-failure
