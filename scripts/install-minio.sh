#!/usr/bin/env bash
# Installs the MinIO server that the object-storage tests (tests/repository/)
# run against on a loopback port, by building it with Go:
#   go install github.com/minio/minio@latest
# The binary is kept in a cache directory so that later runs (and CI on the
# same machine) skip the build, which takes minutes:
#   ${ROOST_TOOLS_DIR:-$HOME/.cache/roost/tools}/minio
# Idempotent: does nothing (and needs no network) when the binary is there.
# Prints the binary's path as its last line of output; CMake reads the same
# location (ROOST_MINIO_BINARY) and the tests take it from $ROOST_MINIO.
# Usage: scripts/install-minio.sh [--force]   (--force: rebuild)
set -euo pipefail

tools_dir=${ROOST_TOOLS_DIR:-$HOME/.cache/roost/tools}
binary=$tools_dir/minio

if [ "${1:-}" != "--force" ] && [ -x "$binary" ]; then
  echo "$binary"
  exit 0
fi

# Go 1.21 or newer: it fetches the newer toolchain MinIO's go.mod asks for
# by itself (GOTOOLCHAIN=auto). Debian 12's golang-go (1.19) is too old.
go=$("$(dirname "$0")/find-go.sh" || true)
if [ -z "$go" ]; then
  echo "install-minio: building MinIO needs Go 1.21 or newer (on PATH or at" \
       "/usr/local/go/bin/go); install it from https://go.dev/dl/, or put a" \
       "minio binary at $binary" >&2
  exit 1
fi

mkdir -p "$tools_dir"
# Build into a scratch GOBIN and move the binary into place, so that an
# interrupted build never leaves a half-written $binary that looks cached.
scratch=$(mktemp -d "$tools_dir/.build.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
echo "install-minio: building MinIO with $("$go" version) (takes minutes)" >&2
start=$(date +%s)
GOBIN=$scratch CGO_ENABLED=0 "$go" install github.com/minio/minio@latest
mv -f "$scratch/minio" "$binary"
echo "install-minio: built in $(( $(date +%s) - start )) s" >&2
echo "$binary"
