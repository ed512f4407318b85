#!/usr/bin/env bash
# Checks that every tracked C++ file (git ls-files '*.cc' '*.h') is as
# clang-format leaves it with the repository's .clang-format (Google
# style): one `clang-format --dry-run -Werror` over all of them, two
# processes at a time. Prints clang-format's diagnostics for each file that
# is not (FILE:LINE:COL: error: code should be clang-formatted) and exits 1;
# `clang-format -i FILE` fixes one. Exits 77 (skipped) outside a git
# checkout, where there is no list of tracked files.
# Usage: tests/format_test.sh [REPO]   (default: this checkout)
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

if ! command -v clang-format >/dev/null; then
  echo "format_test: clang-format not found (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "format_test: $(pwd) is not a git checkout: no tracked files to check" >&2
  exit 77
fi
files=$(git ls-files '*.cc' '*.h' | wc -l)
if [ "$files" = 0 ]; then
  echo "format_test: no tracked .cc or .h file in $(pwd)" >&2
  exit 1
fi
# Half the files to each of two clang-format processes.
if ! git ls-files -z '*.cc' '*.h' |
  xargs -0 -P 2 -n $(((files + 1) / 2)) clang-format --dry-run -Werror; then
  echo "format_test: the files above are not clang-formatted (clang-format -i FILE" \
    "fixes one; $(clang-format --version | head -n 1))" >&2
  exit 1
fi
echo "format_test: $files files clang-formatted"
