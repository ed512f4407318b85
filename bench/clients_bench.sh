#!/usr/bin/env bash
# Each roost client beside the C++ client and beside its language's Redis
# client (issue 34), in one run against one cluster and one Redis on the
# same data, over loopback:
#   data     bench/clients/pairs.py's pairs (bench/text_pairs.h): --keys
#            text keys of 8 to 16 bytes, 100-byte values; built with
#            roost-load (cuckoo, --shards 2) and served by 2 roost-servers
#            (one per shard, one replica each), and loaded into one
#            redis-server (Debian's, no persistence) with redis-cli --pipe;
#   clients  roost's C++ (bench/clients/cpp_load.cc), Python
#            (bench/clients/python_load.py), Go (bench/clients/go) and
#            Java (bench/clients/java) clients against roost; hiredis
#            (bench/redis_load --text-pairs), redis-py (redis.asyncio),
#            go-redis and Jedis against Redis;
#   loads    get: single-key Gets, --in-flight outstanding (closed loop:
#            coalesced async calls, tasks, goroutines or threads, as each
#            client is used); multiget: MultiGet (MGET) of --batch keys,
#            --batches batches in flight. Keys uniform at random; every
#            answer checked (a miss or a wrong value fails the run).
#            --warmup seconds (the Java programs: --jvm-warmup, as HotSpot
#            compiles the hot paths only after some seconds of load), then
#            --duration measured seconds, each.
# With 2 or more cores, the servers run on core 0 and every load generator
# on core 1 (taskset). Prints one JSON line per client and load (keys_per_s,
# qps = calls/s, p50_us, p99_us, rpc_errors, misses, bad_values;
# server_cores: the servers' CPU seconds (/proc/PID/stat) over the load
# generator's whole run, start-up and warm-up included, per second), then the Markdown table of
# bench/clients_bench_report.py (with the servers' CPU per key), with each
# roost client's keys/s as a ratio to the C++ roost client's and to its own
# language's Redis client's.
#
# Usage: bench/clients_bench.sh [--keys N] [--duration S] [--warmup S] [--jvm-warmup S]
#            [--in-flight K] [--batch B] [--batches M] [--clients LIST]
#            [--work DIR] [--results DIR] [--offline] [--smoke]
#   --keys N        pairs (default 1000000)
#   --duration S    measured seconds per client and load (default 10)
#   --warmup S      seconds of load before (default 2)
#   --jvm-warmup S  the same for Jedis and roost's Java client (default 10:
#                   after 2 s on one busy core, the JIT had not finished and
#                   roost's Java client ran at a third of its speed)
#   --in-flight K   Gets outstanding (default 64)
#   --batch B       keys per MultiGet (default 100)
#   --batches M     MultiGets in flight (default 8)
#   --clients LIST  comma-separated, of cpp,python,go,java (default all);
#                   each with its Redis counterpart (hiredis, redis-py,
#                   go-redis, Jedis)
#   --work DIR      scratch (default $ROOST_BENCH_WORK/clients or
#                   /tmp/roost-clients-bench), emptied first, removed after
#   --results DIR   also write the JSON lines (clients.jsonl) and the table
#                   (clients.md) there
#   --offline       download nothing: a client whose dependencies are not
#                   here already is skipped, with the reason
#   --smoke         seconds, at tiny sizes (2,000 keys, 1 s after 0.5 s; Java 3 s after 3 s),
#                   --offline: every client's answers, not the speed
# Binaries come from $ROOST_BUILD_DIR (default build/release): roost-server,
# roost-load, clients_cpp_load and redis_load must be built. The others are
# built in the work directory: the Go program with `go build` (go-redis
# v9.23.0 from the module proxy), the Java one with javac against the jar
# `mvn package` makes of clients/java and Jedis 8.0.2 (Maven Central);
# redis-py (redis==8.1.0) goes into a venv at ~/.cache/roost/clients-bench-venv
# ($ROOST_CLIENTS_VENV), never into the system. A missing Go, Java, Maven or
# redis-server fails the run unless --offline (then skipped).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
keys=1000000
duration=10
warmup=2
jvm_warmup=10
in_flight=64
batch=100
batches=8
clients=cpp,python,go,java
results=
offline=0
smoke=0
work="${ROOST_BENCH_WORK:+$ROOST_BENCH_WORK/clients}"
work="${work:-/tmp/roost-clients-bench}"
venv="${ROOST_CLIENTS_VENV:-$HOME/.cache/roost/clients-bench-venv}"
command_line="bench/clients_bench.sh${*:+ $*}"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() {
  echo "clients_bench: $*" >&2
  exit 1
}
while [ $# -gt 0 ]; do
  case "$1" in
    --keys | --duration | --warmup | --jvm-warmup | --in-flight | --batch | --batches | --clients | --work | --results)
      [ $# -ge 2 ] || die "$1 needs a value"
      name="${1#--}"
      declare "${name//-/_}=$2"
      shift 2
      ;;
    --offline) offline=1 && shift ;;
    --smoke) smoke=1 && shift ;;
    -h | --help) usage && exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
if [ "$smoke" = 1 ]; then
  # The JVM's first calls (class loading, the channel, the JIT) took more
  # than 1.5 s on a machine busy with other tests: no call fell in the
  # window. Its warm-up is longer.
  keys=2000 duration=1 warmup=0.5 jvm_warmup=3 jvm_duration=3 offline=1
fi
for n in keys in_flight batch batches; do
  [[ "${!n}" =~ ^[1-9][0-9]*$ ]] || die "--${n//_/-} must be a positive integer, not '${!n}'"
done
[ "$keys" -le 100000000 ] || die "--keys must be at most 100000000"
for n in duration warmup jvm_warmup; do
  [[ "${!n}" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--${n//_/-} must be a number of seconds, not '${!n}'"
done
for c in ${clients//,/ }; do
  case "$c" in cpp | python | go | java) ;; *) die "--clients: unknown client '$c'" ;; esac
done
want() { [[ ",$clients," == *",$1,"* ]]; }
[ -n "$work" ] && [ "$work" != "/" ] || die "refusing --work '$work'"

bin_dir="${ROOST_BUILD_DIR:-$repo/build/release}"
server="$bin_dir/server/roost-server"
loader="$bin_dir/loader/roost-load"
cpp_load="$bin_dir/bench/clients_cpp_load"
redis_load="$bin_dir/bench/redis_load"
for b in "$server" "$loader" "$cpp_load" "$redis_load"; do
  [ -x "$b" ] || die "missing $b (build it first: scripts/build.sh $(basename "$b"))"
done
rows="$repo/bench/result_rows.py"
report="$repo/bench/clients_bench_report.py"

pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
rm -rf "$work"
mkdir -p "$work"
: >"$work/clients.jsonl"

failures=()
skipped=()
# skip CLIENT REASON: with --offline a skipped client, else a failure.
skip() {
  if [ "$offline" = 1 ]; then
    skipped+=("$1: $2")
    echo "clients_bench: skipping $1: $2" >&2
  else
    failures+=("$1: $2")
  fi
}

# Pinning: servers on core 0, load generators on core 1.
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  pin_server=(taskset -c 0)
  pin_load=(taskset -c 1)
  pinning="servers pinned to core 0, load generators to core 1 (taskset)"
else
  pin_server=()
  pin_load=()
  pinning="not pinned ($(nproc) cores or no taskset)"
fi
echo "clients_bench: $pinning" >&2

# --- the load generators of the other languages ------------------------------
# The first python3 with Debian's grpc and xxhash (roost's Python client).
python=
for p in "${PYTHON:-python3}" /usr/bin/python3; do
  if "$p" -c 'import grpc, xxhash' 2>/dev/null; then
    python="$p"
    break
  fi
done
redis_python=
go_load=
java_cp=
if want python; then
  [ -n "$python" ] || failures+=("python: no python3 imports grpc and xxhash (scripts/install-deps.sh)")
  if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import redis.asyncio' 2>/dev/null; then
    redis_python="$venv/bin/python"
  elif [ "$offline" = 1 ]; then
    skip redis-py "no venv with redis-py at $venv (python3 -m venv $venv && $venv/bin/pip install redis==8.1.0)"
  else
    echo "clients_bench: installing redis-py into $venv..." >&2
    python3 -m venv "$venv" && "$venv/bin/pip" install -q redis==8.1.0 >&2 &&
      redis_python="$venv/bin/python" || failures+=("redis-py: pip install redis into $venv failed")
  fi
fi
if want go; then
  if ! go=$("$repo/scripts/find-go.sh" 2>/dev/null); then
    skip go "no Go 1.21 or newer (scripts/find-go.sh)"
  else
    echo "clients_bench: building bench/clients/go..." >&2
    go_env=()
    [ "$offline" = 1 ] && go_env=(GOPROXY=off)
    if (cd "$repo/bench/clients/go" &&
      env "${go_env[@]}" "$go" build -o "$work/clients-load" . 2>"$work/go-build.err"); then
      go_load="$work/clients-load"
    else
      skip go "go build failed (go-redis not in the module cache?): $(tail -n 1 "$work/go-build.err" | head -c 300)"
    fi
  fi
fi
if want java; then
  if ! command -v mvn >/dev/null || ! command -v javac >/dev/null; then
    skip java "mvn or javac is not on PATH"
  else
    echo "clients_bench: building clients/java and bench/clients/java..." >&2
    mvn=(mvn -B -q --no-transfer-progress)
    [ "$offline" = 1 ] && mvn+=(-o)
    classpath=(org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath
      -Dmdep.includeScope=runtime)
    if "${mvn[@]}" -f "$repo/clients/java/pom.xml" "-Droost.java.build=$work/java" \
      -Dmaven.test.skip=true package >"$work/java-build.err" 2>&1 &&
      "${mvn[@]}" -f "$repo/clients/java/pom.xml" "-Droost.java.build=$work/java" \
        "${classpath[@]}" "-Dmdep.outputFile=$work/roost-java.cp" >>"$work/java-build.err" 2>&1 &&
      "${mvn[@]}" -f "$repo/bench/clients/java/pom.xml" "${classpath[@]}" \
        "-Dmdep.outputFile=$work/jedis.cp" >>"$work/java-build.err" 2>&1; then
      java_cp="$work/java/roost-client-0.1.0.jar:$(cat "$work/roost-java.cp"):$(cat "$work/jedis.cp")"
      if ! javac -d "$work/java-classes" -cp "$java_cp" \
        "$repo/bench/clients/java/ClientsLoad.java" 2>>"$work/java-build.err"; then
        java_cp=
        failures+=("java: javac ClientsLoad.java: $(tail -c 300 "$work/java-build.err")")
      else
        java_cp="$work/java-classes:$java_cp"
      fi
    else
      skip java "Maven could not build the client or find Jedis 8.0.2 (not in ~/.m2?): $(grep -m1 ERROR "$work/java-build.err" | sed 's/\x1b\[[0-9;]*m//g' | head -c 300)"
    fi
  fi
fi

# --- the data, the cluster and Redis -----------------------------------------
echo "clients_bench: $keys pairs, a cuckoo table of 2 shards, Redis..." >&2
python3 "$repo/bench/clients/pairs.py" "$keys" "$work"
"$loader" build -q -i "$work/pairs.tsv" --format cuckoo --shards 2 \
  --data-dir "$work/data" --table bench
rm -f "$work/pairs.tsv"

# serve NAME ARGS...: a roost-server on a free loopback port, ready; sets
# $port and $pid.
serve() {
  local name="$1" log="$work/$1.log" waited=0
  shift
  "${pin_server[@]}" "$server" --data-dir "$work/data" --listen 127.0.0.1:0 --admin-listen '' --metrics-listen '' \
    --drain-period 0 --shutdown-timeout 1 "$@" 2>"$log" &
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
serve shard0 --shard 0
port0=$port roost_pids="$pid"
serve shard1 --shard 1
port1=$port roost_pids="$roost_pids $pid"
"$rows" layout "$port0" "$port1" >"$work/cluster.json"

redis_server=$(command -v redis-server || true)
[ -n "$redis_server" ] || die "redis-server is not on PATH (Debian: redis-server)"
redis_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${pin_server[@]}" "$redis_server" --port "$redis_port" --bind 127.0.0.1 --save '' \
  --appendonly no --dir "$work" --logfile "$work/redis.log" &
redis_pid=$!
pids+=("$redis_pid")
waited=0
until redis-cli -p "$redis_port" ping >/dev/null 2>&1; do
  kill -0 "$redis_pid" 2>/dev/null || die "redis-server exited: $(cat "$work/redis.log")"
  [ "$waited" -lt 300 ] || die "redis-server not ready after 30 s"
  sleep 0.1
  waited=$((waited + 1))
done
redis-cli -p "$redis_port" --pipe <"$work/pairs.resp" >"$work/redis-pipe.out" ||
  die "redis-cli --pipe: $(cat "$work/redis-pipe.out")"
rm -f "$work/pairs.resp"
loaded=$(redis-cli -p "$redis_port" dbsize)
[ "$loaded" = "$keys" ] || die "Redis holds $loaded keys, not $keys"

# --- the runs ------------------------------------------------------------------
cpu_ticks() { # the summed utime + stime of the PIDs, in clock ticks
  local total=0 p stat
  for p in "$@"; do
    stat=$(cat "/proc/$p/stat")
    stat="${stat##*) }" # fields from the state on: utime, stime are 12, 13
    read -r -a f <<<"$stat"
    total=$((total + f[11] + f[12]))
  done
  echo "$total"
}
hz=$(getconf CLK_TCK)

# run LANGUAGE LIBRARY SYSTEM WORKLOAD SERVER_PIDS COMMAND...: one load, its
# JSON line labelled into clients.jsonl and printed.
run() {
  local language="$1" library="$2" system="$3" workload="$4" server_pids="$5" out rc=0
  shift 5
  local t0 t1 c0 c1
  echo "clients_bench: $library ($language) $workload..." >&2
  # shellcheck disable=SC2086
  c0=$(cpu_ticks $server_pids)
  t0=$EPOCHREALTIME
  out=$("${pin_load[@]}" "$@" 2>"$work/load.err") || rc=$?
  t1=$EPOCHREALTIME
  # shellcheck disable=SC2086
  c1=$(cpu_ticks $server_pids)
  if [ "$smoke" = 1 ] && [ "$rc" != 0 ] &&
    grep -q "no call completed in the measured window" "$work/load.err" &&
    ! grep -q '"first_error":"[^"]' <<<"$out"; then
    # --smoke judges answers, not speed: a load too slow on this machine
    # for its window (a JVM on one busy core) is noted, not failed; every
    # answer it did get was still checked (a wrong one is first_error).
    skipped+=("$library $workload: no call completed in the measured window")
    echo "clients_bench: $library $workload: too slow here to measure; answers checked" >&2
  elif [ "$rc" != 0 ] || [ -z "$out" ]; then
    # (Jedis's SLF4J says it has no logger first.)
    failures+=("$library $workload (exit $rc): $(grep -v '^SLF4J' "$work/load.err" | head -c 400)")
  fi
  [ -n "$out" ] || return 0
  local cores
  cores=$(python3 -c "print(round(($c1 - $c0) / $hz / ($t1 - $t0), 3))")
  "$rows" labelled --str language="$language" --str client="$library" \
    --str system="$system" --str workload="$workload" --num table_keys="$keys" \
    --num server_cores="$cores" <<<"$out" | tee -a "$work/clients.jsonl" ||
    failures+=("$library $workload: its line is not JSON: $out")
}
window=(--duration "$duration" --warmup "$warmup")
roost_args=(--keys "$keys" "${window[@]}")
jvm_args=(--keys "$keys" --duration "${jvm_duration:-$duration}" --warmup "$jvm_warmup")
for workload in get multiget; do
  if [ "$workload" = get ]; then k=$in_flight; else k=$batches; fi
  if want cpp; then
    run C++ "roost (C++)" roost "$workload" "$roost_pids" "$cpp_load" \
      --cluster "$work/cluster.json" --table bench --workload "$workload" \
      --in-flight "$k" --batch "$batch" "${roost_args[@]}"
    if [ "$workload" = get ]; then
      redis_method=(--method get)
    else
      redis_method=(--method mget --batch "$batch")
    fi
    run C++ hiredis redis "$workload" "$redis_pid" "$redis_load" run \
      --addr "127.0.0.1:$redis_port" --text-pairs "${redis_method[@]}" \
      --connections "$k" "${roost_args[@]}"
  fi
  if want python && [ -n "$python" ]; then
    run Python "roost (Python)" roost "$workload" "$roost_pids" "$python" \
      "$repo/bench/clients/python_load.py" --client roost --layout "$work/cluster.json" \
      --workload "$workload" --in-flight "$k" --batch "$batch" "${roost_args[@]}"
  fi
  if want python && [ -n "$redis_python" ]; then
    run Python redis-py redis "$workload" "$redis_pid" "$redis_python" \
      "$repo/bench/clients/python_load.py" --client redis --redis "127.0.0.1:$redis_port" \
      --workload "$workload" --in-flight "$k" --batch "$batch" "${roost_args[@]}"
  fi
  if [ -n "$go_load" ]; then
    run Go "roost (Go)" roost "$workload" "$roost_pids" "$go_load" -client roost \
      -layout "$work/cluster.json" -workload "$workload" -in-flight "$k" -batch "$batch" \
      -keys "$keys" -duration "$duration" -warmup "$warmup"
    run Go go-redis redis "$workload" "$redis_pid" "$go_load" -client redis \
      -redis "127.0.0.1:$redis_port" -workload "$workload" -in-flight "$k" -batch "$batch" \
      -keys "$keys" -duration "$duration" -warmup "$warmup"
  fi
  if [ -n "$java_cp" ]; then
    run Java "roost (Java)" roost "$workload" "$roost_pids" java -cp "$java_cp" ClientsLoad \
      --client roost --layout "$work/cluster.json" --workload "$workload" --in-flight "$k" \
      --batch "$batch" "${jvm_args[@]}"
    run Java Jedis redis "$workload" "$redis_pid" java -cp "$java_cp" ClientsLoad \
      --client redis --redis "127.0.0.1:$redis_port" --workload "$workload" --in-flight "$k" \
      --batch "$batch" "${jvm_args[@]}"
  fi
done

# --- --smoke: the checks can fail -----------------------------------------------
# Each load generator once more, briefly, where it must fail: roost's clients
# asked for twice the keys the table holds (misses), the Redis clients for
# keys whose values were overwritten (wrong values).
if [ "$smoke" = 1 ]; then
  # expect_fail LABEL PATTERN COMMAND...: COMMAND must exit non-zero, saying
  # PATTERN.
  expect_fail() {
    local label="$1" pattern="$2" rc=0
    shift 2
    echo "clients_bench: $label must fail..." >&2
    "${pin_load[@]}" "$@" >/dev/null 2>"$work/load.err" || rc=$?
    if [ "$rc" = 0 ] || ! grep -q "$pattern" "$work/load.err"; then
      failures+=("$label: exit $rc, not a failure saying '$pattern': $(grep -v '^SLF4J' "$work/load.err" | head -c 300)")
    fi
  }
  python3 "$repo/bench/clients/pairs.py" --wrong 100 |
    redis-cli -p "$redis_port" --pipe >/dev/null
  short=(--duration 0.5 --warmup 0)
  absent=(--keys $((keys * 2)) "${short[@]}")
  wrong=(--keys 100 "${short[@]}")
  if want cpp; then
    expect_fail "roost (C++) on absent keys" "answered as absent" "$cpp_load" \
      --cluster "$work/cluster.json" --workload get "${absent[@]}"
    expect_fail "hiredis on wrong values" "not the key's value" "$redis_load" run \
      --addr "127.0.0.1:$redis_port" --text-pairs --method mget "${wrong[@]}"
  fi
  if want python && [ -n "$python" ]; then
    expect_fail "roost (Python) on absent keys" "answered as absent" "$python" \
      "$repo/bench/clients/python_load.py" --client roost --layout "$work/cluster.json" \
      --workload get "${absent[@]}"
  fi
  if want python && [ -n "$redis_python" ]; then
    expect_fail "redis-py on wrong values" "wrong value" "$redis_python" \
      "$repo/bench/clients/python_load.py" --client redis --redis "127.0.0.1:$redis_port" \
      --workload multiget "${wrong[@]}"
  fi
  if [ -n "$go_load" ]; then
    expect_fail "roost (Go) on absent keys" "answered as absent" "$go_load" -client roost \
      -layout "$work/cluster.json" -workload get -keys $((keys * 2)) -duration 0.5 -warmup 0
    expect_fail "go-redis on wrong values" "wrong value" "$go_load" -client redis \
      -redis "127.0.0.1:$redis_port" -workload multiget -keys 100 -duration 0.5 -warmup 0
  fi
  if [ -n "$java_cp" ]; then
    # (A JVM's first calls can take seconds.)
    expect_fail "roost (Java) on absent keys" "answered as absent" java -cp "$java_cp" \
      ClientsLoad --client roost --layout "$work/cluster.json" --workload get \
      --keys $((keys * 2)) --duration 3 --warmup 0
    expect_fail "Jedis on wrong values" "wrong value" java -cp "$java_cp" ClientsLoad \
      --client redis --redis "127.0.0.1:$redis_port" --workload get --keys 100 \
      --duration 3 --warmup 0
  fi
fi

# --- the table -----------------------------------------------------------------
machine=$(cd "$repo/bench" && python3 -c 'import machine; print(f"{machine.summary()}, {machine.utc_now()}.")')
{
  echo
  echo "$command_line"
  echo "$keys pairs (keys of 8 to 16 bytes, 100-byte values); 2 roost-servers" \
    "(cuckoo, one per shard) and one redis-server on loopback; $pinning;" \
    "get: $in_flight in flight, multiget: $batches batches of $batch in flight;" \
    "$duration s measured after $warmup s of warm-up ($jvm_warmup s for Java). $machine"
  echo
  "$report" "$work/clients.jsonl"
} | tee "$work/clients.md" || failures+=("the report: $(tail -n 3 "$work/clients.md")")
if [ -n "$results" ]; then
  mkdir -p "$results"
  cp "$work/clients.jsonl" "$work/clients.md" "$results/"
fi
for s in "${skipped[@]}"; do echo "clients_bench: skipped $s" >&2; done
if [ ${#failures[@]} -gt 0 ]; then
  printf 'clients_bench: failed: %s\n' "${failures[@]}" >&2
  exit 1
fi
