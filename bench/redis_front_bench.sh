#!/usr/bin/env bash
# Single-key lookups from plain clients, with the servers pinned to core 0
# and the load generator to core 1 (taskset): roost-server's Redis front end
# (--redis-listen, read by bench/redis_load, hiredis) against redis-server
# (the same load generator), and roost-server's unary gRPC Get and the no-op
# gRPC server (bench/noop_server, gRPC's floor) read by bench/server_load.
# The same keys everywhere: gen_records's pairs (8-byte keys and values),
# a cuckoo table in roost, the same pairs loaded into Redis.
#
# Closed loop: GET (and MGET of 100 keys through both Redis protocols) with
# --connections requests in flight, --rounds rounds, the systems taking turns
# in an order that rotates each round. Open loop: GET at 50% and 75% of each
# system's own median maximum (Poisson arrivals, latency from each request's
# due time: bench/open_loop.h). Server CPU is the server process's user +
# system time over the measured window (/proc/PID/stat). Every answer is
# checked. Prints a table of medians and the ratios to Redis.
#
# Usage: bench/redis_front_bench.sh [--keys N] [--rounds R] [--duration S]
#            [--connections C] [--smoke] [--no-build] [--out FILE]
#   --keys N         keys in the table (default 1000000)
#   --rounds R       closed-loop rounds (default 3)
#   --duration S     measured seconds per run, after 1 s of warm-up (default 5)
#   --connections C  requests in flight (default 64)
#   --smoke          20,000 keys, one round of 0.5 s runs: checks that it runs
#   --no-build       use $ROOST_BUILD_DIR (default build/release) as it is
#   --out FILE       also write every run's JSON line here
# Example: bench/redis_front_bench.sh --rounds 3
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

keys=1000000
rounds=3
duration=5
warmup=1
connections=64
build=1
out=
die() { echo "redis_front_bench: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --keys) keys=${2:?}; shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    --duration) duration=${2:?}; shift 2 ;;
    --connections) connections=${2:?}; shift 2 ;;
    --smoke) keys=20000 rounds=1 duration=0.5 warmup=0.2; shift ;;
    --no-build) build=0; shift ;;
    --out) out=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
command -v redis-server >/dev/null || die "redis-server is not installed"

bin=${ROOST_BUILD_DIR:-$repo/build/release}
if [ "$build" = 1 ]; then
  bin=$repo/$(scripts/build.sh roost-server roost-load gen_records server_load \
    noop_server redis_load | tail -n 1)
fi
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
bench_setup redis-front-bench

echo "redis_front_bench: $keys pairs, a cuckoo table, Redis..." >&2
"$bin/bench/gen_records" "$keys" 20261122 "$work" >/dev/null
"$bin/loader/roost-load" build -q -i "$work/records.bin" --input-format fixed \
  --key-size 8 --value-size 8 --format cuckoo --data-dir "$work/data" --table bench
rm -f "$work/records.bin" "$work/records.tsv"
start roost "roost-server: ready: " "${pin_server[@]}" "$bin/server/roost-server" \
  --data-dir "$work/data" --listen 127.0.0.1:0 --admin-listen '' --metrics-listen '' \
  --drain-period 0 --shutdown-timeout 1 --redis-listen 127.0.0.1:0 --redis-table bench
roost_pid=$pid
roost_grpc=$(port_of roost "roost-server: lookup service")
roost_redis=$(port_of roost "roost-server: Redis front end")
start noop "noop_server: listening on " "${pin_server[@]}" "$bin/bench/noop_server" \
  --listen 127.0.0.1:0
noop_pid=$pid
noop_port=$(port_of noop "noop_server:")
redis_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start redis "Ready to accept connections" "${pin_server[@]}" redis-server --bind 127.0.0.1 \
  --port "$redis_port" --save '' --appendonly no --protected-mode no --dir "$work" --logfile ''
redis_pid=$pid
"${pin_load[@]}" "$bin/bench/redis_load" fill --addr "127.0.0.1:$redis_port" --keys "$keys" \
  --seed 20261122 >/dev/null || die "loading Redis failed"

# The systems: NAME, then the command that loads it (without --rate).
window=(--keys "$keys" --seed 20261122 --duration "$duration" --warmup "$warmup")
declare -A command
command["roost, Redis GET"]="$bin/bench/redis_load run --addr 127.0.0.1:$roost_redis --method get --connections $connections --server-pid $roost_pid"
command["Redis GET"]="$bin/bench/redis_load run --addr 127.0.0.1:$redis_port --method get --connections $connections --server-pid $redis_pid"
command["roost, gRPC Get"]="$bin/bench/server_load --addr 127.0.0.1:$roost_grpc --table bench --method get --channels 4 --concurrency $connections --server-pid $roost_pid"
command["no-op gRPC server, Get"]="$bin/bench/server_load --addr 127.0.0.1:$noop_port --table bench --method get --channels 4 --concurrency $connections --server-pid $noop_pid --check size"
command["roost, Redis MGET 100"]="$bin/bench/redis_load run --addr 127.0.0.1:$roost_redis --method mget --batch 100 --connections $connections --server-pid $roost_pid"
command["Redis MGET 100"]="$bin/bench/redis_load run --addr 127.0.0.1:$redis_port --method mget --batch 100 --connections $connections --server-pid $redis_pid"
systems=("roost, Redis GET" "Redis GET" "roost, gRPC Get" "no-op gRPC server, Get"
  "roost, Redis MGET 100" "Redis MGET 100")
open_systems=("roost, Redis GET" "Redis GET" "roost, gRPC Get")

results=$work/results.jsonl
: >"$results"
# run SYSTEM ROUND PCT [--rate R]: one run, its JSON line labelled.
run() {
  local system=$1 round=$2 pct=$3 line cmd
  shift 3
  cmd=${command[$system]}
  # server_load's open loop has as many calls in flight as the rate makes.
  [ "$pct" = 100 ] || cmd=${cmd/--concurrency $connections/}
  # shellcheck disable=SC2086 # the command is words
  line=$("${pin_load[@]}" $cmd "${window[@]}" "$@" 2>"$work/load.err") ||
    die "$system failed: $line $(cat "$work/load.err")"
  python3 -c 'import json, sys
d = json.loads(sys.argv[1]); d.update(system=sys.argv[2], round=int(sys.argv[3]), load_pct=int(sys.argv[4]))
print(json.dumps(d))' "$line" "$system" "$round" "$pct" >>"$results"
  echo "  $system${4:+ at $pct%}: $(tail -n 1 "$results" | head -c 160)" >&2
}

echo "redis_front_bench: $placement; closed loop, $rounds rounds..." >&2
n=${#systems[@]}
for round in $(seq "$rounds"); do
  for k in $(seq 0 $((n - 1))); do
    run "${systems[$(( (k + round) % n ))]}" "$round" 100
  done
done
echo "redis_front_bench: open loop at 50% and 75% of each one's median maximum..." >&2
for pct in 50 75; do
  for system in "${open_systems[@]}"; do
    rate=$(python3 -c 'import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
qps = [r["qps"] for r in rows if r["system"] == sys.argv[2] and r["load_pct"] == 100]
print(max(1, int(statistics.median(qps) * int(sys.argv[3]) / 100)))' "$results" "$system" "$pct")
    run "$system" 1 "$pct" --rate "$rate"
  done
done
[ -z "$out" ] || cp "$results" "$out"

echo
echo "Single-key lookups from plain clients: $keys keys (8-byte keys and values), $connections requests in flight, $placement; ${duration} s runs; $(date -u '+%Y-%m-%d %H:%M UTC'), at $(measured_rev "$repo")"
python3 - "$results" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = lambda xs: statistics.median(xs) if xs else float("nan")
closed = {}
for r in rows:
    if r["load_pct"] == 100:
        closed.setdefault(r["system"], []).append(r)
print("\n| system | requests/s (median; runs) | M keys/s | p50 µs | p99 µs | server CPU µs per request | per key |")
print("| --- | --- | --- | --- | --- | --- | --- |")
summary = {}
for s, rs in closed.items():
    q = med([r["qps"] for r in rs]); k = med([r["keys_per_s"] for r in rs])
    cpu_key = med([r["server_cpu_us_per_key"] for r in rs])
    batch = rs[0].get("batch", 1)
    summary[s] = dict(qps=q, cpu=cpu_key * batch, p99=med([r["p99_us"] for r in rs]))
    runs = ", ".join(f"{r['qps']:,.0f}" for r in rs)
    print(f"| {s} | {q:,.0f} ({runs}) | {k / 1e6:.3f} | "
          f"{med([r['p50_us'] for r in rs]):.0f} | {med([r['p99_us'] for r in rs]):.0f} | "
          f"{cpu_key * batch:.2f} | {cpu_key:.3f} |")
print("\n| load | system | offered/s | achieved/s | p50 µs | p99 µs | p99.9 µs | dropped |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
openl = [r for r in rows if r["load_pct"] != 100]
for r in openl:
    print(f"| {r['load_pct']}% | {r['system']} | {r.get('offered_qps', 0):,.0f} | {r['qps']:,.0f} | "
          f"{r['p50_us']:.0f} | {r['p99_us']:.0f} | {r.get('p999_us', 0):.0f} | {r.get('dropped', 0)} |")
print()
def ratio(a, b, f):
    return summary[a][f] / summary[b][f] if a in summary and b in summary else float("nan")
print(f"roost's Redis GET against Redis GET: {ratio('roost, Redis GET', 'Redis GET', 'qps'):.2f}x the "
      f"requests/s (target >= 0.8x), {ratio('roost, Redis GET', 'Redis GET', 'cpu'):.2f}x the server "
      f"CPU per lookup (target <= 1.5x)")
print(f"roost's gRPC Get against Redis GET: {ratio('roost, gRPC Get', 'Redis GET', 'qps'):.2f}x the "
      f"requests/s, {ratio('roost, gRPC Get', 'Redis GET', 'cpu'):.2f}x the server CPU per lookup; "
      f"against the no-op gRPC server: {ratio('roost, gRPC Get', 'no-op gRPC server, Get', 'cpu'):.2f}x "
      f"the CPU per call")
print(f"MGET of 100: roost {ratio('roost, Redis MGET 100', 'Redis MGET 100', 'qps'):.2f}x Redis's "
      f"keys/s, {ratio('roost, Redis MGET 100', 'Redis MGET 100', 'cpu'):.2f}x its server CPU per key")
by = {(r["system"], r["load_pct"]): r for r in openl}
for pct, target in ((50, 1.5), (75, 2.0)):
    a, b, g = by.get(("roost, Redis GET", pct)), by.get(("Redis GET", pct)), by.get(("roost, gRPC Get", pct))
    if a and b:
        print(f"open loop at {pct}%: p99 roost Redis GET {a['p99_us']:.0f} us, Redis {b['p99_us']:.0f} us: "
              f"{a['p99_us'] / b['p99_us']:.2f}x (target <= {target}x)"
              + (f"; roost gRPC Get {g['p99_us']:.0f} us, {g['p99_us'] / b['p99_us']:.2f}x" if g else ""))
EOF
