#!/usr/bin/env bash
# Writes the seed corpora in fuzz/corpus/ afresh from fuzz/make_seeds.cc
# (run it after changing that file, or an input format, and commit the
# result). Usage: fuzz/make_seeds.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh --fuzz make_seeds >/dev/null
rm -rf fuzz/corpus
build/fuzz/fuzz/make_seeds fuzz/corpus
find fuzz/corpus -type f | wc -l | xargs echo "seeds written:"
