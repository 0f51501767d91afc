#!/usr/bin/env bash
# Runs the Python package's tests: python/run_tests.sh [pytest arguments]
#
# Without a GPU or libwham.so the GPU tests are skipped with their reason, and the rest
# (argument checks, the ctypes calls against a stub library, the QML mappings) run.
# On a GPU machine, point WHAM_LIBRARY at the built library:
#   WHAM_LIBRARY=build/libwham.so WHAM_REQUIRE_GPU=1 python/run_tests.sh
# WHAM_REQUIRE_GPU=1 turns "no library" and "the framework sees no GPU" into failures
# (a framework that is not installed is still skipped). PYTHON picks the interpreter.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
if [[ -n "${WHAM_LIBRARY:-}" && ! -e "$WHAM_LIBRARY" ]]; then
  echo "run_tests.sh: WHAM_LIBRARY=$WHAM_LIBRARY does not exist" >&2
  exit 2
fi
exec "$python" -m pytest -q -rs -p no:cacheprovider "$here/tests" "$@"
