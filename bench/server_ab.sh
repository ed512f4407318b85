#!/usr/bin/env bash
# roost-server as this tree builds it against roost-server at other git
# revisions, side by side: the same cuckoo table, each server pinned to one
# core and the load generator (bench/server_load) to another, runs of each
# method taking turns server by server, round after round, so that a drift
# of the shared machine falls on all of them alike. Prints, per method, each
# server's keys/s and server CPU per key in every round, and their medians'
# ratio to this tree's. Each round starts with the next server, so that
# none always runs first.
#
# Each REV is built once (release, roost-server only) into
# build/baseline-REV, where bench/run.sh --baseline builds it too.
#
# Usage: bench/server_ab.sh [--keys N] [--rounds R] [--duration S]
#            [--methods "get:1 multiget:1000"] [--no-build] REV...
#   --keys N       keys in the table (default 1000000)
#   --rounds R     turns of every method on every server (default 3)
#   --duration S   measured seconds per run, after 1 s of warm-up (default 5)
#   --methods M    method:batch pairs (default "get:1 multiget:1000"); the
#                  methods get, multiget and multiget-packed (MultiGet asking
#                  for the packed answer)
#   --no-build     use build/release as it is
# Example: bench/server_ab.sh 84ee4bc
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

keys=1000000
rounds=3
duration=5
methods="get:1 multiget:1000"
build=1
revs=()
die() { echo "server_ab: $*" >&2; exit 1; }
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
while [ $# -gt 0 ]; do
  case "$1" in
    --keys) keys=${2:?}; shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    --duration) duration=${2:?}; shift 2 ;;
    --methods) methods=${2:?}; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown flag $1 (see --help)" ;;
    *) revs+=("$1"); shift ;;
  esac
done
[ ${#revs[@]} -gt 0 ] || die "name at least one git revision to compare with (see --help)"
[ "$(nproc)" -ge 2 ] || die "needs 2 cores: one for the servers, one for the load"

bin=$repo/build/release
if [ "$build" = 1 ]; then
  bin=$repo/$(scripts/build.sh roost-server roost-load gen_records server_load | tail -n 1)
fi
labels=(this)
servers=("$bin/server/roost-server")
for rev in "${revs[@]}"; do
  short=$(git rev-parse --short "$rev^{commit}" 2>/dev/null) ||
    die "$rev: not a git revision"
  dir=$repo/build/baseline-$short
  server=$dir/build/release/server/roost-server
  if [ ! -x "$server" ]; then
    echo "building roost-server at $short into $dir..." >&2
    rm -rf "$dir" && mkdir -p "$dir"
    git archive "$short" | tar -x -C "$dir"
    (cd "$dir" && scripts/build.sh roost-server >/dev/null) ||
      die "building roost-server at $short failed"
  fi
  labels+=("$short")
  servers+=("$server")
done

work=$(mktemp -d /tmp/roost-server-ab.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
echo "generating $keys pairs and building a cuckoo table..." >&2
"$bin/bench/gen_records" "$keys" 20261122 "$work" >/dev/null
"$bin/loader/roost-load" build -q -i "$work/records.bin" --input-format fixed \
  --key-size 8 --value-size 8 --format cuckoo --data-dir "$work/data" --table bench

ports=()
for i in "${!servers[@]}"; do
  log=$work/server-$i.log
  taskset -c 0 "${servers[$i]}" --data-dir "$work/data" --listen 127.0.0.1:0 \
    --admin-listen= --metrics-listen= --drain-period 0 2>"$log" >/dev/null &
  pids+=($!)
  for _ in $(seq 300); do
    grep -q '^roost-server: ready' "$log" && break
    kill -0 "${pids[$i]}" 2>/dev/null || { cat "$log" >&2; die "${labels[$i]} did not start"; }
    sleep 0.1
  done
  ports+=("$(sed -n 's/^roost-server: lookup service listening on 127\.0\.0\.1://p' "$log")")
done

echo "roost-server A/B: $keys keys (cuckoo, 8-byte keys and values), servers on core 0, server_load on core 1, ${duration} s runs, $rounds rounds, $(date -u '+%Y-%m-%d %H:%M UTC'), at $(measured_rev "$repo")"
results=$work/results.tsv
: >"$results"
for round in $(seq "$rounds"); do
  for m in $methods; do
    method=${m%%:*}
    batch=${m##*:}
    # multiget-packed: MultiGet asking for the packed answer.
    form=(--method "$method")
    [ "$method" != multiget-packed ] || form=(--method multiget --packed)
    # Each round starts with the next server: no server always runs first.
    n=${#servers[@]}
    for k in $(seq 0 $((n - 1))); do
      i=$(( (k + round) % n ))
      line=$(taskset -c 1 "$bin/bench/server_load" --addr "127.0.0.1:${ports[$i]}" \
        --table bench "${form[@]}" --batch "$batch" --keys "$keys" \
        --duration "$duration" --warmup 1 --server-pid "${pids[$i]}") ||
        die "server_load against ${labels[$i]} failed: $line"
      python3 -c 'import json, sys
d = json.loads(sys.argv[1])
print(sys.argv[2], sys.argv[3], sys.argv[4], d["keys_per_s"], d["server_cpu_us_per_key"], sep="\t")' \
        "$line" "$method:$batch" "${labels[$i]}" "$round" >>"$results"
    done
  done
done
python3 - "$results" "${labels[@]}" <<'EOF'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
labels = sys.argv[2:]
for method in dict.fromkeys(r[0] for r in rows):
    print(f"\n{method}: keys/s by round; server CPU us per key by round; medians' ratio to this tree")
    med = {}
    for label in labels:
        mine = [r for r in rows if r[0] == method and r[1] == label]
        rate = [float(r[3]) for r in mine]
        cpu = [float(r[4]) for r in mine]
        med[label] = (statistics.median(rate), statistics.median(cpu))
        print(f"  {label:>8}  {' '.join(f'{x:>11,.0f}' for x in rate)}   "
              f"{' '.join(f'{x:.4f}' for x in cpu)}")
    for label in labels[1:]:
        print(f"  this / {label}: keys/s {med['this'][0] / med[label][0]:.2f}x, "
              f"server CPU per key {med['this'][1] / med[label][1]:.2f}x")
EOF
