#!/usr/bin/env bash
# The main job, end to end on a small generated sample: install what is
# missing to build the programs (scripts/install-deps.sh --build; not what
# the tests, benchmarks and deploy checks use, which scripts/test.sh
# installs), build them without the tests (scripts/build.sh --no-tests),
# generate 100,000 key/value lines, publish them as two tables (cuckoo, and
# sorted block with snappy), start roost-server on loopback, look keys up
# through gRPC with roost-get, show a few metrics, and stop the server with
# SIGTERM.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh --build
dir=$(scripts/build.sh --no-tests roost-load roost-server roost-get | tail -n 1)
load="$dir/loader/roost-load"
server="$dir/server/roost-server"
get="$dir/client/roost-get"

mkdir -p sample
echo "== generating sample/users.tsv (100,000 lines of user:ID<TAB>JSON)"
awk 'BEGIN { for (i = 0; i < 100000; i++)
  printf "user:%06d\t{\"id\":%d,\"score\":%d}\n", i, i, (i * 7919) % 1000 }' \
  > sample/users.tsv

echo "== roost-load: publish it as tables 'users' (cuckoo) and 'users_sorted'"
echo "   (block, snappy) in sample/data"
# Published versions are read-only (0555): make them writable to remove them.
chmod -R u+w sample/data 2>/dev/null || true
rm -rf sample/data
"$load" build --quiet --input sample/users.tsv --data-dir sample/data \
  --table users
"$load" build --quiet --format block --compression snappy \
  --input sample/users.tsv --data-dir sample/data --table users_sorted
"$load" inspect sample/data/users

echo "== roost-server on loopback (the system picks free ports)"
log=sample/server.log
"$server" --data-dir sample/data --listen 127.0.0.1:0 \
  --admin-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
  --drain-period 0 2>"$log" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 300); do
  grep -q '^roost-server: ready' "$log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; exit 1; }
  sleep 0.1
done
cat "$log"
addr=$(sed -n 's/^roost-server: lookup service listening on //p' "$log")
metrics=$(sed -n 's/^roost-server: metrics listening on //p' "$log")

echo "== roost-get --addr $addr users ... (one MultiGet over gRPC)"
"$get" --addr "$addr" users user:000042 user:031337 user:099999
echo "== the same keys from the block table; user:100000 is not there"
"$get" --addr "$addr" users_sorted user:000042 user:100000 || [ $? -eq 1 ]
echo "== roost-get --list"
"$get" --addr "$addr" --list

echo "== a few of the metrics on http://$metrics/metrics"
exec 3<>"/dev/tcp/${metrics%:*}/${metrics##*:}"
printf 'GET /metrics HTTP/1.0\r\nHost: %s\r\n\r\n' "$metrics" >&3
grep -E '^(roost_lookups_total|roost_table_info|grpc_server_handled_total\{grpc_code="OK",grpc_method="(Get|MultiGet)")' <&3 || true
exec 3<&-

echo "== stopping roost-server (SIGTERM)"
kill -TERM "$pid"
wait "$pid"
trap - EXIT
tail -n 2 "$log"
