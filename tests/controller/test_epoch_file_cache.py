"""EpochFileCache: RocketMQ 5.3.3's EpochFileCacheTest with its exact numbers, the file format and damage."""

from __future__ import annotations

import pytest

from rocketlab.ha.epoch_file_cache import LONG_MAX, EpochEntry, EpochFileCache, crc32_masked


@pytest.fixture
def cache(tmp_path) -> EpochFileCache:
    c = EpochFileCache(tmp_path / "EpochCheckpoint")
    for epoch, start in ((1, 100), (2, 300), (3, 500)):
        assert c.append_entry(EpochEntry(epoch, start))
    assert c.get_entry(2) == EpochEntry(2, 300, 500)
    return c


def other(tmp_path, *entries, end=None) -> EpochFileCache:
    c = EpochFileCache(tmp_path / "EpochCheckpoint2")
    for epoch, start in entries:
        assert c.append_entry(EpochEntry(epoch, start))
    if end is not None:
        c.set_last_epoch_entry_end_offset(end)
    return c


def test_init_from_file(cache):
    fresh = EpochFileCache(cache.path)
    assert fresh.init_cache_from_file()
    assert fresh.get_entry(2) == EpochEntry(2, 300, 500) and fresh.last_entry() == EpochEntry(3, 500, LONG_MAX)


def test_truncate(cache):
    cache.truncate_suffix_by_offset(150)
    assert cache.get_entry(1) is not None and cache.get_entry(2) is None


def test_find_epoch_entry_by_offset(cache):
    assert cache.find_epoch_entry_by_offset(350) == EpochEntry(2, 300, 500)
    assert cache.find_epoch_entry_by_offset(99) is None and cache.find_epoch_entry_by_offset(500).epoch == 3


def test_find_consistent_point_samples(cache, tmp_path):
    assert cache.find_consistent_point(other(tmp_path, (1, 100), (2, 300), (3, 450))) == 450
    cache.set_last_epoch_entry_end_offset(700)
    assert cache.find_consistent_point(other(tmp_path, (1, 100), (2, 300), (3, 500), end=600)) == 600
    assert cache.find_consistent_point(other(tmp_path, (1, 200), (2, 500))) == -1
    assert other(tmp_path, (1, 100), (2, 300), (3, 500), (4, 800)).find_consistent_point(cache) == 700


def test_append_needs_a_higher_epoch_and_a_higher_start(cache):
    assert not cache.append_entry(EpochEntry(4, 500))  # a new epoch at the same offset is refused
    assert not cache.append_entry(EpochEntry(3, 900)) and not cache.append_entry(EpochEntry(2, 900))
    assert cache.last_epoch() == 3 and cache.append_entry(EpochEntry(5, 501))
    assert cache.get_entry(3).end_offset == 501 and cache.next_entry(3).epoch == 5 and cache.next_entry(5) is None


def test_file_format_and_bak(cache):
    lines = "1-100\n2-300\n3-500\n"
    assert cache.path.read_text() == f"3\n{crc32_masked(lines.encode())}\n{lines}"
    assert cache.path.with_name("EpochCheckpoint.bak").read_text().startswith("2\n")  # the previous version


@pytest.mark.parametrize("damage", [
    lambda text: text[:-4],                                # truncated: fewer entries than the count
    lambda text: text.replace("2-300", "2-301"),           # the CRC does not match
    lambda text: "x\n" + text.split("\n", 1)[1],           # the count is not a number
    lambda text: "",                                       # empty
])
def test_a_damaged_file_falls_back_to_bak(cache, damage):
    cache.path.write_text(damage(cache.path.read_text()))
    fresh = EpochFileCache(cache.path)
    assert fresh.init_cache_from_file()
    assert [e.epoch for e in fresh.get_all_entries()] == [1, 2]  # the .bak: before epoch 3 was appended


def test_entries_that_do_not_increase_are_damage(cache, caplog):
    lines = "1-100\n3-300\n2-500\n"  # a valid count and CRC, but epoch 2 after epoch 3
    cache.path.write_text(f"3\n{crc32_masked(lines.encode())}\n{lines}")
    fresh = EpochFileCache(cache.path)
    assert fresh.init_cache_from_file() and [e.epoch for e in fresh.get_all_entries()] == [1, 2]  # the .bak
    cache.path.with_name("EpochCheckpoint.bak").write_text(f"3\n{crc32_masked(lines.encode())}\n{lines}")
    broken = EpochFileCache(cache.path)
    assert not broken.init_cache_from_file()
    assert "do not strictly increase: 3-300 then 2-500" in broken.load_error
    assert "do not strictly increase" in caplog.text
    assert cache.path.read_text().endswith(lines)  # nothing rewritten: the file stays for an operator to read


def test_both_files_damaged_is_refused(cache):
    cache.path.write_text("3\n1\n1-100\n")
    cache.path.with_name("EpochCheckpoint.bak").write_text("9\n")
    assert not EpochFileCache(cache.path).init_cache_from_file()


def test_crc_zero_is_not_checked(tmp_path):
    path = tmp_path / "epochFileCheckpoint"
    path.write_text("2\n0\n1-0\n4-70\n")
    c = EpochFileCache(path)
    assert c.init_cache_from_file() and c.get_entry(1) == EpochEntry(1, 0, 70)


def test_javas_truncation_quirks(cache):
    """The new last entry keeps its old end (Java resets a copy), and truncating everything writes nothing."""
    cache.truncate_suffix_by_offset(300)
    assert cache.last_entry() == EpochEntry(1, 100, 300)
    assert cache.find_epoch_entry_by_offset(400) is None
    cache.truncate_suffix_by_epoch(1)
    assert cache.get_entry_size() == 0
    again = EpochFileCache(cache.path)
    assert again.init_cache_from_file() and [e.epoch for e in again.get_all_entries()] == [1]


def test_truncate_prefix_drops_entries_ending_at_or_before(cache):
    cache.truncate_prefix_by_offset(300)
    assert [e.epoch for e in cache.get_all_entries()] == [2, 3] and cache.first_entry().start_offset == 300
