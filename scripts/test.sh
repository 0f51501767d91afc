#!/usr/bin/env bash
# Configures, builds and runs wham's test suite (the README's test command).
# On a machine without a GPU the GPU tests are reported as skipped.
#   scripts/test.sh [BUILD_DIR=build]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
export PATH=/usr/local/cuda/bin:$PATH
if ! dpkg -s catch2 libbenchmark-dev >/dev/null 2>&1 && command -v apt-get >/dev/null; then
  apt-get update -qq && apt-get install -y -qq catch2 libbenchmark-dev >/dev/null
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build "$build" -j "$(nproc)"
cd "$build" && ctest --output-on-failure
