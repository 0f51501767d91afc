#!/usr/bin/env bash
# Static SASS of wham's kernels on a machine with no GPU and no disassembler (this
# project's build machines: CUDA 13.0 without cuobjdump or nvdisasm). Compiles one
# translation unit to an sm_90 cubin, rewrites its ELF header for nvdisasm 11.8
# (Debian 12's nvidia-cuda-toolkit, non-free, fetched once with apt-get download and
# unpacked under the cache folder, nothing installed), disassembles it and prints
# the instruction counts of the kernels whose mangled names contain SUBSTRING.
#   scripts/sass.sh FILE.cu [SUBSTRING] [INCLUDE_DIR]   (default: this tree's include/)
# Leaves FILE.sass (the whole disassembly) beside FILE.cu's basename in the current
# folder. Environment: WHAM_SASS_CACHE (default ~/.cache/wham-nvdisasm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$1
substring=${2:-}
include=${3:-$here/../include}
cache=${WHAM_SASS_CACHE:-$HOME/.cache/wham-nvdisasm}
nvdisasm=$cache/usr/bin/nvdisasm
if [ ! -x "$nvdisasm" ]; then
  mkdir -p "$cache"
  sources=$(mktemp)
  echo 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm non-free' > "$sources"
  lists=$(mktemp -d)
  mkdir -p "$lists/partial"
  apt_opts=(-o "Dir::Etc::sourcelist=$sources" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$lists")
  apt-get "${apt_opts[@]}" update -qq 2>/dev/null
  (cd "$cache" && apt-get "${apt_opts[@]}" download nvidia-cuda-toolkit >/dev/null 2>&1 &&
   dpkg -x nvidia-cuda-toolkit_*.deb . && rm nvidia-cuda-toolkit_*.deb)
  rm -rf "$sources" "$lists"
fi
base=$(basename "${src%.*}")
tmp=$(mktemp -d)
/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I"$include" \
  -cubin "$src" -o "$tmp/k.cubin"
python3 "$here/sass_mix.py" patch "$tmp/k.cubin" "$tmp/k7.cubin"
"$nvdisasm" -c "$tmp/k7.cubin" > "$base.sass"
rm -rf "$tmp"
python3 "$here/sass_mix.py" mix "$base.sass" "$substring"
