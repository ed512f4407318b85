#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite.
# Usage: scripts/test.sh [--sanitize]   (--sanitize: under ASan + UBSan)
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
scripts/install-deps.sh
echo "test.sh: installs checked in $((SECONDS - started)) s" >&2
started=$SECONDS
# The build's lines go to a log; on failure its end is shown (the
# compiler's errors), not swallowed.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! scripts/build.sh "$@" >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "test.sh: the build failed after $((SECONDS - started)) s (above)" >&2
  exit 1
fi
dir=$(tail -n 1 "$log")
echo "test.sh: $dir built in $((SECONDS - started)) s" >&2
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"
