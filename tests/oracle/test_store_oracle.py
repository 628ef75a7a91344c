"""The real ``DefaultMessageStore`` of RocketMQ 4.9.5 and 5.3.3 as the judge of ours.

The same messages (a seeded mix: four topics, non-ASCII tags, keys and properties in the producer's order,
bodies from empty to 4 KiB, transactions, IPv4 and IPv6 born hosts, batches, properties at the 32,767-byte
limit and over it) give byte-identical CommitLog, ConsumeQueue and index files and identical put results;
each side recovers the other's store after a clean shutdown, with an ``abort`` file, and after a real
crash (SIGKILL mid-write), keeping the same records and cutting the same tail.

Store timestamps are the only thing Java takes from its clock: ours is given Java's, put by put. Known
difference, not in the mix: a message with a delay level (Java's CommitLog moves it to SCHEDULE_TOPIC_XXXX;
the kit has no schedule service).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rocketlab.oracle.jvm import Oracle
from rocketlab.oracle.mix import Item, keys_of, mixed_messages
from rocketlab.oracle.store import JavaStore, consume, open_ours, put_result, read_back, store_files
from rocketlab.store.message import keeps_last_property_separator

OPTIONS = {"mapped_file_size_commit_log": 64 * 1024, "mapped_file_size_consume_queue": 10 * 20,
           "max_hash_slot_num": 100, "max_index_num": 400}
"""Small files on both sides, so that commit logs, consume queues and index files all roll."""


def mix(oracle: Oracle, seed: int, n: int = 240) -> list[Item]:
    return mixed_messages(seed, n, last_separator=keeps_last_property_separator(oracle.release))


def java_write(oracle: Oracle, work: Path, root: Path, items: list[Item],
               store_host: tuple[str, int] = ("127.0.0.1", 10911)) -> tuple[list[dict], dict, dict]:
    """Put ``items`` through a real store on ``root``, let the reput finish, read everything back, shut
    down cleanly. Returns the put results, the read-back and what a consumer reads."""
    with JavaStore.start(oracle, work, root, store_host=store_host, **OPTIONS) as store:
        results = [store.put_batch(it) if isinstance(it, list) else store.put(it) for it in items]
        store.wait_dispatch()
        back, consumed = store.read_back(keys_of(items)), store.consume()
        store.shutdown()
    return results, back, consumed


def ours_write(oracle: Oracle, root: Path, items: list[Item], stamps: list[int],
               store_host: tuple[str, int] = ("127.0.0.1", 10911)) -> tuple[list[dict], dict, dict]:
    """The same with our store, each put at the store timestamp Java gave it."""
    now = [0]
    store = open_ours(root, clock=lambda: now[0], rocketmq_version=oracle.release, broker_ip1=store_host[0],
                      listen_port=store_host[1], **OPTIONS)
    try:
        results = []
        for it, stamp in zip(items, stamps, strict=True):
            now[0] = stamp
            results.append(put_result(store.put_messages(it) if isinstance(it, list) else store.put_message(it)))
        store.reput()
        return results, read_back(store, keys_of(items)), consume(store)
    finally:
        store.shutdown()


def java_reopen(oracle: Oracle, work: Path, root: Path, items: list[Item]) -> tuple[dict, dict, bool]:
    """A real store's recovery of ``root`` (normal, or abnormal when ``abort`` is there): its read-back,
    what a consumer reads, and whether it saw a clean last exit."""
    with JavaStore.start(oracle, work, root, **OPTIONS) as store:
        store.wait_dispatch()
        return store.read_back(keys_of(items)), store.consume(), store.opened["lastExitOK"]


def ours_reopen(root: Path, oracle: Oracle, items: list[Item]) -> tuple[dict, dict, bool]:
    store = open_ours(root, rocketmq_version=oracle.release, **OPTIONS)
    try:
        store.reput()
        return read_back(store, keys_of(items)), consume(store), store.last_exit_ok
    finally:
        store.shutdown()


@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_the_same_messages_give_byte_identical_files_and_put_results(oracle, tmp_path, seed):
    items = mix(oracle, seed)
    java_results, java_back, java_consumed = java_write(oracle, tmp_path, tmp_path / "java", items)
    stamps = [r.get("storeTimestamp", 0) for r in java_results]
    our_results, our_back, our_consumed = ours_write(oracle, tmp_path / "ours", items, stamps)

    assert our_results == java_results
    statuses = {r["status"] for r in java_results}
    assert "PUT_OK" in statuses and len(statuses) == 2  # and one refusal: properties over the limit
    assert our_back == java_back and our_consumed == java_consumed
    java_files, our_files = store_files(tmp_path / "java"), store_files(tmp_path / "ours")
    assert len(java_files["commitlog"]) >= 3 and len(java_files["index"]) >= 2  # files rolled
    assert sum(len(v) > 1 for k, v in java_files.items() if k.startswith("consumequeue/")) > 0
    assert sorted(our_files) == sorted(java_files)
    for kind in java_files:
        assert our_files[kind] == java_files[kind], f"{kind} differs from what RocketMQ {oracle.release} writes"


def test_an_ipv6_store_host_gives_the_same_bytes(oracle, tmp_path):
    """A broker on an IPv6 address: 20-byte STOREHOSTADDRESS fields, the 0x20 SYSFLAG bit, 28-byte message
    ids, beside IPv4 and IPv6 born hosts."""
    items = mix(oracle, 9, 80)
    host = ("2001:db8::10", 10911)
    java_results, java_back, _ = java_write(oracle, tmp_path, tmp_path / "java", items, host)
    our_results, our_back, _ = ours_write(oracle, tmp_path / "ours", items,
                                          [r.get("storeTimestamp", 0) for r in java_results], host)
    assert our_results == java_results and our_back == java_back
    assert {r["store_host"] for r in java_back["records"]} == {"[2001:db8::10]:10911"}
    assert all(len(r["msg_id"]) == 56 and r["sys_flag"] & 0x20 for r in java_back["records"])
    assert store_files(tmp_path / "ours") == store_files(tmp_path / "java")


def test_a_record_of_each_release_is_as_long_as_java_writes_it(oracle, tmp_path):
    """4.9.5 (and everything before 5.2) writes the properties string without a separator after the last
    property, 5.3.3 with one: the record of the same message differs by exactly that byte."""
    from rocketlab.store.message import Message

    msg = Message("FooBar", b"Once, there was a chance for me!", 0, tags="TAG1", keys="1700000000000",
                  born_timestamp=1)
    (result,), _, _ = java_write(oracle, tmp_path, tmp_path / "java", [msg])
    assert result["wroteBytes"] == {"4.9.5": 157, "5.3.3": 158}[oracle.release]


def both_recover(oracle: Oracle, work: Path, stopped: Path, items: list[Item], *, abort: bool = True) -> tuple[dict, dict]:
    """Java's and our recovery of two copies of ``stopped`` agree: the same records kept, the same tail
    cut, the same queues and keys. ``abort`` adds the ``abort`` file (a crashed store left its own there):
    abnormal recovery. Returns Java's read-back and what its consumer reads."""
    for name in ("for-java", "for-ours"):
        shutil.copytree(stopped, work / name)
        if abort:
            (work / name / "abort").touch()
    clean = not (work / "for-java" / "abort").exists()
    java_back, java_consumed, java_clean = java_reopen(oracle, work, work / "for-java", items)
    ours_back, ours_consumed, ours_clean = ours_reopen(work / "for-ours", oracle, items)
    assert java_clean == ours_clean == clean
    assert ours_back == java_back and ours_consumed == java_consumed
    return java_back, java_consumed


def same_except_reindexed_keys(a: dict, b: dict) -> bool:
    """Equal read-backs, but for keys an abnormal recovery indexed a second time (the message at the end
    of the index files it kept is dispatched and indexed again, as Java does)."""
    return ({k: v for k, v in a.items() if k != "keys"} == {k: v for k, v in b.items() if k != "keys"}
            and a["keys"].keys() == b["keys"].keys()
            and all(sorted(set(a["keys"][k])) == sorted(set(b["keys"][k])) for k in a["keys"]))


@pytest.mark.parametrize("abort", [False, True], ids=["clean", "abort"])
def test_a_java_store_is_recovered_alike_by_both(oracle, tmp_path, abort):
    items = mix(oracle, 3)
    _, java_back, java_consumed = java_write(oracle, tmp_path, tmp_path / "java", items)
    back, consumed = both_recover(oracle, tmp_path / "recover", tmp_path / "java", items, abort=abort)
    assert consumed == java_consumed
    assert back == java_back if not abort else same_except_reindexed_keys(back, java_back)


@pytest.mark.parametrize("abort", [False, True], ids=["clean", "abort"])
def test_a_rocketlab_store_is_recovered_alike_by_both(oracle, tmp_path, abort):
    items = mix(oracle, 4)
    now = [1_700_000_000_000]

    def clock() -> int:
        now[0] += 3
        return now[0]

    store = open_ours(tmp_path / "ours", clock=clock, rocketmq_version=oracle.release, **OPTIONS)
    for it in items:
        store.put_messages(it) if isinstance(it, list) else store.put_message(it)
    store.reput()
    ours_back, ours_consumed = read_back(store, keys_of(items)), consume(store)
    store.shutdown()
    back, consumed = both_recover(oracle, tmp_path / "recover", tmp_path / "ours", items, abort=abort)
    assert consumed == ours_consumed
    assert back == ours_back if not abort else same_except_reindexed_keys(back, ours_back)


def tear_last_record(root: Path, read_back_of: dict) -> int:
    """Zero the last record from byte 64 on (a write the disk never finished: the lengths and the body are
    gone, the header is there); returns its offset. (Zeroing only its properties would not do: the CRC covers
    the body alone, so both stores keep such a record, damaged properties and all.)"""
    last = read_back_of["records"][-1]
    size = OPTIONS["mapped_file_size_commit_log"]
    path = root / "commitlog" / f"{last['phy_offset'] // size * size:020d}"
    data = bytearray(path.read_bytes())
    at = last["phy_offset"] % size
    data[at + 64: at + last["size"]] = bytes(last["size"] - 64)
    path.write_bytes(bytes(data))
    return last["phy_offset"]


@pytest.mark.parametrize("seed", [5, pytest.param(6, marks=pytest.mark.slow)])
def test_a_java_store_killed_mid_write_is_recovered_alike(oracle, tmp_path, seed):
    items = [it for it in mix(oracle, seed, 400) if not isinstance(it, list)]
    acked = []
    with JavaStore.start(oracle, tmp_path, tmp_path / "java", **OPTIONS) as store:
        store.put_stream(items)
        while len(acked) < 40 * seed - 80:  # 120 and 160 puts in
            acked.append(store.proc.next_event()["result"])
        store.proc.kill()  # SIGKILL: no shutdown, reput and flushes cut wherever they were
    back, _ = both_recover(oracle, tmp_path / "crash", tmp_path / "java", items, abort=False)  # its abort file stayed
    stored = [r["wroteOffset"] for r in acked if r["status"] == "PUT_OK"]
    assert len(stored) >= len(acked) - 1  # one refusal: the properties over the limit
    # everything a put answered survives a process crash (the page cache keeps it)
    assert set(stored) <= {r["phy_offset"] for r in back["records"]}

    torn = tmp_path / "torn"
    shutil.copytree(tmp_path / "java", torn)
    cut_at = tear_last_record(torn, back)
    torn_back, _ = both_recover(oracle, tmp_path / "torn-crash", torn, items, abort=False)
    assert torn_back["max_phy_offset"] == cut_at and torn_back["records"] == back["records"][:-1]


def test_a_rocketlab_store_killed_mid_write_is_recovered_alike(oracle, tmp_path):
    root = tmp_path / "ours"
    writer = subprocess.Popen([sys.executable, "-m", "tests.oracle.store_writer", str(root), oracle.release, "7"],
                              stdout=subprocess.PIPE, text=True)
    try:
        acked = [writer.stdout.readline() for _ in range(300)]
        assert all(acked), "the writer stopped early"
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    items = mixed_messages(7, 2000, last_separator=keeps_last_property_separator(oracle.release), batches=False)
    back, _ = both_recover(oracle, tmp_path / "crash", root, items, abort=False)
    offsets = {r["phy_offset"] for r in back["records"]}
    assert {int(line.split()[1]) for line in acked if line.startswith("PUT_OK")} <= offsets

    torn = tmp_path / "torn"
    shutil.copytree(root, torn)
    cut_at = tear_last_record(torn, back)
    torn_back, _ = both_recover(oracle, tmp_path / "torn-crash", torn, items, abort=False)
    assert torn_back["max_phy_offset"] == cut_at and torn_back["records"] == back["records"][:-1]


CLASSIC_RUNS = sorted(p for p in (Path(__file__).resolve().parents[2] / "data").rglob("commitlog")
                      if p.is_dir() and any(p.iterdir()) and not any(p.parent.glob("dledger-*")))
"""The commit logs of data/'s classic stores (brokers on DLedger keep theirs under dledger-<id>/)."""


@pytest.mark.parametrize("commitlog", CLASSIC_RUNS, ids=lambda p: str(p.parent.relative_to(p.parents[4])))
def test_a_real_store_opens_the_classic_stores_under_data_as_they_are(oracle4, tmp_path, commitlog):
    """data/README.md says so: with the same file sizes (rocketlab.sample_data.SMALL_STORE, 64 KiB commit
    logs), RocketMQ 4.9.5 recovers each classic store of data/ to what ours reads."""
    from rocketlab.sample_data import SMALL_STORE

    options = {"mapped_file_size_commit_log": 64 * 1024, **SMALL_STORE}
    store = commitlog.parent
    copy = tmp_path / "copy"
    shutil.copytree(store, copy)
    ours = open_ours(copy, **options)
    ours_back, ours_consumed = read_back(ours), consume(ours)
    ours.shutdown()
    shutil.rmtree(copy)
    shutil.copytree(store, copy)
    with JavaStore.start(oracle4, tmp_path, copy, **options) as java:
        java.wait_dispatch()
        assert java.read_back() == ours_back and java.consume() == ours_consumed
    assert len(ours_back["records"]) > 10
