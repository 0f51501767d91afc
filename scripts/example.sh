#!/usr/bin/env bash
# Builds and runs wham's main example (the README's run command). With no CUDA
# device the example says so and shows the host reference instead.
#   scripts/example.sh [BUILD_DIR=build]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
export PATH=/usr/local/cuda/bin:$PATH
if ! dpkg -s catch2 libbenchmark-dev >/dev/null 2>&1 && command -v apt-get >/dev/null; then
  apt-get update -qq && apt-get install -y -qq catch2 libbenchmark-dev >/dev/null
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build "$build" --target iqp_encode -j "$(nproc)"
"$build/examples/iqp_encode"
