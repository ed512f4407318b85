#!/usr/bin/env bash
# The benchmark suite: roost beside its peers, on this machine, in one run,
# on the same data, and the report drawn from it.
#
# Builds what it needs (release), generates the data sets, and runs:
#   lookups  in-process, single thread (bench/peers_bench): roost's cuckoo
#            and block tables, RocksDB's CuckooTable, PlainTable and
#            block-based tables, tinycdb and the machine's ceiling, on
#            uniform 8-byte pairs and on variable ones (keys 10-40 bytes,
#            values 20-200), hits and misses; at the main size in three
#            rounds (two for --smoke), the systems' order reversed every
#            other round, and reported as medians with each ratio's range;
#   scaling  the uniform lookups at 1M, 10M and (full run only) 100M keys;
#   network  roost-server (Get, coalesced Gets, MultiGet of 10/100/1000,
#            packed too, and packed from a second roost-server with
#            --load-mode huge-pages; bench/server_load; and GET and MGET
#            through its Redis front end, bench/redis_load) against
#            redis-server, plain and
#            with --io-threads 2 (GET, MGET; bench/redis_load), and against
#            the no-op server (bench/noop_server: gRPC's ceiling), on loopback,
#            same keys, batch sizes and requests in flight; memory per key;
#            then single-key lookups open loop (--rate) at 25%, 50% and 75%
#            of each system's own maximum Get throughput just measured.
#            Every server runs on core 0 and every load generator on core
#            1 (taskset), when the machine has 2 cores or more;
#   build    roost-load (cuckoo, block) against RocksDB's SstFileWriter and
#            loading Redis: keys/s and peak RSS;
#   cluster  the routing clients over sharded servers (bench/cluster_bench.sh):
#            router against a direct stub, 1-3 shards, the Python client;
# then writes the report and its plots (bench/report.py, gnuplot).
#
# Usage: bench/run.sh [--quick | --smoke] [--report FILE] [--img-dir DIR]
#                     [--results DIR] [--work DIR] [--no-build] [--keep]
#                     [--baseline REV] [--min-ceiling M]
#   (default)   the full run: lookups at 10M keys, scaling to 100M, network
#               and build at 10M, 10 s per network run; about an hour on 2
#               cores, about 30 GB of disk at its peak
#   --quick     a few minutes: lookups at 1M keys, scaling to 10M, network
#               and build at 1M, 3 s per network run
#   --smoke     seconds, at tiny sizes: checks that every system ran and
#               answered right (report.py --check), not the speed; writes no
#               docs unless --report is given
#   --report FILE   the report (default docs/benchmarks.md; none for --smoke)
#   --img-dir DIR   its plots (default docs/img beside the default report)
#   --results DIR   keep the raw results (JSON lines) here (default
#               docs/results beside the default report, else WORK/results);
#               `bench/report.py DIR --out FILE` draws the report again
#   --work DIR  scratch space for tables and servers (default
#               $ROOST_BENCH_WORK or /tmp/roost-bench); emptied first, so it
#               must be new, empty or made by this script
#   --no-build  use the binaries in $ROOST_BUILD_DIR (default build/release)
#   --keep      keep WORK afterwards
#   --baseline REV  also serve the network table with roost-server as it was
#               at git revision REV (built once into build/baseline-REV, its
#               source from `git archive`), and run its MultiGet rows at
#               batches 100 and 1000, classic and packed, interleaved with
#               the others: a gain over an earlier server, measured in the
#               same run (the table format must be one REV can open)
#   --min-ceiling M  first measure the machine's ceiling (independent random
#               64-byte reads over an array the size of each data set's
#               main cuckoo file) and stop, before anything else runs, when
#               either is below M million reads/s: on this VM it has measured
#               from 11 to 93.5 hour to hour, and ratios set on a machine
#               whose memory is several times slower than usual mislead. Default
#               40 for the full run (a run of record), 0 (no check) for
#               --quick and --smoke
# Exits non-zero when any system gives a wrong answer or fails to run.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
mode=full
report=
img_dir=
results=
work="${ROOST_BENCH_WORK:-/tmp/roost-bench}"
build=1
keep=0
baseline=
min_ceiling=
command_line="bench/run.sh${*:+ $*}"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() {
  echo "run.sh: $*" >&2
  exit 1
}
need_arg() { [ $# -ge 2 ] || die "$1 needs a value"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --quick) mode=quick && shift ;;
    --smoke) mode=smoke && shift ;;
    --report) need_arg "$@" && report="$2" && shift 2 ;;
    --img-dir) need_arg "$@" && img_dir="$2" && shift 2 ;;
    --results) need_arg "$@" && results="$2" && shift 2 ;;
    --work) need_arg "$@" && work="$2" && shift 2 ;;
    --no-build) build=0 && shift ;;
    --keep) keep=1 && shift ;;
    --baseline) need_arg "$@" && baseline="$2" && shift 2 ;;
    --min-ceiling) need_arg "$@" && min_ceiling="$2" && shift 2 ;;
    -h | --help) usage && exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
[ -n "$work" ] && [ "$work" != "/" ] || die "refusing --work '$work'"
if [ -z "$min_ceiling" ]; then
  min_ceiling=0
  [ "$mode" != full ] || min_ceiling=40
fi
[[ "$min_ceiling" =~ ^[0-9]+([.][0-9]+)?$ ]] ||
  die "--min-ceiling takes millions of reads/s (e.g. 40), not '$min_ceiling'"

case "$mode" in
  full)
    lookup_keys=10000000 scaling_keys="1000000 100000000"
    probes=1000000 repeats=1 rounds=3 net_keys=10000000 duration=10 warmup=2
    ;;
  quick)
    lookup_keys=1000000 scaling_keys="10000000"
    probes=500000 repeats=1 rounds=3 net_keys=1000000 duration=3 warmup=1
    ;;
  smoke)
    lookup_keys=20000 scaling_keys="5000"
    probes=20000 repeats=1 rounds=2 net_keys=20000 duration=0.5 warmup=0.2
    ;;
esac
if [ -z "$report" ] && [ "$mode" != smoke ]; then
  report="$repo/docs/benchmarks.md"
  img_dir="${img_dir:-$repo/docs/img}"
  results="${results:-$repo/docs/results}"
fi
seed=20261122
channels=4 concurrency=64
# The network rows' placement: servers on core 0, load generators on core
# 1, so that a load generator never takes its server's core.
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  pin_server=(taskset -c 0)
  pin_load=(taskset -c 1)
  placement="servers pinned to core 0, load generators to core 1 (taskset)"
else
  pin_server=()
  pin_load=()
  placement="not pinned ($(nproc) cores or no taskset)"
fi

# --- set-up -----------------------------------------------------------------
# The revision measured (before this run writes its results).
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
rev=$(measured_rev "$repo")
"$repo/scripts/install-deps.sh"
bin_dir="${ROOST_BUILD_DIR:-$repo/build/release}"
if [ "$build" = 1 ]; then
  echo "building (release)..." >&2
  bin_dir="$repo/$("$repo/scripts/build.sh" roost-server roost-load gen_records \
    server_load noop_server redis_load sst_writer_bench peers_bench cluster_load | tail -n 1)"
fi
for b in server/roost-server loader/roost-load bench/gen_records bench/server_load \
  bench/noop_server bench/redis_load bench/sst_writer_bench bench/peers_bench \
  bench/cluster_load; do
  [ -x "$bin_dir/$b" ] || die "missing $bin_dir/$b (build it, or drop --no-build)"
done
command -v redis-server >/dev/null || die "redis-server is not installed"
baseline_server=
if [ -n "$baseline" ]; then
  baseline=$(git -C "$repo" rev-parse --short "$baseline^{commit}" 2>/dev/null) ||
    die "--baseline: not a git revision of $repo"
  baseline_dir="$repo/build/baseline-$baseline"
  baseline_server="$baseline_dir/build/release/server/roost-server"
  if [ ! -x "$baseline_server" ]; then
    echo "building roost-server at $baseline (release, $baseline_dir)..." >&2
    rm -rf "$baseline_dir"
    mkdir -p "$baseline_dir"
    git -C "$repo" archive "$baseline" | tar -x -C "$baseline_dir"
    (cd "$baseline_dir" && scripts/build.sh roost-server >/dev/null) ||
      die "building roost-server at $baseline failed"
  fi
fi

marker=.roost-bench
if [ -d "$work" ] && [ -n "$(ls -A "$work")" ] && [ ! -e "$work/$marker" ]; then
  die "$work is not empty and was not made by this script; give another --work"
fi
# Published versions are read-only (0555): make them writable to remove them.
chmod -R u+w "$work" 2>/dev/null || true
rm -rf "$work"
mkdir -p "$work"
touch "$work/$marker"
results="${results:-$work/results}"
mkdir -p "$results"
rm -f "$results"/*.jsonl "$results/machine.json"

pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$keep" = 0 ]; then
    chmod -R u+w "$work" 2>/dev/null || true
    # Results outside WORK survive; WORK's tables do not.
    find "$work" -mindepth 1 -maxdepth 1 ! -path "$results" ! -name "$marker" \
      -exec rm -rf {} +
    [ "$results" = "$work/results" ] || rm -rf "$work"
  fi
}
trap cleanup EXIT
started=$EPOCHREALTIME
failures=()

# --- the machine ------------------------------------------------------------
if [ "$min_ceiling" != 0 ]; then
  # At both data sets' sizes: the larger array (the variable set's) has
  # run 4x slower while the uniform set's ran at its usual speed.
  for set in uniform variable; do
    echo "machine check: independent 64-byte reads at the $set data set's size..." >&2
    "$bin_dir/bench/peers_bench" --dataset "$set" --keys "$lookup_keys" --probes "$probes" \
      --repeats 1 --seed "$seed" --systems ceiling --dir "$work/peers" \
      --out "$work/machine-check.jsonl" || die "the machine check (peers_bench) failed"
    rm -rf "$work/peers"
  done
  python3 "$repo/bench/machine_check.py" "$work/machine-check.jsonl" "$min_ceiling" ||
    die "not a run of record on this machine now (see above); try later, or give --min-ceiling 0"
fi

# --- lookups and scaling ----------------------------------------------------
peers() { # DATASET KEYS [PEERS_BENCH FLAGS...]
  echo "lookups: $1 data set, $2 keys${3:+ ($*)}..." >&2
  "$bin_dir/bench/peers_bench" --dataset "$1" --keys "$2" --probes "$probes" \
    --repeats "$repeats" --seed "$seed" --dir "$work/peers" \
    --out "$results/lookup.jsonl" "${@:3}" ||
    failures+=("peers_bench $1 $2")
  rm -rf "$work/peers"
}
# The main table size in rounds, every system in each, the order reversed
# every other round: the report gives each figure's median over the rounds
# and each ratio's median and range (one run's ratio can mislead on a
# shared machine). One timed pass a round (after the checking pass): the
# median of three rounds spread over twenty minutes says more than the
# median of three passes in a row, for about the time those took.
for r in $(seq 1 "$rounds"); do
  order=()
  [ $((r % 2)) = 1 ] || order=(--reverse)
  peers uniform "$lookup_keys" --round "$r" "${order[@]}"
  peers variable "$lookup_keys" --round "$r" "${order[@]}"
done
for k in $scaling_keys; do peers uniform "$k"; done

# --- network and build ------------------------------------------------------
# The rows of the results: bench/result_rows.py computes them from what
# this script measured, and prints each as a JSON line.
rows="$repo/bench/result_rows.py"
# start_server NAME PATTERN COMMAND...: runs COMMAND in the background, stderr and
# stdout in WORK/NAME.log, until a line matches PATTERN; sets $started_pid.
start_server() {
  local name="$1" pattern="$2" log="$work/$1.log" waited=0
  shift 2
  "$@" >"$log" 2>&1 &
  started_pid=$!
  pids+=("$started_pid")
  until grep -Eq "$pattern" "$log"; do
    kill -0 "$started_pid" 2>/dev/null || die "$name exited at start: $(cat "$log")"
    [ "$waited" -lt 6000 ] || die "$name not ready after 10 minutes (see $log)"
    sleep 0.1
    waited=$((waited + 1))
  done
}
free_port() {
  local p
  for p in $(shuf -i 20000-60000 -n 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || {
      echo "$p"
      return
    }
  done
  die "no free port found"
}

echo "build: $net_keys pairs..." >&2
mkdir -p "$work/gen" "$work/data"
"$bin_dir/bench/gen_records" "$net_keys" "$seed" "$work/gen"
rm -f "$work/gen/records.tsv"
records="$work/gen/records.bin"
# timed NAME OUTPUT COMMAND...: runs COMMAND under /usr/bin/time and appends
# a build row (wall seconds, peak RSS, output bytes).
timed() {
  local name="$1" output="$2" t0 t1 rc=0
  shift 2
  cat "$records" >/dev/null # every build reads its input from the page cache
  t0=$EPOCHREALTIME
  /usr/bin/time -f '%M' -o "$work/time.out" "$@" >"$work/timed.out" 2>&1 || rc=$?
  t1=$EPOCHREALTIME
  if [ "$rc" != 0 ]; then
    cat "$work/timed.out" >&2
    failures+=("$name (exit $rc)")
    return
  fi
  "$rows" build-row --system "$name" --keys "$net_keys" --start "$t0" --end "$t1" \
    --max-rss-file "$work/time.out" --output "$output" \
    --note "unsorted fixed-width binary input: read, sorted (block), built, written" \
    >>"$results/build.jsonl"
}
fixed=(--input-format fixed --key-size 8 --value-size 8)
timed "roost-load cuckoo" "$work/cuckoo.sst" "$bin_dir/loader/roost-load" build -q \
  -i "$records" "${fixed[@]}" --format cuckoo -o "$work/cuckoo.sst"
timed "roost-load block" "$work/block.sst" "$bin_dir/loader/roost-load" build -q \
  -i "$records" "${fixed[@]}" --format block -o "$work/block.sst" --temp-dir "$work/gen"
# SstFileWriter: its own line times the writer alone (the pairs read and
# sorted in memory before its clock), and gives its peak RSS (which includes
# those pairs).
if "$bin_dir/bench/sst_writer_bench" "$records" "$work/rocksdb.sst" >"$work/sst.out" \
  2>"$work/sst.err"; then
  "$rows" sst-writer-row "$work/sst.out" >>"$results/build.jsonl"
else
  cat "$work/sst.err" >&2
  failures+=("sst_writer_bench")
fi
rm -f "$work/block.sst" "$work/rocksdb.sst"
"$bin_dir/loader/roost-load" build -q -i "$records" "${fixed[@]}" --format cuckoo \
  --data-dir "$work/data" --table bench
rm -f "$work/cuckoo.sst"

echo "network: roost-server and redis-server, $net_keys keys..." >&2
# start_roost NAME FLAG...: a roost-server on the data directory, its log
# $work/NAME.log; sets started_pid and started_port. $server, when set, is
# the binary (default: this tree's).
start_roost() {
  local name="$1"
  shift
  start_server "$name" "roost-server: ready: " "${pin_server[@]}" \
    "${server:-$bin_dir/server/roost-server}" \
    --data-dir "$work/data" --listen 127.0.0.1:0 --admin-listen '' --metrics-listen '' \
    --drain-period 0 --shutdown-timeout 1 "$@"
  started_port=$(sed -n 's/^roost-server: lookup service listening on .*:\([0-9]*\)$/\1/p' \
    "$work/$name.log" | head -n 1)
}
# Its Redis front end too (--redis-listen): GET and MGET from a plain Redis
# client (hiredis), the same load generator as Redis's rows.
start_roost roost --redis-listen 127.0.0.1:0 --redis-table bench
roost_pid=$started_pid
roost_port=$started_port
roost_redis_port=$(sed -n 's/^roost-server: Redis front end listening on .*:\([0-9]*\) .*/\1/p' \
  "$work/roost.log" | head -n 1)
# The same table served with --load-mode huge-pages (copied into
# transparent huge pages): its packed MultiGet rows show what 4 KiB pages'
# page walks cost a server whose caches gRPC's own work keeps churning.
start_roost roost-hp --load-mode huge-pages
roost_hp_pid=$started_pid
roost_hp_port=$started_port
baseline_pid=
if [ -n "$baseline_server" ]; then
  server="$baseline_server" start_roost roost-baseline
  baseline_pid=$started_pid
  baseline_port=$started_port
fi
# gRPC's ceiling: a server that answers every key without looking it up
# (bench/noop_server.cc), the same codec and message sizes as roost-server.
start_server noop "noop_server: listening on " "${pin_server[@]}" "$bin_dir/bench/noop_server" \
  --listen 127.0.0.1:0
noop_pid=$started_pid
noop_port=$(sed -n 's/^noop_server: listening on .*:\([0-9]*\)$/\1/p' "$work/noop.log" | head -n 1)
redis_port=$(free_port)
start_server redis "Ready to accept connections" "${pin_server[@]}" redis-server --bind 127.0.0.1 \
  --port "$redis_port" \
  --save '' --appendonly no --protected-mode no --dir "$work" --logfile ''
redis_pid=$started_pid
redis-cli -p "$redis_port" INFO memory >"$work/redis-before.info"
fill=$("$bin_dir/bench/redis_load" fill --addr "127.0.0.1:$redis_port" --keys "$net_keys" \
  --seed "$seed") || die "loading Redis failed"
redis-cli -p "$redis_port" INFO memory >"$work/redis-after.info"
"$rows" redis-fill-row --keys "$net_keys" --fill "$fill" --pid "$redis_pid" \
  --info-before "$work/redis-before.info" --info-after "$work/redis-after.info" \
  >>"$results/build.jsonl"
# A second Redis with two I/O threads (reads too): Redis's own answer to
# a network-bound load, filled the same way.
redis_io_port=$(free_port)
start_server redis-io "Ready to accept connections" "${pin_server[@]}" redis-server --bind 127.0.0.1 \
  --port "$redis_io_port" --save '' --appendonly no --protected-mode no --dir "$work" \
  --logfile '' --io-threads 2 --io-threads-do-reads yes
redis_io_pid=$started_pid
"$bin_dir/bench/redis_load" fill --addr "127.0.0.1:$redis_io_port" --keys "$net_keys" \
  --seed "$seed" >/dev/null || die "loading Redis (io-threads 2) failed"
"$rows" memory-rows --keys "$net_keys" --table "$(ls "$work"/data/bench/*/table.sst | head -n 1)" \
  --info-before "$work/redis-before.info" --info-after "$work/redis-after.info" \
  >>"$results/memory.jsonl"

# record FILE FIELDS SYSTEM COMMAND...: one load run; its JSON line, with
# the system, table size and FIELDS (more `--num NAME=VALUE` of
# result_rows.py labelled, as words) put first, goes to FILE in the results.
record() {
  local file="$1" fields="$2" system="$3" out rc=0
  shift 3
  out=$("${pin_load[@]}" "$@" 2>"$work/load.err") || rc=$?
  echo "  $system: $out" >&2
  if [ -z "$out" ]; then
    cat "$work/load.err" >&2
    failures+=("$system $* (exit $rc)")
    return
  fi
  [ "$rc" = 0 ] || failures+=("$system $* (exit $rc: $(head -c 300 "$work/load.err"))")
  # shellcheck disable=SC2086 # FIELDS are words
  "$rows" labelled --str system="$system" --num table_keys="$net_keys" $fields \
    <<<"$out" >>"$results/$file" || failures+=("$system $*: its line is not JSON")
}
# net SYSTEM COMMAND...: a closed-loop run, into network.jsonl.
net() { record network.jsonl "" "$@"; }
common=(--keys "$net_keys" --seed "$seed" --duration "$duration" --warmup "$warmup")
# Interleaved, so that drift in the machine's speed touches both sides alike.
for batch in 1 10 100 1000; do
  method=multiget && [ "$batch" = 1 ] && method=get
  echo "network: batch $batch..." >&2
  net roost "$bin_dir/bench/server_load" --addr "127.0.0.1:$roost_port" --table bench \
    --method "$method" --batch "$batch" --channels "$channels" \
    --concurrency "$concurrency" --server-pid "$roost_pid" "${common[@]}"
  if [ "$batch" = 1 ]; then
    # The same single-key Gets, sent through the client library's
    # GetCoalescer (client/get_coalescer.h): concurrent Gets leave as
    # MultiGets, at most 2 in flight.
    net "roost, coalesced Gets" "$bin_dir/bench/server_load" --addr "127.0.0.1:$roost_port" \
      --table bench --method get --coalesce 2 --channels "$channels" \
      --concurrency "$concurrency" --server-pid "$roost_pid" "${common[@]}"
  fi
  if [ "$batch" -ge 100 ]; then
    # The packed answer (MultiGetRequest.packed), and the no-op server's
    # answers in both forms: the gRPC ceiling for each.
    # multiget_row SYSTEM PORT PID FLAG...: MultiGets of this batch from one
    # server, with FLAG... (--packed, --check size) added.
    multiget_row() {
      local system="$1" port="$2" pid="$3"
      shift 3
      net "$system" "$bin_dir/bench/server_load" --addr "127.0.0.1:$port" --table bench \
        --method multiget --batch "$batch" --channels "$channels" \
        --concurrency "$concurrency" --server-pid "$pid" "${common[@]}" "$@"
    }
    multiget_row "roost, packed" "$roost_port" "$roost_pid" --packed
    multiget_row "roost, packed, huge pages" "$roost_hp_port" "$roost_hp_pid" --packed
    for form in "" --packed; do
      [ -z "$baseline_pid" ] ||
        multiget_row "roost at $baseline${form:+, packed}" "$baseline_port" "$baseline_pid" \
          $form
      multiget_row "no-op server${form:+, packed}" "$noop_port" "$noop_pid" $form --check size
    done
  fi
  method=mget && [ "$batch" = 1 ] && method=get
  net "roost, Redis protocol" "$bin_dir/bench/redis_load" run \
    --addr "127.0.0.1:$roost_redis_port" --method "$method" --batch "$batch" \
    --connections "$concurrency" --server-pid "$roost_pid" "${common[@]}"
  net Redis "$bin_dir/bench/redis_load" run --addr "127.0.0.1:$redis_port" \
    --method "$method" --batch "$batch" --connections "$concurrency" \
    --server-pid "$redis_pid" "${common[@]}"
  net "Redis, io-threads 2" "$bin_dir/bench/redis_load" run \
    --addr "127.0.0.1:$redis_io_port" --method "$method" --batch "$batch" \
    --connections "$concurrency" --server-pid "$redis_io_pid" "${common[@]}"
done

# Open loop: single-key lookups sent at fixed rates (Poisson arrivals, each
# timed from when it was due: bench/open_loop.h), at 25%, 50% and 75% of
# each system's own maximum, its batch-1 requests/s just measured above.
# open_loop SYSTEM PERCENT COMMAND...: COMMAND --rate at PERCENT of SYSTEM's
# maximum (its last batch-1 row; none when its run failed), into
# openloop.jsonl.
open_loop() {
  local system="$1" pct="$2" max rate
  shift 2
  if ! read -r max rate < <("$rows" open-loop-rate "$results/network.jsonl" "$system" \
    "$pct"); then
    echo "  $system: no maximum measured; no open-loop run at $pct%" >&2
    failures+=("$system open loop at $pct% (no maximum)")
    return
  fi
  record openloop.jsonl "--num load_pct=$pct --num max_qps=$max" "$system" "$@" \
    --rate "$rate"
}
# Interleaved as above: every system at one level, then the next level.
for pct in 25 50 75; do
  echo "network: open loop at $pct% of each system's maximum..." >&2
  open_loop roost "$pct" "$bin_dir/bench/server_load" --addr "127.0.0.1:$roost_port" \
    --table bench --method get --channels "$channels" --server-pid "$roost_pid" \
    "${common[@]}"
  open_loop "roost, coalesced Gets" "$pct" "$bin_dir/bench/server_load" \
    --addr "127.0.0.1:$roost_port" --table bench --method get --coalesce 2 \
    --channels "$channels" --server-pid "$roost_pid" "${common[@]}"
  open_loop "roost, Redis protocol" "$pct" "$bin_dir/bench/redis_load" run \
    --addr "127.0.0.1:$roost_redis_port" --method get --connections "$concurrency" \
    --server-pid "$roost_pid" "${common[@]}"
  open_loop Redis "$pct" "$bin_dir/bench/redis_load" run --addr "127.0.0.1:$redis_port" \
    --method get --connections "$concurrency" --server-pid "$redis_pid" "${common[@]}"
  open_loop "Redis, io-threads 2" "$pct" "$bin_dir/bench/redis_load" run \
    --addr "127.0.0.1:$redis_io_port" --method get --connections "$concurrency" \
    --server-pid "$redis_io_pid" "${common[@]}"
done
kill "$roost_pid" "$roost_hp_pid" $baseline_pid "$noop_pid" "$redis_pid" "$redis_io_pid" \
  2>/dev/null || true

# --- cluster: the routing clients and shards (bench/cluster_bench.sh) --------
echo "cluster..." >&2
ROOST_BUILD_DIR="$bin_dir" "$repo/bench/cluster_bench.sh" --results "$results" \
  --keys "$net_keys" --seed "$seed" --duration "$duration" --warmup "$warmup" --rounds 5 \
  --work "$work/cluster" || failures+=("cluster_bench.sh")

# --- report -----------------------------------------------------------------
"$rows" machine --command "$command_line" --mode "$mode" --git-rev "$rev" \
  --baseline-rev "$baseline" --lookup-keys "$lookup_keys" --network-keys "$net_keys" \
  --started "$started" --placement "$placement" >"$results/machine.json"

if [ -n "$report" ]; then
  mkdir -p "${img_dir:-$(dirname "$report")/img}"
  "$repo/bench/report.py" "$results" --out "$report" --img-dir "${img_dir:-$(dirname "$report")/img}"
  echo "wrote $report" >&2
fi
"$repo/bench/report.py" "$results" --check || failures+=("report.py --check")
if [ ${#failures[@]} -gt 0 ]; then
  printf 'run.sh: failed: %s\n' "${failures[@]}" >&2
  exit 1
fi
echo "results in $results" >&2
