#!/usr/bin/env bash
# The main job, end to end on a small generated sample: install what is
# missing, build, generate 100,000 key/value lines, build a cuckoo table from
# them, inspect it, and look a few keys up.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
dir=$(scripts/build.sh roost-load | tail -n 1)
load="$dir/loader/roost-load"

mkdir -p sample
echo "== generating sample/users.tsv (100,000 lines of user:ID<TAB>JSON)"
awk 'BEGIN { for (i = 0; i < 100000; i++)
  printf "user:%06d\t{\"id\":%d,\"score\":%d}\n", i, i, (i * 7919) % 1000 }' \
  > sample/users.tsv

echo "== roost-load build"
"$load" build --input sample/users.tsv --output sample/users.sst

echo "== roost-load inspect"
"$load" inspect sample/users.sst

echo "== roost-load verify"
"$load" verify sample/users.sst

echo "== roost-load get (the last key is not in the table, and says so)"
"$load" get sample/users.sst user:000042 user:031337 user:099999 user:100000 ||
  [ $? -eq 1 ]

echo "== the same input as a sorted, snappy-compressed block table, published"
echo "   as the next version of table 'users' in sample/data"
"$load" build --format block --compression snappy --input sample/users.tsv \
  --data-dir sample/data --table users
"$load" inspect sample/data/users
"$load" get sample/data/users user:000042
