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
# system time (/proc/PID/stat) over the measured window. If ghz is on PATH or
# in ~/go/bin, it measures roost's and the no-op server's Get as a second
# opinion (one fixed key, the same connections and concurrency); it can be
# installed with
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
# "LABEL METHOD BATCH QPS KEYS/S P50 P99 CPU/KEY CLIENT_CPU" to
# $dir/results, or records the failure.
: >"$dir/results"
failures=()
field() { sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" <<<"$1" | tr -d '"'; }
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
  echo "$label $method $batch $(field "$out" qps) $(field "$out" keys_per_s)" \
    "$(field "$out" p50_us) $(field "$out" p99_us)" \
    "$(field "$out" server_cpu_us_per_key) $(field "$out" client_cpu_s)" >>"$dir/results"
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

metric_samples=$(curl -s "http://127.0.0.1:$metrics_http/metrics" 2>/dev/null |
  grep -c '^roost_' || true)

# ghz: a second opinion on Get, from another client (Go) with one fixed key.
ghz_rows=()
if [ -n "$ghz" ]; then
  key_b64=$(printf '%b' "$(echo "$probe_hex" | sed 's/../\\x&/g')" | base64)
  for target in noop:$noop_port roost:$roost_port; do
    echo "running ghz against ${target%:*} Get..." >&2
    rc=0
    "$ghz" --insecure --proto "$repo/proto/roost/v1/lookup.proto" \
      --call roost.v1.Lookup.Get -d "{\"table\":\"$table\",\"key\":\"$key_b64\"}" \
      -c "$concurrency" --connections "$channels" -z "${duration}s" \
      "127.0.0.1:${target#*:}" >"$dir/ghz-${target%:*}.txt" 2>&1 || rc=$?
    f="$dir/ghz-${target%:*}.txt"
    qps=$(awk -F'\t' '/Requests\/sec:/ { print $2 }' "$f" | tr -d ' ')
    p50=$(awk '/ 50 % in / { print $4 " " $5 }' "$f")
    p99=$(awk '/ 99 % in / { print $4 " " $5 }' "$f")
    # ghz cuts the RPCs in flight at the end of -z off (Canceled or
    # Unavailable, "the client connection is closing"): those are no errors
    # of the server's.
    statuses=$(sed -n '/Status code distribution:/,/^ *$/p' "$f" | sed '1d; /^ *$/d')
    ok=$(awk '$1 == "[OK]" { print $2 }' <<<"$statuses")
    cut=$(awk '$1 != "[OK]" { n += $2 } END { print n + 0 }' <<<"$statuses")
    unexpected=$(sed -n '/Error distribution:/,/^ *$/p' "$f" | sed '1d; /^ *$/d' |
      grep -Ev 'client connection is closing|use of closed network connection' || true)
    if [ "$rc" != 0 ] || [ -z "$qps" ] || [ -z "$ok" ] || [ -n "$unexpected" ] ||
      [ "$cut" -gt "$concurrency" ]; then
      cat "$f" >&2
      failures+=("ghz ${target%:*} (exit $rc)")
      continue
    fi
    ghz_rows+=("${target%:*} $qps ${p50// /_} ${p99// /_} $ok $cut")
  done
fi

# --- report -----------------------------------------------------------------
echo
echo "roost-server under load: $keys keys (cuckoo, 8-byte keys, 8-byte values), server_load with $channels channels, $concurrency RPCs in flight, ${warmup} s warm-up + ${duration} s per run, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo); client and servers share them; load average at start: $load_at_start, at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
awk '
  BEGIN {
    printf "| %-13s | %-8s | %5s | %10s | %12s | %9s | %9s | %14s | %12s | %14s |\n",
      "server", "method", "batch", "QPS", "keys/s", "p50 µs", "p99 µs",
      "server µs/key", "client CPU s", "keys/s / no-op"
    print "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  }
  { row[NR] = $0; if ($1 == "noop") ceiling[$2 " " $3] = $5 }
  END {
    for (i = 1; i <= NR; i++) {
      split(row[i], f, " ")
      c = ceiling[f[2] " " f[3]]
      ratio = f[1] == "noop" ? "1" : (c > 0 ? sprintf("%.3f", f[5] / c) : "?")
      printf "| %-13s | %-8s | %5d | %10.0f | %11.3fM | %9.1f | %9.1f | %14.3f | %12.2f | %14s |\n",
        f[1], f[2], f[3], f[4], f[5] / 1e6, f[6], f[7], f[8], f[9], ratio
    }
  }' "$dir/results"
echo
echo "server µs/key: server CPU seconds (user + system, all threads) per million keys"
echo "answered in the window; client CPU s: server_load's own CPU over the window."
echo "roost+metrics: --metrics-listen on, /metrics scraped every second during its runs;"
echo "both roost rows count every lookup (bench/metrics_bench.cc measures that counting)"
echo "(${metric_samples} roost_ samples in a scrape afterwards)."
if [ "$keys" != 10000000 ]; then
  echo "(the targets below are set for 10,000,000 keys; a smaller table fits in cache)"
fi
if awk -v l="${load_at_start%% *}" 'BEGIN { exit !(l >= 1) }'; then
  echo "(load average $load_at_start at the start: other work may have competed for the cores)"
fi
echo

awk '
  { qps[$1 " " $2 " " $3] = $4; kps[$1 " " $2 " " $3] = $5; cpu[$1 " " $2 " " $3] = $8 }
  function verdict(ok) { return ok ? "met" : "NOT met" }
  function have(k) { return k in qps }
  END {
    if (have("roost get 1") && have("noop get 1")) {
      r = qps["roost get 1"] / qps["noop get 1"]
      printf "target: unary Get >= 90%% of the no-op ceiling: %.0f against %.0f QPS = %.1f%%, %s\n",
        qps["roost get 1"], qps["noop get 1"], 100 * r, verdict(r >= 0.9)
    }
    k = "roost multiget 1000"
    if (have(k)) {
      printf "target: MultiGet of 1000 >= 3M keys/s: %.2fM keys/s, %s\n",
        kps[k] / 1e6, verdict(kps[k] >= 3e6)
      printf "target: server CPU <= 0.3 µs per key at batch 1000: %.3f µs, %s\n",
        cpu[k], verdict(cpu[k] != "null" && cpu[k] <= 0.3)
    }
    if (have("roost+metrics get 1") && have("roost get 1")) {
      printf "metrics endpoint scraped / off, Get QPS: %.3f", qps["roost+metrics get 1"] / qps["roost get 1"]
      if (have("roost+metrics multiget 1000"))
        printf "; MultiGet 1000 keys/s: %.3f", kps["roost+metrics multiget 1000"] / kps[k]
      printf "\n"
    }
  }' "$dir/results"

echo
if [ -z "$ghz" ]; then
  echo "ghz: skipped (not on PATH nor in ~/go/bin)"
else
  echo "ghz $("$ghz" --version 2>&1 | head -n 1), Get of one fixed key, -c $concurrency --connections $channels -z ${duration}s:"
  for r in "${ghz_rows[@]}"; do
    read -r name qps p50 p99 ok cut <<<"$r"
    echo "  $name: $qps QPS, p50 ${p50//_/ }, p99 ${p99//_/ } ($ok OK, $cut cut off at the end)"
  done
  if [ ${#ghz_rows[@]} -eq 2 ]; then
    read -r _ noop_qps _ <<<"${ghz_rows[0]}"
    read -r _ roost_qps _ <<<"${ghz_rows[1]}"
    awk -v a="$roost_qps" -v b="$noop_qps" 'BEGIN { printf "  roost / no-op: %.3f\n", a / b }'
  fi
fi

if [ ${#failures[@]} -gt 0 ]; then
  echo "server_bench: failed runs: ${failures[*]} (see above)" >&2
  exit 1
fi
