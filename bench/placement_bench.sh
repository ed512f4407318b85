#!/usr/bin/env bash
# The network rows with the cores shared, beside the same rows pinned, in
# one run (issue 35, item 1): bench/run.sh pins every server to core 0 and
# its load generator to core 1; this measures what that placement changes.
# Each system is run twice a round: pinned (the server's threads on core 0,
# `taskset -a -p`, the load generator on core 1) and shared (both free to
# use both cores), the placements and systems taking turns in an order that
# rotates each round.
#
# Systems, on the same --keys pairs (8-byte keys and values, a cuckoo table;
# the same pairs in Redis): roost-server's packed MultiGet of 1000 keys and
# the no-op gRPC server's (bench/noop_server, gRPC's floor), each read by
# bench/server_load; roost's unary gRPC Get (server_load); GET through
# roost's Redis front end and through redis-server (bench/redis_load).
# Reported: medians of keys/s, p99 and the server's CPU per key (user +
# system time of the server process over the measured window), the load
# generator's CPU, and the ratios (shared to pinned; roost to the no-op
# server in each placement).
#
# Usage: bench/placement_bench.sh [--keys N] [--rounds R] [--duration S]
#            [--smoke] [--no-build]
#   --keys N      pairs (default 1000000)
#   --rounds R    rounds (default 3)
#   --duration S  measured seconds per run, after 1 s of warm-up (default 5)
#   --smoke       20,000 pairs, one round of 0.5 s runs: checks that it runs
#   --no-build    use $ROOST_BUILD_DIR (default build/release) as it is
# Example: bench/placement_bench.sh --rounds 3
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

keys=1000000
rounds=3
duration=5
warmup=1
build=1
die() { echo "placement_bench: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --keys) keys=${2:?}; shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    --duration) duration=${2:?}; shift 2 ;;
    --smoke) keys=20000 rounds=1 duration=0.5 warmup=0.2; shift ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
command -v redis-server >/dev/null || die "redis-server is not installed"
command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ] ||
  die "needs taskset and 2 cores (it compares placements on them)"

bin=${ROOST_BUILD_DIR:-$repo/build/release}
if [ "$build" = 1 ]; then
  bin=$repo/$(scripts/build.sh roost-server roost-load gen_records server_load \
    noop_server redis_load | tail -n 1)
fi
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
bench_setup placement-bench

echo "placement_bench: $keys pairs, a cuckoo table, Redis..." >&2
"$bin/bench/gen_records" "$keys" 20261130 "$work" >/dev/null
"$bin/loader/roost-load" build -q -i "$work/records.bin" --input-format fixed \
  --key-size 8 --value-size 8 --format cuckoo --data-dir "$work/data" --table bench
rm -f "$work/records.bin" "$work/records.tsv"
start roost "roost-server: ready: " "$bin/server/roost-server" \
  --data-dir "$work/data" --listen 127.0.0.1:0 --admin-listen '' --metrics-listen '' \
  --drain-period 0 --shutdown-timeout 1 --redis-listen 127.0.0.1:0 --redis-table bench
roost_pid=$pid
roost_grpc=$(port_of roost "roost-server: lookup service")
roost_redis=$(port_of roost "roost-server: Redis front end")
start noop "noop_server: listening on " "$bin/bench/noop_server" --listen 127.0.0.1:0
noop_pid=$pid
noop_port=$(port_of noop "noop_server:")
redis_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start redis "Ready to accept connections" redis-server --bind 127.0.0.1 \
  --port "$redis_port" --save '' --appendonly no --protected-mode no --dir "$work" --logfile ''
redis_pid=$pid
"$bin/bench/redis_load" fill --addr "127.0.0.1:$redis_port" --keys "$keys" \
  --seed 20261130 >/dev/null || die "loading Redis failed"

window=(--keys "$keys" --seed 20261130 --duration "$duration" --warmup "$warmup")
declare -A command server_of
command["roost, packed MultiGet 1000"]="$bin/bench/server_load --addr 127.0.0.1:$roost_grpc --table bench --method multiget --batch 1000 --packed --channels 4 --concurrency 64 --server-pid $roost_pid"
server_of["roost, packed MultiGet 1000"]=$roost_pid
command["no-op server, packed MultiGet 1000"]="$bin/bench/server_load --addr 127.0.0.1:$noop_port --table bench --method multiget --batch 1000 --packed --channels 4 --concurrency 64 --server-pid $noop_pid --check size"
server_of["no-op server, packed MultiGet 1000"]=$noop_pid
command["roost, gRPC Get"]="$bin/bench/server_load --addr 127.0.0.1:$roost_grpc --table bench --method get --channels 4 --concurrency 64 --server-pid $roost_pid"
server_of["roost, gRPC Get"]=$roost_pid
command["roost, Redis GET"]="$bin/bench/redis_load run --addr 127.0.0.1:$roost_redis --method get --connections 64 --server-pid $roost_pid"
server_of["roost, Redis GET"]=$roost_pid
command["Redis GET"]="$bin/bench/redis_load run --addr 127.0.0.1:$redis_port --method get --connections 64 --server-pid $redis_pid"
server_of["Redis GET"]=$redis_pid
systems=("roost, packed MultiGet 1000" "no-op server, packed MultiGet 1000" "roost, gRPC Get"
  "roost, Redis GET" "Redis GET")

results=$work/results.jsonl
: >"$results"
# run SYSTEM PLACEMENT ROUND: one run, its JSON line labelled.
run() {
  local system=$1 placement=$2 round=$3 line load=()
  if [ "$placement" = pinned ]; then
    taskset -a -p -c 0 "${server_of[$system]}" >/dev/null
    load=(taskset -c 1)
  else
    taskset -a -p -c 0,1 "${server_of[$system]}" >/dev/null
  fi
  # shellcheck disable=SC2086 # the command is words
  line=$("${load[@]}" ${command[$system]} "${window[@]}" 2>"$work/load.err") ||
    die "$system ($placement) failed: $line $(cat "$work/load.err")"
  python3 -c 'import json, sys
d = json.loads(sys.argv[1]); d.update(system=sys.argv[2], placement=sys.argv[3], round=int(sys.argv[4]))
print(json.dumps(d))' "$line" "$system" "$placement" "$round" >>"$results"
  echo "  $system, $placement: $(tail -n 1 "$results" | head -c 160)" >&2
}

echo "placement_bench: $rounds rounds, each system pinned and shared..." >&2
n=${#systems[@]}
for round in $(seq "$rounds"); do
  for k in $(seq 0 $((n - 1))); do
    system=${systems[$(( (k + round) % n ))]}
    if [ $((round % 2)) = 1 ]; then
      run "$system" pinned "$round"
      run "$system" shared "$round"
    else
      run "$system" shared "$round"
      run "$system" pinned "$round"
    fi
  done
done

echo
echo "Placement: $keys pairs (8-byte keys and values), 64 requests in flight; pinned = the server on core 0 and the load generator on core 1 (taskset), shared = both on both cores; ${duration} s runs, $rounds rounds; $(date -u '+%Y-%m-%d %H:%M UTC'), at $(measured_rev "$repo")"
python3 - "$results" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault((r["system"], r["placement"]), []).append(r)
med = lambda rs, f: statistics.median(r[f] for r in rs)
m = {k: {f: med(rs, f) for f in ("keys_per_s", "p99_us", "server_cpu_us_per_key", "client_cpu_s", "seconds")}
     for k, rs in by.items()}
print("\n| system | placement | M keys/s (median; runs) | p99 µs | server CPU ns per key | load generator CPU, share of the window |")
print("| --- | --- | --- | --- | --- | --- |")
for (s, p), rs in by.items():
    runs = ", ".join(f"{r['keys_per_s'] / 1e6:.3f}" for r in rs)
    x = m[(s, p)]
    print(f"| {s} | {p} | {x['keys_per_s'] / 1e6:.3f} ({runs}) | {x['p99_us']:.0f} | "
          f"{x['server_cpu_us_per_key'] * 1000:.1f} | {x['client_cpu_s'] / x['seconds']:.2f} |")
print()
systems = list(dict.fromkeys(s for s, _ in by))
for s in systems:
    a, b = m.get((s, "shared")), m.get((s, "pinned"))
    if a and b:
        print(f"{s}: shared {a['keys_per_s'] / b['keys_per_s']:.2f}x the pinned keys/s, "
              f"{a['server_cpu_us_per_key'] / b['server_cpu_us_per_key']:.2f}x its server CPU per key")
for p in ("pinned", "shared"):
    a = m.get(("roost, packed MultiGet 1000", p))
    b = m.get(("no-op server, packed MultiGet 1000", p))
    if a and b:
        print(f"{p}: roost's packed MultiGet(1000) at {a['server_cpu_us_per_key'] / b['server_cpu_us_per_key']:.2f}x "
              f"the no-op server's server CPU per key (target <= 1.1x), "
              f"{a['keys_per_s'] / b['keys_per_s']:.2f}x its keys/s")
    a, b = m.get(("roost, Redis GET", p)), m.get(("Redis GET", p))
    if a and b:
        print(f"{p}: roost's Redis GET at {a['keys_per_s'] / b['keys_per_s']:.2f}x Redis GET's keys/s, "
              f"{a['server_cpu_us_per_key'] / b['server_cpu_us_per_key']:.2f}x its server CPU per key")
EOF
