"""ConsumeQueue: idempotent dispatch, pre-blank filling, recovery, truncation, min offset (ConsumeQueueTest)."""

from __future__ import annotations

from rocketlab.store import ConsumeQueue, Message
from rocketlab.store.consume_queue import FILLER_UNIT, INT_MAX, UNIT


def make_cq(tmp_path, units_per_file: int = 8) -> ConsumeQueue:
    cq = ConsumeQueue("T", 3, str(tmp_path / "consumequeue"), 20 * units_per_file)
    cq.load()
    return cq


def units(cq: ConsumeQueue) -> list[tuple[int, int, int]]:
    out = []
    for mf in cq.mapped_file_queue.mapped_files:
        out += list(UNIT.iter_unpack(mf.mm[: mf.get_read_position()]))
    return out


def test_unit_layout_and_file_naming(tmp_path):
    cq = make_cq(tmp_path, units_per_file=4)
    for i in range(6):
        assert cq.put_message_position_info(i * 100, 100, -5 + i, i)
    path = tmp_path / "consumequeue" / "T" / "3"
    assert sorted(p.name for p in path.iterdir()) == ["00000000000000000000", "00000000000000000080"]
    raw = (path / "00000000000000000000").read_bytes()
    assert raw[:20] == (0).to_bytes(8, "big") + (100).to_bytes(4, "big") + (-5).to_bytes(8, "big", signed=True)
    assert cq.get_max_offset_in_queue() == 6 and cq.get_min_offset_in_queue() == 0
    assert cq.get_unit(5) == (500, 100, 0) and cq.get_unit(6) is None
    assert cq.get_last_offset() == 600
    assert len(cq.get_index_buffer(2)) == 40  # never across a file: units 2 and 3 only
    assert cq.roll_next_file(2) == 4
    cq.shutdown()


def test_build_repeatedly_is_idempotent(tmp_path):
    cq = make_cq(tmp_path)
    for i in range(5):
        assert cq.put_message_position_info(i * 100, 100, 0, i)
    before = units(cq)
    for i in range(5):  # the same dispatch again (a restart re-dispatching from an earlier offset)
        assert cq.put_message_position_info(i * 100, 100, 0, i)
    assert units(cq) == before and cq.get_max_offset_in_queue() == 5
    cq.max_physic_offset = 0  # even without the phy-offset shortcut, a written slot is not rewritten
    assert cq.put_message_position_info(100, 100, 0, 1)
    assert units(cq) == before
    cq.shutdown()


def test_a_queue_starting_mid_way_is_filled_with_blank_units(tmp_path):
    cq = make_cq(tmp_path, units_per_file=8)
    assert cq.put_message_position_info(5000, 80, 7, 11)  # first unit ever is queue offset 11
    mfs = cq.mapped_file_queue.mapped_files
    assert len(mfs) == 1 and mfs[0].file_from_offset == 160
    assert mfs[0].mm[:60] == FILLER_UNIT * 3
    assert cq.get_min_offset_in_queue() == 11 and cq.get_max_offset_in_queue() == 12
    assert cq.get_unit(11) == (5000, 80, 7)
    cq.shutdown()


def test_recover_cuts_after_the_last_valid_unit(tmp_path):
    cq = make_cq(tmp_path, units_per_file=4)
    for i in range(7):
        cq.put_message_position_info(i * 100, 100, 0, i)
    cq.shutdown()
    cq = make_cq(tmp_path, units_per_file=4)
    assert cq.get_max_offset_in_queue() == 8  # loaded files count as full until recovered
    assert cq.recover() == []
    assert cq.get_max_offset_in_queue() == 7 and cq.max_physic_offset == 700
    cq.shutdown()


def test_truncate_dirty_logic_files_drops_units_past_the_cut(tmp_path):
    cq = make_cq(tmp_path, units_per_file=4)
    for i in range(10):
        cq.put_message_position_info(i * 100, 100, 0, i)
    assert cq.truncate_dirty_logic_files(450) == 5
    assert cq.get_max_offset_in_queue() == 5 and cq.max_physic_offset == 500
    assert len(cq.mapped_file_queue.mapped_files) == 2
    last = cq.mapped_file_queue.mapped_files[-1]
    assert last.mm[20:80] == bytes(60)  # the cut units are zeroed, not just hidden
    assert cq.put_message_position_info(450, 90, 0, 5)  # the queue continues at offset 5
    assert cq.get_unit(5) == (450, 90, 0)
    cq.shutdown()


def test_correct_min_offset_against_the_commit_log_min(tmp_path):
    cq = make_cq(tmp_path)
    for i in range(6):
        cq.put_message_position_info(i * 100, 100, 0, i)
    cq.correct_min_offset(250)
    assert cq.get_min_offset_in_queue() == 3
    assert cq.get_index_buffer(1) is None  # below the min: nothing
    cq.shutdown()


def test_dispatch_through_the_store_is_idempotent(open_store):
    store = open_store()
    for i in range(30):
        store.put_message(Message("T", f"m{i}".encode(), queue_id=i % 3, tags="A"))
    assert store.reput() == 30
    cqs = {q: bytes(store.get_consume_queue("T", q).mapped_file_queue.mapped_files[0].mm[:200]) for q in range(3)}
    store.reput_message_service.reput_from_offset = 0  # re-dispatch everything
    assert store.reput() == 30
    assert {q: bytes(store.get_consume_queue("T", q).mapped_file_queue.mapped_files[0].mm[:200]) for q in range(3)} == cqs
    assert [store.get_max_offset_in_queue("T", q) for q in range(3)] == [10, 10, 10]


def test_filler_unit_is_recognisable():
    assert UNIT.unpack(FILLER_UNIT) == (0, INT_MAX, 0)
