"""``rocketmq-commitlog``, ``rocketmq-consumequeue`` and ``rocketmq-index``: the rows Spark reads equal the
store's own decoders' on the same files (classic, several files, DLedger, IPv6 hosts, properties), one
partition per file, and bad input (not a commit log, wrong mapped-file size, truncated and corrupted
files) is a clear error or a ``corrupt`` row with the good rows still read."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest

from rocketlab import i18n
from rocketlab.analysis.datasources import partitions_option, projection, read_store
from rocketlab.dledger.cli import iter_entries
from rocketlab.errors import RocketlabError
from rocketlab.sim import Cluster
from rocketlab.store import Message, MessageStore
from rocketlab.store.cli import iter_commit_log, iter_consume_queue
from rocketlab.store.index_file import index_key_hash_method
from tests.i18n_support import no_language_set  # noqa: F401  (the fixture)

FILE = 4096


@pytest.fixture(scope="module")
def classic(tmp_path_factory) -> Path:
    """A store of 4 KiB files: 120 messages over several files, properties, keys, IPv4 and IPv6 born hosts."""
    root = tmp_path_factory.mktemp("classic") / "store"
    with MessageStore.open(root, threads=False, mapped_file_size_commit_log=FILE) as store:
        for i in range(120):
            host = ("::1", 40000 + i) if i % 3 == 0 else (f"10.0.0.{i % 250}", 5000)
            msg = Message("TopicA" if i % 2 else "TopicB", b"body-%03d-" % i * (1 + i % 5), i % 2,
                          properties={"KEYS": f"key-{i}", "TAGS": f"tag{i % 4}", "custom": "v\u00e9"}, born_host=host)
            assert store.put_message(msg).status.name == "PUT_OK"
    return root


@pytest.fixture(scope="module")
def dledger_run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("dledger") / "run"
    c = Cluster.dledger_brokers(nodes=3, seed=3, data_dir=root)
    c.run_until(lambda c: c.leader() is not None, timeout_ms=60_000)
    for i in range(25):
        assert c.put(b"dl-%d" % i).status == "PUT_OK"
    c.run_for(5_000)
    c.close()
    return root


def spark_rows(spark, fmt: str, path, **options) -> list[dict]:
    return [r.asDict(recursive=True) for r in read_store(spark, fmt, path, **options).collect()]


def test_commit_log_rows_equal_the_store_decoder(spark, classic):
    rows = sorted(spark_rows(spark, "rocketmq-commitlog", classic), key=lambda r: r["phy_offset"])
    ours = [r for r in iter_commit_log(str(classic)) if r["type"] == "message"]
    assert len(rows) == len(ours) == 120 and len({r["file"] for r in rows}) > 1  # several files
    for got, want in zip(rows, ours, strict=True):
        for key in ("phy_offset", "total_size", "version", "body_crc", "body_crc_ok", "queue_id", "flag",
                    "queue_offset", "physical_offset", "sys_flag", "born_timestamp", "born_host", "store_timestamp",
                    "store_host", "reconsume_times", "prepared_transaction_offset", "topic", "properties", "tags",
                    "keys", "msg_id", "file"):
            assert got[key] == want[key], (key, got[key], want[key])
        assert got["body"] == base64.b64decode(want["body_base64"])
        assert got["kind"] == "classic" and got["corrupt"] is None and got["dledger_index"] is None
    assert any(r["born_host"].startswith("[::1]") or "::1" in r["born_host"] for r in rows)  # IPv6 hosts
    assert rows[0]["properties"]["custom"] == "v\u00e9"


def test_partitions_for_the_cores_not_per_file(spark, classic):
    """Five small files: as many partitions as local[2] has cores, or as the ``partitions`` option says,
    the files then cut at record boundaries; the same rows either way."""
    files = list((classic / "commitlog").iterdir())
    whole = read_store(spark, "rocketmq-commitlog", classic)
    assert whole.rdd.getNumPartitions() == 2 < len(files)
    cut = read_store(spark, "rocketmq-commitlog", classic, partitions=9)
    assert cut.rdd.getNumPartitions() == 9
    key = lambda r: r["phy_offset"]  # noqa: E731
    assert sorted((r.asDict(recursive=True) for r in cut.collect()), key=key) == \
        sorted((r.asDict(recursive=True) for r in whole.collect()), key=key)


def test_rows_equal_the_reference_decoders_in_every_mode(spark, classic, dledger_run, tmp_path):
    """Every column of every fixture, PERMISSIVE and FAILFAST, corrupt and truncated files: the rows of
    :mod:`rocketlab.analysis.store_files`' record-at-a-time decoders (the readers before issue 34)."""
    from rocketlab.analysis import store_files

    copy = tmp_path / "store"
    shutil.copytree(classic, copy)
    files = sorted((copy / "commitlog").iterdir())
    data = bytearray(files[2].read_bytes())
    data[0:4] = b"\x00\x7f\xff\xff"  # the first record's size: a torn record
    files[2].write_bytes(bytes(data))
    for path in (classic, dledger_run, copy):
        found = store_files.find_commit_logs(path)
        want = [dict(zip([n for n, _ in store_files.COMMIT_LOG_COLUMNS], r, strict=True))
                for f in found for r in store_files.commit_log_rows(f)]
        for parts in (1, 3):
            got = spark_rows(spark, "rocketmq-commitlog", path, partitions=parts)
            assert sorted(got, key=lambda r: (r["node"] or "", r["file"], r["phy_offset"])) == \
                sorted(want, key=lambda r: (r["node"] or "", r["file"], r["phy_offset"])), (path, parts)
        assert any(r["corrupt"] for r in want) == (path == copy)
        if path == classic:
            assert len(read_store(spark, "rocketmq-commitlog", path, mode="FAILFAST").collect()) == len(want)
    with pytest.raises(Exception, match="corrupt record"):
        read_store(spark, "rocketmq-commitlog", copy, mode="FAILFAST").collect()
    for fmt, finder, rows_of, columns in (
            ("rocketmq-consumequeue", store_files.find_consume_queues, store_files.consume_queue_rows,
             store_files.CONSUME_QUEUE_COLUMNS),
            ("rocketmq-index", store_files.find_index_files, store_files.index_rows, store_files.INDEX_COLUMNS)):
        want = [dict(zip([n for n, _ in columns], r, strict=True)) for f in finder(classic) for r in rows_of(f)]
        got = spark_rows(spark, fmt, classic, partitions=3)
        assert sorted(got, key=str) == sorted(want, key=str), fmt


def test_projection_and_pushdown_give_a_full_read_then_the_filter(spark, classic):
    """A user schema (or ``columns``) builds only its columns; filters on topic, queue id, offsets and store
    time are pushed into the reader (Spark >= 4.1) and give the rows Spark's own filter gives."""
    from pyspark.sql import functions as F

    full = read_store(spark, "rocketmq-commitlog", classic).cache()
    small = "topic string, queue_id int, queue_offset bigint, phy_offset bigint, store_timestamp bigint"
    narrow = spark.read.format("rocketmq-commitlog").schema(small).load(str(classic))
    assert narrow.columns == ["topic", "queue_id", "queue_offset", "phy_offset", "store_timestamp"]
    mid = sorted(r.store_timestamp for r in full.select("store_timestamp").collect())[60]
    cond = ((F.col("topic") == "TopicA") & F.col("queue_id").isin(1, 3) & (F.col("phy_offset") >= 4096)
            & (F.col("store_timestamp") <= mid))
    want = sorted(tuple(r) for r in full.where(cond).select(*narrow.columns).collect())
    got = sorted(tuple(r) for r in narrow.where(cond).collect())
    assert got == want and 0 < len(got) < 60
    plan = narrow.where(cond)._jdf.queryExecution().executedPlan().toString()
    assert "BatchScan rocketmq-commitlog" in plan and "TopicA" not in plan and str(mid) not in plan  # pushed
    by_option = read_store(spark, "rocketmq-commitlog", classic, columns=["topic", "body"])
    assert by_option.columns == ["topic", "body"] and by_option.count() == 120
    with pytest.raises(RocketlabError, match="no column 'nope'"):
        read_store(spark, "rocketmq-commitlog", classic, columns="topic,nope")
    cq = read_store(spark, "rocketmq-consumequeue", classic)
    assert sorted(map(tuple, cq.where((F.col("topic") == "TopicB") & (F.col("queue_offset") > 3)).collect())) == \
        sorted(map(tuple, cq.collect()[:0] + [r for r in cq.collect() if r.topic == "TopicB" and r.queue_offset > 3]))
    full.unpersist()


def test_dledger_data_directories_with_index_and_term(spark, dledger_run):
    rows = spark_rows(spark, "rocketmq-commitlog", dledger_run)
    assert {r["node"] for r in rows} == {"n0", "n1", "n2"} and {r["kind"] for r in rows} == {"dledger"}
    for node in ("n0", "n1", "n2"):
        mine = sorted((r for r in rows if r["node"] == node), key=lambda r: r["dledger_index"])
        entries = list(iter_entries(str(dledger_run / "nodes" / node / "store" / f"dledger-{node}")))
        assert [(r["dledger_index"], r["dledger_term"], r["dledger_pos"]) for r in mine] == \
            [(e["index"], e["term"], e["pos"]) for e in entries]
        messages = [r for r in mine if r["topic"] is not None]
        assert [r["body"] for r in messages] == [b"dl-%d" % i for i in range(25)]
        assert all(r["phy_offset"] == r["dledger_pos"] + 48 == r["physical_offset"] for r in messages)


def test_consume_queue_and_index_rows(spark, classic):
    rows = spark_rows(spark, "rocketmq-consumequeue", classic)
    ours = list(iter_consume_queue(str(classic)))
    key = lambda r: (r["topic"], r["queue_id"], r["queue_offset"])  # noqa: E731
    assert sorted((key(r), r["phy_offset"], r["size"], r["tags_code"]) for r in rows) == \
        sorted((key(r), r["phy_offset"], r["size"], r["tags_code"]) for r in ours)
    assert len(rows) == 120
    index = spark_rows(spark, "rocketmq-index", classic)
    records = {(r["topic"], r["keys"]): r["phy_offset"] for r in spark_rows(spark, "rocketmq-commitlog", classic)}
    assert all(r["corrupt"] is None for r in index) and len(index) == len(records) == 120
    # each key where the store put it: entries after all 5,000,000 slots (the store's default), not after
    # the header's hashSlotCount (the slots in use, 120 or fewer)
    assert {(r["key_hash"], r["phy_offset"]) for r in index} == \
        {(index_key_hash_method(f"{topic}#{key}"), phy) for (topic, key), phy in records.items()}
    assert all(r["slot"] == r["key_hash"] % 5_000_000 and r["hash_slot_count"] <= 120 for r in index)


@pytest.mark.parametrize("slots, entries, option", [(100, 400, None), (64, 1000, 64)])
def test_index_rows_of_a_partly_used_slot_table(spark, tmp_path, slots, entries, option):
    """Not every slot used, and a slot table of another ratio than RocketMQ's 1 slot : 4 entries (read with
    ``hashSlotNum``): the rows are the store's own index entries."""
    root = tmp_path / "store"
    with MessageStore.open(root, threads=False, max_hash_slot_num=slots, max_index_num=entries) as store:
        for i in range(30):
            store.put_message(Message("T", b"x", keys=[f"k{i}", "shared"]))
        store.reput()
    options = {"hashSlotNum": option} if option else {}
    rows = spark_rows(spark, "rocketmq-index", root, **options)
    assert len(rows) == 60 and all(r["corrupt"] is None for r in rows)
    hashes = [index_key_hash_method(f"T#k{i}") for i in range(30)] + [index_key_hash_method("T#shared")] * 30
    assert sorted((r["key_hash"], r["slot"]) for r in rows) == sorted((h, h % slots) for h in hashes)
    used = len({h % slots for h in hashes})
    assert rows[0]["hash_slot_count"] == used < slots  # the header counts the slots in use
    if option:  # without it the file's size fits no 1:4 layout: one row says what to give
        (bad,) = spark_rows(spark, "rocketmq-index", root)
        assert "give its maxHashSlotNum (option hashSlotNum)" in bad["corrupt"]


def test_a_corrupted_record_is_reported_and_the_good_ones_still_read(spark, classic, tmp_path):
    copy = tmp_path / "store"
    shutil.copytree(classic, copy)
    files = sorted((copy / "commitlog").iterdir())
    ours = [r for r in iter_commit_log(str(classic)) if r["type"] == "message" and r["file"] == files[1].name]
    victim = ours[3]
    data = bytearray(files[1].read_bytes())
    at = victim["phy_offset"] - int(files[1].name) + 4  # the magic code of the 4th record of file 2
    data[at:at + 4] = b"\xde\xad\xbe\xef"
    files[1].write_bytes(bytes(data))
    rows = spark_rows(spark, "rocketmq-commitlog", copy)
    bad = [r for r in rows if r["corrupt"] is not None]
    assert len(bad) == 1 and bad[0]["file"] == files[1].name and bad[0]["phy_offset"] == victim["phy_offset"]
    assert f"{files[1].name} at phy offset {victim['phy_offset']}" in bad[0]["corrupt"]
    good = [r for r in rows if r["corrupt"] is None]
    assert len(good) == 120 - (len(ours) - 3)  # the file's first 3 records, and every other file
    with pytest.raises(Exception, match="corrupt record"):
        read_store(spark, "rocketmq-commitlog", copy, mode="FAILFAST").collect()


def test_a_truncated_file_reports_the_torn_record(spark, classic, tmp_path):
    copy = tmp_path / "store"
    shutil.copytree(classic, copy)
    last = sorted((copy / "commitlog").iterdir())[-1]
    ours = [r for r in iter_commit_log(str(classic)) if r["type"] == "message" and r["file"] == last.name]
    cut = ours[-1]["phy_offset"] - int(last.name) + 10
    last.write_bytes(last.read_bytes()[:cut])  # a torn last record (and a file shorter than the others)
    with pytest.raises(RocketlabError, match="differ in size"):
        read_store(spark, "rocketmq-commitlog", copy)
    rows = spark_rows(spark, "rocketmq-commitlog", last)
    assert [r["corrupt"] is not None for r in rows][-1] and len(rows) == len(ours)


@pytest.mark.parametrize("problem", ["not_a_log", "wrong_size", "missing", "bad_mode"])
def test_bad_input_is_one_clear_error(spark, classic, tmp_path, problem):
    if problem == "not_a_log":
        (tmp_path / "x").mkdir()
        (tmp_path / "x" / "notes.txt").write_text("hello")
        with pytest.raises(RocketlabError, match="no commit log here"):
            read_store(spark, "rocketmq-commitlog", tmp_path / "x")
    elif problem == "wrong_size":
        with pytest.raises(RocketlabError, match="not the mapped file size 1073741824"):
            read_store(spark, "rocketmq-commitlog", classic, mappedFileSize=2**30)
    elif problem == "missing":
        with pytest.raises(RocketlabError, match="no such file or directory"):
            read_store(spark, "rocketmq-commitlog", tmp_path / "nothing")
    else:
        with pytest.raises(Exception, match="mode 'SOMETIMES' is not one of"):
            read_store(spark, "rocketmq-commitlog", classic, mode="sometimes").collect()


def test_garbage_named_like_a_commit_log_is_refused(spark, tmp_path):
    d = tmp_path / "commitlog"
    d.mkdir()
    (d / ("0" * 20)).write_bytes(b"GARBAGE!" * 512)
    with pytest.raises(RocketlabError, match="neither a commit-log record nor a DLedger entry"):
        read_store(spark, "rocketmq-commitlog", tmp_path)


def test_one_dataframe_reused_after_a_pushed_filter(spark, classic):
    """Spark 4.1-4.3 keep the read plan of a DataFrame's first pushed-filter query for its later queries
    (the limitation the datasources docstring names): a new DataFrame per filtered query, or
    ``pushdown=false``, gives the right rows."""
    from pyspark.sql import functions as F

    path = str(classic)
    fresh = lambda **o: read_store(spark, "rocketmq-commitlog", path, columns="topic,queue_id", **o)  # noqa: E731
    assert fresh().where(F.col("queue_id") == 1).count() == 60 and fresh().count() == 120
    safe = fresh(pushdown="false")
    assert safe.where(F.col("queue_id") == 1).count() == 60 and safe.count() == 120
    reused = fresh()
    assert reused.where(F.col("queue_id") == 1).count() == 60
    print("a reused DataFrame after a pushed filter counts", reused.count(), "of 120 (Spark's cached read plan)")


@pytest.mark.usefixtures("no_language_set")
def test_the_options_errors_speak_the_kits_language(monkeypatch):
    """A bad option of the data sources: one line in Chinese under zh-CN (its option and column names kept)."""
    monkeypatch.setenv(i18n.ENV, "zh-CN")
    with pytest.raises(RocketlabError) as refused:
        partitions_option("many")
    assert str(refused.value) == "partitions 'many' 不是数字"
    with pytest.raises(RocketlabError) as refused:
        projection([("topic", "string")], None, "nope", "rocketmq-commitlog")
    assert str(refused.value) == "rocketmq-commitlog：没有列 'nope'；现有的列：topic"
    monkeypatch.setenv(i18n.ENV, "en")
    with pytest.raises(RocketlabError, match="^partitions 'many' is not a number$"):
        partitions_option("many")
