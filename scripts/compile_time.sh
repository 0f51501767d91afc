#!/usr/bin/env bash
# Times the compilation of one call site (bench/compile_time/call_site.cpp: fwht<float>,
# iqp_encode<double, complex<float>>, m2l<double>) with and without the prebuilt library's
# declarations, one process at a time, for sm_90; prints seconds and object bytes.
#   scripts/compile_time.sh [BUILD_DIR=build]   (BUILD_DIR: where libwham_kernels.a was built)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cuda=${CUDA_HOME:-/usr/local/cuda}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
src=bench/compile_time/call_site.cpp
inc="-Iinclude -I$cuda/include -I$cuda/include/cccl"
nvcc_flags="-std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr $inc"

measure() {  # label, object, command...
  local label=$1 obj=$2
  shift 2
  local start end
  start=$(date +%s.%N)
  "$@"
  end=$(date +%s.%N)
  printf '%-48s %7.1f s %9d bytes\n' "$label" "$(echo "$end - $start" | bc)" "$(stat -c %s "$obj")"
}

measure "nvcc, public headers (kernels compiled here)" "$out/h.o" \
  "$cuda/bin/nvcc" $nvcc_flags -x cu -c "$src" -o "$out/h.o"
measure "nvcc, headers + wham/prebuilt.hpp" "$out/p.o" \
  "$cuda/bin/nvcc" $nvcc_flags -x cu -DWHAM_PREBUILT -c "$src" -o "$out/p.o"
measure "g++, wham/prebuilt.hpp only" "$out/g.o" \
  g++ -std=c++17 -O3 $inc -DWHAM_PREBUILT -DWHAM_NO_CUH -c "$src" -o "$out/g.o"
# The g++ object links against the prebuilt archive into a program.
if [[ -f "$build/src/libwham_kernels.a" ]]; then
  echo 'int main() { return 0; }' > "$out/main.cpp"
  measure "g++ link with libwham_kernels.a" "$out/app" \
    g++ "$out/g.o" "$out/main.cpp" -o "$out/app" "$build/src/libwham_kernels.a" \
    -L"$cuda/lib64" -lcudart_static -ldl -lpthread -lrt
fi
