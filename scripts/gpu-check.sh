#!/usr/bin/env bash
# The GPU run: over a build folder made on a machine without a GPU (or a stage
# of it, scripts/stage.sh), on a machine with one:
#   1. the whole ctest suite except the build-machine tests (label build), with
#      the GPU tests executed: a GPU test that reports itself skipped here fails;
#   2. compute-sanitizer memcheck over every GPU test binary, racecheck over those
#      with shared-memory kernels, synccheck over the M2L and FMM ones, at reduced
#      sizes (WHAM_TEST_REDUCED=1);
#   3. the benchmark sweep, JSON per benchmark (--benchmark_out);
#   4. DRAM bytes per amplitude of a few calls, by Nsight Compute (scripts/traffic.sh);
#   5. plots (when matplotlib is there) and a markdown summary, printed last.
# Under $OUT (or ./gpu-out): summary.md, one PNG per benchmark binary, and
# logs.tar.gz (every log and the benchmark JSON); the summary and the archive are
# rewritten after each part (and each benchmark binary) too. Exit status: non-zero if a test
# failed or the sanitizer reported an error.
#   scripts/gpu-check.sh [BUILD_OR_STAGE_DIR]   (default: the folder of this script)
# Environment: WHAM_BENCH_FILTER (regex), WHAM_BENCH_MIN_TIME (seconds, 0.02),
#   WHAM_BENCHES (names of the benchmark binaries to run; default: all),
#   WHAM_SKIP_TESTS=1, WHAM_SKIP_BENCH=1, WHAM_SKIP_SANITIZER=1,
#   WHAM_SKIP_TRAFFIC=1 or 0 (default: as WHAM_SKIP_BENCH),
#   WHAM_SANITIZE_FILTER (one Catch2 test spec; commas separate alternatives; a binary
#   where it matches no test case fails the run, so name the binaries that hold it in
#   WHAM_SANITIZE_BINARIES), WHAM_SANITIZE_BINARIES (names of the
#   test binaries to sanitize; default: all), WHAM_SANITIZE_SPLIT (binaries whose
#   test cases each run under the sanitizer as a job of their own; default: the three
#   slowest), WHAM_SANITIZE_TOOLS (of memcheck, racecheck, synccheck: the ones to
#   run; default: all that apply), WHAM_SANITIZER_JOBS (sanitizer runs at a time, 8),
#   WHAM_SANITIZER_TIMEOUT (seconds a run, 900), WHAM_CTEST_JOBS (4).
#   A long run can be split over calls: WHAM_SKIP_BENCH=1 (with WHAM_SANITIZE_TOOLS
#   naming some of the tools), then WHAM_SKIP_TESTS=1 and the other tools, then
#   WHAM_SKIP_TESTS=1 WHAM_SKIP_SANITIZER=1 (on an H200 the three parts take about
#   2.5, 5.5 and 3.5 minutes).
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
# The Python tests' ctest entry names the source tree's python/: the stage's copy instead.
if [ -f "$dir/.source_root" ] && [ -d "$dir/python" ]; then
  src_root=$(cat "$dir/.source_root")
  find "$dir" -name CTestTestfile.cmake -exec sed -i "s|$src_root/python/|$dir/python/|g" {} +
fi
# On a GPU machine the Python GPU tests may not skip for want of a GPU or of libwham.so.
export WHAM_REQUIRE_GPU=1

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv || true
} > "$logs/device.txt" 2>&1
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)

# The summary and the log archive are rewritten after each part, so that a run stopped
# from outside (a device call's time limit) still leaves what finished under $OUT.
ctest_rc=skipped
tests_line="not run (WHAM_SKIP_TESTS=1)"
san_rows="| (skipped) | | | |"$'\n'
write_summary() {  # $1: final, or the part just finished
  {
    echo "## wham GPU run: ${gpu_name:-unknown GPU}, $(date -u +%Y-%m-%d)"
    echo
    echo "Tests (ctest -LE build): ${tests_line:-no result} (exit $ctest_rc)"
    echo
    echo "| binary | sanitizer | verdict | summary |"
    echo "|---|---|---|---|"
    printf "%s" "$san_rows"
    echo
    # The performance page's tables first, then every row.
    if [ -e "$dir/tables.py" ] && compgen -G "$logs/bench_*.json" > /dev/null; then
      python3 "$dir/tables.py" "$logs"
    fi
    if [ -e "$logs/traffic.md" ]; then
      echo "DRAM bytes per amplitude (Nsight Compute, one call each; scripts/traffic.sh):"
      echo
      cat "$logs/traffic.md"
      echo
    fi
    for j in "$logs"/bench_*.json; do
      [ -e "$j" ] && python3 "$dir/summarize.py" "$j"
    done
    echo
    if [ "$1" = final ]; then
      echo "Overall: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
    else
      echo "Partial: written after $1; so far $([ $status -eq 0 ] && echo PASS || echo FAIL)"
    fi
  } > "$out/summary.md" 2>&1
  tar -czf "$out/logs.tar.gz" -C "$work" logs
}

# ---- 1. tests ------------------------------------------------------------------
if [ "${WHAM_SKIP_TESTS:-0}" != 1 ]; then
  # Several at a time: on an H100 four at a time take about 150 s, one at a time about 430 s.
  (cd "$dir" && ctest -LE build -j "${WHAM_CTEST_JOBS:-4}" --output-on-failure --timeout 1200) > "$logs/ctest.txt" 2>&1
  ctest_rc=$?
  [ $ctest_rc -eq 0 ] || status=1
  if grep -q "(Skipped)" "$logs/ctest.txt"; then
    echo "GPU tests reported skipped on a GPU machine" >> "$logs/ctest.txt"
    status=1
  fi
  tests_line=$(grep -E "tests passed|tests failed" "$logs/ctest.txt" | tail -n1)
  write_summary tests
fi

# ---- 2. compute-sanitizer ------------------------------------------------------
# Runs in parallel, WHAM_SANITIZER_JOBS at a time; the binaries in WHAM_SANITIZE_SPLIT
# one job a test case: one after another the runs take over 16 minutes on an H100.
if [ "${WHAM_SKIP_SANITIZER:-0}" != 1 ] && command -v compute-sanitizer >/dev/null; then
  san_rows=""
  split=" ${WHAM_SANITIZE_SPLIT:-test_fmm_accumulate_gpu test_fmm_class_groups_gpu test_fwht_paths_gpu test_iqp_kronecker_gpu} "
  # Bare test case names, one a line. Catch2 v2 lists them with --list-test-names-only
  # and exits with the number listed (not 0); v3 rejects that option and lists them with
  # --list-tests at quiet verbosity. tests/support/gpu_main.cu prints the device first.
  list_test_names() {
    local names
    names=$("$1" --list-test-names-only 2>&1)
    if [ -z "$names" ] || grep -qi "unrecognised" <<< "$names"; then
      names=$("$1" --list-tests --verbosity quiet 2>/dev/null)
    fi
    sed -e '/^device [0-9]*: /d' -e '/^$/d' <<< "$names"
  }
  jobs=$work/sanitizer_jobs
  : > "$jobs"
  for t in $(find "$dir/tests" -type f -perm -u+x -name 'test_*_gpu' | sort); do
    name=$(basename "$t")
    if [ -n "${WHAM_SANITIZE_BINARIES:-}" ] && ! [[ " $WHAM_SANITIZE_BINARIES " == *" $name "* ]]; then
      san_rows+="| $name | (not selected: WHAM_SANITIZE_BINARIES) | | |"$'\n'
      continue
    fi
    tools="memcheck racecheck"
    # synccheck where block barriers sit in warp-uniform divergent code (the M2L split
    # schedule's barrier.sync, also in the accumulate forms)
    case "$name" in
      test_m2l_gpu | test_fmm_accumulate_gpu | test_fmm_class_groups_gpu | test_fmm_large_gpu | \
        test_fmm_class_group_schedules_float_gpu | test_fmm_class_group_schedules_double_gpu | \
        test_fmm_class_dense_gpu) tools="$tools synccheck" ;;
    esac
    if [ -n "${WHAM_SANITIZE_TOOLS:-}" ]; then  # a call of its own for one slow tool
      kept=""
      for tool in $tools; do [[ " $WHAM_SANITIZE_TOOLS " == *" $tool "* ]] && kept+=" $tool"; done
      tools=$kept
    fi
    # A job: tool, binary, Catch2 test spec (one line, tab-separated).
    specs=("${WHAM_SANITIZE_FILTER:-}")
    if [ -z "${WHAM_SANITIZE_FILTER:-}" ] && [[ "$split" == *" $name "* ]]; then
      # A spec escapes the characters Catch2 parses (commas split specs).
      mapfile -t specs < <(list_test_names "$t" | sed -e 's/[][\\,*~"]/\\&/g')
      [ ${#specs[@]} -gt 0 ] || specs=("")
    fi
    for tool in $tools; do
      for spec in "${specs[@]}"; do printf '%s\t%s\t%s\n' "$tool" "$t" "$spec" >> "$jobs"; done
    done
  done
  run_sanitizer() {  # tool binary spec index
    local tool=$1 t=$2 spec=$3 i=$4 name extra="" log rc s summary verdict
    name=$(basename "$t")
    # racecheck only where shared memory is used: the WHT family and M2L kernels.
    # synccheck tracks room for a few mbarriers a block by default; the FMM dense
    # schedule's bulk gathers use one a warp.
    [ "$tool" = synccheck ] && extra="--num-cuda-barriers 64"
    log=$logs/sanitizer_${tool}_${name}${spec:+_$i}.txt
    s=$(date +%s)
    WHAM_TEST_REDUCED=1 timeout "${WHAM_SANITIZER_TIMEOUT:-900}" compute-sanitizer --tool "$tool" $extra \
      --error-exitcode 99 "$t" ${spec:+"$spec"} > "$log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -n1)
    if [ $rc -ne 0 ]; then verdict="FAIL (rc $rc)"; else verdict="clean"; fi
    # A filter that matches no test case (Catch2 splits specs at commas) checks nothing.
    grep -q "No tests ran" "$log" && verdict="FAIL (no test case matched)"
    printf '| %s | %s | %s | %s (%s s%s) |\n' "$name" "$tool" "$verdict" "${summary:-}" \
      "$(( $(date +%s) - s ))" "${spec:+, test case: $spec}" > "$work/sanitizer_row_$i"
  }
  export -f run_sanitizer
  export logs work
  awk '{ print NR "\t" $0 }' "$jobs" | xargs -r -P "${WHAM_SANITIZER_JOBS:-8}" -d '\n' -n 1 \
    bash -c 'IFS=$'"'"'\t'"'"' read -r i tool t spec <<< "$0"; run_sanitizer "$tool" "$t" "$spec" "$i"'
  for i in $(seq 1 "$(wc -l < "$jobs")"); do
    row=$(cat "$work/sanitizer_row_$i" 2>/dev/null || echo "| job $i | | FAIL (no result) | |")
    [[ "$row" == *"| clean |"* ]] || status=1
    san_rows+="$row"$'\n'
  done
  write_summary sanitizers
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
    write_summary "$name"
  done
fi

# ---- 4. DRAM bytes per amplitude (Nsight Compute) -------------------------------
# A few IQP and FWHT calls under ncu (scripts/traffic.sh; 40 s on an H100). A measurement,
# not a test: where ncu cannot read the counters the table says so and the run goes on.
# It goes with the sweep unless asked for on its own (WHAM_SKIP_TRAFFIC=0), so that a run
# split over calls (the header) does it once.
if [ "${WHAM_SKIP_TRAFFIC:-${WHAM_SKIP_BENCH:-0}}" != 1 ] && [ -x "$dir/bench/wham_traffic" ] &&
  [ -e "$dir/traffic.sh" ] && command -v ncu >/dev/null; then
  bash "$dir/traffic.sh" "$dir/bench/wham_traffic" "$logs" > "$logs/traffic.txt" 2>&1 ||
    echo "(traffic.sh exited non-zero: see traffic.txt in logs.tar.gz)" >> "$logs/traffic.md"
  write_summary traffic
fi

# ---- 5. plots and summary ------------------------------------------------------
if python3 -c "import matplotlib" 2>/dev/null; then
  for j in "$logs"/bench_*.json; do
    [ -e "$j" ] && python3 "$dir/plot.py" "$j" --out "$out" >> "$logs/plot.txt" 2>&1
  done

fi
write_summary final
cat "$out/summary.md"
exit $status
