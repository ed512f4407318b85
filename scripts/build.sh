#!/usr/bin/env bash
# Configures and builds roost. Usage: scripts/build.sh [--sanitize] [TARGET...]
#   (default)   release build in build/release
#   --sanitize  AddressSanitizer + UndefinedBehaviorSanitizer in build/sanitize
set -euo pipefail
cd "$(dirname "$0")/.."

dir=build/release
flags=(-DCMAKE_BUILD_TYPE=Release)
if [ "${1:-}" = "--sanitize" ]; then
  shift
  dir=build/sanitize
  # The benchmarks measure speed; a sanitized build has none to measure.
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DROOST_SANITIZE=ON -DROOST_BUILD_BENCH=OFF)
fi

cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
ninja -C "$dir" "$@"
echo "$dir"
