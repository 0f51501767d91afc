#!/usr/bin/env bash
# Builds and runs wham's main example (the README's run command). With no CUDA
# device the example says so and shows the host reference instead.
#   scripts/example.sh [BUILD_DIR=build]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
scripts/configure.sh "$build"
cmake --build "$build" --target iqp_encode -j "$(nproc)"
"$build/examples/iqp_encode"
