#!/usr/bin/env bash
# Configures and builds roost. Usage: scripts/build.sh [--no-tests|--sanitize|--fuzz] [TARGET...]
#   (default)   release build in build/release, tests and benchmarks included
#   --no-tests  the same build directory with the tests and benchmarks off:
#               configures with only the packages of
#               scripts/install-deps.sh --build (scripts/demo.sh); a later
#               default build turns them on again there
#   --sanitize  AddressSanitizer + UndefinedBehaviorSanitizer in build/sanitize
#   --fuzz      the libFuzzer targets (clang, sanitized) in build/fuzz; with no
#               TARGET, `fuzzers` (the targets and make_seeds only)
set -euo pipefail
cd "$(dirname "$0")/.."

dir=build/release
# Said each time, not left to the cache: a --no-tests configure of the same
# directory would otherwise keep them off.
flags=(-DCMAKE_BUILD_TYPE=Release -DROOST_BUILD_TESTS=ON -DROOST_BUILD_BENCH=ON)
# The sanitized builds' optimization and debug information: -O1 and line
# tables only (-g1), not RelWithDebInfo's -O2 -g. The sanitizers' reports
# keep their file:line stacks, and a test file that includes gRPC compiles
# in half the time (58 s -> 26 s measured).
# -fdebug-prefix-map: their debug information names files relative to the
# checkout, so that ccache (told not to hash the working directory, below)
# shares their objects between checkouts as it does the release build's:
# with -g and ccache's defaults every clone compiled them all again (a CI
# run's cold sanitized build: over an hour on a slow machine).
checked_flags="-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG -fdebug-prefix-map=$PWD=."
if [ "${1:-}" = "--no-tests" ]; then
  shift
  flags=(-DCMAKE_BUILD_TYPE=Release -DROOST_BUILD_TESTS=OFF -DROOST_BUILD_BENCH=OFF)
elif [ "${1:-}" = "--sanitize" ]; then
  shift
  dir=build/sanitize
  # The benchmarks measure speed; a sanitized build has none to measure.
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DROOST_SANITIZE=ON -DROOST_BUILD_BENCH=OFF
         "$checked_flags")
elif [ "${1:-}" = "--fuzz" ]; then
  shift
  dir=build/fuzz
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DROOST_FUZZ=ON -DROOST_BUILD_BENCH=OFF
         -DROOST_BUILD_TESTS=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
         "$checked_flags")
  [ $# -gt 0 ] || set -- fuzzers
fi

# ccache, where installed, makes rebuilds in several checkouts cheap; paths
# under the checkout are hashed relative to it, so checkouts share hits.
if command -v ccache >/dev/null; then
  flags+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
  export CCACHE_NOHASHDIR=1
fi
cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
ninja -C "$dir" "$@"
echo "$dir"
