#!/usr/bin/env bash
# The GPU run: over a build folder made on a machine without a GPU (or a stage
# of it, scripts/stage.sh), on a machine with one:
#   1. the whole ctest suite except the build-machine tests (label build), with
#      the GPU tests executed: a GPU test that reports itself skipped here fails;
#   2. compute-sanitizer memcheck over every GPU test binary, racecheck over those
#      with shared-memory kernels, synccheck over the M2L and FMM ones, at reduced
#      sizes (WHAM_TEST_REDUCED=1);
#   3. the benchmark sweep, JSON per benchmark (--benchmark_out);
#   4. plots (when matplotlib is there) and a markdown summary, printed last.
# Under $OUT (or ./gpu-out): summary.md, one PNG per benchmark binary, and
# logs.tar.gz (every log and the benchmark JSON). Exit status: non-zero if a test
# failed or the sanitizer reported an error.
#   scripts/gpu-check.sh [BUILD_OR_STAGE_DIR]   (default: the folder of this script)
# Environment: WHAM_BENCH_FILTER (regex), WHAM_BENCH_MIN_TIME (seconds, 0.02),
#   WHAM_BENCHES (names of the benchmark binaries to run; default: all),
#   WHAM_SKIP_TESTS=1, WHAM_SKIP_BENCH=1, WHAM_SKIP_SANITIZER=1,
#   WHAM_SANITIZE_FILTER (one Catch2 test spec; commas separate alternatives; a binary
#   where it matches no test case fails the run, so name the binaries that hold it in
#   WHAM_SANITIZE_BINARIES), WHAM_SANITIZE_BINARIES (names of the
#   test binaries to sanitize; default: all). A long run can be split over two calls:
#   WHAM_SKIP_BENCH=1 first, then WHAM_SKIP_TESTS=1 WHAM_SKIP_SANITIZER=1.
set -uo pipefail
dir=$(cd "${1:-$(dirname "$0")}" && pwd)
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
work=$(mktemp -d)
logs=$work/logs
mkdir -p "$logs"
status=0

# A stage made elsewhere: point ctest's recorded paths at this folder.
if [ -f "$dir/.build_root" ]; then
  old=$(cat "$dir/.build_root")
  if [ "$old" != "$dir" ]; then
    find "$dir" -name CTestTestfile.cmake -exec sed -i "s|$old|$dir|g" {} +
    echo "$dir" > "$dir/.build_root"
  fi
fi

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv || true
} > "$logs/device.txt" 2>&1
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)

# ---- 1. tests ------------------------------------------------------------------
ctest_rc=skipped
tests_line="not run (WHAM_SKIP_TESTS=1)"
if [ "${WHAM_SKIP_TESTS:-0}" != 1 ]; then
  (cd "$dir" && ctest -LE build --output-on-failure --timeout 1200) > "$logs/ctest.txt" 2>&1
  ctest_rc=$?
  [ $ctest_rc -eq 0 ] || status=1
  if grep -q "(Skipped)" "$logs/ctest.txt"; then
    echo "GPU tests reported skipped on a GPU machine" >> "$logs/ctest.txt"
    status=1
  fi
  tests_line=$(grep -E "tests passed|tests failed" "$logs/ctest.txt" | tail -n1)
fi

# ---- 2. compute-sanitizer ------------------------------------------------------
san_rows=""
if [ "${WHAM_SKIP_SANITIZER:-0}" != 1 ] && command -v compute-sanitizer >/dev/null; then
  for t in $(find "$dir/tests" -type f -perm -u+x -name 'test_*_gpu' | sort); do
    name=$(basename "$t")
    if [ -n "${WHAM_SANITIZE_BINARIES:-}" ] && ! [[ " $WHAM_SANITIZE_BINARIES " == *" $name "* ]]; then
      san_rows+="| $name | (not selected: WHAM_SANITIZE_BINARIES) | | |"$'\n'
      continue
    fi
    tools="memcheck racecheck"
    # synccheck where block barriers sit in warp-uniform divergent code (the M2L split
    # schedule's barrier.sync, also in the accumulate forms)
    case "$name" in test_m2l_gpu | test_fmm_gpu) tools="$tools synccheck" ;; esac
    for tool in $tools; do
      # racecheck only where shared memory is used: the WHT family and M2L kernels.
      # synccheck tracks room for a few mbarriers a block by default; the FMM dense
      # schedule's bulk gathers use one a warp (its tracking overflowed there once).
      extra=""
      [ $tool = synccheck ] && extra="--num-cuda-barriers 64"
      WHAM_TEST_REDUCED=1 timeout "${WHAM_SANITIZER_TIMEOUT:-900}" compute-sanitizer --tool $tool $extra --error-exitcode 99 \
        "$t" ${WHAM_SANITIZE_FILTER:+"$WHAM_SANITIZE_FILTER"} > "$logs/sanitizer_${tool}_${name}.txt" 2>&1
      rc=$?
      summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$logs/sanitizer_${tool}_${name}.txt" | tail -n1)
      if [ $rc -ne 0 ]; then status=1; verdict="FAIL (rc $rc)"; else verdict="clean"; fi
      # A filter that matches no test case (Catch2 splits specs at commas) checks nothing.
      if grep -q "No tests ran" "$logs/sanitizer_${tool}_${name}.txt"; then
        status=1
        verdict="FAIL (no test case matched)"
      fi
      san_rows+="| $name | $tool | $verdict | ${summary:-} |"$'\n'
    done
  done
else
  san_rows="| (skipped) | | | |"$'\n'
fi

# ---- 3. benchmarks -------------------------------------------------------------
if [ "${WHAM_SKIP_BENCH:-0}" != 1 ]; then
  for b in $(find "$dir/bench" -maxdepth 1 -type f -perm -u+x -name 'bench_*' | sort); do
    name=$(basename "$b")
    if [ -n "${WHAM_BENCHES:-}" ] && ! [[ " $WHAM_BENCHES " == *" $name "* ]]; then continue; fi
    LD_LIBRARY_PATH="$(dirname "$b"):${LD_LIBRARY_PATH:-}" "$b" \
      --benchmark_min_time="${WHAM_BENCH_MIN_TIME:-0.02}" \
      --benchmark_filter="${WHAM_BENCH_FILTER:-.}" \
      --benchmark_out="$logs/$name.json" --benchmark_out_format=json \
      > "$logs/$name.txt" 2>&1 || { echo "$name exited non-zero" >> "$logs/$name.txt"; status=1; }
  done
fi

# ---- 4. plots and summary ------------------------------------------------------
if python3 -c "import matplotlib" 2>/dev/null; then
  for j in "$logs"/bench_*.json; do
    [ -e "$j" ] && python3 "$dir/plot.py" "$j" --out "$out" >> "$logs/plot.txt" 2>&1
  done

fi
{
  echo "## wham GPU run: ${gpu_name:-unknown GPU}, $(date -u +%Y-%m-%d)"
  echo
  echo "Tests (ctest -LE build): ${tests_line:-no result} (exit $ctest_rc)"
  echo
  echo "| binary | sanitizer | verdict | summary |"
  echo "|---|---|---|---|"
  printf "%s" "$san_rows"
  echo
  for j in "$logs"/bench_*.json; do
    [ -e "$j" ] && python3 "$dir/summarize.py" "$j"
  done
  echo
  echo "Overall: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
} > "$out/summary.md" 2>&1
tar -czf "$out/logs.tar.gz" -C "$work" logs
cat "$out/summary.md"
exit $status
