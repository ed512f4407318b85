#!/usr/bin/env python3
"""The conformance runner of the Python client (README.md beside this file
has the protocol): one JSON request per line on stdin, one answer per line
on stdout, driving roost.Client.

Example:
    tests/conformance/run_conformance.py --runner python -- \\
        VENV/bin/python tests/conformance/python_runner.py
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any, Optional

import prometheus_client

import roost

_OPTIONS = {"timeout_s": "timeout", "hedge_s": "hedge_after", "token": "token",
            "partial": "partial", "monotonic": "monotonic"}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode(), validate=True)


class UsageError(Exception):
    pass


def _members(request: dict[str, Any], allowed: set[str]) -> None:
    unknown = set(request) - allowed - {"op"}
    if unknown:
        raise UsageError(f"unknown members {sorted(unknown)} of {request['op']}")


def _metrics(registry: Any) -> dict[str, Any]:
    """The protocol's metrics answer: each metric summed over its labels."""
    totals: dict[str, Any] = {"requests": 0, "keys": 0, "errors": {}, "partial_keys": 0,
                              "hedges": 0, "retries": 0, "version_switches": 0}
    for family in registry.collect():
        name = family.name.removeprefix("roost_client_")
        for sample in family.samples:
            if not sample.name.endswith("_total"):
                continue
            if name == "errors":
                code = sample.labels["code"]
                totals["errors"][code] = totals["errors"].get(code, 0) + int(sample.value)
            elif name in totals:
                totals[name] += int(sample.value)
    return totals


class Runner:
    def __init__(self) -> None:
        self.client: Optional[roost.Client] = None
        self.registry: Any = None

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "partition":
            _members(request, {"key", "shards"})
            return {"shard": roost.partition_of(_unb64(request["key"]), request["shards"])}
        if op == "open":
            _members(request, {"layout", "options"})
            kwargs = {}
            for name, value in request.get("options", {}).items():
                if name not in _OPTIONS:
                    raise UsageError(f"the Python client has no option {name}")
                kwargs[_OPTIONS[name]] = value
            if self.client is not None:
                self.client.close()
                self.client = None
            # A registry of its own: the metrics op answers since this open.
            self.registry = prometheus_client.CollectorRegistry()
            self.client = roost.Client.from_layout_file(
                request["layout"], metrics=roost.ClientMetrics(self.registry), **kwargs)
            return {}
        if self.client is None:
            raise UsageError(f"{op} before open")
        if op == "get":
            _members(request, {"table", "key", "version"})
            value, version = self.client.get_versioned(request["table"], _unb64(request["key"]),
                                                       version=request.get("version"))
            return {"found": value is not None, "value": _b64(value or b""), "version": version}
        if op == "multi_get":
            _members(request, {"table", "keys", "version"})
            batch = self.client.get_many_versioned(
                request["table"], [_unb64(k) for k in request["keys"]],
                version=request.get("version"))
            results: list[dict[str, Any]] = []
            for i, v in enumerate(batch.values):
                error = batch.errors.get(i)
                if error is not None:
                    code = error.code.name if error.code is not None else "UNKNOWN"
                    results.append({"error": {"code": code, "message": str(error),
                                              "shard": error.shard}})
                else:
                    results.append({"found": v is not None, "value": _b64(v or b"")})
            return {"results": results, "version": batch.version}
        if op == "scan":
            _members(request, {"table", "start", "end", "prefix", "limit"})
            result = self.client.scan(request["table"], start=_unb64(request.get("start", "")),
                                      end=_unb64(request.get("end", "")),
                                      prefix=_unb64(request.get("prefix", "")),
                                      limit=request.get("limit", 0))
            return {"entries": [[_b64(k), _b64(v)] for k, v in result.entries],
                    "more": result.more, "version": result.version}
        if op == "metrics":
            _members(request, set())
            return _metrics(self.registry)
        if op == "wait":
            _members(request, {"table", "version", "timeout_s"})
            self.client.wait(request["table"], request["version"], timeout=request["timeout_s"],
                             poll_interval=0.05)
            return {}
        raise UsageError(f"unknown op {op!r}")


def main() -> int:
    runner = Runner()
    for line in sys.stdin:
        try:
            answer = runner.handle(json.loads(line))
        except UsageError as e:
            answer = {"error": {"code": "USAGE", "message": str(e)}}
        except roost.LayoutError as e:
            answer = {"error": {"code": "LAYOUT", "message": str(e)}}
        except roost.RoostError as e:
            code = e.code.name if e.code is not None else "UNKNOWN"
            answer = {"error": {"code": code, "message": str(e)}}
        except (KeyError, TypeError, ValueError) as e:
            answer = {"error": {"code": "USAGE", "message": f"{type(e).__name__}: {e}"}}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    if runner.client is not None:
        runner.client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
