"""The committed roost/v1 modules are what generate.sh makes from
proto/roost/v1/lookup.proto today: regenerated into a scratch folder, they
must be the same bytes (a proto change without regenerating fails here)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "clients" / "python"
FILES = ["lookup_pb2.py", "lookup_pb2.pyi", "lookup_pb2_grpc.py"]


def test_regenerating_gives_the_same_bytes(tmp_path: Path) -> None:
    r = subprocess.run([str(PACKAGE / "generate.sh"), str(tmp_path)], capture_output=True,
                       text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    for name in FILES:
        fresh = (tmp_path / "roost" / "v1" / name).read_bytes()
        committed = (PACKAGE / "src" / "roost" / "v1" / name).read_bytes()
        assert fresh == committed, f"{name} differs: run clients/python/generate.sh"


def test_the_generated_stub_speaks_the_service() -> None:
    from roost.v1 import lookup_pb2, lookup_pb2_grpc
    assert hasattr(lookup_pb2_grpc, "LookupStub")
    service = lookup_pb2.DESCRIPTOR.services_by_name["Lookup"]
    assert {m.name for m in service.methods} >= {"Get", "MultiGet", "ListTables", "Scan"}
    assert lookup_pb2.MultiGetResponse(version="v000007").version == "v000007"
