"""The Spark data sources over stores the real RocketMQ 4.9.5 and 5.3.3 wrote give the rows Java's own
read-back gives: every record field for field, every consume-queue unit, and an index entry for every key
where Java's ``queryMessage`` finds it."""

from __future__ import annotations

import pytest

from rocketlab.analysis.datasources import read_store
from rocketlab.oracle.mix import keys_of
from rocketlab.oracle.store import JavaStore, normal_host
from rocketlab.store.index_file import index_key_hash_method
from tests.oracle.test_store_oracle import OPTIONS, mix

pytestmark = pytest.mark.spark


def rows(spark, fmt: str, path) -> list[dict]:
    return [r.asDict(recursive=True) for r in read_store(spark, fmt, path).collect()]


def test_the_data_sources_read_a_java_store_as_java_reads_it_back(spark, oracle, tmp_path):
    items = mix(oracle, 8)
    keys = keys_of(items)
    with JavaStore.start(oracle, tmp_path, tmp_path / "java", **OPTIONS) as store:
        for it in items:
            store.put_batch(it) if isinstance(it, list) else store.put(it)
        store.wait_dispatch()
        back = store.read_back(keys)
        store.shutdown()

    records = rows(spark, "rocketmq-commitlog", tmp_path / "java")
    assert all(r["corrupt"] is None and r["body_crc_ok"] for r in records)
    got = sorted(({"phy_offset": r["phy_offset"], "size": r["total_size"], "topic": r["topic"],
                   "queue_id": r["queue_id"], "queue_offset": r["queue_offset"], "msg_id": r["msg_id"],
                   "body_crc": r["body_crc"], "flag": r["flag"], "sys_flag": r["sys_flag"],
                   "born_timestamp": r["born_timestamp"], "store_timestamp": r["store_timestamp"],
                   "reconsume_times": r["reconsume_times"],
                   "prepared_transaction_offset": r["prepared_transaction_offset"],
                   "born_host": normal_host(r["born_host"]), "store_host": normal_host(r["store_host"]),
                   "properties": r["properties"], "body": bytes(r["body"])} for r in records),
                 key=lambda r: r["phy_offset"])
    assert got == back["records"] and len(got) > 300

    units = rows(spark, "rocketmq-consumequeue", tmp_path / "java")
    assert not any(u["filler"] or u["corrupt"] for u in units)
    assert {(u["topic"], u["queue_id"]): [] for u in units}.keys() == back["queues"].keys()
    for (topic, qid), q in back["queues"].items():
        mine = sorted((u["queue_offset"], u["phy_offset"], u["size"], u["tags_code"]) for u in units
                      if (u["topic"], u["queue_id"]) == (topic, qid))
        assert mine == q["units"], (topic, qid)

    index = rows(spark, "rocketmq-index", tmp_path / "java")
    assert len({r["file"] for r in index}) > 1 and all(r["corrupt"] is None for r in index)
    entries = {(r["key_hash"], r["phy_offset"]) for r in index}
    found = {name: offsets for name, offsets in back["keys"].items() if offsets}  # not: rollbacks, refusals
    assert len(found) > 0.9 * len(back["keys"])
    for name, offsets in found.items():
        assert {(index_key_hash_method(name), phy) for phy in offsets} <= entries, name
    assert all(r["slot"] == r["key_hash"] % OPTIONS["max_hash_slot_num"] for r in index)
    assert {phy for _, phy in entries} <= {r["phy_offset"] for r in back["records"]}


def test_columns_pushdown_and_splits_over_a_java_store(spark, oracle, tmp_path):
    """Issue 34's readers over a store the real release wrote: the bulk decoder equals the reference
    decoder row for row; a user schema of small columns, pushed filters (topic, queue, physical offset,
    store time) and a store cut into more partitions than files (64 KiB files split at record boundaries)
    give exactly Java's read-back, projected and filtered."""
    from pyspark.sql import functions as F

    from rocketlab.analysis import store_arrow, store_arrow_batch, store_files

    items = mix(oracle, 11)
    with JavaStore.start(oracle, tmp_path, tmp_path / "java", **OPTIONS) as store:
        for it in items:
            store.put_batch(it) if isinstance(it, list) else store.put(it)
        store.wait_dispatch()
        back = store.read_back([])
        store.shutdown()
    java = back["records"]
    files = store_files.find_commit_logs(tmp_path / "java")
    names = [n for n, _ in store_files.COMMIT_LOG_COLUMNS]
    reference = [dict(zip(names, r, strict=True)) for f in files for r in store_files.commit_log_rows(f)]
    bulk = []
    for f in files:
        for batch in store_arrow.commit_log_batches(store_arrow_batch.Segment(f), store_files.COMMIT_LOG_COLUMNS):
            for r in batch.to_pylist():
                r["properties"] = dict(r["properties"]) if r["properties"] is not None else None
                bulk.append(r)
    assert bulk == reference and len(bulk) == len(java) > 200

    split = sorted((r.asDict(recursive=True) for r in
                    read_store(spark, "rocketmq-commitlog", tmp_path / "java", partitions=len(files) * 2).collect()),
                   key=lambda r: r["phy_offset"])
    assert [(r["phy_offset"], r["total_size"], r["body"]) for r in split] == \
        [(r["phy_offset"], r["size"], r["body"]) for r in java]

    small = "topic string, queue_id int, queue_offset bigint, phy_offset bigint, store_timestamp bigint"
    df = spark.read.format("rocketmq-commitlog").schema(small).load(str(tmp_path / "java"))
    topic = java[len(java) // 2]["topic"]
    queues = sorted({r["queue_id"] for r in java if r["topic"] == topic})[:2]
    lo_phy = java[len(java) // 4]["phy_offset"]
    hi_ts = sorted(r["store_timestamp"] for r in java)[len(java) * 3 // 4]
    got = sorted(tuple(r) for r in df.where((F.col("topic") == topic) & F.col("queue_id").isin(*queues)
                                            & (F.col("phy_offset") >= lo_phy)
                                            & (F.col("store_timestamp") <= hi_ts)).collect())
    want = sorted((r["topic"], r["queue_id"], r["queue_offset"], r["phy_offset"], r["store_timestamp"]) for r in java
                  if r["topic"] == topic and r["queue_id"] in queues and r["phy_offset"] >= lo_phy
                  and r["store_timestamp"] <= hi_ts)
    assert got == want and want
    every = sorted(tuple(r) for r in spark.read.format("rocketmq-commitlog").schema(small)
                   .load(str(tmp_path / "java")).collect())  # a new DataFrame: see the datasources docstring
    assert every == sorted((r["topic"], r["queue_id"], r["queue_offset"], r["phy_offset"], r["store_timestamp"])
                           for r in java)

    units = spark.read.format("rocketmq-consumequeue").schema("topic string, queue_id int, queue_offset bigint, "
                                                              "phy_offset bigint").load(str(tmp_path / "java"))
    (topic_q, qid) = next(iter(back["queues"]))
    mine = sorted((r.queue_offset, r.phy_offset) for r in
                  units.where((F.col("topic") == topic_q) & (F.col("queue_id") == qid)).collect())
    assert mine == [(u[0], u[1]) for u in back["queues"][(topic_q, qid)]["units"]]
