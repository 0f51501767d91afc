#!/usr/bin/env bash
# Builds and runs wham's main example (the README's run command): configures without the
# tests' dependencies and compiles the example alone, from the headers (about a minute on
# 2 cores). With no CUDA device the example says so and shows the host reference instead.
#   scripts/example.sh [BUILD_DIR=build]      (WHAM_CUDA_ARCHITECTURES: see configure.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
scripts/configure.sh "$build" example
cmake --build "$build" --target iqp_encode -j "$(nproc)"
"$build/examples/iqp_encode"
