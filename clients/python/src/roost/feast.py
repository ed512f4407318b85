"""roost as Feast's online store (docs/features.md).

In feature_store.yaml:

    online_store:
      type: roost.feast.RoostOnlineStore
      layout: cluster.json          # the servers to read from (shards, TLS)
      data_dir: /srv/roost          # or repository: s3://bucket/tables
    batch_engine:
      type: roost.feast.RoostComputeEngine

roost serves versions built in batch, whole: there is no write of one row.
So `feast materialize` goes through a compute engine of roost's own
(`RoostComputeEngine`), which takes each feature view's rows from the
offline store as one Arrow table (the latest row of each entity, as
Feast's local engine does) and pipes it, column by column, into
`roost-load build --rows` (the batch path of roost-build): one roost table
per feature view, a new version of it per materialization, published all
or nothing, then waited for until the servers serve it. Each version is a
snapshot: the latest row of every entity with an event time in
(end - ttl, end] (all time up to `end` when the view has no ttl), not only
the rows of [start, end], since a roost version replaces the one before.

`RoostOnlineStore` reads: for each feature view of a
`get_online_features` call, one `get_rows` of the entity keys with the
features asked (projected on the server), the feature views at once.
`online_write_batch` (push sources, `write_to_online_store`, and
materialize through another engine) is refused: roost is batch-published.

Keys: an entity key of one join key is its value's text (an integer's
decimal text, a string's UTF-8 bytes), the key roost-build makes of an
integer or string column, so other clients can read the tables too; a key
of several join keys is their texts in the order of the join keys' names,
joined by U+001F. Table names: "<project>.<feature view>" (table_prefix
replaces "<project>.").
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Literal, Optional, Sequence, Tuple

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import StrictInt, StrictStr

from feast import Entity, FeatureView, RepoConfig
from feast.infra.common.materialization_job import (
    MaterializationJobStatus,
    MaterializationTask,
)
from feast.infra.compute_engines.local.compute import LocalComputeEngine
from feast.infra.compute_engines.local.job import LocalMaterializationJob
from feast.infra.online_stores.online_store import OnlineStore
from feast.infra.registry.base_registry import BaseRegistry
from feast.protos.feast.types.EntityKey_pb2 import EntityKey as EntityKeyProto
from feast.protos.feast.types.Value_pb2 import Value as ValueProto
from feast.repo_config import FeastConfigBaseModel
from feast.types import from_value_type
from feast.utils import _get_column_names, _run_pyarrow_field_mapping
from feast.value_type import ValueType

import roost
from roost.batch import ColumnStreamWriter

logger = logging.getLogger(__name__)

# The event timestamp of each row, stored beside the features (microseconds
# since the Unix epoch, UTC), for online_read's answer.
EVENT_TIMESTAMP = "_feast_event_timestamp"
KEY_SEPARATOR = "\x1f"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

# Feast value type -> (Arrow type of the column roost-load builds a row
# field from, ValueProto member a value is read into)
_TYPES: Dict[ValueType, Tuple[pa.DataType, str]] = {
    ValueType.BOOL: (pa.bool_(), "bool_val"),
    ValueType.INT32: (pa.int32(), "int32_val"),
    ValueType.INT64: (pa.int64(), "int64_val"),
    ValueType.FLOAT: (pa.float32(), "float_val"),
    ValueType.DOUBLE: (pa.float64(), "double_val"),
    ValueType.STRING: (pa.string(), "string_val"),
    ValueType.BYTES: (pa.binary(), "bytes_val"),
    ValueType.FLOAT_LIST: (pa.list_(pa.float32()), "float_list_val"),
    ValueType.INT32_LIST: (pa.list_(pa.int32()), "int32_list_val"),
    ValueType.INT64_LIST: (pa.list_(pa.int64()), "int64_list_val"),
    ValueType.STRING_LIST: (pa.list_(pa.string()), "string_list_val"),
}


class RoostOnlineStoreConfig(FeastConfigBaseModel):
    """online_store: in feature_store.yaml (docs/features.md). Relative
    paths are read relative to the feature repository."""

    type: Literal["roost.feast.RoostOnlineStore"] = "roost.feast.RoostOnlineStore"

    # Where materialize publishes: a roost-server's --data-dir, or a table
    # repository (s3://bucket/prefix or a local path) servers pull from.
    data_dir: Optional[StrictStr] = None
    repository: Optional[StrictStr] = None

    # The servers to read from: a cluster layout file ({"shards": [...],
    # "tls": {...}}, docs README of the client), or the replicas of each
    # shard here with the tls_* settings.
    layout: Optional[StrictStr] = None
    shards: Optional[List[List[StrictStr]]] = None
    tls: bool = False
    tls_ca: Optional[StrictStr] = None
    tls_cert: Optional[StrictStr] = None
    tls_key: Optional[StrictStr] = None
    tls_server_name: Optional[StrictStr] = None
    token: Optional[StrictStr] = None
    timeout: float = 10.0

    # The build of each feature view's table.
    table_prefix: Optional[StrictStr] = None     # default "<project>."
    table_shards: StrictInt = 1
    format: Literal["cuckoo", "block"] = "cuckoo"
    roost_load: StrictStr = "roost-load"
    build_args: List[StrictStr] = []
    # Seconds materialize waits for every replica to serve the new version
    # (0: it does not wait).
    wait_timeout: float = 300.0


def _path(config: RepoConfig, path: Optional[str]) -> Optional[str]:
    if path is None or "://" in path or os.path.isabs(path):
        return path
    return os.path.join(str(config.repo_path or "."), path)


def _store_config(config: RepoConfig) -> RoostOnlineStoreConfig:
    store = config.online_store
    if not isinstance(store, RoostOnlineStoreConfig):
        raise ValueError("roost.feast.RoostComputeEngine publishes to roost: set online_store's "
                         "type to roost.feast.RoostOnlineStore")
    return store


def table_name(config: RepoConfig, feature_view: FeatureView) -> str:
    store = _store_config(config)
    prefix = store.table_prefix if store.table_prefix is not None else f"{config.project}."
    return f"{prefix}{feature_view.name}"


def _value_type(feature_view: FeatureView, name: str) -> ValueType:
    for f in feature_view.features:
        if f.name == name:
            return f.dtype.to_value_type()
    raise ValueError(f"feature view {feature_view.name!r} has no feature {name!r}")


def check_feature_view(feature_view: FeatureView) -> None:
    """Refuses, naming it, a feature whose type roost rows cannot hold."""
    for f in feature_view.features:
        vt = f.dtype.to_value_type()
        if vt not in _TYPES:
            kinds = ", ".join(str(from_value_type(t)) for t in _TYPES)
            raise ValueError(f"feature view {feature_view.name!r}, feature {f.name!r}: type "
                             f"{f.dtype} has no roost row type (roost holds {kinds})")


def _key_text(value: ValueProto) -> str:
    kind = value.WhichOneof("val")
    if kind in ("int64_val", "int32_val"):
        return str(getattr(value, kind))
    if kind == "string_val":
        return str(value.string_val)
    raise ValueError(f"an entity key of type {kind} (roost keys are of integer and string "
                     f"join keys)")


def entity_key_bytes(entity_key: EntityKeyProto) -> bytes:
    """The roost key of a Feast entity key (see the module's doc)."""
    pairs = sorted(zip(entity_key.join_keys, entity_key.entity_values), key=lambda p: str(p[0]))
    return KEY_SEPARATOR.join(_key_text(v) for _, v in pairs).encode()


def _key_column(table: pa.Table, join_keys: Sequence[str]) -> pa.Array:
    columns = []
    for name in sorted(join_keys):
        column = table.column(name)
        t = column.type
        if not (pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)):
            raise ValueError(f"join key {name!r} is {t}: roost keys are of integer and string "
                             f"join keys")
        columns.append(pc.cast(column, pa.string()))
    if len(columns) == 1:
        return columns[0]
    return pc.binary_join_element_wise(*columns, KEY_SEPARATOR)


def _client(config: RepoConfig) -> roost.Client:
    store = _store_config(config)
    if store.layout is not None:
        if store.shards is not None:
            raise ValueError("online_store: give layout or shards, not both")
        return roost.Client.from_layout_file(str(_path(config, store.layout)),
                                             token=store.token, timeout=store.timeout)
    if store.shards is None:
        raise ValueError("online_store: roost needs layout (a cluster layout file) or shards "
                         "(the replicas of each shard) to read from")
    tls = None
    if store.tls or store.tls_ca or store.tls_cert or store.tls_server_name:
        tls = roost.TlsConfig(ca=_path(config, store.tls_ca), cert=_path(config, store.tls_cert),
                              key=_path(config, store.tls_key),
                              server_name=store.tls_server_name)
    return roost.Client(store.shards, tls=tls, token=store.token, timeout=store.timeout)


class RoostOnlineStore(OnlineStore):
    """Reads feature views from roost tables of rows (see the module's doc)."""

    def __init__(self) -> None:
        self._client: Optional[roost.Client] = None
        self._lock = threading.Lock()
        self._pool: Optional[ThreadPoolExecutor] = None

    def client(self, config: RepoConfig) -> roost.Client:
        with self._lock:
            if self._client is None:
                self._client = _client(config)
            return self._client

    # -- writes: refused -----------------------------------------------------

    def online_write_batch(self, config: RepoConfig, table: FeatureView, data: List[Any],
                           progress: Optional[Callable[[int], Any]]) -> None:
        raise NotImplementedError(
            f"roost is batch-published: feature view {table.name!r} is served from versions "
            f"that `feast materialize` builds whole, and cannot take rows one by one (push "
            f"sources, write_to_online_store). Materialize with batch_engine: "
            f"{{type: roost.feast.RoostComputeEngine}} in feature_store.yaml")

    async def online_write_batch_async(self, config: RepoConfig, table: FeatureView,
                                       data: List[Any],
                                       progress: Optional[Callable[[int], Any]]) -> None:
        self.online_write_batch(config, table, data, progress)

    # -- reads ---------------------------------------------------------------

    def online_read(self, config: RepoConfig, table: FeatureView,
                    entity_keys: List[EntityKeyProto],
                    requested_features: Optional[List[str]] = None
                    ) -> List[Tuple[Optional[datetime], Optional[Dict[str, ValueProto]]]]:
        features = (list(requested_features) if requested_features is not None
                    else [f.name for f in table.features])
        types = [_value_type(table, name) for name in features]
        keys = [entity_key_bytes(k) for k in entity_keys]
        rows = self.client(config).get_rows(table_name(config, table), keys,
                                            fields=features + [EVENT_TIMESTAMP])
        out: List[Tuple[Optional[datetime], Optional[Dict[str, ValueProto]]]] = []
        for row in rows:
            if row is None:
                out.append((None, None))
                continue
            values = {}
            for name, vt in zip(features, types):
                values[name] = _value_proto(row[name], vt)
            micros = row[EVENT_TIMESTAMP]
            ts = (datetime.fromtimestamp(micros / 1e6, tz=timezone.utc)
                  if micros is not None else None)
            out.append((ts, values))
        return out

    @property
    def async_supported(self) -> Any:
        from feast.infra.supported_async_methods import SupportedAsyncMethods
        return SupportedAsyncMethods(read=True)

    async def online_read_async(self, config: RepoConfig, table: FeatureView,
                                entity_keys: List[EntityKeyProto],
                                requested_features: Optional[List[str]] = None
                                ) -> List[Tuple[Optional[datetime],
                                                Optional[Dict[str, ValueProto]]]]:
        # get_online_features_async: the sync client's call on a worker
        # thread (its channels are not tied to an event loop).
        return await asyncio.to_thread(self.online_read, config, table, entity_keys,
                                       requested_features)

    def _read_features_per_fv(self, config: RepoConfig, grouped_refs: List[Any],
                              join_key_values: Any, entity_name_to_join_key_map: Any,
                              online_features_response: Any, full_feature_names: bool,
                              include_feature_view_version_metadata: bool) -> None:
        # Feast's own loop (OnlineStore._read_features_per_fv) reads one
        # feature view after the other; here the views of one
        # get_online_features are read at once, each one get_rows of its
        # entities' keys and the features asked, and the response is filled
        # by the same Feast code.
        from feast import utils
        prepared = []
        for table, requested in grouped_refs:
            values, idxs, output_len = utils._get_unique_entities(
                table, join_key_values, entity_name_to_join_key_map)
            prepared.append((table, requested, idxs, output_len,
                             utils._get_entity_key_protos(values)))

        def read(p: Tuple[Any, ...]) -> Any:
            return self.online_read(config, p[0], p[4], p[1])

        if len(prepared) > 1:
            with self._lock:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(8, thread_name_prefix="roost-feast")
                pool = self._pool
            reads = list(pool.map(read, prepared))
        else:
            reads = [read(p) for p in prepared]
        for (table, requested, idxs, output_len, _), rows in zip(prepared, reads):
            utils._populate_response_from_feature_data(
                requested, rows, idxs, online_features_response, full_feature_names, table,
                output_len, include_feature_view_version_metadata)

    # -- infrastructure ------------------------------------------------------

    def update(self, config: RepoConfig, tables_to_delete: Sequence[FeatureView],
               tables_to_keep: Sequence[FeatureView], entities_to_delete: Sequence[Entity],
               entities_to_keep: Sequence[Entity], partial: bool) -> None:
        # Tables come into being when materialize publishes them; `feast
        # apply` checks that each view fits in roost rows, before any run.
        for view in tables_to_keep:
            check_feature_view(view)

    def teardown(self, config: RepoConfig, tables: Sequence[FeatureView],
                 entities: Sequence[Entity]) -> None:
        # Published versions stay until retention removes them (roost-load
        # publish --keep-versions, roost-load prune): nothing to do here.
        pass


def _value_proto(value: Any, vt: ValueType) -> ValueProto:
    proto = ValueProto()
    if value is None:
        return proto
    member = _TYPES[vt][1]
    if member.endswith("_list_val"):
        getattr(proto, member).val.extend(value)
    else:
        setattr(proto, member, value)
    return proto


class RoostComputeEngineConfig(FeastConfigBaseModel):
    """batch_engine: {type: roost.feast.RoostComputeEngine}; where it
    publishes is the online store's config (RoostOnlineStoreConfig)."""

    type: Literal["roost.feast.RoostComputeEngine"] = "roost.feast.RoostComputeEngine"


class RoostComputeEngine(LocalComputeEngine):
    """Materializes each feature view into a new version of its roost table
    through roost-load's batch path (see the module's doc). Historical
    retrieval is Feast's local engine's."""

    def _materialize_one(self, registry: BaseRegistry, task: MaterializationTask,
                         **kwargs: Any) -> LocalMaterializationJob:
        view = task.feature_view
        job_id = f"{view.name}-{task.start_time}-{task.end_time}"
        try:
            publish_feature_view(self.repo_config, self.offline_store, registry, task)
        except Exception as e:
            return LocalMaterializationJob(job_id, MaterializationJobStatus.ERROR, e)
        return LocalMaterializationJob(job_id, MaterializationJobStatus.SUCCEEDED)


def feature_view_table(config: RepoConfig, offline_store: Any, registry: BaseRegistry,
                       task: MaterializationTask) -> pa.Table:
    """The columns roost-load builds a feature view's table from: the key,
    each feature (cast to its roost type) and the event timestamp, one row
    per entity: its latest in (end - ttl, end]."""
    view = task.feature_view
    check_feature_view(view)
    entities = [registry.get_entity(name, task.project) for name in view.entities]
    join_keys, feature_columns, timestamp_field, created_column = _get_column_names(
        view, entities)
    end = task.end_time if task.end_time.tzinfo else task.end_time.replace(tzinfo=timezone.utc)
    start = end - view.ttl if view.ttl else _EPOCH
    job = offline_store.pull_latest_from_table_or_query(
        config=config, data_source=view.batch_source, join_key_columns=join_keys,
        feature_name_columns=feature_columns, timestamp_field=timestamp_field,
        created_timestamp_column=created_column, start_date=start, end_date=end)
    table = job.to_arrow()
    if view.batch_source.field_mapping:
        table = _run_pyarrow_field_mapping(table, view.batch_source.field_mapping)
        timestamp_field = view.batch_source.field_mapping.get(timestamp_field, timestamp_field)
        join_keys = [view.batch_source.field_mapping.get(k, k) for k in join_keys]
    names = [f.name for f in view.features]
    columns = [_key_column(table, join_keys)]
    for f in view.features:
        arrow_type = _TYPES[f.dtype.to_value_type()][0]
        column = table.column(f.name)
        try:
            columns.append(column.cast(arrow_type) if column.type != arrow_type else column)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise ValueError(f"feature view {view.name!r}, feature {f.name!r}: the offline "
                             f"store's {column.type} is not {f.dtype}: {e}") from None
        if pa.types.is_floating(arrow_type):
            # NaN is a missing value to Feast (its materialization writes
            # NaN as null): the same here.
            column = pc.if_else(pc.is_nan(columns[-1]), pa.scalar(None, arrow_type),
                                columns[-1])
            columns[-1] = column
    ts = table.column(timestamp_field)
    if not pa.types.is_timestamp(ts.type):
        raise ValueError(f"feature view {view.name!r}: the timestamp field "
                         f"{timestamp_field!r} is {ts.type}, not a timestamp")
    columns.append(pc.cast(pc.cast(ts, pa.timestamp("us", tz="UTC")), pa.int64()))
    return pa.Table.from_arrays(columns, names=["_key"] + names + [EVENT_TIMESTAMP])


def publish_feature_view(config: RepoConfig, offline_store: Any, registry: BaseRegistry,
                         task: MaterializationTask) -> Optional[str]:
    """Builds and publishes a feature view's next version; waits until the
    servers serve it. Returns the version, or None when there was nothing
    to publish (no row: the served version stays)."""
    store = _store_config(config)
    view = task.feature_view
    table = feature_view_table(config, offline_store, registry, task)
    name = table_name(config, view)
    if table.num_rows == 0:
        logger.warning("roost: feature view %s has no row up to %s: nothing published, "
                       "table %s keeps the version it serves", view.name, task.end_time, name)
        return None
    if (store.data_dir is None) == (store.repository is None):
        raise ValueError("online_store: give data_dir or repository (where materialize "
                         "publishes), one of them")
    where = (["--data-dir", str(_path(config, store.data_dir))] if store.data_dir
             else ["--repository", str(_path(config, store.repository))])
    cmd = [store.roost_load, "build", "--rows", "--input-format", "arrow-columns", "-i", "-",
           *where, "--table", name, "--shards", str(store.table_shards),
           "--format", store.format, *store.build_args]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE,
                            bufsize=1 << 16)
    stdin, stderr = proc.stdin, proc.stderr
    assert stdin is not None and stderr is not None
    errors: List[bytes] = []

    def drain(out: Any) -> None:
        errors.append(out.read())

    reader = threading.Thread(target=drain, args=(stderr,), daemon=True)
    reader.start()
    try:
        writer = ColumnStreamWriter(stdin, table.schema, "_key")
        for batch in table.to_batches(max_chunksize=65536):
            writer.write_batch(batch, f"feature view {view.name}")
        writer.close()
    except BrokenPipeError:
        pass  # roost-load stopped reading: its exit code says why
    finally:
        try:
            stdin.close()
        except BrokenPipeError:
            pass
    code = proc.wait()
    reader.join()
    log = b"".join(errors).decode(errors="replace")
    if code != 0:
        raise RuntimeError(f"roost-load build of feature view {view.name!r} (table {name}) "
                           f"exited {code}, nothing published:\n{log.strip()}")
    m = re.search(r"published \S*/(v\d+):", log)
    if not m:
        raise RuntimeError(f"roost-load build of table {name} did not say what it "
                           f"published:\n{log.strip()}")
    version = m.group(1)
    logger.info("roost: feature view %s published as %s %s (%d rows)", view.name, name,
                version, table.num_rows)
    if store.wait_timeout > 0 and (store.layout or store.shards):
        client = _client(config)
        try:
            client.wait(name, version, timeout=store.wait_timeout)
        finally:
            client.close()
    return version
