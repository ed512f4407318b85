#!/usr/bin/env bash
# Regenerates src/roost/v1/lookup_pb2{.py,.pyi,_grpc.py} from
# proto/roost/v1/lookup.proto with protoc and grpc_python_plugin (Debian 12's
# protobuf-compiler and protobuf-compiler-grpc). Usage:
#   clients/python/generate.sh [OUT_DIR]   (default: clients/python/src)
# tests/test_generated.py runs it into a scratch folder and compares.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$here/src}"
protoc="${PROTOC:-protoc}"
plugin="${GRPC_PYTHON_PLUGIN:-$(command -v grpc_python_plugin)}"
mkdir -p "$out"
"$protoc" -I "$root/proto" --python_out="$out" --pyi_out="$out" \
  --grpc_python_out="$out" --plugin=protoc-gen-grpc_python="$plugin" \
  "$root/proto/roost/v1/lookup.proto"
