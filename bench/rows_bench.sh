#!/usr/bin/env bash
# A table of rows over loopback (issue 33): what projection and scoring on
# the server save. Builds N rows of 20 fields (an int64 id, 8 float64s, 4
# int32s, 4 strings, a list of strings, a bool and a 128-float embedding)
# from JSON Lines with `roost-load build --rows --schema`, starts
# roost-server pinned to CPU 0 and runs bench/rows_bench pinned to CPU 1
# (taskset; on a machine of one CPU, unpinned), each mode for --seconds
# after a second of warm-up:
#   MultiGet(100) of whole rows against a projection onto 2 of the 20
#   fields (ltv, country): keys/s and response bytes per key;
#   MultiGet(1000) scored on the server (dot product with a 128-float
#   query; scores only) against fetching each key's embedding (a
#   projection) or whole row and scoring it in the client.
# Prints a Markdown table (the figures docs/features.md quotes).
#
# Usage: bench/rows_bench.sh [--rows N] [--seconds S] [--threads T]
#            [--dir DIR] [--no-build]
#   --rows N     rows in the table (default 200000)
#   --seconds S  measured seconds per mode (default 5)
#   --threads T  rows_bench's callers, one call in flight each (default 4)
#   --dir DIR    scratch (default /tmp/roost-rows-bench), emptied first
#   --no-build   use the binaries in build/release as they are
set -euo pipefail
cd "$(dirname "$0")/.."

rows=200000
seconds=5
threads=4
dir=/tmp/roost-rows-bench
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --rows) rows=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "rows_bench.sh: unknown argument $1" >&2; exit 64 ;;
  esac
done
if [ "$build" = 1 ]; then
  scripts/build.sh roost-load roost-server rows_bench >/dev/null
fi
bin=build/release
roost_load=$bin/loader/roost-load
roost_server=$bin/server/roost-server
rows_bench=$bin/bench/rows_bench

chmod -R u+w "$dir" 2>/dev/null || true
rm -rf "$dir"
mkdir -p "$dir/data"
server_pid=
cleanup() {
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT

echo "generating $rows rows of 20 fields..." >&2
python3 - "$rows" "$dir" <<'EOF'
import json, random, sys
n, out = int(sys.argv[1]), sys.argv[2]
fields = [("id", "int64")] + [(f"f{i}", "float64") for i in range(7)] + [
    ("ltv", "float64")] + [(f"count{i}", "int32") for i in range(4)] + [
    ("country", "string"), ("city", "string"), ("device", "string"),
    ("plan", "string"), ("segments", "string_list"), ("active", "bool"),
    ("embedding", "float32_list")]
assert len(fields) == 20
json.dump({"encoding": "roost-row-1",
           "fields": [{"name": a, "type": t, "nullable": False}
                      for a, t in fields]},
          open(f"{out}/schema.json", "w"))
rng = random.Random(33)
countries = ["DE", "FR", "US", "BR", "JP", "IN"]
with open(f"{out}/rows.jsonl", "w") as f:
    for i in range(n):
        row = {"key": f"user{i:08d}", "id": i, "ltv": rng.random() * 1000,
               "country": rng.choice(countries), "city": f"city{i % 997}",
               "device": rng.choice(["ios", "android", "web"]),
               "plan": rng.choice(["free", "pro", "team"]),
               "segments": [f"s{rng.randrange(50)}" for _ in range(3)],
               "active": rng.random() < 0.7,
               "embedding": [round(rng.gauss(0, 1), 4) for _ in range(128)]}
        for k in range(7):
            row[f"f{k}"] = rng.random()
        for k in range(4):
            row[f"count{k}"] = rng.randrange(1000)
        f.write(json.dumps(row, separators=(",", ":")) + "\n")
EOF
echo "building the table..." >&2
"$roost_load" build -q -i "$dir/rows.jsonl" --input-format jsonl \
  --key-field key --rows --schema "$dir/schema.json" --format cuckoo \
  --data-dir "$dir/data" --table features
rm -f "$dir/rows.jsonl"

server_cpu=(taskset -c 0)
client_cpu=(taskset -c 1)
pinned="server on CPU 0, rows_bench on CPU 1"
if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null; then
  server_cpu=()
  client_cpu=()
  pinned="unpinned"
fi
"${server_cpu[@]}" "$roost_server" --data-dir "$dir/data" \
  --listen 127.0.0.1:0 --admin-listen '' --metrics-listen '' \
  --drain-period 0 --shutdown-timeout 1 2>"$dir/server.log" &
server_pid=$!
for _ in $(seq 600); do
  grep -q "roost-server: ready: " "$dir/server.log" && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$dir/server.log" >&2; exit 1; }
  sleep 0.1
done
port=$(sed -n 's/^roost-server: lookup service listening on .*:\([0-9]*\)$/\1/p' \
  "$dir/server.log" | head -n 1)

run() {
  "${client_cpu[@]}" "$rows_bench" --addr "127.0.0.1:$port" --table features \
    --keys "$rows" --seconds "$seconds" --threads "$threads" "$@"
}
{
  run --mode rows --batch 100
  run --mode project --batch 100 --fields ltv,country
  run --mode server-score --batch 1000
  run --mode client-score --batch 1000
  run --mode client-rows --batch 1000
} | tee "$dir/results.jsonl" >&2

python3 - "$dir/results.jsonl" "$rows" "$pinned" <<'EOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
by = {x["mode"]: x for x in r}
print(f"{sys.argv[2]} rows of 20 fields; {sys.argv[3]}\n")
print("| mode | batch | keys/s | bytes/key | client CPU µs/key |")
print("| --- | ---: | ---: | ---: | ---: |")
for x in r:
    print(f"| {x['mode']} | {x['batch']} | {x['keys_per_s']:,.0f} | "
          f"{x['bytes_per_key']:.1f} | "
          f"{x['client_cpu_s_per_1000_keys'] * 1000:.2f} |")
p, w = by["project"], by["rows"]
print(f"\nprojection (2 of 20 fields) / whole rows: "
      f"{p['keys_per_s'] / w['keys_per_s']:.2f}x keys/s, "
      f"{p['bytes_per_key'] / w['bytes_per_key']:.3f}x bytes")
s = by["server-score"]
for m in ("client-score", "client-rows"):
    c = by[m]
    print(f"server-score / {m}: {s['keys_per_s'] / c['keys_per_s']:.2f}x "
          f"keys/s, {s['bytes_per_key'] / c['bytes_per_key']:.3f}x bytes")
EOF
