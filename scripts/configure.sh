#!/usr/bin/env bash
# Installs what wham's own build needs where it is missing (Debian/Ubuntu), then
# configures a Release build for sm_90. Used by test.sh and example.sh.
#   scripts/configure.sh [BUILD_DIR=build]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
export PATH=/usr/local/cuda/bin:$PATH
if ! dpkg -s catch2 libbenchmark-dev python3-pytest python3-numpy >/dev/null 2>&1 && command -v apt-get >/dev/null; then
  apt-get update -qq && apt-get install -y -qq catch2 libbenchmark-dev python3-pytest python3-numpy >/dev/null
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90
