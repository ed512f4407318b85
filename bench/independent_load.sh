#!/usr/bin/env bash
# Single-key lookups measured by load generators roost did not write: the
# tools another team would reach for, as a check on bench/redis_load and
# bench/server_load (bench/redis_front_bench.sh).
#   redis-benchmark (Redis's own): GET of random keys, closed loop, against
#     redis-server and against roost-server's Redis front end, the same
#     command bytes to both ("GET rb:<12 digits>");
#   ghz (github.com/bojand/ghz): roost-server's unary gRPC Get of the same
#     keys, closed loop, then at fixed rates of 50% and 75% of its own
#     closed-loop maximum (-r: ghz paces request starts and times each from
#     its send, so a stall delays later requests instead of counting against
#     them: its open loop is gentler than bench/open_loop.h's).
# The keys are redis-benchmark's (-r N): the 12-digit numbers 0..N-1, each
# with a 100-byte value, in roost table "rb" (cuckoo) and in Redis as
# "rb:<key>". Servers run pinned to core 0 and generators to core 1
# (taskset). Server CPU is the server's user + system time over each run
# (/proc/PID/stat, so the generator's start-up counts as idle time of the
# server). Answers: redis-benchmark and ghz check none, so 1,000 keys are
# read through each server first and compared with the values written;
# ghz's runs must end all OK (but for the calls its own end of run cuts).
#
# Usage: bench/independent_load.sh [--keys N] [--requests R] [--duration S]
#            [--connections C] [--smoke] [--no-build]
#   --keys N         keys (default 1000000)
#   --requests R     redis-benchmark requests per run (default 2000000)
#   --duration S     ghz seconds per run (default 10)
#   --connections C  redis-benchmark connections and ghz workers (default 64;
#                    ghz spreads its workers over 4 connections)
#   --smoke          10,000 keys and short runs: checks that it runs
#   --no-build       use $ROOST_BUILD_DIR (default build/release) as it is
# Needs redis-server, redis-benchmark, redis-cli and ghz (go install
# github.com/bojand/ghz/cmd/ghz@v0.120.0; looked for on PATH and in
# ~/go/bin).
# Example: bench/independent_load.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

keys=1000000
requests=2000000
duration=10
connections=64
build=1
die() { echo "independent_load: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --keys) keys=${2:?}; shift 2 ;;
    --requests) requests=${2:?}; shift 2 ;;
    --duration) duration=${2:?}; shift 2 ;;
    --connections) connections=${2:?}; shift 2 ;;
    --smoke) keys=10000 requests=20000 duration=1; shift ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
PATH=$PATH:$HOME/go/bin
for tool in redis-server redis-benchmark redis-cli ghz; do
  command -v "$tool" >/dev/null || die "$tool is not installed (see --help)"
done

bin=${ROOST_BUILD_DIR:-$repo/build/release}
if [ "$build" = 1 ]; then
  bin=$repo/$(scripts/build.sh roost-server roost-load | tail -n 1)
fi
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
bench_setup independent-load
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

echo "independent_load: $keys keys with 100-byte values, roost and Redis..." >&2
# Key i is "%012d" (redis-benchmark's __rand_int__); its value is the key
# over and over, 100 bytes, so a value read for the wrong key shows.
awk -v n="$keys" 'BEGIN {
  for (i = 0; i < n; i++) {
    k = sprintf("%012d", i)
    printf "%s\t%s\n", k, substr(k k k k k k k k k, 1, 100)
  }
}' >"$work/pairs.tsv"
"$bin/loader/roost-load" build -q -i "$work/pairs.tsv" --format cuckoo \
  --data-dir "$work/data" --table rb
start roost "roost-server: ready: " "${pin_server[@]}" "$bin/server/roost-server" \
  --data-dir "$work/data" --listen 127.0.0.1:0 --admin-listen '' --metrics-listen '' \
  --drain-period 0 --shutdown-timeout 1 --redis-listen 127.0.0.1:0
roost_pid=$pid
roost_grpc=$(port_of roost "roost-server: lookup service")
roost_redis=$(port_of roost "roost-server: Redis front end")
redis_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start redis "Ready to accept connections" "${pin_server[@]}" redis-server --bind 127.0.0.1 \
  --port "$redis_port" --save '' --appendonly no --protected-mode no --dir "$work" --logfile ''
redis_pid=$pid
awk -F '\t' '{ printf "*3\r\n$3\r\nSET\r\n$15\r\nrb:%s\r\n$%d\r\n%s\r\n", $1, length($2), $2 }' \
  "$work/pairs.tsv" | redis-cli -p "$redis_port" --pipe >"$work/fill.out" ||
  die "loading Redis failed: $(cat "$work/fill.out")"

# The same 1,000 keys (and one missing) through both Redis protocols and
# the values written.
python3 - "$work/pairs.tsv" "$keys" >"$work/check.keys" <<'EOF'
import random, sys
n = int(sys.argv[2])
for i in random.Random(1).sample(range(n), min(n, 1000)):
    print(f"{i:012d}")
EOF
for port in "$roost_redis" "$redis_port"; do
  sed 's/^/GET rb:/' "$work/check.keys" | redis-cli -p "$port" >"$work/check.$port"
done
python3 - "$work" "$roost_redis" "$redis_port" <<'EOF' || die "an answer differs from the values written"
import sys
work, roost, redis = sys.argv[1:]
keys = open(f"{work}/check.keys").read().split()
want = [(k * 9)[:100] for k in keys]
for name, port in (("roost-server's Redis front end", roost), ("redis-server", redis)):
    got = open(f"{work}/check.{port}").read().split("\n")[: len(keys)]
    bad = [k for k, g, w in zip(keys, got, want) if g != w]
    if len(got) != len(keys) or bad:
        sys.exit(f"{name}: {len(bad)} of {len(keys)} keys answered wrong, e.g. {bad[:3]}")
EOF

results=$work/results.jsonl
: >"$results"
# record SYSTEM TOOL LOAD QPS P50_US P99_US CPU_TICKS REQUESTS
record() {
  python3 -c 'import json, os, sys
s, tool, load, qps, p50, p99, ticks, n = sys.argv[1:]
hz = os.sysconf("SC_CLK_TCK")
print(json.dumps(dict(system=s, tool=tool, load=load, qps=float(qps), p50_us=float(p50),
    p99_us=float(p99), server_cpu_us_per_request=int(ticks) / hz * 1e6 / max(1, float(n)))))' "$@" \
    >>"$results"
  echo "  $1, $2 $3: $(tail -n 1 "$results")" >&2
}

# redis-benchmark SYSTEM PORT PID
bench_redis() {
  local system=$1 port=$2 server=$3 before after line
  before=$(cpu_ticks "$server")
  line=$("${pin_load[@]}" redis-benchmark -h 127.0.0.1 -p "$port" -c "$connections" \
    -n "$requests" -r "$keys" --csv GET "rb:__rand_int__" | tail -n 1)
  after=$(cpu_ticks "$server")
  # "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",
  # "p95_latency_ms","p99_latency_ms","max_latency_ms"
  IFS=, read -r _ rps _ _ p50 _ p99 _ <<<"${line//\"/}"
  [ -n "$p99" ] || die "redis-benchmark printed no result for $system: $line"
  record "$system" redis-benchmark closed "$rps" "$(echo "$p50 * 1000" | bc)" \
    "$(echo "$p99 * 1000" | bc)" "$((after - before))" "$requests"
}

# The ghz requests: 10,000 Gets of random keys, round robin.
python3 - "$keys" >"$work/requests.json" <<'EOF'
import base64, json, random, sys
n = int(sys.argv[1])
r = random.Random(2)
print(json.dumps([{"table": "rb", "key": base64.b64encode(f"{r.randrange(n):012d}".encode()).decode()}
                  for _ in range(10000)]))
EOF
# ghz_run SYSTEM LOAD [--rps R]
ghz_run() {
  local system=$1 load=$2 before after
  shift 2
  before=$(cpu_ticks "$roost_pid")
  "${pin_load[@]}" ghz --insecure --proto "$repo/proto/roost/v1/lookup.proto" \
    --import-paths "$repo/proto" --call roost.v1.Lookup/Get -D "$work/requests.json" \
    -c "$connections" --connections 4 -z "${duration}s" --format json "$@" \
    "127.0.0.1:$roost_grpc" >"$work/ghz.json" 2>"$work/ghz.err" ||
    die "ghz failed: $(cat "$work/ghz.err")"
  after=$(cpu_ticks "$roost_pid")
  if ! python3 - "$work/ghz.json" "$connections" >"$work/ghz.fields" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
codes = d.get("statusCodeDistribution", {})
errors = d.get("errorDistribution") or {}
# When its time is up, ghz closes its connections under the calls still in
# flight, and counts each as an error: at most one per worker, and only that
# error. Any other is a failure.
cut = sum(n for e, n in errors.items() if "use of closed network connection" in e
          or "the client connection is closing" in e)
if cut != sum(errors.values()) or cut > int(sys.argv[2]) or codes.get("OK", 0) == 0 or \
        set(codes) - {"OK", "Unavailable", "Canceled"}:
    sys.exit(f"calls not all OK: {codes} {errors}")
p = {int(x["percentage"]): x["latency"] / 1000 for x in d["latencyDistribution"]}
print(d["rps"], p[50], p[99], codes["OK"])
EOF
  then
    die "ghz: $(cat "$work/ghz.fields")"
  fi
  local rps p50 p99 count
  read -r rps p50 p99 count <"$work/ghz.fields"
  record "$system" ghz "$load" "$rps" "$p50" "$p99" "$((after - before))" "$count"
}

echo "independent_load: $placement" >&2
bench_redis "Redis GET" "$redis_port" "$redis_pid"
bench_redis "roost, Redis GET" "$roost_redis" "$roost_pid"
bench_redis "Redis GET" "$redis_port" "$redis_pid"
bench_redis "roost, Redis GET" "$roost_redis" "$roost_pid"
ghz_run "roost, gRPC Get" closed
max=$(python3 -c 'import json, sys
print(max(json.loads(l)["qps"] for l in open(sys.argv[1]) if json.loads(l)["tool"] == "ghz"))' "$results")
for pct in 50 75; do
  ghz_run "roost, gRPC Get" "$pct%" --rps "$(python3 -c "print(max(1, int($max * $pct / 100)))")"
done

echo
echo "Independent load generators: $keys keys (12-digit keys, 100-byte values), $connections connections or workers, $placement; $(date -u '+%Y-%m-%d %H:%M UTC'), at $(measured_rev "$repo")"
python3 - "$results" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("\n| system | tool | load | requests/s | p50 µs | p99 µs | server CPU µs per request |")
print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
for r in rows:
    print(f"| {r['system']} | {r['tool']} | {r['load']} | {r['qps']:,.0f} | {r['p50_us']:.0f} | "
          f"{r['p99_us']:.0f} | {r['server_cpu_us_per_request']:.2f} |")
med = lambda s, f: statistics.median(r[f] for r in rows if r["system"] == s and r["tool"] == "redis-benchmark")
a, b = "roost, Redis GET", "Redis GET"
print(f"\nredis-benchmark, medians: roost's Redis GET {med(a, 'qps') / med(b, 'qps'):.2f}x Redis GET's "
      f"requests/s, {med(a, 'server_cpu_us_per_request') / med(b, 'server_cpu_us_per_request'):.2f}x "
      f"its server CPU per request, {med(a, 'p99_us') / med(b, 'p99_us'):.2f}x its p99")
EOF
