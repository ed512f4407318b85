#!/usr/bin/env python3
"""Runs the client conformance cases (cases.json) against one client's
runner (README.md beside this file has the protocol).

Starts a real cluster: every table of cases.json built by roost-load into a
table repository (file://), and 3 shards x 2 replicas of roost-server that
pull from it. Then sends each case's steps to the runner, doing the harness
actions (kill, start, publish, rollback) between them, and compares each
answer with the step's expectation. Prints one line per case; exits 1 if
any step failed, naming the case, the step and what differed.

Binaries: ROOST_LOAD_BINARY, ROOST_SERVER_BINARY and ROOST_ADMIN_BINARY,
else build/release's.

Example:
    tests/conformance/run_conformance.py --runner cpp -- \\
        build/release/tests/conformance/cpp_conformance_runner
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[2]
SHARDS = 3
REPLICAS = 2
WAIT_S = 60.0


class Failure(Exception):
    pass


def binary(variable: str, relative: str) -> str:
    path = os.environ.get(variable) or str(ROOT / "build" / "release" / relative)
    if not os.access(path, os.X_OK):
        sys.exit(f"{path} is not an executable: build it or set {variable}")
    return path


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def unb64(text: str) -> bytes:
    return base64.b64decode(text.encode(), validate=True)


def table_rows(spec: dict[str, Any], value: Optional[str] = None) -> dict[bytes, bytes]:
    rows = spec["rows"]
    out = {}
    for i in range(rows["count"]):
        key = rows["key"].format(i=i)
        out[key.encode()] = (value or rows["value"]).format(key=key).encode()
    for k, v in spec.get("extra_b64", {}).items():
        out[unb64(k)] = unb64(v)
    return out


def expand_keys(step: dict[str, Any]) -> list[str]:
    """The keys of a multi_get step as text (key_range or keys)."""
    if "key_range" in step:
        pattern, start, end = step["key_range"]
        return [pattern.format(i=i) for i in range(start, end)]
    return list(step["keys"])


def claim_port() -> tuple[int, Any]:
    """A loopback port for a server of the cluster, held until the harness
    exits, and the open lock file that holds it.

    The port stays this server's while it is down. A port the kernel chose
    (":0") would go back to the kernel's pool with each kill, and another
    test's server could get it: the case "every replica down" once read a
    foreign shard on its dead replica's port, and the restart found the port
    taken. So the ports come from below the kernel's ephemeral range, which
    bind(":0") and outgoing connections never use, and each is claimed with
    an flock (released when the process dies), so that conformance runs
    side by side take different ones."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    first, last = (max(1024, low - 12000), low - 1) if low > 4096 else (61000, 65535)
    claims = Path(tempfile.gettempdir()) / "roost-conformance-ports"
    claims.mkdir(exist_ok=True)
    for _ in range(200):
        port = random.randint(first, last)
        lock = open(claims / str(port), "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with socket.socket() as s:  # bound by nobody else now
                s.bind(("127.0.0.1", port))
            return port, lock
        except OSError:
            lock.close()
    raise Failure(f"no free loopback port in {first}-{last} after 200 tries")


class Server:
    def __init__(self, cluster: "Cluster", shard: int, replica: int) -> None:
        self.cluster = cluster
        self.shard = shard
        self.replica = replica
        self.data = cluster.scratch / f"data-{shard}-{replica}"
        self.data.mkdir()
        port, self.port_claim = claim_port()
        self.listen = f"127.0.0.1:{port}"
        self.address = ""
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.starts = 0
        # A lagging replica (a `lagging` publish or rollback) pulls from a
        # copy of the repository taken before the change.
        self.repository = cluster.repository

    @property
    def log_path(self) -> Path:
        return self.cluster.scratch / f"server-{self.shard}-{self.replica}-{self.starts}.log"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def start(self) -> None:
        self.starts += 1
        args = [self.cluster.server_binary, "--repository", self.repository,
                "--shard", str(self.shard), "--data-dir", str(self.data),
                "--listen", self.listen, "--admin-listen", "", "--metrics-listen", "",
                "--poll-interval", "0.2", "--repository-poll", "0.1", "--drain-period", "0"]
        with open(self.log_path, "wb") as out:
            self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                            stderr=subprocess.STDOUT)

    def wait_ready(self) -> None:
        end = time.monotonic() + WAIT_S
        while True:
            log = self.log()
            m = re.search(r"lookup service listening on (\S+)\n", log)
            if m and "roost-server: ready: " in log:
                self.address = m.group(1)
                return
            assert self.process is not None
            if self.process.poll() is not None or time.monotonic() > end:
                raise Failure(f"roost-server shard {self.shard} replica {self.replica} "
                              f"did not get ready:\n{log}")
            time.sleep(0.02)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def lagging(self) -> bool:
        return self.repository != self.cluster.repository

    def restart(self, repository: str) -> None:
        """Kills it, and starts it again (same port) pulling from `repository`."""
        self.kill()
        self.repository = repository
        self.start()
        self.wait_ready()


class Cluster:
    def __init__(self, scratch: Path, tables: dict[str, Any]) -> None:
        self.scratch = scratch
        self.load = binary("ROOST_LOAD_BINARY", "loader/roost-load")
        self.server_binary = binary("ROOST_SERVER_BINARY", "server/roost-server")
        self.repository = "file://" + str(scratch / "repo")
        (scratch / "repo").mkdir()
        self.tables = tables
        self.versions: dict[str, int] = {}
        self.inputs = 0
        self.snapshots = 0
        for name, spec in tables.items():
            self.publish(name, table_rows(spec), spec["format"])
        self.servers = [[Server(self, s, r) for r in range(REPLICAS)] for s in range(SHARDS)]
        for row in self.servers:
            for server in row:
                server.start()
        for row in self.servers:
            for server in row:
                server.wait_ready()
        self.layouts = {
            "default": self.write_layout("default", list(range(SHARDS))),
            "swapped": self.write_layout("swapped", [1, 0] + list(range(2, SHARDS))),
        }

    def write_layout(self, name: str, order: list[int]) -> str:
        path = self.scratch / f"layout-{name}.json"
        shards = [[s.address for s in self.servers[i]] for i in order]
        path.write_text(json.dumps({"shards": shards}))
        return str(path)

    def publish(self, table: str, rows: dict[bytes, bytes], fmt: str) -> None:
        self.inputs += 1
        tsv = self.scratch / f"input-{self.inputs}.tsv"
        tsv.write_text("".join(f"{k.hex()}\t{v.hex()}\n" for k, v in rows.items()))
        r = subprocess.run([self.load, "build", "-q", "--format", fmt, "--key-encoding", "hex",
                            "--value-encoding", "hex", "--repository", self.repository,
                            "--table", table, "--shards", str(SHARDS), "-i", str(tsv)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise Failure(f"roost-load build of {table} failed ({r.returncode}): {r.stderr}")
        self.versions[table] = self.versions.get(table, 0) + 1

    def rollback(self, table: str, version: int) -> None:
        r = subprocess.run([self.load, "rollback", "--repository", self.repository,
                            "--table", table, "--to", f"v{version}"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise Failure(f"roost-load rollback failed ({r.returncode}): {r.stderr}")

    def lag(self, which: list[list[int]]) -> None:
        """Replicas `which` ([shard, replica] pairs) stop following the
        repository: each is restarted on a copy of it as it is now."""
        if not which:
            return
        self.snapshots += 1
        snapshot = self.scratch / f"repo-snapshot-{self.snapshots}"
        shutil.copytree(self.scratch / "repo", snapshot)
        for shard, replica in which:
            self.servers[shard][replica].restart("file://" + str(snapshot))

    def catch_up(self) -> None:
        """Every lagging replica follows the repository again."""
        for row in self.servers:
            for server in row:
                if server.lagging:
                    server.restart(self.repository)

    def wait_served(self, table: str, version: int) -> None:
        """Until every live replica that follows the repository names
        `version` of `table` in ListTables, asked with roost-admin (not the
        client under test)."""
        admin = binary("ROOST_ADMIN_BINARY", "client/roost-admin")
        shards = [[s.address for s in row if s.alive() and not s.lagging]
                  for row in self.servers]
        path = self.scratch / "layout-live.json"
        path.write_text(json.dumps({"shards": shards}))
        r = subprocess.run([admin, "wait", "--cluster", str(path), "--table", table,
                            "--for-version", str(version), "--timeout", str(WAIT_S),
                            "--interval", "0.05"], capture_output=True, text=True)
        if r.returncode != 0:
            raise Failure(f"the servers did not serve {table} v{version}: {r.stderr}")

    def restore(self) -> None:
        """Starts every killed replica again, and catches the lagging up."""
        self.catch_up()
        dead = [s for row in self.servers for s in row if not s.alive()]
        for server in dead:
            server.start()
        for server in dead:
            server.wait_ready()

    def close(self) -> list[str]:
        reports = []
        for row in self.servers:
            for server in row:
                server.kill()
                log = server.log()
                for report in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
                    if report in log:
                        reports.append(f"sanitizer report in {server.log_path}:\n{log}")
        return reports


class Runner:
    def __init__(self, command: list[str], log: Path) -> None:
        self.command = command
        self.log = log
        self.process: Optional[subprocess.Popen[str]] = None

    def ensure(self) -> None:
        if self.process is None or self.process.poll() is not None:
            try:
                self.process = subprocess.Popen(self.command, stdin=subprocess.PIPE,
                                                stdout=subprocess.PIPE,
                                                stderr=open(self.log, "ab"), text=True)
            except OSError as e:
                raise Failure(f"cannot start the runner {self.command}: {e}")

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        self.ensure()
        assert self.process is not None and self.process.stdin and self.process.stdout
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            raise Failure(f"the runner exited {self.process.wait()} before the request")
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait()
            raise Failure(f"the runner exited {code} without answering; its stderr: "
                          f"{self.log.read_text(errors='replace')[-2000:]}")
        try:
            answer = json.loads(line)
        except json.JSONDecodeError as e:
            raise Failure(f"the runner's answer is not JSON ({e}): {line[:200]!r}")
        if not isinstance(answer, dict):
            raise Failure(f"the runner's answer is not an object: {line[:200]!r}")
        return answer

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            assert self.process.stdin
            self.process.stdin.close()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def to_request(step: dict[str, Any], cluster: Cluster) -> dict[str, Any]:
    """A case's step as the runner takes it: text keys to base64, layout
    names to paths."""
    request: dict[str, Any] = {}
    for name, value in step.items():
        if name == "expect":
            continue
        if name == "key":
            request["key"] = b64(value.encode())
        elif name == "key_b64":
            request["key"] = value
        elif name in ("keys", "key_range"):
            request["keys"] = [b64(k.encode()) for k in expand_keys(step)]
        elif name in ("start", "end", "prefix"):
            request[name] = b64(value.encode())
        elif name == "layout":
            request["layout"] = cluster.layouts[value]
        else:
            request[name] = value
    if step["op"] == "open":
        request.setdefault("layout", cluster.layouts["default"])
        request.setdefault("options", {})
    return request


def check(step: dict[str, Any], answer: dict[str, Any]) -> None:
    """Raises Failure naming what in `answer` differs from step's expect."""
    expect = step.get("expect", {})
    if "error_code" in expect:
        codes = expect["error_code"]
        codes = codes if isinstance(codes, list) else [codes]
        error = answer.get("error")
        if not isinstance(error, dict) or error.get("code") not in codes:
            raise Failure(f"expected an error {' or '.join(codes)}, got {json.dumps(answer)[:400]}")
        if "error_contains" in expect and expect["error_contains"] not in error.get("message", ""):
            raise Failure(f"the error's message lacks {expect['error_contains']!r}: {error}")
        return
    if "error" in answer:
        raise Failure(f"expected an answer, got the error {answer['error']}")
    for name, want in expect.items():
        if name == "value_text":
            got = unb64(answer.get("value", "")).decode(errors="replace")
        elif name == "value_b64":
            got = answer.get("value")
        elif name == "value_versioned":
            got = unb64(answer.get("value", "")).decode(errors="replace")
            want = want.format(key=step["key"], v=version_of(answer))
        elif name in ("values_text", "all_values", "all_values_versioned"):
            results = answer.get("results")
            if not isinstance(results, list):
                raise Failure(f"no results list: {json.dumps(answer)[:400]}")
            if name != "values_text":
                keys = expand_keys(step)
                v = version_of(answer) if name == "all_values_versioned" else 0
                want = [want.format(key=k, v=v) for k in keys]
            if len(results) != len(want):
                raise Failure(f"{len(results)} results for {len(want)} keys")
            for i, (r, w) in enumerate(zip(results, want)):
                value = (unb64(r["value"]).decode(errors="replace")
                         if r.get("found") else None)
                if "error" in r or value != w:
                    raise Failure(f"result {i}: expected {w!r}, got {r}")
            continue
        elif name == "partial":
            check_partial(step, answer, want)
            continue
        elif name == "version_monotonic":
            continue  # run_case's: it needs the answers before
        elif name == "entry_keys":
            entries = answer.get("entries")
            if not isinstance(entries, list):
                raise Failure(f"no entries list: {json.dumps(answer)[:400]}")
            got = [unb64(k).decode(errors="replace") for k, _ in entries]
        elif name == "entry_values":
            for k, v in answer.get("entries", []):
                key = unb64(k).decode(errors="replace")
                if unb64(v).decode(errors="replace") != want.format(key=key):
                    raise Failure(f"entry {key!r}: expected {want.format(key=key)!r}, "
                                  f"got {unb64(v)!r}")
            continue
        else:
            got = answer.get(name)
        if got != want:
            raise Failure(f"{name}: expected {want!r}, got {got!r} (answer {json.dumps(answer)[:300]})")


def version_of(answer: dict[str, Any]) -> int:
    """The number of the version an answer names (v000002: 2)."""
    version = answer.get("version") or ""
    if not re.fullmatch(r"v[0-9]+", version):
        raise Failure(f"the answer names no version: {json.dumps(answer)[:300]}")
    return int(version[1:])


def partition_of(key: bytes, shards: int) -> int:
    """docs/format/partitioning.md, computed here rather than by the runner."""
    try:
        import xxhash
    except ImportError:
        raise Failure("the harness needs the Python package xxhash (Debian: python3-xxhash)")
    return (xxhash.xxh3_64_intdigest(key, seed=0x726F6F7374) * shards) >> 64


def check_partial(step: dict[str, Any], answer: dict[str, Any], want: dict[str, Any]) -> None:
    """Keys of the shards in want["down"] carry an error of one of
    want["codes"] naming their shard; every other key its value."""
    results = answer.get("results")
    keys = expand_keys(step)
    if not isinstance(results, list) or len(results) != len(keys):
        raise Failure(f"expected {len(keys)} results: {json.dumps(answer)[:400]}")
    down = 0
    for i, (key, r) in enumerate(zip(keys, results)):
        shard = partition_of(key.encode(), SHARDS)
        if shard in want["down"]:
            down += 1
            error = r.get("error")
            if (not isinstance(error, dict) or error.get("code") not in want["codes"]
                    or error.get("shard") != shard):
                raise Failure(f"result {i} (key {key!r}, shard {shard}, down): expected an "
                              f"error of {want['codes']} naming shard {shard}, got {r}")
        elif not r.get("found") or unb64(r["value"]).decode() != want["value"].format(key=key):
            raise Failure(f"result {i} (key {key!r}, shard {shard}): expected "
                          f"{want['value'].format(key=key)!r}, got {r}")
    if down == 0:
        raise Failure("no key of the case is in a shard that is down: the case tests nothing")


def vector_steps(path: Path) -> list[dict[str, Any]]:
    steps = []
    header: list[str] = []
    for line in path.read_text().splitlines():
        if line.startswith("#") or not line:
            continue
        cells = line.split("\t")
        if cells[0] == "key_hex":
            header = cells
            continue
        key = bytes.fromhex(cells[0])
        for n, shard in zip(header[2:], cells[2:]):
            steps.append({"op": "partition", "key_b64": b64(key), "shards": int(n),
                          "expect": {"shard": int(shard)}})
    return steps


def run_case(case: dict[str, Any], cluster: Cluster, runner: Runner) -> list[str]:
    steps = case.get("steps", [])
    if "vectors" in case:
        steps = vector_steps(ROOT / case["vectors"])
    failures = []
    newest = 0  # the newest version answered since the last open or rollback
    for number, step in enumerate(steps):
        try:
            if "do" in step:
                act(step, cluster)
                if step["do"] == "rollback":
                    newest = 0
                continue
            request = to_request(step, cluster)
            if step["op"] == "partition":
                request["key"] = step["key_b64"]
                request.pop("key_b64", None)
            if step["op"] == "open":
                newest = 0
            answer = runner.ask(request)
            check(step, answer)
            version = answer.get("version") or ""
            if version:
                number_of = version_of(answer)
                if step.get("expect", {}).get("version_monotonic") and number_of < newest:
                    raise Failure(f"answered {version} after v{newest:06d}: reads went back")
                newest = max(newest, number_of)
        except Failure as e:
            failures.append(f"step {number} ({json.dumps(step)[:160]}): {e}")
            if "do" in step:
                break
    return failures


def act(step: dict[str, Any], cluster: Cluster) -> None:
    what = step["do"]
    if what == "kill":
        cluster.servers[step["shard"]][step["replica"]].kill()
    elif what == "start":
        server = cluster.servers[step["shard"]][step["replica"]]
        server.start()
        server.wait_ready()
    elif what == "publish":
        table = step["table"]
        spec = cluster.tables[table]
        cluster.lag(step.get("lagging", []))
        cluster.publish(table, table_rows(spec, step["value"]), spec["format"])
        cluster.wait_served(table, cluster.versions[table])
    elif what == "rollback":
        cluster.lag(step.get("lagging", []))
        cluster.rollback(step["table"], step["version"])
        cluster.wait_served(step["table"], step["version"])
    elif what == "catch_up":
        cluster.catch_up()
    else:
        raise Failure(f"unknown harness action {what!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runner", required=True, help="the client's name, for the report")
    parser.add_argument("--cases", default=str(Path(__file__).parent / "cases.json"))
    parser.add_argument("--only", help="run only the cases whose name holds this text")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument("command", nargs="+", help="the runner's command line (after --)")
    args = parser.parse_args()
    spec = json.loads(Path(args.cases).read_text())
    scratch = Path(tempfile.mkdtemp(prefix=f"conformance-{args.runner}-"))
    cluster: Optional[Cluster] = None
    runner = Runner(args.command, scratch / "runner.log")
    failed = 0
    try:
        cluster = Cluster(scratch, spec["tables"])
        for case in spec["cases"]:
            if args.only and args.only not in case["name"]:
                continue
            failures = run_case(case, cluster, runner)
            print(f"{'ok  ' if not failures else 'FAIL'} {args.runner}: {case['name']}", flush=True)
            for f in failures:
                print(f"     {f}", flush=True)
            failed += bool(failures)
            cluster.restore()
    except Failure as e:
        print(f"FAIL {args.runner}: the cluster: {e}", flush=True)
        failed += 1
    finally:
        runner.close()
        if cluster is not None:
            for report in cluster.close():
                print(f"FAIL {args.runner}: {report}", flush=True)
                failed += 1
        if failed or args.keep:
            print(f"scratch directory kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"{args.runner}: {failed} case(s) failed" if failed else f"{args.runner}: every case passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
