#!/usr/bin/env bash
# Installs what the Go client's tests (clients/go) need beyond Go itself,
# into ${ROOST_TOOLS_DIR:-$HOME/.cache/roost/tools}/go-protoc-VERSIONS/:
# protoc-gen-go and protoc-gen-go-grpc at the versions clients/go/generate.sh
# names (go install from the Go module proxy), and the module's dependencies
# in Go's module cache (go mod download), so that ctest's go_client runs
# offline. Idempotent: a no-op (no network) once there. Prints, as its last
# lines, PROTOC_GEN_GO=PATH and PROTOC_GEN_GO_GRPC=PATH.
# Usage: scripts/install-client-tools.sh [--check]
#   --check  print the lines if the plugins are installed, else exit 1
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
gen_go_version=v1.36.12
gen_go_grpc_version=v1.5.1
dir="${ROOST_TOOLS_DIR:-$HOME/.cache/roost/tools}/go-protoc-$gen_go_version-$gen_go_grpc_version"

report() {
  echo "PROTOC_GEN_GO=$dir/protoc-gen-go"
  echo "PROTOC_GEN_GO_GRPC=$dir/protoc-gen-go-grpc"
}
# The Go client's modules, and the client benchmark's (go-redis: bench/clients/go),
# so that tests build them offline.
download_modules() {
  (cd "$root/clients/go" && "$1" mod download)
  (cd "$root/bench/clients/go" && "$1" mod download)
}
if [ -x "$dir/protoc-gen-go" ] && [ -x "$dir/protoc-gen-go-grpc" ]; then
  [ "${1:-}" = --check ] || download_modules "$("$here/find-go.sh")"
  report
  exit 0
fi
if [ "${1:-}" = --check ]; then
  echo "install-client-tools.sh: the Go protoc plugins are not in $dir" >&2
  exit 1
fi
go="$("$here/find-go.sh")" || {
  echo "install-client-tools.sh: no Go 1.21 or newer (PATH, /usr/local/go/bin)" >&2
  exit 1
}
mkdir -p "$dir.tmp"
GOBIN="$dir.tmp" "$go" install "google.golang.org/protobuf/cmd/protoc-gen-go@$gen_go_version"
GOBIN="$dir.tmp" "$go" install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$gen_go_grpc_version"
rm -rf "$dir" && mv "$dir.tmp" "$dir"
download_modules "$go"
report
