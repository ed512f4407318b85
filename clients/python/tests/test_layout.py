"""Layout files and the shards argument: every malformed one is a
LayoutError naming the file and what was wrong; a good one works."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import roost
from conftest import Cluster, keys_and_values

BAD_DOCUMENTS: list[tuple[str, Any, str]] = [
    ("a list", [["127.0.0.1:1"]], 'must be a JSON object with "shards"'),
    ("no shards", {"tls": {}}, 'no "shards"'),
    ("shards not a list", {"shards": "a:1"}, '"shards" must be a list'),
    ("no shard", {"shards": []}, "must list 1 to 1024 shards, not 0"),
    ("too many shards", {"shards": [["a:1"]] * 1025}, "must list 1 to 1024 shards, not 1025"),
    ("shard not a list", {"shards": ["a:1"]}, '"shards"[0]: must be a list of addresses'),
    ("shard without replica", {"shards": [["a:1"], []]}, "[1]: shard 1 has no replica"),
    ("address a number", {"shards": [["a:1", 7001]]}, "[0][1]: must be"),
    ("address empty", {"shards": [[""]]}, "[0][0]: must be"),
    ("address with spaces", {"shards": [[" a:1"]]}, "has white space around it"),
    ("tls not an object", {"shards": [["a:1"]], "tls": True}, '"tls" must be an object'),
    ("too many replicas", {"shards": [["a:1"] * 1025]}, "[0]: more than 1024 replicas"),
    ("tls field not a string", {"shards": [["a:1"]], "tls": {"ca": 1}},
     '"tls.ca" must be a non-empty string'),
    ("cert without key", {"shards": [["a:1"]], "tls": {"cert": "c.pem"}},
     '"tls.cert" and "tls.key" go together'),
]


@pytest.mark.parametrize("name,doc,message", BAD_DOCUMENTS, ids=[c[0] for c in BAD_DOCUMENTS])
def test_a_bad_layout_file_names_what_is_wrong(tmp_path: Path, name: str, doc: Any,
                                              message: str) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(roost.LayoutError) as e:
        roost.Client.from_layout_file(path)
    assert message in str(e.value)
    assert str(path) in str(e.value)


@pytest.mark.parametrize("content,message", [
    (b'{"shards": [["a:1"]', "not JSON: Expecting"),
    (b"", "not JSON"),
    (b'{"shards": [["\xff"]]}', r"not UTF-8 \(byte 14\)"),
    (b" " * (1 << 20) + b"{}", "larger than 1 MiB"),
])
def test_a_file_that_is_no_layout_is_refused(tmp_path: Path, content: bytes,
                                             message: str) -> None:
    path = tmp_path / "cluster.json"
    path.write_bytes(content)
    with pytest.raises(roost.LayoutError, match=message):
        roost.Layout.from_file(path)


@pytest.mark.parametrize("doc,message", [
    ({"shards": [["a:1"]], "TLS": {"ca": "ca.pem"}},
     'unknown member "TLS" (known: "shards", "tls")'),
    ({"shards": [["a:1"]], "comment": "x"},
     'unknown member "comment" (known: "shards", "tls")'),
    ({"shards": [["a:1"]], "tls": {"cafile": "ca.pem"}},
     'unknown member "tls.cafile" (known: ca, cert, key, server_name)'),
])
def test_unknown_members_are_refused(tmp_path: Path, doc: Any, message: str) -> None:
    # A misspelt "tls" would otherwise quietly mean plaintext.
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(roost.LayoutError) as e:
        roost.Layout.from_file(path)
    assert str(e.value) == f"layout {path}: {message}"


def test_an_empty_tls_is_tls_with_the_systems_cas(tmp_path: Path) -> None:
    # The same as the C++ client.
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"shards": [["a:1"]], "tls": {}}))
    layout = roost.Layout.from_file(path)
    assert layout.shards == (("a:1",),) and layout.tls == roost.TlsConfig()


@pytest.mark.parametrize("depth", [2_000, 500_000])  # 500,000: just under 1 MiB
def test_a_deeply_nested_file_is_a_layout_error(tmp_path: Path, depth: int) -> None:
    # Python's json recurses per level: RecursionError, not a LayoutError.
    path = tmp_path / "cluster.json"
    path.write_text('{"shards": ' + "[" * depth + "]" * depth + "}")
    with pytest.raises(roost.LayoutError, match=f"layout {path}: nested too deeply"):
        roost.Client.from_layout_file(path)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(roost.LayoutError, match=f"cannot read layout {tmp_path}/nope.json"):
        roost.Client.from_layout_file(tmp_path / "nope.json")


def test_tls_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "etc"
    folder.mkdir()
    path = folder / "cluster.json"
    path.write_text(json.dumps({"shards": [["a:1"]], "tls": {
        "ca": "ca.pem", "cert": "/abs/client.pem", "key": "client.key",
        "server_name": "roost.internal"}}))
    layout = roost.Layout.from_file(path)
    assert layout.tls == roost.TlsConfig(ca=str(folder / "ca.pem"), cert="/abs/client.pem",
                                         key=str(folder / "client.key"),
                                         server_name="roost.internal")


@pytest.mark.parametrize("tls,message", [
    ({"ca": "missing.pem"}, 'cannot read "ca"'),
    ({"ca": "notpem.pem"}, '"ca" .*notpem.pem holds no PEM block'),
])
def test_unreadable_tls_files_are_named(tmp_path: Path, tls: dict[str, str],
                                        message: str) -> None:
    (tmp_path / "notpem.pem").write_text("hello")
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"shards": [["a:1"]], "tls": tls}))
    with pytest.raises(roost.LayoutError, match=message):
        roost.Client.from_layout_file(path)


@pytest.mark.parametrize("shards,message", [
    ("a:1", "must be a list of shards"),
    ([], "1 to 1024 shards, not 0"),
    ([["a:1"], "b:1"], r"shards\[1\]: must be a list of addresses"),
    ([["a:1"], [None]], r"shards\[1\]\[0\]: must be"),
])
def test_a_bad_shards_argument_is_refused(shards: Any, message: str) -> None:
    with pytest.raises(roost.LayoutError, match=message):
        roost.Client(shards)


def test_a_layout_file_client_reads_the_cluster(cluster: Cluster, tmp_path: Path) -> None:
    kvs = keys_and_values(200)
    cluster.build("t", kvs, shards=2)
    servers = [cluster.server(shard=0), cluster.server(shard=1)]
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"shards": [[s.address] for s in servers]}))
    with roost.Client.from_layout_file(path, timeout=30) as client:
        assert client.shard_count == 2
        keys = list(kvs)
        assert client.get_many("t", keys) == [kvs[k] for k in keys]
