#!/usr/bin/env bash
# Checks that includes point down the floors of docs/architecture.md, never
# up: util/ at the bottom, storage/ on it, repository/ on storage/;
# loader/ and server/ on storage/, client/ on util/ alone, none of the three
# including another; tests/, fuzz/ and bench/ on top (free). Two
# exceptions: client/ may include storage/partition.h, the partition
# function, a public contract that the routing client must compute exactly
# as the loader and the server do (a pure function: no table is read), and
# storage/row/row_codec.h and row_schema.h, the row encoding, a public
# contract the client decodes as the loader wrote it.
# Prints each include that breaks a rule as FILE:LINE: ... and exits 1 if
# there is one.
# Usage: scripts/check-includes.sh [REPO]   (default: this checkout)
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

# FOLDER and the pattern of the includes it may not have.
rules=(
  'util|#include ["<](storage|repository|loader|server|client|tests|fuzz|bench|roost|grpc|grpcpp|google/protobuf|prometheus)/'
  'storage|#include ["<](repository|loader|server|client|tests|fuzz|bench|roost|grpc|grpcpp|google/protobuf|prometheus)/'
  'repository|#include ["<](loader|server|client|tests|fuzz|bench|roost|grpc|grpcpp|google/protobuf|prometheus)/'
  'loader|#include ["<](server|client|tests|fuzz|bench|roost|grpc|grpcpp|google/protobuf|prometheus)/'
  'server|#include ["<](loader|client|tests|fuzz|bench)/'
  'client|#include ["<](storage|repository|loader|server|tests|fuzz|bench|prometheus)/'
)
status=0
for rule in "${rules[@]}"; do
  folder=${rule%%|*}
  pattern=${rule#*|}
  if grep -rnE --include='*.h' --include='*.cc' "$pattern" "$folder" |
      grep -vE '^client/[^:]+:[0-9]+:#include "storage/(partition|row/row_codec|row/row_schema)\.h"$'; then
    status=1
  fi
done
if [ $status -ne 0 ]; then
  echo "check-includes: the includes above point up or sideways between" \
       "folders (docs/architecture.md, \"The folders\")" >&2
fi
exit $status
