#!/usr/bin/env bash
# Configures a Release build of wham in BUILD_DIR. Used by test.sh and example.sh.
#   scripts/configure.sh [BUILD_DIR=build] [all|example]
# all (test.sh): installs what the tests and benchmarks need where it is missing
#   (Debian/Ubuntu: catch2, libbenchmark-dev, python3-pytest, python3-numpy) and requires
#   it (-DWHAM_BUILD_TESTS=ON -DWHAM_BUILD_BENCHMARKS=ON: a missing one is an error).
# example (example.sh): installs nothing; tests and benchmarks are left out.
# WHAM_CUDA_ARCHITECTURES: what to compile for, as CMAKE_CUDA_ARCHITECTURES (default 90;
#   an A100 needs 80, or "80;90" for both).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
what=${2:-all}
archs=${WHAM_CUDA_ARCHITECTURES:-90}
export PATH=/usr/local/cuda/bin:$PATH
case "$what" in
  all)
    deps=(catch2 libbenchmark-dev python3-pytest python3-numpy)
    if command -v apt-get >/dev/null && ! dpkg -s "${deps[@]}" >/dev/null 2>&1; then
      apt-get update -qq && apt-get install -y -qq "${deps[@]}" >/dev/null
    fi
    own=(-DWHAM_BUILD_TESTS=ON -DWHAM_BUILD_BENCHMARKS=ON -DWHAM_BUILD_EXAMPLES=ON) ;;
  example)
    own=(-DWHAM_BUILD_TESTS=OFF -DWHAM_BUILD_BENCHMARKS=OFF -DWHAM_BUILD_EXAMPLES=ON) ;;
  *)
    echo "configure.sh: unknown kind '$what' (all or example)" >&2
    exit 2 ;;
esac
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=$archs" "${own[@]}"
