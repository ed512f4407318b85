#!/usr/bin/env bash
# Prints the path of a Go toolchain of 1.21 or newer (on PATH, or at
# /usr/local/go/bin/go), the one scripts/install-minio.sh and
# scripts/install-k8s-tools.sh build with; exits 1 when there is none.
# (Debian 12's golang-go, 1.19, is too old; 1.21 fetches the toolchain a
# go.mod asks for by itself, GOTOOLCHAIN=auto.)
set -euo pipefail
for candidate in "$(command -v go || true)" /usr/local/go/bin/go; do
  [ -n "$candidate" ] && [ -x "$candidate" ] || continue
  minor=$("$candidate" env GOVERSION 2>/dev/null | sed -nE 's/^go1\.([0-9]+).*/\1/p')
  if [ -n "$minor" ] && [ "$minor" -ge 21 ]; then
    echo "$candidate"
    exit 0
  fi
done
exit 1
