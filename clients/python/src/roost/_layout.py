"""The cluster layout: per shard, the addresses of its replicas, and TLS.

The layout file is JSON, the same for the C++ and the Python client:

    {"shards": [["127.0.0.1:7001", "127.0.0.1:7002"],
                ["127.0.0.1:7003", "dns:///roost-1.roost.svc:7000"]],
     "tls": {"ca": "ca.pem", "cert": "client.pem", "key": "client.key",
             "server_name": "roost.internal"}}

"shards"[i] lists shard i's replicas, each "host:port" or a gRPC target URI
such as "dns:///name:port" (every address the name resolves to is a replica
of that shard). "tls" is optional (absent: plaintext) and so is each of its
fields (no "ca": the system's CAs; an empty "tls" is TLS with them).
Relative paths in "tls" are read relative to the layout file's folder.
Any other member, in the file or in "tls", is refused (LayoutError naming
it), as the C++ client refuses it: a misspelt "tls" ignored would quietly
mean plaintext.

Example:
    layout = Layout.from_file("/etc/roost/cluster.json")
    client = roost.Client(layout.shards, tls=layout.tls)
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Optional, Sequence

import grpc

from roost._errors import LayoutError
from roost._partition import MAX_SHARDS

# A sanity bound on a hand-written file (the C++ client's too).
MAX_REPLICAS = 1024

# A layout file is a few lines; anything larger is not one.
_MAX_LAYOUT_BYTES = 1 << 20
_MAX_PEM_BYTES = 16 << 20


@dataclasses.dataclass(frozen=True)
class TlsConfig:
    """TLS towards every replica. Each field is optional: `ca` is the PEM
    file of the CA(s) to check the servers' certificates against (None: the
    system's), `cert` and `key` the client's certificate and key for mutual
    TLS (both or neither), `server_name` the name the servers' certificates
    must hold (None: the host of each address)."""

    ca: Optional[str] = None
    cert: Optional[str] = None
    key: Optional[str] = None
    server_name: Optional[str] = None

    def credentials(self) -> grpc.ChannelCredentials:
        """The channel credentials, reading the PEM files now."""
        if (self.cert is None) != (self.key is None):
            raise LayoutError('tls: "cert" and "key" go together')
        ca, cert, key = (
            _read_pem(path, field)
            for path, field in ((self.ca, "ca"), (self.cert, "cert"), (self.key, "key"))
        )
        return grpc.ssl_channel_credentials(
            root_certificates=ca, private_key=key, certificate_chain=cert
        )


def _read_pem(path: Optional[str], field: str) -> Optional[bytes]:
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_PEM_BYTES + 1)
    except OSError as e:
        raise LayoutError(f'tls: cannot read "{field}" {path}: {e.strerror}') from None
    if len(data) > _MAX_PEM_BYTES:
        raise LayoutError(f'tls: "{field}" {path} is larger than 16 MiB')
    if b"-----BEGIN " not in data:
        raise LayoutError(f'tls: "{field}" {path} holds no PEM block')
    return data


@dataclasses.dataclass(frozen=True)
class Layout:
    """A cluster layout: `shards[i]` lists shard i's replica targets."""

    shards: tuple[tuple[str, ...], ...]
    tls: Optional[TlsConfig] = None

    @staticmethod
    def from_shards(shards: Sequence[Sequence[str]], tls: Optional[TlsConfig] = None,
                    where: str = "shards") -> "Layout":
        """Checks `shards` (a list of lists of targets) and makes a Layout."""
        if isinstance(shards, (str, bytes)) or not isinstance(shards, Sequence):
            raise LayoutError(f"{where}: must be a list of shards, each a list of addresses")
        if not 1 <= len(shards) <= MAX_SHARDS:
            raise LayoutError(f"{where}: must list 1 to {MAX_SHARDS} shards, not {len(shards)}")
        out = []
        for i, replicas in enumerate(shards):
            if isinstance(replicas, (str, bytes)) or not isinstance(replicas, Sequence):
                raise LayoutError(f"{where}[{i}]: must be a list of addresses")
            if not replicas:
                raise LayoutError(f"{where}[{i}]: shard {i} has no replica")
            if len(replicas) > MAX_REPLICAS:
                raise LayoutError(f"{where}[{i}]: more than {MAX_REPLICAS} replicas")
            for j, target in enumerate(replicas):
                if not isinstance(target, str) or not target.strip():
                    raise LayoutError(
                        f'{where}[{i}][{j}]: must be "host:port" or a gRPC target, '
                        f"not {target!r}"
                    )
                if target != target.strip():
                    raise LayoutError(f"{where}[{i}][{j}]: {target!r} has white space around it")
            out.append(tuple(replicas))
        return Layout(tuple(out), tls)

    @staticmethod
    def from_file(path: str | os.PathLike[str]) -> "Layout":
        """Reads a layout file; a LayoutError names the file and what was
        wrong in it."""
        path = os.fspath(path)
        try:
            with open(path, "rb") as f:
                data = f.read(_MAX_LAYOUT_BYTES + 1)
        except OSError as e:
            raise LayoutError(f"cannot read layout {path}: {e.strerror}") from None
        if len(data) > _MAX_LAYOUT_BYTES:
            raise LayoutError(f"layout {path}: larger than 1 MiB; not a layout file")
        try:
            doc = json.loads(data.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise LayoutError(f"layout {path}: not UTF-8 (byte {e.start})") from None
        except json.JSONDecodeError as e:
            raise LayoutError(
                f"layout {path}: not JSON: {e.msg} at line {e.lineno} column {e.colno}"
            ) from None
        except RecursionError:
            # json recurses per level of nesting; a layout has three.
            raise LayoutError(f"layout {path}: nested too deeply; not a layout file") from None
        return _from_document(doc, path)


def _from_document(doc: Any, path: str) -> Layout:
    where = f"layout {path}"
    if not isinstance(doc, dict):
        raise LayoutError(f'{where}: must be a JSON object with "shards"')
    unknown = sorted(set(doc) - {"shards", "tls"})
    if unknown:
        raise LayoutError(f'{where}: unknown member "{unknown[0]}" (known: "shards", "tls")')
    if "shards" not in doc:
        raise LayoutError(f'{where}: no "shards"')
    tls = None
    if "tls" in doc:
        tls = _tls_from_document(doc["tls"], where, os.path.dirname(os.path.abspath(path)))
    shards = doc["shards"]
    if not isinstance(shards, list):
        raise LayoutError(f'{where}: "shards" must be a list of shards, each a list of addresses')
    return Layout.from_shards(shards, tls, where=f'{where}: "shards"')


def _tls_from_document(tls: Any, where: str, folder: str) -> TlsConfig:
    fields = ("ca", "cert", "key", "server_name")
    if not isinstance(tls, dict):
        raise LayoutError(f'{where}: "tls" must be an object with {", ".join(fields)}')
    unknown = sorted(set(tls) - set(fields))
    if unknown:
        raise LayoutError(
            f'{where}: unknown member "tls.{unknown[0]}" (known: {", ".join(fields)})')
    values: dict[str, Optional[str]] = {}
    for name in fields:
        value = tls.get(name)
        if value is not None and (not isinstance(value, str) or not value):
            raise LayoutError(f'{where}: "tls.{name}" must be a non-empty string')
        if value is not None and name != "server_name":
            value = os.path.join(folder, value)
        values[name] = value
    if (values["cert"] is None) != (values["key"] is None):
        raise LayoutError(f'{where}: "tls.cert" and "tls.key" go together')
    return TlsConfig(**values)
