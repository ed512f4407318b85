#!/usr/bin/env bash
# A sharded, replicated roost cluster on this machine, end to end, on
# loopback only: MinIO (the S3-compatible store of the tests) with a bucket,
# a generated table published into it as 3 shards by
# `roost-load build --shards 3 --repository s3://roost/demo`, 3 shards x 2
# replicas of roost-server pulling from it (ports picked by the system),
# their layout file, `roost-admin wait` until every replica serves the
# version, `roost-get --cluster` reading keys from every shard, one replica
# killed while the other of its shard answers, and a second version picked
# up by every server. Everything it started is stopped on exit or Ctrl-C.
#
# Usage: scripts/cluster-demo.sh [--build-dir DIR] [--dir DIR] [--keys N] [--hold]
#   --build-dir DIR  use the programs built in DIR (loader/roost-load, ...)
#                    as they are; without it, install what is missing
#                    (scripts/install-deps.sh --build, curl, MinIO) and
#                    build them (scripts/build.sh --no-tests)
#   --dir DIR        where MinIO's data, the servers' data directories,
#                    logs and cluster.json go (default sample/cluster;
#                    emptied first)
#   --keys N         keys of the sample table, 6 or more (default 100000)
#   --hold           leave the cluster running until Ctrl-C, printing how
#                    to reach it
# The MinIO binary is $ROOST_MINIO, else scripts/install-minio.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="" dir=sample/cluster keys=100000 hold=false
shards=3 replicas=2
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --keys) keys=$2; shift 2 ;;
    --hold) hold=true; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "cluster-demo: unknown argument $1 (see --help)" >&2; exit 64 ;;
  esac
done
[[ $keys =~ ^[0-9]+$ ]] && [ "$keys" -ge 6 ] ||
  { echo "cluster-demo: --keys takes a number of 6 or more, not $keys" >&2; exit 64; }

if [ -z "$build_dir" ]; then
  scripts/install-deps.sh --build
  scripts/apt-install.sh curl
  build_dir=$(scripts/build.sh --no-tests roost-load roost-server roost-get roost-admin | tail -n 1)
fi
load=$build_dir/loader/roost-load
server=$build_dir/server/roost-server
get=$build_dir/client/roost-get
admin=$build_dir/client/roost-admin
for b in "$load" "$server" "$get" "$admin"; do
  [ -x "$b" ] || { echo "cluster-demo: no $b (build it: scripts/build.sh --no-tests roost-admin ...)" >&2; exit 1; }
done
minio=${ROOST_MINIO:-$(scripts/install-minio.sh | tail -n 1)}
command -v curl >/dev/null || { echo "cluster-demo: needs curl (apt-get install curl)" >&2; exit 1; }

# Published versions are read-only (0555): make them writable to remove them.
chmod -R u+w "$dir" 2>/dev/null || true
rm -rf "$dir"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

pids=()
stop() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A loopback port nothing listens on now (MinIO binds it a moment later:
# a start that loses the race is tried again below).
free_port() {
  local port
  while true; do
    port=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
}

echo "== MinIO on loopback, data in $dir/minio"
export AWS_ACCESS_KEY_ID=roost-demo AWS_SECRET_ACCESS_KEY=roost-demo-secret
for attempt in 1 2 3; do
  port=$(free_port)
  MINIO_ROOT_USER=$AWS_ACCESS_KEY_ID MINIO_ROOT_PASSWORD=$AWS_SECRET_ACCESS_KEY \
    MINIO_BROWSER=off MINIO_UPDATE=off HOME="$dir" \
    "$minio" server --quiet --address "127.0.0.1:$port" \
    --console-address "127.0.0.1:$(free_port)" "$dir/minio" >"$dir/minio.log" 2>&1 &
  minio_pid=$!
  pids+=("$minio_pid")
  for _ in $(seq 300); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/minio/health/live" && break
    kill -0 "$minio_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$minio_pid" 2>/dev/null && break
  [ "$attempt" -lt 3 ] || { cat "$dir/minio.log" >&2; echo "cluster-demo: MinIO did not start" >&2; exit 1; }
done
export AWS_ENDPOINT_URL=http://127.0.0.1:$port
echo "   $AWS_ENDPOINT_URL (AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY)"

echo "== the bucket 'roost' (an S3 PUT signed with curl --aws-sigv4)"
# MinIO answers 503 until its storage is ready.
for _ in $(seq 300); do
  status=$(curl -s -o "$dir/bucket.out" -w '%{http_code}' -X PUT \
    --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$AWS_ENDPOINT_URL/roost") || status=000
  [ "$status" = 503 ] || [ "$status" = 000 ] || break
  sleep 0.1
done
[ "$status" = 200 ] || { cat "$dir/bucket.out" >&2; echo "cluster-demo: creating the bucket: HTTP $status" >&2; exit 1; }

# sample VERSION: the sample table's lines, values naming VERSION.
sample() {
  awk -v n="$keys" -v v="$1" 'BEGIN { for (i = 0; i < n; i++)
    printf "user:%06d\t{\"id\":%d,\"version\":%d}\n", i, i, v }' >"$dir/users.tsv"
}

echo "== roost-load: $keys keys as table 'users', $shards shards, into s3://roost/demo"
sample 1
"$load" build --quiet -i "$dir/users.tsv" --shards "$shards" \
  --repository s3://roost/demo --table users

echo "== $shards shards x $replicas replicas of roost-server pulling from it"
declare -A addr server_pid
# start_server S R LISTEN: replica R of shard S, its data directory and log
# its own.
start_server() {
  local s=$1 r=$2
  mkdir -p "$dir/shard$s-replica$r"
  "$server" --repository s3://roost/demo --shard "$s" --repository-poll 0.5 \
    --data-dir "$dir/shard$s-replica$r" --listen "$3" \
    --admin-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --drain-period 0 \
    2>>"$dir/shard$s-replica$r.log" &
  server_pid[$s,$r]=$!
  pids+=($!)
}
for s in $(seq 0 $((shards - 1))); do
  for r in $(seq 0 $((replicas - 1))); do
    start_server "$s" "$r" 127.0.0.1:0
  done
done
# Each server's lookup port, from its log.
for s in $(seq 0 $((shards - 1))); do
  for r in $(seq 0 $((replicas - 1))); do
    log=$dir/shard$s-replica$r.log
    for _ in $(seq 300); do
      addr[$s,$r]=$(sed -n 's/^roost-server: lookup service listening on //p' "$log")
      [ -z "${addr[$s,$r]}" ] || break
      sleep 0.1
    done
    [ -n "${addr[$s,$r]}" ] || { cat "$log" >&2; echo "cluster-demo: shard $s replica $r did not start" >&2; exit 1; }
    echo "   shard $s replica $r: ${addr[$s,$r]} (log $log)"
  done
done

layout=$dir/cluster.json
{
  printf '{"shards": ['
  for s in $(seq 0 $((shards - 1))); do
    [ "$s" -eq 0 ] || printf ',\n            '
    printf '['
    for r in $(seq 0 $((replicas - 1))); do
      [ "$r" -eq 0 ] || printf ', '
      printf '"%s"' "${addr[$s,$r]}"
    done
    printf ']'
  done
  printf ']}\n'
} >"$layout"
echo "== $layout"
cat "$layout"

echo "== roost-admin wait: every replica serves users v000001"
"$admin" wait --cluster "$layout" --table users --for-version v000001 --timeout 120

# Six keys, which the partition function puts on all three shards (1, 2,
# 1, 2, 1, 0), and one that is in none.
lookup=(user:000000 user:000001 user:000002 user:000003 user:000004 user:000005 user:none)
echo "== roost-get --cluster $layout users ${lookup[*]}"
"$get" --cluster "$layout" --show-version users "${lookup[@]}" || [ $? -eq 1 ]

echo "== kill -9 shard 0's first replica: its other replica answers"
kill -KILL "${server_pid[0,0]}"
wait "${server_pid[0,0]}" 2>/dev/null || true
"$get" --cluster "$layout" --show-version users "${lookup[@]}" || [ $? -eq 1 ]

echo "== the killed replica restarted on its port and data directory, and a"
echo "   second version published (values say \"version\":2): every server pulls it"
start_server 0 0 "${addr[0,0]}"
sample 2
"$load" build --quiet -i "$dir/users.tsv" --shards "$shards" \
  --repository s3://roost/demo --table users
"$admin" wait --cluster "$layout" --table users --for-version v000002 --timeout 120
"$get" --cluster "$layout" --show-version users "${lookup[@]}" || [ $? -eq 1 ]

if $hold; then
  cat <<EOF
== The cluster runs until Ctrl-C. In another shell:
   export AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY
   $get --cluster $layout users user:000042
   $load build -i FILE.tsv --shards $shards --repository s3://roost/demo --table users
   $load rollback --repository s3://roost/demo --table users --to v1
EOF
  wait "$minio_pid"
fi
echo "== stopping the servers and MinIO"
