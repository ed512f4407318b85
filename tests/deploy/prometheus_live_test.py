#!/usr/bin/python3
"""deploy/prometheus/roost-rules.yml and deploy/grafana/roost.json against a
live Prometheus scraping live roost-servers under load.

On loopback, each on a free port and in a scratch directory of its own:
MinIO as the table repository; roost-load publishing three tables into it
(users and prices in 2 shards, archive whole, each with --data-timestamp);
three roost-servers pulling from it (shard 0 twice, shard 1 once), with
the target labels namespace="live" and pod="roost-S-X" as Kubernetes gives
them; Prometheus (Debian's /usr/bin/prometheus) scraping them every second
and evaluating the rules every second. The Python routing client
(clients/python) reads from the servers for --duration seconds, hits,
misses and unknown tables, while a second version of users is published.

Then, over Prometheus's HTTP API:
  - every target is up;
  - every rule evaluates without error, and every recording rule returns
    at least one series;
  - the alerts a healthy cluster should have are the only ones pending or
    firing: RoostDataTooOld for prices (data 3 h old, over its own 2 h
    threshold, deploy/prometheus/tests/data_age_overrides.yml) and for
    archive (2 days old, over the default 36 h), not users (1 h old);
  - every variable of the dashboard has values, and every query of every
    panel, with the variables filled in as Grafana does, returns at least
    one series with a value over the run.
Finally deploy/grafana/plot.py draws every row of the dashboard with
gnuplot into --plots (docs/img/ holds the ones from a run, for the docs).

Usage: tests/deploy/prometheus_live_test.py --source DIR --roost-load BIN
           --roost-server BIN --minio BIN [--plots DIR] [--duration S]
Exits 0 when every check passed, 1 naming each that did not.
"""

import argparse
import ctypes
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

NAMESPACE = "live"
BUCKET = "tables"
ACCESS_KEY = "roost-live-test"
SECRET_KEY = "roost-live-test-secret"
# (pod, shard) of each roost-server.
SERVERS = [("roost-0-a", 0), ("roost-0-b", 0), ("roost-1-a", 1)]
# Alerts whose firing depends on the machine rather than on roost: a busy
# machine slows lookups, a full disk is the machine's. Reported, not failed.
MACHINE_ALERTS = {"RoostLatencyHigh", "RoostDataDiskFull"}


def log(*words):
    print("prometheus_live_test:", *words, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent():
    """In the child: SIGKILL when the test dies, however it ends."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Children:
    """The processes the test started, each logging to a file; stopped
    (SIGTERM, then SIGKILL) by pid at the end."""

    def __init__(self, scratch):
        self.scratch = scratch
        self.procs = []

    def start(self, name, args, env=None):
        path = os.path.join(self.scratch, f"{name}.log")
        out = open(path, "w")
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, env=env,
                                preexec_fn=die_with_parent)
        out.close()
        proc.log_path = path
        proc.name = name
        self.procs.append(proc)
        return proc

    def stop_all(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def read_log(proc):
    with open(proc.log_path, errors="replace") as f:
        return f.read()


def wait_for(what, predicate, timeout=60, procs=()):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        for proc in procs:
            if proc.poll() is not None:
                raise RuntimeError(f"{proc.name} exited ({proc.returncode}) "
                                   f"while waiting for {what}:\n{read_log(proc)[-3000:]}")
        time.sleep(0.1)
    tails = "".join(f"\n--- {p.name}:\n{read_log(p)[-3000:]}" for p in procs)
    raise RuntimeError(f"timed out after {timeout} s waiting for {what}{tails}")


def http_status(url, method="GET"):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method),
                                    timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


def start_minio(children, minio, scratch):
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MINIO_") and k != "HOME"}
    env.update(MINIO_ROOT_USER=ACCESS_KEY, MINIO_ROOT_PASSWORD=SECRET_KEY,
               MINIO_BROWSER="off", MINIO_UPDATE="off", HOME=scratch)
    proc = children.start("minio", [
        minio, "server", "--quiet", "--address", f"127.0.0.1:{port}",
        "--console-address", f"127.0.0.1:{free_port()}",
        os.path.join(scratch, "minio")], env)
    endpoint = f"http://127.0.0.1:{port}"
    wait_for("MinIO", lambda: http_status(f"{endpoint}/minio/health/live") == 200,
             procs=[proc])

    # The bucket, by an S3 request signed by curl (--aws-sigv4); MinIO
    # answers 503 until its storage is up.
    def create_bucket():
        out = subprocess.run(
            ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PUT",
             "--aws-sigv4", "aws:amz:us-east-1:s3", "--user",
             f"{ACCESS_KEY}:{SECRET_KEY}", f"{endpoint}/{BUCKET}"],
            capture_output=True, text=True)
        return out.stdout.strip() == "200"
    wait_for("MinIO's bucket", create_bucket, procs=[proc])
    return endpoint


def publish(roost_load, env, scratch, table, keys, shards, data_age, fmt="cuckoo"):
    """Publishes a version of `table` to the repository: `keys` keys
    key:NNNNNN, data `data_age` seconds old."""
    path = os.path.join(scratch, f"{table}.tsv")
    with open(path, "w") as f:
        for i in range(keys):
            f.write(f"key:{i:06d}\t{{\"id\":{i},\"table\":\"{table}\"}}\n")
    args = [roost_load, "build", "-q", "-i", path, "--format", fmt,
            "--repository", f"s3://{BUCKET}/{NAMESPACE}", "--table", table,
            "--data-timestamp", str(int(time.time() - data_age))]
    if shards > 1:
        args += ["--shards", str(shards)]
    out = subprocess.run(args, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"roost-load build {table}: exit {out.returncode}: "
                           f"{out.stderr}")


def start_servers(children, roost_server, env, scratch):
    servers = []
    for pod, shard in SERVERS:
        data = os.path.join(scratch, f"data-{pod}")
        os.makedirs(data)
        proc = children.start(pod, [
            roost_server, "--data-dir", data, "--listen", "127.0.0.1:0",
            "--admin-listen=", "--metrics-listen", "127.0.0.1:0",
            "--repository", f"s3://{BUCKET}/{NAMESPACE}", "--shard", str(shard),
            "--repository-poll", "0.5", "--poll-interval", "1",
            "--resident-refresh", "1", "--drain-period", "0"], env)
        servers.append({"pod": pod, "shard": shard, "proc": proc})
    for s in servers:
        def ports(proc=s["proc"]):
            text = read_log(proc)
            if "roost-server: ready:" not in text:
                return None
            found = {}
            for line in text.splitlines():
                for what in ("lookup service", "metrics"):
                    prefix = f"roost-server: {what} listening on "
                    if line.startswith(prefix):
                        found[what] = line[len(prefix):].strip()
            return found if len(found) == 2 else None
        found = wait_for(f"{s['pod']} to be ready", ports, procs=[s["proc"]])
        s["lookup"], s["metrics"] = found["lookup service"], found["metrics"]
    return servers


def start_prometheus(children, prometheus, source, scratch, servers):
    port = free_port()
    rules = [os.path.join(source, "deploy/prometheus/roost-rules.yml"),
             os.path.join(source, "deploy/prometheus/tests/data_age_overrides.yml")]
    targets = "".join(
        f"      - targets: ['{s['metrics']}']\n"
        f"        labels: {{namespace: {NAMESPACE}, pod: {s['pod']}}}\n"
        for s in servers)
    config = os.path.join(scratch, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n"
                "  scrape_interval: 1s\n"
                "  scrape_timeout: 1s\n"
                "  evaluation_interval: 1s\n"
                "rule_files:\n" + "".join(f"  - {json.dumps(r)}\n" for r in rules) +
                "scrape_configs:\n"
                "  - job_name: roost\n"
                "    static_configs:\n" + targets)
    proc = children.start("prometheus", [
        prometheus, f"--config.file={config}",
        f"--storage.tsdb.path={os.path.join(scratch, 'tsdb')}",
        f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"])
    url = f"http://127.0.0.1:{port}"
    wait_for("Prometheus", lambda: http_status(f"{url}/-/ready") == 200, procs=[proc])
    return url, proc


class Load:
    """Lookups through the Python routing client, in a thread: batches of
    50 keys (4 in 5 present), single Gets, and now and then a table that
    does not exist (NotFound)."""

    def __init__(self, source, servers):
        sys.path.insert(0, os.path.join(source, "clients/python/src"))
        import roost  # noqa: E402 (the checkout's client, no install)
        self.roost = roost
        shards = [[s["lookup"] for s in servers if s["shard"] == i] for i in range(2)]
        self.client = roost.Client(shards=shards, timeout=5)
        self.stop = threading.Event()
        self.calls = 0
        self.errors = []
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        rng = random.Random(15)
        rounds = 0
        while not self.stop.is_set():
            rounds += 1
            try:
                for table, size in (("users", 20000), ("prices", 5000), ("archive", 2000)):
                    keys = [f"key:{rng.randrange(size * 5 // 4):06d}".encode()
                            for _ in range(50)]
                    self.client.get_many(table, keys)
                    self.client.get(table, keys[0])
                    self.calls += 2
                if rounds % 20 == 0:
                    try:
                        self.client.get("no-such-table", b"k")
                    except self.roost.RoostError:
                        pass
                    self.calls += 1
            except Exception as e:  # noqa: BLE001 (reported, not raised)
                self.errors.append(repr(e))
                time.sleep(0.1)
            time.sleep(0.01)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=10)
        self.client.close()


def check_dashboard(dashboard):
    """What Grafana would take badly, or a reader: the variables the
    queries use, the data source of every panel and query the $datasource
    variable, ids unique, no panels over each other."""
    failures = []
    names = [v["name"] for v in dashboard["templating"]["list"]]
    if names != ["datasource", "namespace", "shard", "table"]:
        failures.append(f"dashboard variables: {names}")
    ids = [p["id"] for p in dashboard["panels"]]
    if len(ids) != len(set(ids)):
        failures.append(f"dashboard panel ids repeat: {ids}")
    cells = {}
    for p in dashboard["panels"]:
        g = p["gridPos"]
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                if (x, y) in cells:
                    failures.append(f"panel {p['title']} overlaps {cells[(x, y)]}")
                    break
                cells[(x, y)] = p["title"]
            else:
                continue
            break
        if p["type"] == "row":
            continue
        sources = [p.get("datasource")] + [t.get("datasource") for t in p["targets"]]
        if any(d != {"type": "prometheus", "uid": "${datasource}"} for d in sources):
            failures.append(f"panel {p['title']}: a data source other than $datasource")
    return failures


def check(source, prom, start, end, plots, plot_start):
    """Every check after the run; returns the failures. The plots show
    [plot_start, end]."""
    sys.path.insert(0, os.path.join(source, "deploy/grafana"))
    import plot  # noqa: E402
    api = plot.Prometheus(prom)
    failures = []

    targets = api.get("/api/v1/targets")["activeTargets"]
    down = [t["labels"]["pod"] for t in targets if t["health"] != "up"]
    if len(targets) != len(SERVERS) or down:
        failures.append(f"targets: {len(targets)}, not up: {down}")

    groups = api.get("/api/v1/rules")["groups"]
    records, alerts_evaluated = set(), 0
    for group in groups:
        for rule in group["rules"]:
            name = rule.get("name")
            if rule.get("health") != "ok" or rule.get("lastError"):
                failures.append(f"rule {name}: health {rule.get('health')}: "
                                f"{rule.get('lastError')}")
            if rule["type"] == "recording":
                records.add(name)
            else:
                alerts_evaluated += 1
    for name in sorted(records):
        if not api.query(name):
            failures.append(f"recording rule {name}: no series")
    if alerts_evaluated < 16:
        failures.append(f"only {alerts_evaluated} alerting rules loaded")

    active = sorted((a["labels"]["alertname"], a["labels"].get("table", ""), a["state"])
                    for a in api.get("/api/v1/alerts")["alerts"])
    expected = {("RoostDataTooOld", "prices"), ("RoostDataTooOld", "archive")}
    seen = {(name, table) for name, table, _ in active}
    for missing in sorted(expected - seen):
        failures.append(f"alert {missing[0]} for table {missing[1]} is not pending")
    for name, table, state in active:
        if (name, table) in expected:
            continue
        if name in MACHINE_ALERTS:
            log(f"note: {name} is {state} (it depends on this machine)")
            continue
        failures.append(f"alert {name} ({table or 'no table'}) is {state} "
                        f"in a healthy cluster")

    with open(os.path.join(source, "deploy/grafana/roost.json")) as f:
        dashboard = json.load(f)
    failures += check_dashboard(dashboard)
    values = plot.resolve_variables(api, dashboard, {"namespace": NAMESPACE})
    for name, want in (("shard", "(0|1)"), ("table", "(archive|prices|users)")):
        if values.get(name) != want:
            failures.append(f"dashboard variable {name}: {values.get(name)}, "
                            f"not {want}")
    fetched = plot.fetch_panels(api, dashboard, values, start, end, 1)
    queries = 0
    for row, panels in fetched:
        for panel, targets in panels:
            for target, series in targets:
                queries += 1
                valued = [name for name, points in series
                          if any(v == v for _, v in points)]  # not all NaN
                if not valued:
                    failures.append(f"panel {row} / {panel['title']}: "
                                    f"{target['expr']}: {len(series)} series, "
                                    f"none with a value")
    pngs = []
    if plots:
        try:
            shown = plot.fetch_panels(api, dashboard, values, plot_start, end, 1)
            pngs = plot.plot_rows(shown, plot_start, end, plots)
        except Exception as e:  # noqa: BLE001 (a failure like the others)
            failures.append(f"plotting: {e}")
    log(f"{len(records)} recording rules with series, {alerts_evaluated} alerts "
        f"evaluated, active: {active}")
    log(f"{queries} panel queries; plots: {' '.join(pngs) or 'none'}")
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--roost-load", required=True)
    parser.add_argument("--roost-server", required=True)
    parser.add_argument("--minio", default=os.environ.get("ROOST_MINIO"))
    parser.add_argument("--prometheus", default="/usr/bin/prometheus")
    parser.add_argument("--plots", help="draw the dashboard's rows here")
    parser.add_argument("--duration", type=float, default=45,
                        help="seconds of load (default 45)")
    parser.add_argument("--plot-window", type=float, default=150,
                        help="plot the last this many seconds (default 150): "
                        "for plots whose 5-minute rates are whole, run for "
                        "450 s or more")
    args = parser.parse_args()
    args.source = os.path.abspath(args.source)
    if os.environ.get("ROOST_MINIO"):
        args.minio = os.environ["ROOST_MINIO"]
    for what, path in (("prometheus", args.prometheus), ("MinIO", args.minio)):
        if not path or not os.access(path, os.X_OK):
            log(f"no {what} at {path}: run scripts/install-deps.sh")
            return 1

    began = time.monotonic()
    scratch = tempfile.mkdtemp(prefix="roost-prometheus-live-")
    children = Children(scratch)
    try:
        endpoint = start_minio(children, args.minio, scratch)
        env = dict(os.environ, AWS_ACCESS_KEY_ID=ACCESS_KEY,
                   AWS_SECRET_ACCESS_KEY=SECRET_KEY, AWS_REGION="us-east-1",
                   AWS_ENDPOINT_URL=endpoint)
        env.pop("AWS_SESSION_TOKEN", None)
        env.pop("AWS_ENDPOINT_URL_S3", None)
        publish(args.roost_load, env, scratch, "users", 20000, 2, 3600)
        publish(args.roost_load, env, scratch, "prices", 5000, 2, 3 * 3600)
        publish(args.roost_load, env, scratch, "archive", 2000, 1, 2 * 86400,
                fmt="block")
        servers = start_servers(children, args.roost_server, env, scratch)
        prom, _ = start_prometheus(children, args.prometheus, args.source,
                                   scratch, servers)
        api_up = lambda: json.load(urllib.request.urlopen(  # noqa: E731
            f"{prom}/api/v1/query?query=sum(up)", timeout=5))["data"]["result"]
        wait_for("every target scraped",
                 lambda: (r := api_up()) and float(r[0]["value"][1]) == len(SERVERS))
        log(f"up after {time.monotonic() - began:.1f} s; load for {args.duration:.0f} s")
        start = time.time()
        # A second version of users a third of the way in, or 90 s before
        # the end of a long run (in the plots' window): pulls, swaps, the
        # POINTER to serving.
        publish_at = max(args.duration / 3, args.duration - 90)
        with Load(args.source, servers) as load:
            time.sleep(publish_at)
            publish(args.roost_load, env, scratch, "users", 21000, 2, 1800)
            time.sleep(args.duration - publish_at)
        time.sleep(3)  # the last scrapes and evaluations
        end = time.time()
        log(f"{load.calls} lookup calls, {len(load.errors)} failed")
        failures = [f"lookup calls failed: {load.errors[:3]}"] if load.errors else []
        failures += check(args.source, prom, start, end, args.plots,
                          max(start, end - args.plot_window))
    except Exception as e:  # noqa: BLE001 (one failure line, then exit 1)
        failures = [f"{type(e).__name__}: {e}"]
    finally:
        children.stop_all()
    for f in failures:
        log("FAILED:", f)
    if failures:
        log(f"logs kept in {scratch}")
        return 1
    shutil.rmtree(scratch, ignore_errors=True)
    log(f"passed in {time.monotonic() - began:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
