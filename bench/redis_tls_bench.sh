#!/usr/bin/env bash
# What TLS costs the Redis protocol: roost-server's Redis front end
# (--redis-listen, with and without --tls-cert) against redis-server (its
# --port and --tls-port), read by one independent client, redis-benchmark
# (Debian's redis-tools, built with TLS: hiredis 0.14, which bench/redis_load
# uses, has none). Servers pinned to core 0, redis-benchmark to core 1
# (taskset). The same pairs everywhere: keys key:000000000000 ... (the
# names redis-benchmark's -r makes) and 100-byte values, a cuckoo table in
# roost, the same pairs SET into Redis.
#
# Each run: GET of random keys (-r), --connections connections, one request
# in flight on each (no pipelining), --requests requests; the four systems
# take turns in an order that rotates each round. Reported: medians of
# requests/s, p50 and p99 (redis-benchmark's --csv), and the server's CPU
# per request (user + system time from /proc/PID/stat over the run), then
# the ratios: roost to Redis, plaintext and TLS, and TLS to plaintext for
# each. A fresh TLS connection per client is made once per run, so this is
# TLS's cost per request on open connections, not per handshake.
#
# Usage: bench/redis_tls_bench.sh [--keys N] [--requests N] [--rounds R]
#            [--connections C] [--smoke] [--no-build]
#   --keys N         pairs (default 100000)
#   --requests N     requests per run (default 300000)
#   --rounds R       rounds (default 3)
#   --connections C  connections (default 64)
#   --smoke          2,000 pairs, one round of 5,000 requests: checks that
#                    it runs (every system answers GET with its value)
#   --no-build       use $ROOST_BUILD_DIR (default build/release) as it is
# Example: bench/redis_tls_bench.sh --rounds 3
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

keys=100000
requests=300000
rounds=3
connections=64
build=1
die() { echo "redis_tls_bench: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --keys) keys=${2:?}; shift 2 ;;
    --requests) requests=${2:?}; shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    --connections) connections=${2:?}; shift 2 ;;
    --smoke) keys=2000 requests=5000 rounds=1; shift ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
for tool in redis-server redis-benchmark redis-cli openssl; do
  command -v "$tool" >/dev/null || die "$tool is not installed"
done

bin=${ROOST_BUILD_DIR:-$repo/build/release}
if [ "$build" = 1 ]; then
  bin=$repo/$(scripts/build.sh roost-server roost-load | tail -n 1)
fi
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
bench_setup redis-tls-bench

echo "redis_tls_bench: $keys pairs, a CA and a server certificate..." >&2
pki=$work/pki
mkdir -p "$pki"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=bench-ca \
  -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=localhost \
  -keyout "$pki/server.key" -out "$pki/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$pki/ext"
openssl x509 -req -in "$pki/server.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
  -CAcreateserial -days 2 -extfile "$pki/ext" -out "$pki/server.crt" 2>/dev/null
value=$(printf 'v%.0s' $(seq 100))
python3 - "$keys" "$value" "$work" <<'EOF'
import sys
n, value, work = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(f"{work}/pairs.tsv", "w") as tsv, open(f"{work}/pairs.resp", "w") as resp:
    for i in range(n):
        key = f"key:{i:012d}"
        tsv.write(f"{key}\t{value}\n")
        resp.write(f"*3\r\n$3\r\nSET\r\n${len(key)}\r\n{key}\r\n${len(value)}\r\n{value}\r\n")
EOF
"$bin/loader/roost-load" build -q -i "$work/pairs.tsv" --format cuckoo \
  --data-dir "$work/data" --table bench

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
roost_flags=(--data-dir "$work/data" --listen 127.0.0.1:0 --admin-listen '' --metrics-listen ''
  --drain-period 0 --shutdown-timeout 1 --redis-listen 127.0.0.1:0 --redis-table bench)
start roost "roost-server: ready: " "${pin_server[@]}" "$bin/server/roost-server" "${roost_flags[@]}"
roost_pid=$pid
roost_port=$(port_of roost "roost-server: Redis front end")
start roost_tls "roost-server: ready: " "${pin_server[@]}" "$bin/server/roost-server" \
  "${roost_flags[@]}" --tls-cert "$pki/server.crt" --tls-key "$pki/server.key"
roost_tls_pid=$pid
roost_tls_port=$(port_of roost_tls "roost-server: Redis front end")
redis_port=$(free_port)
redis_tls_port=$(free_port)
start redis "Ready to accept connections" "${pin_server[@]}" redis-server --bind 127.0.0.1 \
  --port "$redis_port" --tls-port "$redis_tls_port" --tls-cert-file "$pki/server.crt" \
  --tls-key-file "$pki/server.key" --tls-ca-cert-file "$pki/ca.crt" --tls-auth-clients no \
  --save '' --appendonly no --protected-mode no --dir "$work" --logfile ''
redis_pid=$pid
redis-cli -p "$redis_port" --pipe <"$work/pairs.resp" >/dev/null || die "loading Redis failed"
rm -f "$work/pairs.tsv" "$work/pairs.resp"

tls=(--tls --cacert "$pki/ca.crt")
declare -A port pid_of flags
port["roost"]=$roost_port; pid_of["roost"]=$roost_pid; flags["roost"]=""
port["roost, TLS"]=$roost_tls_port; pid_of["roost, TLS"]=$roost_tls_pid; flags["roost, TLS"]="${tls[*]}"
port["Redis"]=$redis_port; pid_of["Redis"]=$redis_pid; flags["Redis"]=""
port["Redis, TLS"]=$redis_tls_port; pid_of["Redis, TLS"]=$redis_pid; flags["Redis, TLS"]="${tls[*]}"
systems=("roost" "roost, TLS" "Redis" "Redis, TLS")

# Every system answers the last key with its value before any run.
last=$(printf 'key:%012d' $((keys - 1)))
for system in "${systems[@]}"; do
  # shellcheck disable=SC2086 # the flags are words
  got=$(redis-cli -p "${port[$system]}" ${flags[$system]} GET "$last")
  [ "$got" = "$value" ] || die "$system answered GET $last with '$got'"
done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
results=$work/results.csv
: >"$results"
echo "redis_tls_bench: $placement; $rounds rounds of $requests GETs over $connections connections..." >&2
n=${#systems[@]}
for round in $(seq "$rounds"); do
  for k in $(seq 0 $((n - 1))); do
    system=${systems[$(( (k + round) % n ))]}
    before=$(cpu_ticks "${pid_of[$system]}")
    # shellcheck disable=SC2086 # the flags are words
    line=$("${pin_load[@]}" redis-benchmark -h 127.0.0.1 -p "${port[$system]}" ${flags[$system]} \
      -c "$connections" -n "$requests" -r "$keys" --csv GET 'key:__rand_int__' | tail -n 1)
    after=$(cpu_ticks "${pid_of[$system]}")
    echo "\"$system\",$round,$((after - before)),$line" >>"$results"
    echo "  $system: $line" >&2
  done
done

echo
echo "The Redis protocol with and without TLS: $keys pairs (100-byte values), redis-benchmark GET of random keys, $connections connections, $requests requests a run, $rounds rounds, $placement; $(date -u '+%Y-%m-%d %H:%M UTC'), at $(measured_rev "$repo")"
python3 - "$results" "$requests" "$(getconf CLK_TCK)" <<'EOF'
import csv, statistics, sys
requests, hz = int(sys.argv[2]), int(sys.argv[3])
rows = {}
for r in csv.reader(open(sys.argv[1])):
    # system, round, server ticks, then redis-benchmark's "test","rps",
    # "avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms",
    # "p99_latency_ms","max_latency_ms"
    rows.setdefault(r[0], []).append(
        dict(rps=float(r[4]), p50=float(r[7]) * 1000, p99=float(r[9]) * 1000,
             cpu=int(r[2]) / hz / requests * 1e6))
med = {s: {f: statistics.median(x[f] for x in rs) for f in ("rps", "p50", "p99", "cpu")}
       for s, rs in rows.items()}
print("\n| system | requests/s (median; runs) | p50 µs | p99 µs | server CPU µs per request |")
print("| --- | --- | --- | --- | --- |")
for s, rs in rows.items():
    runs = ", ".join(f"{x['rps']:,.0f}" for x in rs)
    m = med[s]
    print(f"| {s} | {m['rps']:,.0f} ({runs}) | {m['p50']:.0f} | {m['p99']:.0f} | {m['cpu']:.2f} |")
print()
for a, b in (("roost", "Redis"), ("roost, TLS", "Redis, TLS")):
    print(f"{a} against {b}: {med[a]['rps'] / med[b]['rps']:.2f}x the requests/s, "
          f"{med[a]['cpu'] / med[b]['cpu']:.2f}x the server CPU per request, "
          f"{med[a]['p99'] / med[b]['p99']:.2f}x the p99")
for s in ("roost", "Redis"):
    t = s + ", TLS"
    print(f"TLS in {s}: {med[t]['rps'] / med[s]['rps']:.2f}x the requests/s of plaintext, "
          f"{med[t]['cpu'] / med[s]['cpu']:.2f}x the server CPU per request")
EOF
