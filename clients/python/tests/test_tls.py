"""TLS from the layout file: the CA and the server name, mutual TLS with a
client certificate, paths relative to the file; and a plaintext client
refused by a TLS server. The certificates are made by openssl here."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import grpc
import pytest

import roost
from conftest import Cluster, keys_and_values


def openssl(*args: str, cwd: Path) -> None:
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def make_pki(folder: Path) -> None:
    """ca.pem; server.pem/.key for roost.internal; client.pem/.key."""
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            "/CN=roost test CA", "-keyout", "ca.key", "-out", "ca.pem", cwd=folder)
    for name, extension in (("server", "subjectAltName=DNS:roost.internal"),
                            ("client", "extendedKeyUsage=clientAuth")):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout",
                f"{name}.key", "-out", f"{name}.csr", cwd=folder)
        (folder / f"{name}.ext").write_text(extension + "\n")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-days", "2", "-extfile", f"{name}.ext", "-out",
                f"{name}.pem", cwd=folder)


def test_a_layout_file_with_tls(cluster: Cluster, tmp_path: Path) -> None:
    pki = tmp_path / "etc"
    pki.mkdir()
    make_pki(pki)
    kvs = keys_and_values(300)
    cluster.build("t", kvs, shards=2)
    tls = ["--tls-cert", str(pki / "server.pem"), "--tls-key", str(pki / "server.key")]
    mtls = tls + ["--tls-client-ca", str(pki / "ca.pem")]
    servers = [cluster.server(shard=0, extra=tls), cluster.server(shard=1, extra=mtls)]
    layout = pki / "cluster.json"
    keys = list(kvs)

    layout.write_text(json.dumps({"shards": [[s.address] for s in servers], "tls": {
        "ca": "ca.pem", "cert": "client.pem", "key": "client.key",
        "server_name": "roost.internal"}}))
    with roost.Client.from_layout_file(layout, timeout=30) as client:
        assert client.get_many("t", keys) == [kvs[k] for k in keys]
        client.wait("t", "1", timeout=30)

    # Without a client certificate, the mutual-TLS shard refuses the call.
    layout.write_text(json.dumps({"shards": [[s.address] for s in servers], "tls": {
        "ca": "ca.pem", "server_name": "roost.internal"}}))
    with roost.Client.from_layout_file(layout, timeout=2) as client:
        mine = [k for k in keys if roost.partition_of(k, 2) == 0]
        assert client.get_many("t", mine) == [kvs[k] for k in mine]
        with pytest.raises(roost.RoostError) as e:
            client.get_many("t", keys)
        assert e.value.code == grpc.StatusCode.UNAVAILABLE and e.value.shard == 1

    # Plaintext towards TLS: refused, never answered.
    with roost.Client([[s.address] for s in servers], timeout=2) as client:
        with pytest.raises(roost.RoostError) as e:
            client.get("t", keys[0])
        assert e.value.code == grpc.StatusCode.UNAVAILABLE
