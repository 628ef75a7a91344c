"""Lab 07's printed lines (:mod:`rocketlab.labs_support.spark_lines`): the same numbers in both languages, and
no English left in the Chinese ones (the code cells that print them are the same in both twins)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pandas as pd
import pytest
from rich.cells import cell_len

from rocketlab import i18n
from rocketlab.labs_support import spark_lines as lines
from tests.i18n_support import IDEOGRAPH, no_language_set  # noqa: F401  (the fixture)
from tests.test_i18n_figures import english_left

pytestmark = pytest.mark.usefixtures("no_language_set")
RANGES = ("150-150", "150-151", "150-155", "150-175", "150-200", "150-300")


def _all_lines() -> list[str]:
    spark = SimpleNamespace(version="3.5.3", sparkContext=SimpleNamespace(master="local[2]"))
    lost = pd.DataFrame({"role": ["ASYNC_MASTER", "ASYNC_MASTER", "SYNC_MASTER"], "acked": [60, 58, 60],
                         "lost": [3, 0, 0]})
    cq = pd.DataFrame({"units": [120, 80], "consistent": [120, 80], "mismatched": [0, 0], "dangling": [0, 0]})
    rows = pd.DataFrame({"range": [r for r in RANGES for _ in range(2)], "downtime_ms": range(300, 312),
                         "elected": [True] * 12})
    no_leader = {r: 0 for r in RANGES}
    trials = {r: 2 for r in RANGES}
    worst = SimpleNamespace(ours_ms=700.0, trials=20, paper_ms=513)
    by_write = pd.Series({"0-0": 210.0, "2-4": 230.0, "3-5": 251.0})
    by_reply = pd.Series({"uniform:7:10": 40.0, "uniform:13:16": 55.0})
    timers = pd.Series({"java defaults": 6123.0, "scaled to 150-300": 880.0})
    curves = [(name, pd.DataFrame({"downtime_ms": [100.0, 200.0, 400.0]})) for name in lines.CURVE_NAMES]
    return [lines.session_line(spark, 9.87), lines.partitions_line(3), lines.index_line(450, {"n0": 150}),
            lines.lost_lines(lost), lines.cq_line(cq), lines.trials_line(12, 3.25, "local[2]"),
            lines.no_leader_lines(rows, no_leader, trials), lines.means_lines(((150, 151), (150, 155)), [420.0, 380.0]),
            lines.worst_case_line(worst, 213), lines.write_lines(by_write), lines.reply_line(by_reply),
            lines.profiles_lines({"dledger-0.3.1.2": [1], "dledger-0.3.2": [1]}, timers, 300.0),
            lines.curve_lines(curves),
            lines.summary_lines(pd.DataFrame({"run": ["async-master-crash"], "events": [1234], "puts": [60],
                                              "put_ok": [58], "faults": [1], "violations": [0]})),
            lines.beside_lines(pd.DataFrame({"range": ["150-200"], "statistic": ["max"], "paper_ms": [513],
                                             "paper_says": ["513"], "ours_ms": [700.0], "trials": [20]}))]


def test_lab07s_lines_hold_the_same_numbers_in_both_languages_and_no_english_in_chinese():
    english = _all_lines()
    i18n.set_language("zh-CN")
    chinese = _all_lines()
    numbers = re.compile(r"\d+(?:\.\d+)?")
    for en, zh in zip(english, chinese, strict=True):
        assert sorted(numbers.findall(en)) == sorted(numbers.findall(zh)), (en, zh)
        assert en.count("\n") == zh.count("\n"), (en, zh)
        assert IDEOGRAPH.search(zh), zh
    assert not english_left([("line", zh) for zh in chinese])
    assert "ASYNC_MASTER: 3 of 118 acknowledged messages lost over 2 seeds; 1 seeds lost at least one, the worst " \
           "lost 3" in english[3]
    assert english[7].endswith("shorter ranges, shorter failovers: False")
    assert "DLedger scaled to 150-300 is slower than Raft" in english[11]
    assert english[13] == "async-master-crash         1234 events,  60 puts (58 PUT_OK),  1 faults, 0 violations"
    assert english[14] == " 150-200    max: paper    513 ms (513); ours    700 ms over 20 trials"
    widths = [cell_len(line.split(" 最小")[0]) for line in chinese[12].splitlines()]
    assert len(set(widths)) == 1, chinese[12]  # the curve names padded to one width in monospace columns
