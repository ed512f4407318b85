#!/usr/bin/env bash
# Writes the module roost.dev at VERSION as a Go module proxy's files, so
# that `go get roost.dev@VERSION` fetches it from a folder or any static web
# server (GOPROXY=file:///DIR or https://HOST/PATH, then the usual proxy for
# its dependencies):
#   OUT/roost.dev/@v/list, VERSION.info, VERSION.mod, VERSION.zip
# The zip holds the files git tracks in clients/go (their work-tree
# copies), under roost.dev@VERSION/, as `go mod download` expects.
# Usage: clients/go/package.sh VERSION OUT   (VERSION: v0.1.0, say)
set -euo pipefail
if [ $# -ne 2 ] || ! [[ "$1" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "usage: $0 VERSION OUT_DIR   (VERSION as v0.1.0)" >&2
  exit 64
fi
version="$1"
out="$2/roost.dev/@v"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
cd "$here"
git ls-files -z . | python3 -c '
import sys, zipfile, pathlib
version, out = sys.argv[1], pathlib.Path(sys.argv[2])
names = sorted(n for n in sys.stdin.buffer.read().decode().split("\0") if n)
with zipfile.ZipFile(out / f"{version}.zip", "w", zipfile.ZIP_DEFLATED) as z:
    for name in names:
        info = zipfile.ZipInfo(f"roost.dev@{version}/{name}", (1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        z.writestr(info, pathlib.Path(name).read_bytes())
' "$version" "$out"
cp go.mod "$out/$version.mod"
printf '{"Version":"%s","Time":"%s"}\n' "$version" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$out/$version.info"
{ [ -f "$out/list" ] && grep -vx "$version" "$out/list" || true; echo "$version"; } > "$out/list.new"
mv "$out/list.new" "$out/list"
echo "$out/$version.zip"
