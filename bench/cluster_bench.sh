#!/usr/bin/env bash
# The cluster benchmarks (issue 14), on loopback, client and servers sharing
# this machine's cores:
#   routing  MultiGet(--batch) through the C++ routing client (ClusterClient,
#            a one-shard layout) against a plain blocking stub to the same
#            unsharded server, same keys, same callers; interleaved rounds;
#   shards   the router's MultiGet over 1, 2 and 3 shards (one roost-server
#            each), the same table built with --shards 1, 2, 3;
#   python   the Python package's get_many (bench/python_client_bench.py),
#            sync and asyncio, over 1 shard and over 3;
#   publish  --rounds versions published into a table repository on a
#            loopback MinIO (roost-load build --repository) before the
#            server starts; then, on a synced disk, each POINTER moved
#            forward (roost-load rollback --to) and timed from its move to
#            a --repository server serving it, against a plain download of
#            the same object (curl --aws-sigv4); medians;
# each a JSON line in RESULTS/cluster.jsonl, made by bench/result_rows.py
# from what this script measured (bench/report_cluster.py reads them).
#
# Usage: bench/cluster_bench.sh --results DIR [--keys N] [--duration S]
#            [--warmup S] [--rounds R] [--threads T] [--batch B] [--work DIR]
#            [--seed N]
#   Binaries come from $ROOST_BUILD_DIR (default build/release): roost-server,
#   roost-load, gen_records and cluster_load must be built. MinIO from
#   $ROOST_MINIO or ~/.cache/roost/tools/minio (scripts/install-minio.sh);
#   without it the publish section fails. --work (default
#   $ROOST_BENCH_WORK/cluster or /tmp/roost-cluster-bench) is emptied first.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
results=
keys=10000000
duration=10
warmup=2
rounds=3
threads=4
batch=1000
seed=20261122
work="${ROOST_BENCH_WORK:+$ROOST_BENCH_WORK/cluster}"
work="${work:-/tmp/roost-cluster-bench}"
command_line="bench/cluster_bench.sh${*:+ $*}"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() {
  echo "cluster_bench: $*" >&2
  exit 1
}
while [ $# -gt 0 ]; do
  case "$1" in
    --results | --keys | --duration | --warmup | --rounds | --threads | --batch | --work | --seed)
      [ $# -ge 2 ] || die "$1 needs a value"
      declare "${1#--}=$2"
      shift 2
      ;;
    -h | --help) usage && exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
[ -n "$results" ] || die "--results DIR is required"
for n in keys rounds threads batch; do
  [[ "${!n}" =~ ^[1-9][0-9]*$ ]] || die "--$n must be a positive integer, not '${!n}'"
done
[ -n "$work" ] && [ "$work" != "/" ] || die "refusing --work '$work'"
mkdir -p "$results"
results="$(cd "$results" && pwd)"
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
rev=$(measured_rev "$repo")
rows="$repo/bench/result_rows.py"
"$rows" cluster-meta --command "$command_line" --git-rev "$rev" >"$results/cluster.json"
: >"$results/cluster.jsonl"

bin_dir="${ROOST_BUILD_DIR:-$repo/build/release}"
server="$bin_dir/server/roost-server"
loader="$bin_dir/loader/roost-load"
gen="$bin_dir/bench/gen_records"
cluster_load="$bin_dir/bench/cluster_load"
for b in "$server" "$loader" "$gen" "$cluster_load"; do
  [ -x "$b" ] || die "missing $b (build it first)"
done

pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  chmod -R u+w "$work" 2>/dev/null || true # read-only versions
  rm -rf "$work"
}
trap cleanup EXIT
chmod -R u+w "$work" 2>/dev/null || true
rm -rf "$work"
mkdir -p "$work"

echo "cluster: generating $keys pairs and building 1, 2 and 3 shards..." >&2
"$gen" "$keys" "$seed" "$work" >/dev/null
for s in 1 2 3; do
  "$loader" build -q -i "$work/records.bin" --input-format fixed --key-size 8 \
    --value-size 8 --format cuckoo --shards "$s" --data-dir "$work/data$s" \
    --table bench
done
rm -f "$work/records.bin" "$work/records.tsv"

# serve NAME DATA_DIR [ARGS...]: starts a roost-server on a free loopback
# port (its /metrics on $metrics_listen, off when unset), waits until it is
# ready, and sets $port and $pid.
serve() {
  local name="$1" data="$2" log="$work/$1.log" waited=0
  shift 2
  "$server" --data-dir "$data" --listen 127.0.0.1:0 --admin-listen '' \
    --metrics-listen "${metrics_listen:-}" --drain-period 0 --shutdown-timeout 1 "$@" 2>"$log" &
  pid=$!
  pids+=("$pid")
  until grep -q "^roost-server: ready: " "$log" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || die "$name exited: $(cat "$log")"
    [ "$waited" -lt 3000 ] || die "$name not ready after 5 minutes"
    sleep 0.1
    waited=$((waited + 1))
  done
  port=$(sed -n 's/^roost-server: lookup service listening on .*:\([0-9]*\)$/\1/p' "$log" |
    head -n 1)
}

failures=()
# load SECTION LABEL SHARDS COMMAND...: one run; its JSON line, labelled,
# goes to cluster.jsonl.
load() {
  local section="$1" label="$2" shards="$3" out rc=0
  shift 3
  echo "cluster: $section $label ($shards shards)..." >&2
  out=$("$@" 2>"$work/load.err") || rc=$?
  echo "  $out" >&2
  if [ "$rc" != 0 ] || [ -z "$out" ]; then
    failures+=("$section $label (exit $rc: $(head -c 300 "$work/load.err"))")
    return
  fi
  "$rows" labelled --str section="$section" --str system="$label" --num shards="$shards" \
    --num table_keys="$keys" <<<"$out" >>"$results/cluster.jsonl" ||
    failures+=("$section $label: its line is not JSON")
}
common=(--table bench --keys "$keys" --seed "$seed" --batch "$batch"
  --threads "$threads" --duration "$duration" --warmup "$warmup")

# --- the Python client: set-up -----------------------------------------------
# The first python3 that has Debian's grpc and xxhash (a pyenv shim may come
# first on PATH), and 200,000 of the table's keys for it to look up.
python=
for p in "${PYTHON:-python3}" /usr/bin/python3; do
  if "$p" -c 'import grpc, xxhash' 2>/dev/null; then
    python="$p"
    break
  fi
done
if [ -n "$python" ]; then
  "$python" - "$keys" "$seed" >"$work/keys.hex" <<'EOF'
import random, struct, sys
n, seed = int(sys.argv[1]), int(sys.argv[2])
M = (1 << 64) - 1
def mix(x):
    x ^= x >> 30; x = (x * 0xbf58476d1ce4e5b9) & M
    x ^= x >> 27; x = (x * 0x94d049bb133111eb) & M
    return x ^ (x >> 31)
base = mix(seed ^ 0x726f6f73742d6c64)
rng = random.Random(seed)
for _ in range(200000):
    print(struct.pack("<Q", mix((base + rng.randrange(n)) & M)).hex())
EOF
else
  failures+=("python client: grpc or xxhash not importable")
fi
# python_bench SHARDS: get_many through the Python package over layout
# SHARDS, sync (threads) and asyncio. timeout: a client that does not exit
# must not stall the whole run.
python_bench() {
  local shards="$1" api out flags
  [ -n "$python" ] || return 0
  for api in sync aio; do
    flags=()
    [ "$api" = aio ] && flags=(--aio)
    echo "cluster: python $api ($shards shards)..." >&2
    out=$(timeout 300 "$python" "$repo/bench/python_client_bench.py" \
      --layout "$work/layout$shards.json" --table bench --keys-file "$work/keys.hex" \
      --hex --batch "$batch" --seconds "$duration" --concurrency "$threads" \
      "${flags[@]}" 2>"$work/load.err") || true
    echo "  $out" >&2
    if [ -n "$out" ]; then
      "$rows" labelled --str section=python --str system="python-$api" \
        --num shards="$shards" --num table_keys="$keys" <<<"$out" \
        >>"$results/cluster.jsonl" || failures+=("python client ($api): its line is not JSON")
    else
      failures+=("python client ($api, $shards shards): $(head -c 300 "$work/load.err")")
    fi
  done
}

# --- routing overhead: one unsharded server, direct and through the router -
serve single "$work/data1"
single_port=$port single_pid=$pid
"$rows" layout "$single_port" >"$work/layout1.json"
for r in $(seq "$rounds"); do
  load routing direct 1 "$cluster_load" --addr "127.0.0.1:$single_port" \
    --server-pid "$single_pid" "${common[@]}"
  load routing router 1 "$cluster_load" --cluster "$work/layout1.json" \
    --server-pid "$single_pid" "${common[@]}"
done

# --- throughput against the shard count, and the Python client --------------
load shards router 1 "$cluster_load" --cluster "$work/layout1.json" "${common[@]}"
python_bench 1
kill "$single_pid" 2>/dev/null || true
for s in 2 3; do
  ports=()
  for i in $(seq 0 $((s - 1))); do
    serve "shard$s-$i" "$work/data$s" --shard "$i"
    ports+=("$port")
  done
  "$rows" layout "${ports[@]}" >"$work/layout$s.json"
  load shards router "$s" "$cluster_load" --cluster "$work/layout$s.json" "${common[@]}"
  if [ "$s" = 2 ]; then
    # Only one cluster at a time holds the cores.
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  fi
done
python_bench 3

# --- publish to serving -----------------------------------------------------
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
publish_bench() {
  local minio="${ROOST_MINIO:-$HOME/.cache/roost/tools/minio}" minio_port=
  [ -x "$minio" ] || { failures+=("publish: no MinIO at $minio"); return; }
  export AWS_ACCESS_KEY_ID=roostbench AWS_SECRET_ACCESS_KEY=roostbench-secret \
    AWS_REGION=us-east-1
  minio_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  MINIO_ROOT_USER=$AWS_ACCESS_KEY_ID MINIO_ROOT_PASSWORD=$AWS_SECRET_ACCESS_KEY \
    MINIO_BROWSER=off "$minio" server "$work/minio" --address "127.0.0.1:$minio_port" \
    --quiet >"$work/minio.log" 2>&1 &
  pids+=("$!")
  export AWS_ENDPOINT_URL="http://127.0.0.1:$minio_port"
  local s3=(curl -sf --aws-sigv4 "aws:amz:us-east-1:s3"
    --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY")
  local waited=0
  until "${s3[@]}" -X PUT "$AWS_ENDPOINT_URL/bench" -o /dev/null 2>/dev/null; do
    [ "$waited" -lt 300 ] || { failures+=("publish: MinIO did not start"); return; }
    sleep 0.1
    waited=$((waited + 1))
  done
  "$gen" "$keys" "$seed" "$work" >/dev/null
  local build=("$loader" build -q -i "$work/records.bin" --input-format fixed
    --key-size 8 --value-size 8 --format cuckoo --repository s3://bench/tables
    --table bench)
  # Every version is published before the server starts, then the pointer
  # is moved back to v000001 (roost-load rollback): on this one machine the
  # loader's upload and MinIO's writing of it would otherwise share the disk
  # with the pull being timed (in production the loader and the store are
  # other machines). Each round then moves the pointer forward, on a synced
  # disk, as the plain download after it finds one.
  for round in $(seq $((rounds + 1))); do
    "${build[@]}" || { failures+=("publish: roost-load build --repository"); return; }
  done
  "$loader" rollback --repository s3://bench/tables --table bench --to v000001 >/dev/null ||
    { failures+=("publish: roost-load rollback --to v000001"); return; }
  sync
  mkdir -p "$work/pulled"
  metrics_listen=127.0.0.1:0 serve puller "$work/pulled" \
    --repository s3://bench/tables --repository-poll 0.1
  local metrics
  metrics=$(sed -n 's/^roost-server: metrics listening on .*:\([0-9]*\)$/\1/p' \
    "$work/puller.log" | head -n 1)
  local sum0 sum1 round version observed="$work/publish.observed"
  : >"$observed"
  # download VERSION: a plain download of the version's file; appends
  # "download T0 T1 BYTES" to $observed.
  download() {
    local t0 t1
    t0=$EPOCHREALTIME
    "${s3[@]}" -o "$work/plain.sst" "$AWS_ENDPOINT_URL/bench/tables/bench/$1/table.sst" ||
      return 1
    t1=$EPOCHREALTIME
    echo "download $t0 $t1 $(stat -c %s "$work/plain.sst")" >>"$observed"
    rm -f "$work/plain.sst"
  }
  serving_sum() {
    curl -sf "http://127.0.0.1:$metrics/metrics" |
      sed -n 's/^roost_repository_pointer_to_serving_seconds_sum{table="bench"} \(.*\)$/\1/p'
  }
  download v000001 || { failures+=("publish: curl"); return; }
  # --rounds new versions, each timed from its pointer's move to serving,
  # and each downloaded plainly after: medians, as one pull on a shared
  # machine is mostly noise.
  for round in $(seq "$rounds"); do
    version=$(printf 'v%06d' $((round + 1)))
    sync
    sleep 1
    sum0=$(serving_sum)
    "$loader" rollback --repository s3://bench/tables --table bench --to "$version" >/dev/null ||
      { failures+=("publish: roost-load rollback --to $version"); return; }
    waited=0
    until grep -q "^roost-server: serving bench $version" "$work/puller.log"; do
      [ "$waited" -lt 6000 ] || { failures+=("publish: $version not served in 10 min"); return; }
      sleep 0.1
      waited=$((waited + 1))
    done
    sleep 0.5 # the observation follows the log line
    sum1=$(serving_sum)
    [ -n "$sum0" ] && [ -n "$sum1" ] || { failures+=("publish: no serving seconds metric"); return; }
    echo "serving $sum0 $sum1" >>"$observed"
    sync
    download "$version" || { failures+=("publish: curl"); return; }
  done
  # The row: the medians of both (bench/result_rows.py).
  "$rows" publish-row --keys "$keys" "$observed" >>"$results/cluster.jsonl" ||
    failures+=("publish: its observations")
  rm -f "$work/records.bin" "$work/records.tsv"
}
echo "cluster: publish to serving..." >&2
publish_bench

if [ ${#failures[@]} -gt 0 ]; then
  printf 'cluster_bench: failed: %s\n' "${failures[@]}" >&2
  exit 1
fi
