"""The bulk (Arrow) decoders give exactly the reference decoders' rows (:mod:`rocketlab.analysis.store_files`,
record at a time) on random stores: every column, corrupted and truncated files, any subset of columns,
pushed filters, and any split of a file at record boundaries (never a record cut or read twice).
Randomised over many seeds; each failure names its seed. No Spark here (see test_datasources)."""

from __future__ import annotations

import itertools
import os
import random
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from rocketlab.analysis import store_arrow, store_arrow_batch, store_arrow_classic, store_files
from rocketlab.analysis.store_arrow_batch import Predicate, Segment
from rocketlab.analysis.store_files import COMMIT_LOG_COLUMNS, CONSUME_QUEUE_COLUMNS, INDEX_COLUMNS
from rocketlab.sim import Cluster
from rocketlab.store import Message, MessageStore

FILE = 8192
SEEDS = range(40)


def random_store(root: Path, seed: int, count: int | None = None, file_size: int = FILE) -> Path:
    """A store of 8 KiB files: random topics (some non-ASCII), bodies of 0..300 bytes, properties, IPv4
    and IPv6 born hosts, several queues."""
    rng = random.Random(seed)
    with MessageStore.open(root, threads=False, mapped_file_size_commit_log=file_size, max_hash_slot_num=64,
                           max_index_num=256) as store:
        for i in range(count if count is not None else rng.randrange(20, 120)):
            host = ("::1", 40000 + i) if rng.random() < 0.2 else (f"10.0.{rng.randrange(3)}.{i % 250}", 5000)
            props = {"KEYS": f"key-{i}"} if rng.random() < 0.7 else {}
            if rng.random() < 0.6:
                props["TAGS"] = rng.choice(["a", "b", "tag\u00e9"])
            if rng.random() < 0.3:
                props["x"] = "v" * rng.randrange(1, 30)
            msg = Message(rng.choice(["TopicA", "TopicB", "Topic_C"]), rng.randbytes(rng.randrange(0, 300)),
                          rng.randrange(4), properties=props, born_host=host)
            assert store.put_message(msg).status.name == "PUT_OK"
        store.reput()
    return root


def dicts(rows: list[tuple] | list[dict], columns) -> list[dict]:
    names = [n for n, _ in columns]
    return [dict(zip(names, r, strict=True)) if isinstance(r, tuple) else r for r in rows]


def arrow_rows(batches) -> list[dict]:
    out = []
    for b in batches:
        for r in b.to_pylist():
            if isinstance(r.get("properties"), list):
                r["properties"] = dict(r["properties"])
            out.append(r)
    return out


def reference(files, rows_of, columns) -> list[dict]:
    return [r for f in files for r in dicts(list(rows_of(f)), columns)]


def bulk(files, columns, predicates=(), kind="commitlog", split_at=None) -> list[dict]:
    fn = {"commitlog": store_arrow.commit_log_batches, "consumequeue": store_arrow.consume_queue_batches,
          "index": store_arrow.index_batches}[kind]
    out = []
    for f in files:
        for seg in (split_at(f) if split_at else [Segment(f)]):
            out += arrow_rows(fn(seg, columns, predicates))
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_commit_log_rows_equal_the_reference_decoder(tmp_path, seed):
    root = random_store(tmp_path / "store", seed)
    files = store_files.find_commit_logs(root)
    want = reference(files, store_files.commit_log_rows, COMMIT_LOG_COLUMNS)
    assert want and bulk(files, COMMIT_LOG_COLUMNS) == want, f"seed {seed}"
    rng = random.Random(seed)
    columns = rng.sample(COMMIT_LOG_COLUMNS, rng.randrange(1, 8))
    assert bulk(files, columns) == [{n: r[n] for n, _ in columns} for r in want], f"seed {seed}"


def corrupt(root: Path, seed: int) -> None:
    """Overwrite a few random bytes of one commit-log file, or cut it short."""
    rng = random.Random(seed)
    files = sorted((root / "commitlog").iterdir())
    victim = rng.choice(files)
    data = bytearray(victim.read_bytes())
    if rng.random() < 0.3:
        victim.write_bytes(bytes(data[:rng.randrange(1, len(data))]))
        return
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(0, min(len(data), 2000))
        data[at:at + 4] = rng.randbytes(4)
    victim.write_bytes(bytes(data))


def classic_store(tmp_path: Path, seed: int, corrupted: bool) -> tuple[list[store_files.StoreFile], list[tuple]]:
    """A random store (:func:`corrupt`-ed when ``corrupted``): its commit-log files, every one kept (a cut
    one too), and the reference decoder's rows of them."""
    root = random_store(tmp_path / "store", seed)
    if corrupted:
        corrupt(root, seed)
    files = [store_files.StoreFile(str(p), str(root), None, "classic") for p in sorted((root / "commitlog").iterdir())]
    return files, reference(files, store_files.commit_log_rows, COMMIT_LOG_COLUMNS)


@pytest.mark.parametrize("seed", SEEDS)
def test_corrupted_and_truncated_files_give_the_reference_rows(tmp_path, seed):
    files, want = classic_store(tmp_path, seed, corrupted=True)
    assert bulk(files, COMMIT_LOG_COLUMNS) == want, f"seed {seed}"


def segments(f, cuts) -> list[Segment]:
    """File ``f`` cut at the sorted offsets ``cuts`` (none 0), the last segment to the file's end."""
    edges = [0, *cuts]
    return [Segment(f, a, edges[i + 1] if i + 1 < len(edges) else None) for i, a in enumerate(edges)]


def planned_rows(plan: list[list[Segment]]) -> list[dict]:
    """The rows of a commit-log plan's segments, partition after partition."""
    return [r for p in plan for seg in p for r in arrow_rows(store_arrow.commit_log_batches(seg, COMMIT_LOG_COLUMNS))]


def splits(seed: int):
    """Split every file at random record boundaries (or at random bytes, snapped to the next record)."""
    rng = random.Random(seed)

    def split_at(f):
        starts = store_arrow.record_starts(f)
        cuts = sorted(set(rng.sample(starts[1:], min(len(starts) - 1, rng.randrange(0, 5))))) if starts else []
        return segments(f, cuts)
    return split_at


@pytest.mark.parametrize("seed", SEEDS)
def test_splits_at_record_boundaries_never_cut_or_repeat_a_record(tmp_path, seed):
    files, want = classic_store(tmp_path, seed, corrupted=bool(seed % 2))
    assert bulk(files, COMMIT_LOG_COLUMNS, split_at=splits(seed)) == want, f"seed {seed}"
    # the planner: any number of partitions, every record once, in order
    parts = random.Random(seed).randrange(1, 9)
    plan = store_arrow.plan_partitions(files, parts, store_arrow.commit_log_split)
    got = planned_rows(plan)
    assert got == want and len(plan) <= parts, f"seed {seed}"


def byte_splits(seed: int):
    """Cut every file at random bytes (a classic commit log's segments may begin anywhere)."""
    rng = random.Random(seed)

    def split_at(f):
        size = os.path.getsize(f.path)
        cuts = sorted({rng.randrange(1, size) for _ in range(rng.randrange(0, 6))}) if size > 1 else []
        return segments(f, cuts)
    return split_at


@pytest.mark.parametrize("seed", SEEDS)
def test_classic_segments_cut_at_any_byte_give_each_record_once(tmp_path, seed, monkeypatch):
    """Segments begin at random bytes, and the walk goes a few hundred bytes at a time (so runs, chunk
    edges and records across them all happen): the rows of the whole files, corrupted ones included
    (a record that does not decode ends its file for the later segments too)."""
    monkeypatch.setattr(store_arrow_classic, "CHUNK", random.Random(seed).choice([300, 1000, 4096]))
    monkeypatch.setattr(store_arrow_classic, "_SCAN", 256)
    monkeypatch.setattr(store_arrow_classic, "_STEP_ABOVE", random.Random(seed).choice([0, 200, 10**9]))  # both walks
    files, want = classic_store(tmp_path, seed, corrupted=bool(seed % 2))
    assert bulk(files, COMMIT_LOG_COLUMNS, split_at=byte_splits(seed)) == want, f"seed {seed}"
    sizes = [store_arrow.written_bytes(f.path) for f in files]
    plan = store_arrow.plan_partitions(files, random.Random(seed).randrange(1, 9), store_arrow.commit_log_split, sizes)
    got = planned_rows(plan)
    assert got == want, f"seed {seed}"


def test_a_later_segment_starts_where_this_process_walked_the_file_to(tmp_path, monkeypatch):
    """The walk of the records before a segment is remembered per file and version: the second read of a
    later segment starts near it. A remembered place where no record begins any more (the file changed
    under the same key) is dropped; a file rewritten in place gets a new key, and the segment ends the
    file as the reference does. A file just changed is not remembered (its times are coarse)."""
    monkeypatch.setattr(store_arrow_classic, "CHUNK", 512)
    store_arrow_classic._WALKED.clear()
    root = random_store(tmp_path / "store", 3, count=120)
    path = sorted((root / "commitlog").iterdir())[0]
    f = store_files.StoreFile(str(path), str(root), None, "classic")
    cut = os.path.getsize(path) * 3 // 4
    later = Segment(f, cut)
    want = [r for r in reference([f], store_files.commit_log_rows, COMMIT_LOG_COLUMNS) if r["phy_offset"] >= cut]
    assert want and arrow_rows(store_arrow.commit_log_batches(later, COMMIT_LOG_COLUMNS)) == want
    key = store_arrow_classic.file_key(str(path))
    assert key not in store_arrow_classic._WALKED  # written just now
    monkeypatch.setattr(store_arrow_classic, "_SETTLED_NS", 0)
    assert arrow_rows(store_arrow.commit_log_batches(later, COMMIT_LOG_COLUMNS)) == want
    known = store_arrow_classic._WALKED[key]
    assert any(cut - 2048 < k <= cut for k in known)  # chunk by chunk, up to the cut and past it
    assert known == sorted(set(known))
    assert arrow_rows(store_arrow.commit_log_batches(later, COMMIT_LOG_COLUMNS)) == want
    assert store_arrow_classic._WALKED[key] == known  # the same places again: nothing added
    store_arrow_classic._WALKED[key] = [k + 1 for k in known]  # places inside records: as if the bytes changed
    assert arrow_rows(store_arrow.commit_log_batches(later, COMMIT_LOG_COLUMNS)) == want
    assert all(k not in store_arrow_classic._WALKED.get(key, []) for k in (k + 1 for k in known))
    last = max(want, key=lambda r: r["phy_offset"])
    end = last["phy_offset"] + last["total_size"]  # where the written records end: zeros from there
    if end + 1 < os.path.getsize(path):
        store_arrow_classic._WALKED[key] = [end]
        assert arrow_rows(store_arrow.commit_log_batches(Segment(f, end + 1), COMMIT_LOG_COLUMNS)) == []
        assert store_arrow_classic._WALKED[key] == [end]  # the end of the data is a place to begin from too
    data = bytearray(path.read_bytes())
    data[4:8] = b"\x00\x00\x00\x07"  # the first record's magic: the file now ends there
    path.write_bytes(bytes(data))
    assert store_arrow_classic.file_key(str(path)) != key
    assert arrow_rows(store_arrow.commit_log_batches(later, COMMIT_LOG_COLUMNS)) == []
    whole = reference([f], store_files.commit_log_rows, COMMIT_LOG_COLUMNS)
    assert len(whole) == 1 and whole[0]["corrupt"]


def walk_starts(path: Path, base: int = 0) -> tuple[list[int], int | None, int]:
    """The record starts :class:`ClassicChain` walks in a whole file, where it stopped on a bad record,
    and how many records it walked one at a time (in its plain loop when that is forced, else among the
    candidates)."""
    buf = pa.memory_map(str(path), "r").read_buffer()
    chain = store_arrow_classic.ClassicChain(buf, np.frombuffer(buf, dtype=np.uint8), base)
    starts = [int(x) for a in chain.starts(len(buf)) for x in a]
    return starts, chain.bad, chain.looped if store_arrow_classic._STEP_ABOVE == 0 else chain.stepped


@pytest.mark.parametrize("seed", range(20))
def test_the_chain_walks_what_the_recovery_loop_walks(tmp_path, seed, monkeypatch):
    """ClassicChain against scan_classic (the loop it replaces) on hostile bytes: copies of real record
    headers inside bodies (right magic, and the offset where they lie in the offset field), records whose
    PHYSICALOFFSET field lies, garbage in headers. Same starts, same place of the bad record."""
    rng = random.Random(seed)
    monkeypatch.setattr(store_arrow_classic, "CHUNK", 1024)
    monkeypatch.setattr(store_arrow_classic, "_STEP_ABOVE", 0 if seed % 2 else 10**9)  # the plain loop after 64 records
    root = random_store(tmp_path / "store", seed, count=150, file_size=2**16)
    path = sorted((root / "commitlog").iterdir())[0]
    data = bytearray(path.read_bytes())
    starts, _bad = store_arrow_classic.scan_classic(bytes(data), 0, None, len(data))
    for _ in range(rng.randrange(1, 6)):
        victim = rng.choice(starts)
        kind = rng.random()
        if kind < 0.5:  # a later record's header copied into a body, where its offset field says it is
            src = rng.choice(starts)
            at = victim + rng.randrange(100, 200)
            header = bytearray(data[src:src + 40])
            header[28:36] = at.to_bytes(8, "big", signed=True)
            data[at:at + 40] = header
        elif kind < 0.8:  # a record whose PHYSICALOFFSET field lies
            data[victim + 28:victim + 36] = rng.randbytes(8)
        else:  # garbage in a header
            data[victim + rng.randrange(0, 8):][:2] = rng.randbytes(2)
    path.write_bytes(bytes(data))
    want, want_bad = store_arrow_classic.scan_classic(bytes(data), 0, None, len(data))
    got, got_bad, looped = walk_starts(path)  # looped: see walk_starts
    assert (got, got_bad) == (want, want_bad), f"seed {seed}"
    if seed % 2 and len(want) > 70:
        assert looped > 0, f"seed {seed}"  # the plain loop took over after 64 records


def test_records_found_in_bulk_on_a_well_formed_store(tmp_path, monkeypatch):
    """Every record of a store as the kit writes it carries its offset: none is walked one at a time."""
    monkeypatch.setattr(store_arrow_classic, "_STEP_ABOVE", 10**9)  # never the plain loop
    root = random_store(tmp_path / "store", 5, count=200)
    for path in sorted((root / "commitlog").iterdir()):
        starts, bad, stepped = walk_starts(path, int(path.name))
        assert starts and bad is None and stepped == 0


def test_written_bytes_leaves_out_the_zero_tail(tmp_path):
    f = tmp_path / "00000000000000000000"
    f.write_bytes(b"\x01" * 100_000 + bytes(900_000))
    assert 100_000 <= store_arrow.written_bytes(str(f)) <= 100_000 + 2**16
    f.write_bytes(bytes(10))
    assert store_arrow.written_bytes(str(f)) == 0
    f.write_bytes(b"\x01" * 10)
    assert store_arrow.written_bytes(str(f)) == 10


@pytest.mark.parametrize("seed", range(12))
def test_pushed_filters_give_the_rows_of_a_full_read_then_the_filter(tmp_path, seed):
    root = random_store(tmp_path / "store", seed)
    files = store_files.find_commit_logs(root)
    want = reference(files, store_files.commit_log_rows, COMMIT_LOG_COLUMNS)
    rng = random.Random(seed)
    offsets = sorted(r["phy_offset"] for r in want)
    times = sorted(r["store_timestamp"] for r in want)
    preds = [Predicate("topic", "EqualTo", rng.choice(["TopicA", "Topic_C"])),
             Predicate("queue_id", "In", (rng.randrange(4), rng.randrange(4))),
             Predicate("phy_offset", "GreaterThanOrEqual", rng.choice(offsets)),
             Predicate("store_timestamp", "LessThan", rng.choice(times) + 1)]
    chosen = rng.sample(preds, rng.randrange(1, 5))
    expect = [r for r in want if all(p.admits(r[p.column]) for p in chosen)]
    assert bulk(files, COMMIT_LOG_COLUMNS, chosen) == expect, (seed, chosen)


@pytest.mark.parametrize("seed", range(8))
def test_consume_queue_and_index_equal_the_reference(tmp_path, seed):
    root = random_store(tmp_path / "store", seed)
    cq = store_files.find_consume_queues(root)
    assert bulk(cq, CONSUME_QUEUE_COLUMNS, kind="consumequeue") == \
        reference(cq, store_files.consume_queue_rows, CONSUME_QUEUE_COLUMNS)
    index = store_files.find_index_files(root)
    assert bulk(index, INDEX_COLUMNS, kind="index") == reference(index, store_files.index_rows, INDEX_COLUMNS)
    for f in index:  # a torn index file: the reference's row
        shutil.copy(f.path, tmp_path / "torn")
        with open(tmp_path / "torn", "r+b") as fh:
            fh.truncate(os.path.getsize(f.path) // 2)
        torn = store_files.StoreFile(str(tmp_path / "torn"), f.store, None, "index")
        assert bulk([torn], INDEX_COLUMNS, kind="index") == reference([torn], store_files.index_rows, INDEX_COLUMNS)


@pytest.fixture(scope="module")
def dledger_run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("dledger") / "run"
    c = Cluster.dledger_brokers(nodes=3, seed=3, data_dir=root)
    c.run_until(lambda c: c.leader() is not None, timeout_ms=60_000)
    for i in range(40):
        assert c.put(b"dl-%d" % i * (i % 7)).status == "PUT_OK"
    c.run_for(5_000)
    c.close()
    bare = Cluster.dledger(nodes=3, seed=4, data_dir=root / "bare",
                           config={"mapped_file_size_for_entry_data": 65536})  # bare payloads, no records
    bare.run_until(lambda c: c.leader() is not None, timeout_ms=60_000)
    for i in range(15):
        bare.put(b"p" * (i * 3))
    bare.run_for(3_000)
    bare.close()
    return root


@pytest.mark.parametrize("seed", range(10))
def test_dledger_entries_equal_the_reference(dledger_run, tmp_path, seed):
    files = store_files.find_commit_logs(dledger_run)
    want = reference(files, store_files.commit_log_rows, COMMIT_LOG_COLUMNS)
    assert any(r["dledger_index"] is not None and r["topic"] is None for r in want)  # no-op entries too
    assert bulk(files, COMMIT_LOG_COLUMNS, split_at=splits(seed)) == want
    # a corrupted copy
    rng = random.Random(seed)
    victim = rng.choice(files)
    with open(victim.path, "rb") as fh:
        data = bytearray(fh.read(65536))  # the written part (and a torn copy of a big file)
    at = rng.randrange(0, min(len(data), 3000))
    data[at:at + 4] = rng.randbytes(4)
    copy = tmp_path / os.path.basename(victim.path)
    copy.write_bytes(bytes(data))
    bad = store_files.StoreFile(str(copy), victim.store, victim.node, "dledger")
    assert bulk([bad], COMMIT_LOG_COLUMNS) == reference([bad], store_files.commit_log_rows, COMMIT_LOG_COLUMNS), seed


def test_batches_have_the_declared_arrow_types(tmp_path):
    root = random_store(tmp_path / "store", 1, count=30)
    (batch, *_) = store_arrow.commit_log_batches(Segment(store_files.find_commit_logs(root)[0]), COMMIT_LOG_COLUMNS)
    assert batch.schema == store_arrow_batch.arrow_schema(COMMIT_LOG_COLUMNS)
    assert batch.schema.field("body").type == pa.binary()


@pytest.mark.parametrize("seed", range(10))
def test_consume_queue_splits_at_unit_boundaries(tmp_path, seed):
    """Consume-queue files cut at random unit boundaries (some after the queue's end, past the first
    empty unit): the units of the whole file, each once."""
    root = random_store(tmp_path / "store", seed)
    rng = random.Random(seed)
    files = store_files.find_consume_queues(root)
    want = reference(files, store_files.consume_queue_rows, CONSUME_QUEUE_COLUMNS)

    def split_at(f):
        size = os.path.getsize(f.path)
        cuts = sorted({store_arrow.consume_queue_split(f, rng.randrange(1, size)) for _ in range(rng.randrange(4))}
                      - {0, size})
        return segments(f, cuts)
    assert bulk(files, CONSUME_QUEUE_COLUMNS, kind="consumequeue", split_at=split_at) == want, f"seed {seed}"
    plan = store_arrow.plan_partitions(files, rng.randrange(1, 7), store_arrow.consume_queue_split)
    got = [r for p in plan for seg in p for r in arrow_rows(store_arrow.consume_queue_batches(seg, CONSUME_QUEUE_COLUMNS))]
    assert got == want, f"seed {seed}"


def test_pushed_filters_outside_the_column_type_stay_with_spark():
    from pyspark.sql.datasource import EqualTo, GreaterThan, In, LessThan

    from rocketlab.analysis.datasources import predicate

    cols = COMMIT_LOG_COLUMNS
    assert predicate(EqualTo(("queue_id",), 2**40), "rocketmq-commitlog", cols) is None
    assert predicate(GreaterThan(("queue_id",), 1.5), "rocketmq-commitlog", cols) is None
    assert predicate(LessThan(("topic",), "T"), "rocketmq-commitlog", cols) is None  # only = and IN on text
    assert predicate(EqualTo(("body",), b"x"), "rocketmq-commitlog", cols) is None
    assert predicate(In(("topic",), ("A", "B")), "rocketmq-commitlog", cols) == Predicate("topic", "In", ("A", "B"))
    assert predicate(GreaterThan(("phy_offset",), 7), "rocketmq-commitlog", [("topic", "string")]) is None


def test_batches_stay_under_the_byte_limit():
    sizes = np.array([10] * 20000 + [5 * 2**20] * 30 + [100 * 2**20] + [1] * 3, dtype=np.int64)
    edges = store_arrow_batch.batch_edges(sizes)
    assert edges[0] == 0 and edges[-1] == len(sizes) and all(b > a for a, b in itertools.pairwise(edges))
    for a, b in itertools.pairwise(edges):
        assert b - a <= store_arrow_batch.BATCH and (sizes[a:b].sum() <= store_arrow_batch.BATCH_BYTES or b - a == 1)
    assert store_arrow_batch.batch_edges(np.array([], dtype=np.int64)) == [0]
