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
