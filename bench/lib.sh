# Shared by bench/redis_front_bench.sh, bench/redis_tls_bench.sh,
# bench/placement_bench.sh, bench/independent_load.sh (all of it),
# bench/run.sh, bench/cluster_bench.sh and bench/server_ab.sh (measured_rev):
# sourced, not run. Usage, after defining die():
#   source bench/lib.sh
#   bench_setup NAME   # pin_server, pin_load, placement; work (a new
#                      # /tmp/roost-NAME.XXXXXX, removed on exit with every
#                      # process start() began)
#   start NAME PATTERN COMMAND...  # COMMAND in the background, its log
#                      # WORK/NAME.log, until a line matches PATTERN; sets pid
#   port_of NAME PREFIX  # the port of NAME's log line "PREFIX listening on
#                      # 127.0.0.1:PORT"
#   measured_rev REPO  # REPO's short revision, " (with local changes)"
#                      # added when a file differs that a run does not
#                      # write itself

bench_setup() {
  if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    pin_server=(taskset -c 0)
    pin_load=(taskset -c 1)
    placement="servers pinned to core 0, the load generator to core 1 (taskset)"
  else
    pin_server=()
    pin_load=()
    placement="not pinned ($(nproc) cores or no taskset)"
  fi
  work=$(mktemp -d "/tmp/roost-$1.XXXXXX")
  pids=()
  trap bench_cleanup EXIT
}

bench_cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}

start() {
  local name=$1 pattern=$2 log=$work/$1.log
  shift 2
  "$@" >"$log" 2>&1 &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 600); do
    grep -Eq "$pattern" "$log" && return
    kill -0 "$pid" 2>/dev/null || die "$name exited at start: $(cat "$log")"
    sleep 0.1
  done
  die "$name not ready after a minute: $(cat "$log")"
}

port_of() { sed -n "s/^$2 listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p" "$work/$1.log" | head -n 1; }

# What the suite's own runs write (docs/results, docs/benchmarks.md,
# docs/img) is not a change to the code measured: a bench/run.sh that its
# machine check stopped has already emptied docs/results.
measured_rev() {
  local rev
  rev=$(git -C "$1" rev-parse --short HEAD 2>/dev/null || echo unknown)
  [ -z "$(git -C "$1" status --porcelain -- . ':(exclude)docs/results' \
    ':(exclude)docs/benchmarks.md' ':(exclude)docs/img' 2>/dev/null)" ] ||
    rev="$rev (with local changes)"
  echo "$rev"
}
