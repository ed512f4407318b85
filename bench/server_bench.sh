#!/usr/bin/env bash
# roost-server under load, over loopback: unary Get and MultiGet of 10, 100
# and 1000 keys against a cuckoo table of N keys (default 10M), and the same
# client against bench/noop_server, which answers every key with a value of
# the same size without looking anything up: the gRPC ceiling on this
# machine. A second roost-server, with its Prometheus endpoint on (and
# scraped every second during its runs), shows what serving /metrics costs.
# (Both count every lookup: the counting itself is measured in-process by
# bench/metrics_bench.cc against prometheus-cpp's own counters.)
#
# Data: gen_records's pairs (8-byte keys, 8-byte values; the same generator
# and seed as bench/load_bench.sh), built with `roost-load build --format
# cuckoo` and published into a data directory. server_load computes the same
# keys from the seed, draws them uniformly at random, and checks every
# answer (found, and the key's own value; for the no-op server, a value of
# 8 bytes); a run with a failed RPC or a wrong answer fails the script.
#
# Load: bench/server_load.cc, gRPC's callback client API, --channels
# connections, --concurrency RPCs in flight in total, --warmup seconds of load
# then --duration measured seconds; the client runs on the same machine as the
# servers, with no CPU pinning. Server CPU is the server process's user +
# system time (/proc/PID/stat) over the measured window. The table, its
# ratios and the targets are bench/server_bench_report.py's. If ghz is on
# PATH or in ~/go/bin, it measures roost's and the no-op server's Get as a
# second opinion (one fixed key, the same connections and concurrency); it
# can be installed with
#   GOFLAGS=-mod=mod go install github.com/bojand/ghz/cmd/ghz@v0.120.0
#
# Usage: bench/server_bench.sh [--keys N] [--quick] [--duration S]
#            [--warmup S] [--channels C] [--concurrency K] [--dir DIR]
#            [--seed S] [--no-build] [--keep]
#   --keys N         keys in the table (default 10000000; 100000 with --quick)
#   --quick          a smoke test: 100,000 keys, 2-second runs after 1 second
#                    of warm-up (explicit --keys, --duration, --warmup win)
#   --duration S     measured seconds per run (default 10)
#   --warmup S       seconds of load before each measurement (default 2)
#   --channels C     gRPC connections of the client (default 4)
#   --concurrency K  RPCs in flight, in total (default 64)
#   --dir DIR        where the data goes (default $ROOST_SERVER_BENCH_DIR or
#                    /tmp/roost-server-bench); emptied first, so it must be
#                    new, empty or made by this script
#   --seed S         generator seed (default 20261122)
#   --no-build       use the binaries already in $ROOST_BUILD_DIR (default
#                    build/release) instead of running scripts/build.sh
#   --keep           keep DIR afterwards
# Exits non-zero when a build, a server or a load run fails (a missed target
# is reported, not an error).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
keys=
duration=
warmup=
quick=0
channels=4
concurrency=64
dir="${ROOST_SERVER_BENCH_DIR:-/tmp/roost-server-bench}"
seed=20261122
build=1
keep=0
table=bench

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() {
  echo "server_bench: $*" >&2
  exit 1
}
# needs_value FLAG ARGC: dies unless the flag has a value after it.
needs_value() { [ "$2" -ge 2 ] || die "$1 needs a value"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --keys | --duration | --warmup | --channels | --concurrency | --dir | --seed)
      needs_value "$1" $#
      declare "${1#--}=$2"
      shift 2
      ;;
    --keys=* | --duration=* | --warmup=* | --channels=* | --concurrency=* | --dir=* | --seed=*)
      flag="${1%%=*}"
      declare "${flag#--}=${1#*=}"
      shift
      ;;
    --quick)
      quick=1
      shift
      ;;
    --no-build)
      build=0
      shift
      ;;
    --keep)
      keep=1
      shift
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
if [ "$quick" = 1 ]; then
  keys="${keys:-100000}"
  duration="${duration:-2}"
  warmup="${warmup:-1}"
fi
keys="${keys:-10000000}"
duration="${duration:-10}"
warmup="${warmup:-2}"
[[ "$keys" =~ ^[1-9][0-9]*$ ]] || die "--keys must be a positive integer, not '$keys'"
[[ "$seed" =~ ^[0-9]+$ ]] || die "--seed must be a non-negative integer, not '$seed'"
[[ "$channels" =~ ^[1-9][0-9]*$ ]] || die "--channels must be a positive integer"
[[ "$concurrency" =~ ^[1-9][0-9]*$ ]] || die "--concurrency must be a positive integer"
[[ "$duration" =~ ^[0-9]+(\.[0-9]+)?$ ]] && [ "$duration" != 0 ] ||
  die "--duration must be a positive number of seconds"
[[ "$warmup" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--warmup must be a number of seconds"
[ -n "$dir" ] && [ "$dir" != "/" ] || die "refusing --dir '$dir'"

# --- binaries ---------------------------------------------------------------
bin_dir="${ROOST_BUILD_DIR:-$repo/build/release}"
if [ "$build" = 1 ]; then
  echo "building roost-server, roost-load and the load tools (release)..." >&2
  bin_dir="$repo/$("$repo/scripts/build.sh" roost-server roost-load gen_records \
    server_load noop_server | tail -n 1)"
fi
roost_server="$bin_dir/server/roost-server"
roost_load="$bin_dir/loader/roost-load"
gen="$bin_dir/bench/gen_records"
server_load="$bin_dir/bench/server_load"
noop_server="$bin_dir/bench/noop_server"
for b in "$roost_server" "$roost_load" "$gen" "$server_load" "$noop_server"; do
  [ -x "$b" ] || die "missing $b (build it, or drop --no-build)"
done
report="$repo/bench/server_bench_report.py"
ghz=$(command -v ghz || true)
if [ -z "$ghz" ] && [ -x "$HOME/go/bin/ghz" ]; then ghz="$HOME/go/bin/ghz"; fi

# --- cleanup ----------------------------------------------------------------
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [ "$keep" = 0 ]; then
    chmod -R u+w "$dir" 2>/dev/null || true # read-only versions
    rm -rf "$dir"
  fi
}
trap cleanup EXIT

# --- data -------------------------------------------------------------------
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)
marker=.roost-server-bench
if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ] && [ ! -e "$dir/$marker" ]; then
  keep=1 # not ours: leave it alone on exit too
  die "$dir is not empty and was not made by this script; give another --dir"
fi
# Published versions are read-only (0555): make them writable to remove them.
chmod -R u+w "$dir" 2>/dev/null || true
rm -rf "$dir"
mkdir -p "$dir/data"
touch "$dir/$marker"
echo "generating $keys pairs (seed $seed) and building a cuckoo table..." >&2
"$gen" "$keys" "$seed" "$dir"
"$roost_load" build -q -i "$dir/records.bin" --input-format fixed --key-size 8 \
  --value-size 8 --format cuckoo --data-dir "$dir/data" --table "$table"
# server_load computes the keys itself; ghz needs one, from the probes.
probe_hex=$(awk '$1 == "hit" { print $2; exit }' "$dir/probes.txt")
rm -f "$dir/records.bin" "$dir/records.tsv"

# --- servers ----------------------------------------------------------------
# start NAME PATTERN COMMAND...: starts COMMAND in the background with its
# stderr in $dir/NAME.log, waits (up to 10 minutes) for a line matching the
# extended regex PATTERN, and sets $started_pid.
start() {
  local name="$1" pattern="$2" log="$dir/$1.log" waited=0
  shift 2
  "$@" 2>"$log" &
  started_pid=$!
  pids+=("$started_pid")
  until grep -Eq "$pattern" "$log"; do
    if ! kill -0 "$started_pid" 2>/dev/null; then
      cat "$log" >&2
      die "$name exited during start-up"
    fi
    [ "$waited" -lt 6000 ] || die "$name not ready after 10 minutes (see $log)"
    sleep 0.1
    waited=$((waited + 1))
  done
}
# port_of LOG PREFIX: the port of LOG's line "PREFIX HOST:PORT".
port_of() { sed -n "s/^$2 .*:\([0-9]*\)\$/\1/p" "$1" | head -n 1; }

server_args=(--data-dir "$dir/data" --listen 127.0.0.1:0 --admin-listen ''
  --drain-period 0 --shutdown-timeout 1)
echo "starting noop_server and two roost-servers (metrics off, on)..." >&2
start noop "listening on" "$noop_server" --listen 127.0.0.1:0 --value-size 8
noop_pid=$started_pid
noop_port=$(port_of "$dir/noop.log" "noop_server: listening on")
start roost "roost-server: ready: " "$roost_server" "${server_args[@]}" --metrics-listen ''
roost_pid=$started_pid
roost_port=$(port_of "$dir/roost.log" "roost-server: lookup service listening on")
start roost-metrics "roost-server: ready: " "$roost_server" "${server_args[@]}" \
  --metrics-listen 127.0.0.1:0
metrics_pid=$started_pid
metrics_port=$(port_of "$dir/roost-metrics.log" "roost-server: lookup service listening on")
metrics_http=$(port_of "$dir/roost-metrics.log" "roost-server: metrics listening on")
for log in roost roost-metrics; do
  grep -q "^roost-server: serving $table v000001 (cuckoo, $keys keys)" "$dir/$log.log" ||
    die "$log does not serve $table with $keys keys: $(cat "$dir/$log.log")"
done

# --- runs -------------------------------------------------------------------
# run LABEL PORT PID CHECK METHOD BATCH: one server_load run; appends
# "LABEL JSON" to $dir/results (bench/server_bench_report.py reads it), or
# records the failure.
: >"$dir/results"
failures=()
run() {
  local label="$1" port="$2" pid="$3" check="$4" method="$5" batch="$6" out rc=0
  echo "running $label $method x$batch..." >&2
  out=$("$server_load" --addr "127.0.0.1:$port" --table "$table" --method "$method" \
    --batch "$batch" --keys "$keys" --seed "$seed" --check "$check" \
    --channels "$channels" --concurrency "$concurrency" --duration "$duration" \
    --warmup "$warmup" --server-pid "$pid" 2>"$dir/load.err") || rc=$?
  echo "$label $out" >>"$dir/load.json"
  echo "  $out" >&2
  if [ "$rc" != 0 ] || [ -z "$out" ]; then
    cat "$dir/load.err" >&2
    failures+=("$label $method x$batch (exit $rc)")
    return
  fi
  echo "$label $out" >>"$dir/results"
}
# Scrapes roost-metrics' /metrics every second while it runs.
scrape_pid=
scrape_start() {
  command -v curl >/dev/null || return 0
  while sleep 1; do
    curl -s -o /dev/null "http://127.0.0.1:$metrics_http/metrics" || true
  done &
  scrape_pid=$!
  pids+=("$scrape_pid")
}
scrape_stop() {
  [ -n "$scrape_pid" ] || return 0
  kill "$scrape_pid" 2>/dev/null || true
  wait "$scrape_pid" 2>/dev/null || true
  scrape_pid=
}

# Interleaved, so that drift in the machine's speed touches both sides of a
# ratio alike.
for mb in get:1 multiget:10 multiget:100 multiget:1000; do
  method=${mb%:*}
  batch=${mb#*:}
  run noop "$noop_port" "$noop_pid" size "$method" "$batch"
  run roost "$roost_port" "$roost_pid" full "$method" "$batch"
  if [ "$batch" = 1 ] || [ "$batch" = 1000 ]; then
    scrape_start
    run roost+metrics "$metrics_port" "$metrics_pid" full "$method" "$batch"
    scrape_stop
  fi
done

curl -s "http://127.0.0.1:$metrics_http/metrics" >"$dir/metrics.txt" 2>/dev/null || true

# ghz: a second opinion on Get, from another client (Go) with one fixed key.
ghz_version=
if [ -n "$ghz" ]; then
  ghz_version=$("$ghz" --version 2>&1 | head -n 1)
  key_b64=$(printf '%b' "$(echo "$probe_hex" | sed 's/../\\x&/g')" | base64)
  for target in noop:$noop_port roost:$roost_port; do
    echo "running ghz against ${target%:*} Get..." >&2
    rc=0
    f="$dir/ghz-${target%:*}.txt"
    "$ghz" --insecure --proto "$repo/proto/roost/v1/lookup.proto" \
      --call roost.v1.Lookup.Get -d "{\"table\":\"$table\",\"key\":\"$key_b64\"}" \
      -c "$concurrency" --connections "$channels" -z "${duration}s" \
      "127.0.0.1:${target#*:}" >"$f" 2>&1 || rc=$?
    if ! "$report" ghz-row "${target%:*}" "$f" --exit-status "$rc" \
      --concurrency "$concurrency" >>"$dir/ghz.jsonl"; then
      cat "$f" >&2
      failures+=("ghz ${target%:*} (exit $rc)")
    fi
  done
fi

# --- report -----------------------------------------------------------------
"$report" report "$dir" --keys "$keys" --channels "$channels" \
  --concurrency "$concurrency" --warmup "$warmup" --duration "$duration" \
  --load-at-start "$load_at_start" --ghz-version "$ghz_version"

if [ ${#failures[@]} -gt 0 ]; then
  echo "server_bench: failed runs: ${failures[*]} (see above)" >&2
  exit 1
fi
