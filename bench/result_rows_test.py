"""bench/result_rows.py: fixed measurements in, the fixed rows run.sh and
cluster_bench.sh append out (the rows bench/report.py reads)."""

import io
import json
import types

import pytest

import result_rows as rows

LOAD_LINE = ('{"method":"get","batch":1,"channels":4,"concurrency":64,"seconds":0.5,'
             '"qps":12345.6,"keys_per_s":12345.6,"p50_us":410.5,"errors":0,'
             '"server_cpu_us_per_key":null}')
REDIS_INFO = "# Memory\r\nused_memory:{}\r\nused_memory_human:1.2M\r\n"


def test_labelled_puts_the_fields_first():
    row = rows.labelled(LOAD_LINE, [("system", "roost"), ("table_keys", 20000)])
    assert list(row)[:4] == ["system", "table_keys", "method", "batch"]
    assert rows.dumps(row) == (
        '{"system":"roost","table_keys":20000,"method":"get","batch":1,"channels":4,'
        '"concurrency":64,"seconds":0.5,"qps":12345.6,"keys_per_s":12345.6,'
        '"p50_us":410.5,"errors":0,"server_cpu_us_per_key":null}')
    # A field the line has too keeps the value given.
    assert rows.labelled('{"system":"x","a":1}', [("system", "Redis")]) == {
        "system": "Redis", "a": 1}


@pytest.mark.parametrize("line", ["", "server_load: usage", '{"qps":1', "[1, 2]"])
def test_labelled_refuses_what_is_not_a_json_object(line):
    with pytest.raises(rows.RowError):
        rows.labelled(line, [("system", "roost")])


def test_labelled_from_the_command_line(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO('{"batch":1,"qps":7}\n'))
    assert rows.main(["labelled", "--str", "system=Redis, io-threads 2",
                      "--num", "table_keys=20000", "--num", "load_pct=25",
                      "--num", "max_qps=1234.5"]) == 0
    assert capsys.readouterr().out == (
        '{"system":"Redis, io-threads 2","table_keys":20000,"load_pct":25,'
        '"max_qps":1234.5,"batch":1,"qps":7}\n')
    monkeypatch.setattr("sys.stdin", io.StringIO('{"batch":1}\n'))
    assert rows.main(["labelled", "--num", "table_keys=lots"]) == 2
    assert "'lots' is not a number" in capsys.readouterr().err


def test_build_row():
    assert rows.build_row("roost-load cuckoo", 20000, 1700000000.25, 1700000000.75, 5120,
                          196608, "note") == {
        "system": "roost-load cuckoo", "keys": 20000, "seconds": 0.5,
        "keys_per_s": 40000.0, "peak_rss_bytes": 5242880, "output_bytes": 196608,
        "note": "note"}


def test_build_row_from_the_command_line(tmp_path, capsys):
    (tmp_path / "time.out").write_text("Command exited with non-zero status 0\n2048\n")
    (tmp_path / "t.sst").write_bytes(b"x" * 1000)
    assert rows.main(["build-row", "--system", "roost-load block", "--keys", "1000",
                      "--start", "10.0", "--end", "10.004",
                      "--max-rss-file", str(tmp_path / "time.out"),
                      "--output", str(tmp_path / "t.sst"), "--note", "n"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "system": "roost-load block", "keys": 1000, "seconds": 0.004,
        "keys_per_s": 250000.0, "peak_rss_bytes": 2097152, "output_bytes": 1000,
        "note": "n"}


def test_sst_writer_row():
    row = rows.sst_writer_row("keys=20000 seconds=0.012 keys_per_second=1666667 "
                              "file_size=409600 rss_before_open_kib=5120 vm_hwm_kib=8192\n")
    assert rows.dumps(row) == (
        '{"system":"RocksDB SstFileWriter","keys":20000,"seconds":0.012,'
        '"keys_per_s":1666667,"peak_rss_bytes":8388608,"output_bytes":409600,'
        '"note":"writer alone: pairs read and sorted in memory before the clock; '
        'RSS includes them"}')
    with pytest.raises(rows.RowError, match="lacks vm_hwm_kib"):
        rows.sst_writer_row("keys=1 seconds=0.1 keys_per_second=10 file_size=1")


def test_redis_rows():
    before, after = REDIS_INFO.format(1000000), REDIS_INFO.format(2600000)
    status = "Name:\tredis-server\nVmPeak:\t  90000 kB\nVmHWM:\t    12345 kB\nVmRSS:\t 1 kB\n"
    assert rows.redis_fill_row(
        20000, '{"keys":20000,"seconds":0.061,"keys_per_s":327868.9,"commands":20}',
        status, before, after) == {
        "system": "Redis (MSET, pipelined)", "keys": 20000, "seconds": 0.061,
        "keys_per_s": 327868.9, "peak_rss_bytes": 12641280, "output_bytes": 1600000,
        "note": "redis-server peak RSS; MSET of 1000 pairs, 8 in flight, one connection"}
    assert rows.memory_rows(20000, 327680, before, after) == [
        {"system": "roost", "keys": 20000, "bytes": 327680, "bytes_per_key": 16.38,
         "what": "mapped table file"},
        {"system": "Redis", "keys": 20000, "bytes": 1600000, "bytes_per_key": 80.0,
         "what": "used_memory after load, minus before"}]
    with pytest.raises(rows.RowError, match="no used_memory"):
        rows.memory_rows(1, 1, "# Memory\r\n", after)


def test_open_loop_rate():
    network = ['{"system":"roost","table_keys":9,"batch":1,"qps":1000.5}',
               '{"system":"roost","table_keys":9,"batch":10,"qps":400}',
               '{"system":"roost, coalesced Gets","table_keys":9,"batch":1,"qps":900}',
               '{"system":"Redis","table_keys":9,"batch":1,"qps":3000}',
               '{"system":"roost","table_keys":9,"batch":1,"qps":2000}', ""]
    assert rows.open_loop_rate(network, "roost", 25) == (2000, "500.0")
    assert rows.open_loop_rate(network, "roost, coalesced Gets", 75) == (900, "675.0")
    assert rows.open_loop_rate(network, "Redis, io-threads 2", 25) is None


def test_open_loop_rate_from_the_command_line(tmp_path, capsys):
    network = tmp_path / "network.jsonl"
    network.write_text('{"system":"Redis","batch":1,"qps":1234.5}\n')
    assert rows.main(["open-loop-rate", str(network), "Redis", "50"]) == 0
    assert capsys.readouterr().out == "1234.5 617.2\n"
    assert rows.main(["open-loop-rate", str(network), "roost", "50"]) == 1
    assert rows.main(["open-loop-rate", str(tmp_path / "none.jsonl"), "roost", "50"]) == 1


def test_layout():
    assert rows.layout([7001]) == {"shards": [["127.0.0.1:7001"]]}
    assert rows.layout([7001, 7002, 7003]) == {
        "shards": [["127.0.0.1:7001"], ["127.0.0.1:7002"], ["127.0.0.1:7003"]]}


def test_publish_row():
    observed = ["download 100.0 100.5 4096", "serving 1.0 1.25",
                "download 200.0 200.25 4096", "serving 1.25 2.0",
                "download 300.0 301.0 8192", "serving 2.0 2.5"]
    assert rows.publish_row(20000, observed) == {
        "section": "publish", "system": "roost-server --repository", "shards": 1,
        "table_keys": 20000, "bytes": 8192, "download_s": 0.5, "serving_s": 0.5,
        "download_runs": [0.5, 0.25, 1.0], "serving_runs": [0.25, 0.75, 0.5]}
    # An even count: the mean of the middle two.
    assert rows.publish_row(1, observed[:4])["download_s"] == 0.375
    with pytest.raises(rows.RowError, match="line 2"):
        rows.publish_row(1, ["download 1 2 3", "serving 1"])
    with pytest.raises(rows.RowError, match="no download or no serving"):
        rows.publish_row(1, ["download 1 2 3"])


def test_machine_row():
    a = types.SimpleNamespace(command="bench/run.sh --smoke", mode="smoke",
                              git_rev="abc1234", baseline_rev="", lookup_keys=20000,
                              network_keys=20000, started=1000.0,
                              placement="servers pinned to core 0")
    row = rows.machine_row(a, now=1012.34)
    assert row["placement"] == "servers pinned to core 0"
    assert row["elapsed_s"] == 12.3
    assert {k: row[k] for k in ("command", "mode", "git_rev", "baseline_rev",
                                "lookup_keys", "network_keys", "build_keys")} == {
        "command": "bench/run.sh --smoke", "mode": "smoke", "git_rev": "abc1234",
        "baseline_rev": "", "lookup_keys": 20000, "network_keys": 20000,
        "build_keys": 20000}
    assert set(row["versions"]) == {"rocksdb", "redis", "tinycdb", "gnuplot"}
    assert row["nproc"] >= 1 and row["date_utc"].endswith(" UTC")
