#!/usr/bin/env bash
# Regenerates gen/go/roost/v1/*.pb.go (the Go package roost.dev/gen/go/roost/v1,
# lookup.proto's and admin.proto's go_package) with protoc (Debian 12's
# protobuf-compiler) and the Go plugins at the versions go.mod pins:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
#   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
# Usage: clients/go/generate.sh [OUT_DIR]   (default: clients/go)
# The plugins are looked for in $PROTOC_GEN_GO / $PROTOC_GEN_GO_GRPC, then
# on PATH, then in $(go env GOPATH)/bin. generate_test.go runs this into a
# scratch folder and compares the bytes with the committed files.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$here}"
protoc="${PROTOC:-protoc}"

plugin() {  # plugin VARIABLE NAME: the plugin's path, or exit 1 saying how to get it
  local given="$1" name="$2" path
  if [ -n "$given" ]; then path="$given"
  elif path="$(command -v "$name")"; then :
  else path="$(go env GOPATH 2>/dev/null)/bin/$name"
  fi
  if [ ! -x "$path" ]; then
    echo "generate.sh: $name not found (set it in the environment, put it on PATH, or" \
         "go install it: see the head of $0)" >&2
    exit 1
  fi
  echo "$path"
}
gen_go="$(plugin "${PROTOC_GEN_GO:-}" protoc-gen-go)"
gen_go_grpc="$(plugin "${PROTOC_GEN_GO_GRPC:-}" protoc-gen-go-grpc)"
if ! command -v "$protoc" >/dev/null; then
  echo "generate.sh: protoc not found (Debian: apt-get install protobuf-compiler)" >&2
  exit 1
fi

mkdir -p "$out"
# module=roost.dev: files go to OUT/gen/go/roost/v1, as the go_package
# "roost.dev/gen/go/roost/v1" lies inside the module roost.dev (go.mod).
"$protoc" -I "$root/proto" \
  --plugin=protoc-gen-go="$gen_go" --plugin=protoc-gen-go-grpc="$gen_go_grpc" \
  --go_out="$out" --go_opt=module=roost.dev \
  --go-grpc_out="$out" --go-grpc_opt=module=roost.dev \
  "$root/proto/roost/v1/lookup.proto" "$root/proto/roost/v1/admin.proto"
