#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite.
# Usage: scripts/test.sh [--sanitize]   (--sanitize: under ASan + UBSan)
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
scripts/install-deps.sh
echo "test.sh: installs checked in $((SECONDS - started)) s" >&2
started=$SECONDS
dir=$(scripts/build.sh "$@" | tail -n 1)
echo "test.sh: $dir built in $((SECONDS - started)) s" >&2
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"
