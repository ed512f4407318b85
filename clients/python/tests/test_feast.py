"""roost as Feast's online store, end to end (docs/features.md's example):
Feast from PyPI with its local provider and a Parquet file offline store,
`feast apply` and `feast materialize` as commands (roost.feast's compute
engine piping each feature view into the real roost-load build --rows), a
real roost-server serving what they published, and get_online_features
for three feature views (one keyed by two join keys) and several entities
in one call, every value checked against the latest row of its entity in
the Parquet files. Also:
a second materialize publishes the next version, a third with a feature
retyped is refused naming it (the version before stays served); rows
written one by one
(write_to_online_store, as push sources do) are refused saying roost is
batch-published; a feature type roost rows cannot hold is refused by
`feast apply`, naming the feature.

Runs in the [feast] venv (python_feast_install)."""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

feast = pytest.importorskip("feast")
import pandas as pd  # noqa: E402

import roost  # noqa: E402

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)

FEATURES_PY = '''
from datetime import timedelta

from feast import Entity, FeatureView, Field, FileSource, ValueType
from feast.types import Array, Bool, Float32, Float64, Int64, String

driver = Entity(name="driver", join_keys=["driver_id"], value_type=ValueType.INT64)
customer = Entity(name="customer", join_keys=["customer_id"], value_type=ValueType.STRING)

driver_stats = FeatureView(
    name="driver_stats",
    entities=[driver],
    ttl=timedelta(days=30),
    schema=[Field(name="driver_id", dtype=Int64),
            Field(name="conv_rate", dtype=Float32),
            Field(name="acc_rate", dtype=Float64),
            Field(name="trips", dtype=Int64),
            Field(name="city", dtype=String),
            Field(name="embedding", dtype=Array(Float32))],
    source=FileSource(path="data/driver_stats.parquet", timestamp_field="event_timestamp",
                      created_timestamp_column="created"),
)

# A key of two join keys.
driver_customer = FeatureView(
    name="driver_customer",
    entities=[driver, customer],
    ttl=timedelta(0),
    schema=[Field(name="driver_id", dtype=Int64), Field(name="customer_id", dtype=String),
            Field(name="orders", dtype=Int64)],
    source=FileSource(path="data/driver_customer.parquet",
                      timestamp_field="event_timestamp"),
)

customer_profile = FeatureView(
    name="customer_profile",
    entities=[customer],
    ttl=timedelta(0),
    schema=[Field(name="customer_id", dtype=String),
            Field(name="ltv", dtype=Float64),
            Field(name="segments", dtype=Array(String)),
            Field(name="active", dtype=Bool)],
    source=FileSource(path="data/customer_profile.parquet",
                      timestamp_field="event_timestamp"),
)
'''

STORE_YAML = '''project: shop
registry: data/registry.db
provider: local
offline_store:
  type: file
online_store:
  type: roost.feast.RoostOnlineStore
  data_dir: {data_dir}
  shards: [["{address}"]]
  roost_load: {roost_load}
  wait_timeout: 60
batch_engine:
  type: roost.feast.RoostComputeEngine
entity_key_serialization_version: 3
'''


def driver_rows(generation: int) -> pd.DataFrame:
    """Three rows per driver at different times (the latest must win), one
    driver whose only row is older than the view's ttl, one with nulls."""
    rows = []
    for d in range(1001, 1009):
        for age in (3, 2, 1):
            ts = NOW - timedelta(hours=age)
            rows.append({"driver_id": d, "event_timestamp": ts, "created": ts,
                         "conv_rate": float(d % 7) / (age + generation),
                         "acc_rate": d / 1000 + age * 0.001 + generation,
                         "trips": d * 10 + age + 100 * generation,
                         "city": f"city-{d % 3}-{age}",
                         "embedding": [float(d), float(age), 0.25 * generation]})
    rows.append({"driver_id": 1009, "event_timestamp": NOW - timedelta(days=40),
                 "created": NOW - timedelta(days=40), "conv_rate": 0.5, "acc_rate": 0.5,
                 "trips": 5, "city": "stale", "embedding": [1.0]})
    ts = NOW - timedelta(minutes=5)
    rows.append({"driver_id": 1010, "event_timestamp": ts, "created": ts, "conv_rate": None,
                 "acc_rate": None, "trips": 7, "city": None, "embedding": []})
    df = pd.DataFrame(rows)
    df["conv_rate"] = df["conv_rate"].astype("float32")
    return df


def customer_rows() -> pd.DataFrame:
    rows = []
    for c in range(6):
        for age in (2, 1):
            rows.append({"customer_id": f"c{c}", "event_timestamp": NOW - timedelta(days=age * 100),
                         "ltv": c * 10.5 + age, "segments": [f"s{c}", f"a{age}"][: 1 + c % 2],
                         "active": (c + age) % 2 == 0})
    return pd.DataFrame(rows)


def pair_rows() -> pd.DataFrame:
    return pd.DataFrame([{"driver_id": d, "customer_id": f"c{c}",
                          "event_timestamp": NOW - timedelta(days=1), "orders": d * 100 + c}
                         for d in (1001, 1004, 1008) for c in (0, 3)])


def latest(df: pd.DataFrame, key: str, since: datetime | None) -> dict:
    df = df[df["event_timestamp"] <= NOW]
    if since is not None:
        df = df[df["event_timestamp"] > since]
    return {row[key]: row for _, row in df.sort_values("event_timestamp").iterrows()}


def feast_cli(repo: Path, *args: str) -> subprocess.CompletedProcess:
    cli = Path(sys.executable).parent / "feast"
    return subprocess.run([str(cli), *args], cwd=repo, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def repo(cluster, tmp_path: Path):
    server = cluster.server(ready=False)
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    driver_rows(0).to_parquet(repo / "data" / "driver_stats.parquet")
    customer_rows().to_parquet(repo / "data" / "customer_profile.parquet")
    pair_rows().to_parquet(repo / "data" / "driver_customer.parquet")
    (repo / "features.py").write_text(FEATURES_PY)
    (repo / "feature_store.yaml").write_text(STORE_YAML.format(
        data_dir=cluster.data, address=server.address, roost_load=cluster.load))
    r = feast_cli(repo, "apply")
    assert r.returncode == 0, r.stdout + r.stderr
    return repo


def materialize(repo: Path) -> None:
    r = feast_cli(repo, "materialize", (NOW - timedelta(days=1)).isoformat(),
                  NOW.isoformat())
    assert r.returncode == 0, r.stdout + r.stderr


def check_online(repo: Path, drivers: pd.DataFrame) -> None:
    store = feast.FeatureStore(repo_path=str(repo))
    want_d = latest(drivers, "driver_id", NOW - timedelta(days=30))
    want_c = latest(customer_rows(), "customer_id", None)
    driver_ids = [1001, 1004, 1010, 1009, 4242, 1008, 1001]
    customer_ids = ["c0", "c3", "nobody", "c5", "c1", "c2", "c0"]
    features = ["driver_stats:conv_rate", "driver_stats:acc_rate", "driver_stats:trips",
                "driver_stats:city", "driver_stats:embedding",
                "customer_profile:ltv", "customer_profile:segments", "customer_profile:active",
                "driver_customer:orders"]
    entity_rows = [{"driver_id": d, "customer_id": c} for d, c in zip(driver_ids, customer_ids)]
    got = store.get_online_features(features=features, entity_rows=entity_rows).to_dict()
    # get_online_features_async (online_read_async) answers the same.
    got_async = asyncio.run(store.get_online_features_async(
        features=features, entity_rows=entity_rows)).to_dict()
    assert repr(got_async) == repr(got)
    checked = 0
    for i, d in enumerate(driver_ids):
        row = want_d.get(d)
        for name in ("conv_rate", "acc_rate", "trips", "city", "embedding"):
            value = got[name][i]
            if row is None:
                assert value is None, (d, name, value)
                continue
            expected = row[name]
            if name == "embedding":
                assert list(value) == pytest.approx(list(expected)), (d, name)
            elif expected is None or (isinstance(expected, float) and math.isnan(expected)):
                assert value is None, (d, name, value)
            elif name == "conv_rate":
                assert value == pytest.approx(float(expected), rel=1e-6), (d, name)
            else:
                assert value == expected, (d, name, value, expected)
            checked += 1
    for i, c in enumerate(customer_ids):
        row = want_c.get(c)
        for name in ("ltv", "segments", "active"):
            value = got[name][i]
            if row is None:
                assert value is None, (c, name, value)
                continue
            if name == "segments":
                assert list(value) == list(row[name]), (c, name)
            else:
                assert value == row[name], (c, name, value)
            checked += 1
    assert checked == 5 * 5 + 6 * 3  # the missing and stale entities aside
    pairs = {(r["driver_id"], r["customer_id"]): r["orders"] for _, r in pair_rows().iterrows()}
    assert got["orders"] == [pairs.get(p) for p in zip(driver_ids, customer_ids)]
    assert sum(v is not None for v in got["orders"]) == 3


def test_apply_materialize_read(repo: Path, cluster) -> None:
    materialize(repo)
    # One table per feature view, a version each, rows typed.
    assert sorted(p.name for p in cluster.data.iterdir()) == [
        "shop.customer_profile", "shop.driver_customer", "shop.driver_stats"]
    check_online(repo, driver_rows(0))
    # New data, materialized again: the next version, served.
    driver_rows(1).to_parquet(repo / "data" / "driver_stats.parquet")
    materialize(repo)
    assert sorted(p.name for p in (cluster.data / "shop.driver_stats").iterdir()) == [
        "v000001", "v000002"]
    check_online(repo, driver_rows(1))
    # Other clients read the same tables: the key is the join key's text.
    address = cluster.servers[0].address
    with roost.Client([[address]]) as client:
        rows = client.get_rows("shop.driver_stats", ["1004", "4242"], fields=["trips"])
        assert rows == [{"trips": int(latest(driver_rows(1), "driver_id", None)[1004]["trips"])},
                        None]
    # A feature retyped: its next version is refused at publish, naming the
    # field, and the servers keep serving the one before.
    (repo / "features.py").write_text(FEATURES_PY.replace(
        'Field(name="trips", dtype=Int64)', 'Field(name="trips", dtype=Float64)'))
    r = feast_cli(repo, "apply")
    assert r.returncode == 0, r.stdout + r.stderr
    r = feast_cli(repo, "materialize", (NOW - timedelta(days=1)).isoformat(), NOW.isoformat())
    assert r.returncode != 0
    assert 'field "trips" changes type from int64 to float64' in r.stderr, r.stderr
    assert sorted(p.name for p in (cluster.data / "shop.driver_stats").iterdir()) == [
        "v000001", "v000002"]
    with roost.Client([[address]]) as client:
        assert client.get_rows("shop.driver_stats", ["1004"], fields=["trips"]) == rows[:1]


def test_row_writes_refused(repo: Path) -> None:
    store = feast.FeatureStore(repo_path=str(repo))
    df = driver_rows(0).head(2)
    with pytest.raises(NotImplementedError, match="roost is batch-published"):
        store.write_to_online_store("driver_stats", df)


def test_unsupported_type_refused_at_apply(repo: Path) -> None:
    (repo / "features.py").write_text(FEATURES_PY.replace(
        'Field(name="acc_rate", dtype=Float64)', 'Field(name="acc_rate", dtype=Array(Float64))'))
    r = feast_cli(repo, "apply")
    assert r.returncode != 0
    assert "feature view 'driver_stats', feature 'acc_rate'" in r.stdout + r.stderr
