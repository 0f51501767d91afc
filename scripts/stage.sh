#!/usr/bin/env bash
# Copies what runs on a GPU machine out of a build folder made without a GPU:
# the test, benchmark and example executables, ctest's files, the shared Google
# Benchmark library, and the run scripts. Object files stay behind.
#   scripts/stage.sh [BUILD_DIR=build] [STAGE_DIR=.stage] [--pack]
# --pack also writes STAGE_DIR-pack/stage.tar.xz (the executables compress about
# 2x), for transfers with a size cap; unpack it with `tar -xJf` on the GPU machine.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
pack=0
args=()
for a in "$@"; do
  if [ "$a" = "--pack" ]; then pack=1; else args+=("$a"); fi
done
build=$(cd "${args[0]:-build}" && pwd)
stage=${args[1]:-.stage}
rm -rf "$stage"
mkdir -p "$stage"
stage=$(cd "$stage" && pwd)

# ctest's files, with their folders, so that `ctest` runs in the stage.
(cd "$build" && find . -name CTestTestfile.cmake) | while read -r f; do
  mkdir -p "$stage/$(dirname "$f")"
  cp "$build/$f" "$stage/$f"
done
# Executables (tests, benchmarks, examples), not the consumer-test scratch builds.
(cd "$build" && find . -path ./tests/consumer_test -prune -o -type f -perm -u+x \
   \( -name 'test_*' -o -name 'bench_*' -o -name 'wham_traffic' -o -name 'example_*' -o -path './examples/*' \) \
   ! -name '*.so*' ! -name '*.cmake' -print) | while read -r f; do
  case "$f" in */CMakeFiles/*) continue ;; esac
  mkdir -p "$stage/$(dirname "$f")"
  cp "$build/$f" "$stage/$f"
done
# The shared Google Benchmark library, beside each benchmark (RPATH $ORIGIN).
for b in "$stage"/bench/bench_* "$stage"/bench/wham_traffic; do
  [ -e "$b" ] || continue
  ldd "$b" | awk '/libbenchmark/ {print $3}' | while read -r lib; do
    dest="$(dirname "$b")/$(basename "$lib")"
    [ -e "$dest" ] || cp -L "$lib" "$dest"
  done
done
# libwham.so where the build has it (the top of the build folder: libwham.so ->
# libwham.so.0 -> libwham.so.0.3.0, the Python tests' WHAM_LIBRARY names the last), its
# soname linked beside the C interface's tests (RPATH $ORIGIN); the Python package and its
# tests, whose ctest entry names the source tree (gpu-check.sh points it at the stage:
# .source_root).
if compgen -G "$build/libwham.so*" > /dev/null; then
  cp -P "$build"/libwham.so* "$stage/"
  soname=$(readelf -d "$build/libwham.so" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p' || true)
  [ -d "$stage/tests/capi" ] && ln -sf "../../${soname:-libwham.so}" "$stage/tests/capi/${soname:-libwham.so}"
fi
# libwham_jax.so (wham.jax's XLA handlers) where the build has it: beside libwham.so.
[ -e "$build/libwham_jax.so" ] && cp "$build/libwham_jax.so" "$stage/"
(cd "$here" && tar -cf - --exclude=__pycache__ --exclude=.pytest_cache python) | tar -xf - -C "$stage"
echo "$here" > "$stage/.source_root"
cp "$here/scripts/gpu-check.sh" "$here/scripts/summarize.py" "$here/scripts/tables.py" \
  "$here/scripts/traffic.sh" "$here/scripts/traffic.py" "$here/bench/plot.py" "$stage/"
echo "$build" > "$stage/.build_root"
du -sh "$stage"
if [ $pack = 1 ]; then
  mkdir -p "$stage-pack"
  tar -cJf "$stage-pack/stage.tar.xz" -C "$stage" .
  du -sh "$stage-pack/stage.tar.xz"
fi
