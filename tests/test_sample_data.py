"""``data/``: the sample runs are what ``rocketlab data regenerate`` builds, byte for byte, and they read."""

from __future__ import annotations

import pytest

from rocketlab.errors import RocketlabError
from rocketlab.sample_data import DEFAULT_ROOT, RUNS, digest, regenerate
from rocketlab.trace import load_events


def test_regeneration_gives_the_same_bytes_as_the_checked_in_data(tmp_path):
    regenerate(tmp_path)
    mine, shipped = digest(tmp_path), digest(DEFAULT_ROOT)
    assert set(mine) == set(shipped), sorted(set(mine) ^ set(shipped))[:10]
    differ = [k for k in mine if mine[k] != shipped[k] and not _same_table_other_writer(tmp_path / k, DEFAULT_ROOT / k)]
    assert not differ, f"run `make data`: {len(differ)} files differ, e.g. {differ[:5]}"


def _same_table_other_writer(a, b) -> bool:
    """Two files record the environment that wrote them: a Parquet file names its pyarrow, ``meta.json``
    the Python version. Written elsewhere, the same rows (the same meta but those versions) count as the
    same file; everything else (the store files) must match byte for byte."""
    if a.name == "meta.json":
        import json

        strip = lambda p: {k: v for k, v in json.loads(p.read_text()).items() if k != "versions"}  # noqa: E731
        return strip(a) == strip(b)
    if a.suffix != ".parquet":
        return False
    import pyarrow.parquet as pq

    return pq.read_metadata(a).created_by != pq.read_metadata(b).created_by and pq.read_table(a).equals(pq.read_table(b))


def test_the_folder_stays_small_and_every_run_has_a_trace_and_stores():
    assert sum(p.stat().st_size for p in DEFAULT_ROOT.rglob("*") if p.is_file()) < 10_000_000
    for run in RUNS:
        dirs = [DEFAULT_ROOT / run.name] if run.name != "tour" else sorted(
            p for p in (DEFAULT_ROOT / "tour").iterdir() if p.is_dir())
        for d in dirs:
            assert (d / "meta.json").is_file() and (d / "events.parquet").is_file(), d
            assert any((d / "nodes").rglob("0" * 20)), d
            assert len(load_events(d)) > 50
    assert "figure8-raft" in (DEFAULT_ROOT / "README.md").read_text()


def test_an_unknown_run_is_refused(tmp_path):
    with pytest.raises(RocketlabError, match="no sample run named nope"):
        regenerate(tmp_path, only=["nope"])
