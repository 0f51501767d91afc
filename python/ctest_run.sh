#!/usr/bin/env bash
# ctest's entry to the Python tests: python/ctest_run.sh LIBWHAM_SO [pytest arguments].
# Runs them with the first python3 that has pytest and NumPy ($PYTHON, then python3 on PATH,
# then the system's), else exits 77 (ctest: skipped, with the reason).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export WHAM_LIBRARY="$1"
shift
for py in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c "import pytest, numpy" >/dev/null 2>&1; then
    PYTHON="$py" exec "$here/run_tests.sh" "$@"
  fi
done
echo "no python3 with pytest and NumPy: the Python tests are skipped" >&2
exit 77
