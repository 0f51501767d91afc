#!/usr/bin/env bash
# Kernel-by-kernel machine-code identity of two translation units, for refactors that must
# not change a kernel: compiles OLD.cu against its own tree's include/ and NEW.cu against its
# tree's, each to an sm_90 cubin with the build's flags, and compares every kernel's code
# (scripts/kernel_text.py). Needs nvcc only (no disassembler).
#   scripts/sass_compare.sh OLD.cu NEW.cu
# Each tree is found as the folder above the .cu file that holds include/wham.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root_of() {
  local d
  d=$(cd "$(dirname "$1")" && pwd)
  while [ "$d" != / ] && [ ! -d "$d/include/wham" ]; do d=$(dirname "$d"); done
  [ -d "$d/include/wham" ] || { echo "no include/wham above $1" >&2; exit 2; }
  echo "$d"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
for src in "$1" "$2"; do
  root=$(root_of "$src")
  /usr/local/cuda/bin/nvcc -std=c++17 -O3 -DNDEBUG -arch=sm_90 --expt-relaxed-constexpr \
    -I"$root/include" -I"$root/tests/support" -I"$root/bench" -cubin "$src" -o "$tmp/$i.cubin" &
  i=$((i + 1))
done
wait
python3 "$here/kernel_text.py" "$tmp/0.cubin" "$tmp/1.cubin"
