"""DLedger 0.3.1.2's ``DLedgerMmapFileStore`` as the judge of ours, both ways, and a real
``DefaultMessageStore`` on ``DLedgerCommitLog`` reading a rocketlab broker group's messages.

* Java writes entries over several terms (files rolling): ours decodes every entry, the state and the
  ``currterm`` identically, and so does ``rocketlab dledger dump``;
* Java recovers every rocketlab member under ``data/`` and of a group the simulator has just run through
  churn: the same begin and end index, end term, committed index, term and vote, and the same entries. Members
  written under the ``raft`` profile (no DLedger release: its no-op entries have magic 2) are cut by Java at the
  first no-op, which is why the kit refuses to open them under a release profile (documented in
  rocketlab.dledger.store.mmap_file_store);
* a real 4.9.5 / 5.3.3 broker store on DLedger (``enableDLegerCommitLog``) reads what a rocketlab DLedger broker
  group stored: every queue's messages, through ``getMessage``. It opens only DLedger index files of the default
  160 MiB (``DLedgerCommitLog`` passes no size), so that group is built with them.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from rocketlab.dledger.cli import iter_entries
from rocketlab.dledger.entry import MAGIC_NOOP
from rocketlab.oracle.dledger import (
    DEFAULT_INDEX_FILE_SIZE,
    JavaDLedger,
    java_layout,
    member_sizes,
    our_member,
)
from rocketlab.oracle.servers import free_port
from rocketlab.oracle.store import JavaStore, consume
from rocketlab.sim import Cluster

DATA = Path(__file__).resolve().parents[2] / "data"


def member_dirs(root: Path) -> list[Path]:
    """Every DLedger member directory (holding data/ and index/) under ``root``."""
    return sorted(p.parent for p in root.rglob("data") if (p.parent / "index").is_dir())


def self_id_of(member: Path) -> str:
    return member.name.removeprefix("dledger-")


def java_reads(oracle, work: Path, member: Path) -> dict:
    """A real DLedgerMmapFileStore's recovery of a copy of ``member``: state and every entry."""
    base = java_layout(member, work / f"java-{abs(hash(str(member)))}", self_id_of(member))
    data_size, index_size = member_sizes(member)
    with oracle.start(work, name=f"dledger-{self_id_of(member)}") as proc:
        return JavaDLedger(proc, base, self_id_of(member), data_file_size=data_size, index_file_size=index_size).read()


def ours_reads(work: Path, member: Path) -> dict:
    copy = work / f"ours-{abs(hash(str(member)))}"
    shutil.copytree(member, copy)
    return our_member(copy, self_id_of(member))


def test_java_written_dledger_files_decode_identically(oracle4, tmp_path):
    rng = random.Random(11)
    with oracle4.start(tmp_path, name="writer") as proc:
        java = JavaDLedger(proc, tmp_path / "base", "n0", data_file_size=4096, index_file_size=32 * 16)
        for term in (1, 1, 2, 5, 5):  # a term reached twice, terms skipped
            java.append(term, [rng.randbytes(rng.choice((0, 1, 60, 500, 1500))) for _ in range(rng.randint(3, 9))])
        java.commit(20)
        written = java.read()
        java.close()
    member = tmp_path / "base" / "dledger-n0"
    assert len(list((member / "data").iterdir())) > 2 and len(list((member / "index").iterdir())) > 1  # rolled
    ours = ours_reads(tmp_path, member)
    assert ours == written
    assert (written["curr_term"], written["curr_vote_for"], written["committed_index"]) == (5, "n0", 20)
    dumped = list(iter_entries(str(member)))
    assert [(e["index"], e["term"], e["pos"], e["size"]) for e in dumped] == \
        [(e["index"], e["term"], e["pos"], e["size"]) for e in written["entries"]]


@pytest.mark.parametrize("member", member_dirs(DATA), ids=lambda p: str(p.relative_to(DATA)))
def test_java_recovers_every_member_under_data(oracle4, tmp_path, member):
    java = java_reads(oracle4, tmp_path, member)
    meta = json.loads(next(p for p in [*member.parents] if (p / "meta.json").exists()).joinpath("meta.json").read_text())
    if meta.get("profile") == "raft":
        entries = list(iter_entries(str(member)))
        first_noop = next(e["index"] for e in entries if e["magic"] == MAGIC_NOOP)
        assert java["ledger_end_index"] == first_noop - 1  # Java cuts the log at the first no-op
        return
    assert java == ours_reads(tmp_path, member)


def test_java_recovers_every_member_of_a_churned_group(oracle4, tmp_path):
    from rocketlab.scenarios import ScenarioArgs, get_scenario

    result = get_scenario("dledger-churn").run(ScenarioArgs(seed=5, duration_ms=8_000, data_dir=tmp_path / "run"))
    result.cluster.close()
    members = member_dirs(tmp_path / "run")
    assert len(members) == 5
    for member in members:
        assert java_reads(oracle4, tmp_path, member) == ours_reads(tmp_path, member), member


def test_a_real_dledger_commit_log_reads_a_rocketlab_broker_group(oracle, tmp_path):
    c = Cluster.dledger_brokers(nodes=3, seed=2, data_dir=tmp_path / "run",
                                broker={"rocketmq_version": oracle.release},
                                dledger={"mapped_file_size_for_entry_index": DEFAULT_INDEX_FILE_SIZE})
    c.run_until(lambda c: c.leader() is not None, timeout_ms=30_000)
    for i in range(60):
        assert c.put(b"m-%02d" % i * (1 + i % 9), topic=("TopicA", "TopicB")[i % 2], tags="T", keys=[f"k{i}"]).status \
            == "PUT_OK"
    c.crash(c.leader())  # a failover in the middle: the new leader's term in the later entries
    c.run_until(lambda c: c.leader() is not None, timeout_ms=30_000)
    for i in range(60, 80):
        assert c.put(b"m-%02d" % i, topic="TopicA").status == "PUT_OK"
    c.run_for(3_000)
    members = sorted(c.live_nodes())
    ours = {n: consume(c.node(n).store) for n in members}
    c.close()
    assert all(sum(len(q["messages"]) for q in ours[n].values()) == 80 for n in members)
    for n in members:
        port = free_port()  # Java's DLedgerServer binds its own address; the others are never reached
        peers = ";".join([f"{n}-127.0.0.1:{port}"] + [f"{o}-127.0.0.1:1" for o in ("n0", "n1", "n2") if o != n])
        with JavaStore.start(oracle, tmp_path, tmp_path / "run" / "nodes" / n / "store",
                             mapped_file_size_commit_log=64 * 1024,
                             java_settings={"enableDLegerCommitLog": True, "dLegerGroup": "broker-a",
                                            "dLegerPeers": peers, "dLegerSelfId": n}) as java:
            assert java.consume() == ours[n], n


def test_a_real_broker_on_dledger_refuses_the_small_index_files_of_data(oracle4, tmp_path):
    """data/README.md says so: 4.9.5's DLedgerCommitLog passes no index-file size, so its DLedgerMmapFileStore
    expects 160 MiB index files; the 32 KiB ones of data/'s broker runs fail its load, and DLedger exits."""
    from rocketlab.oracle import OracleDied
    from rocketlab.sample_data import SMALL_STORE

    store = tmp_path / "store"
    shutil.copytree(DATA / "tour" / "dledger-failover" / "nodes" / "n0" / "store", store)
    peers = f"n0-127.0.0.1:{free_port()};n1-127.0.0.1:1;n2-127.0.0.1:1"
    with pytest.raises(OracleDied, match="exited with 255 during open: .*Load file failed"):
        JavaStore.start(oracle4, tmp_path, store, mapped_file_size_commit_log=64 * 1024, **SMALL_STORE,
                        java_settings={"enableDLegerCommitLog": True, "dLegerGroup": "broker-a",
                                       "dLegerPeers": peers, "dLegerSelfId": "n0"})
    log = next(tmp_path.glob("store-*.log")).read_text()
    assert "dledger-n0/index/00000000000000000000\t32768 length not matched" in log
    assert member_sizes(store / "dledger-n0")[1] == 32 * 1024 != DEFAULT_INDEX_FILE_SIZE
