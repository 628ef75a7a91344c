"""The lines labs 05 and 06 print through their helpers: the English ones word for word as the labs printed
them from their code cells, the Chinese ones in Chinese and, where a lab lines up columns, still lined up
(a Chinese character is two columns wide in a notebook's monospace output)."""

from __future__ import annotations

import unicodedata

import pytest

from rocketlab import i18n
from rocketlab.controller.elect_policy import elect_master
from rocketlab.controller.heartbeat_manager import BrokerLiveInfo
from rocketlab.labs_support.controller_mode_lines import election_lines, loss_lines, median_lines
from rocketlab.labs_support.rocketmq_on_dledger import (
    recovery_text,
    restart_all,
    stale_units_after_truncation,
)
from rocketlab.scenarios.broker_on_dledger import new_broker_group
from tests.i18n_support import IDEOGRAPH, no_language_set  # noqa: F401  (the fixture)

pytestmark = pytest.mark.usefixtures("no_language_set")


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _beat(broker_id: int, epoch: int, offset: int, priority: int = 2**31 - 1) -> BrokerLiveInfo:
    return BrokerLiveInfo("broker-a", f"127.0.0.1:{30910 + broker_id}", broker_id, 0, 10_000, None, epoch, offset,
                          priority)


BEATS = {1: _beat(1, 2, 900), 2: _beat(2, 3, 500), 3: _beat(3, 3, 700), 4: _beat(4, 3, 700, priority=1)}


def _elect(sync, unclean=None, old=None, prefer=None, alive=(1, 2, 3, 4)):
    """Lab 06's ``elect`` (section 4): the real election policy over the lab's heartbeats."""
    return elect_master(sync, unclean, old, prefer, lambda b: b in alive, BEATS.get)


def test_the_election_lines_keep_labs_english_and_line_up_in_chinese():
    i18n.set_language("en")
    assert election_lines(_elect).splitlines() == [  # what lab 06's cell printed before the lines moved
        "SyncStateSet {1,2,3}:                    3", "SyncStateSet {1,2,3,4}:                  4",
        "the same, old master 2 alive:            2", "the same, broker 1 designated:           1",
        "SyncStateSet {1}, 1 dead, clean:         None", "SyncStateSet {1}, 1 dead, unclean:       4"]
    i18n.set_language("zh-CN")
    lines = election_lines(_elect).splitlines()
    assert all(IDEOGRAPH.search(line) for line in lines[2:]), lines
    assert len({_width(line.rsplit(" ", 1)[0]) for line in lines}) == 1, lines  # the results in one column
    assert [line.rsplit(" ", 1)[1] for line in lines] == ["3", "4", "2", "1", "None", "4"]


ROWS = [{"design": d, "fault": f, "seeds": 5, "failed over": 5, "min (ms)": lo, "median (ms)": mid, "max (ms)": hi}
        for d, f, lo, mid, hi in (("controller mode", "process crash", 4, 6, 7),
                                  ("controller mode", "host failure", 9351, 13327, 13760),
                                  ("DLedger commit log", "process crash", 4647, 5923, 6469),
                                  ("DLedger commit log", "host failure", 7060, 8270, 8747))]


def test_the_failover_medians_keep_labs_english_and_line_up_in_chinese():
    i18n.set_language("en")
    assert median_lines(ROWS).splitlines() == [
        "controller mode, process crash:      median 6 ms (min 4, max 7) over 5 seeds",
        "controller mode, host failure:       median 13327 ms (min 9351, max 13760) over 5 seeds",
        "DLedger commit log, process crash:   median 5923 ms (min 4647, max 6469) over 5 seeds",
        "DLedger commit log, host failure:    median 8270 ms (min 7060, max 8747) over 5 seeds",
        "after a process crash, controller mode fails over first",
        "after a host failure, DLedger fails over first"]
    i18n.set_language("zh-CN")
    lines = median_lines(ROWS).splitlines()
    assert all(IDEOGRAPH.search(line) for line in lines) and not any("controller mode" in line for line in lines)
    assert len({_width(line.split("中位数")[0]) for line in lines[:4]}) == 1, lines  # the medians in one column
    assert lines[4:] == ["进程宕机之后，Controller 模式先完成主从切换", "主机故障之后，DLedger 先完成主从切换"]


def test_the_loss_lines_keep_labs_english():
    losses = [{"scenario": "controller-partition", "acked": 10, "acked lost": 5, "violations": 0,
               "acked by the cut-off master": 5, "master's SyncStateSet when it acked": [1, 2, 3]},
              {"scenario": "controller-5663 --profile before-5798", "acked": 5, "acked lost": 5, "violations": 1,
               "acked by the cut-off master": None, "master's SyncStateSet when it acked": None}]
    i18n.set_language("en")
    assert loss_lines(losses).splitlines() == [
        "controller-partition                   acked 10, lost 5, violations 0",
        "controller-5663 --profile before-5798  acked  5, lost 5, violations 1",
        "the cut-off master (defaults) answered PUT_OK 5 times with its SyncStateSet still [1, 2, 3]"]
    i18n.set_language("zh-CN")
    assert loss_lines(losses).splitlines()[1] == "controller-5663 --profile before-5798  已确认  5，丢失 5，违反不变式 1"


def _recoveries(c) -> dict[str, tuple[str, str]]:
    return {n: (c.node(n).store.recovery_report.summary(), recovery_text(
        c.node(n).store.recovery_report, c.node(n).commit_log.dledger_store.recovery_report)) for n in c.live_nodes()}


def test_lab05s_recovery_lines_say_the_stores_summary_in_either_language(tmp_path):
    """Lab 05 prints each member's recovery (sections 4 and 5) through ``recovery_text``: in English word for
    word the store's own ``summary()`` (a cut tail, an upgrade from the old commit log, a plain restart), in
    Chinese the same facts, the check's reason as the store gives it."""
    i18n.set_language("en")
    stale = stale_units_after_truncation(tmp_path / "stale")
    assert stale["recovery_shown"] == stale["recovery"] and "cut the tail at 190" in stale["recovery"]
    c = new_broker_group(tmp_path / "upgrade", old_messages=150)
    try:
        upgraded = _recoveries(c)
        assert all(shown == summary and "upgraded from the old commit log" in summary
                   for summary, shown in upgraded.values()), upgraded
        i18n.set_language("zh-CN")
        assert all(IDEOGRAPH.search(shown) and "upgraded" not in shown for _summary, shown in _recoveries(c).values())
        restart_all(c)
        i18n.set_language("en")
        assert all(shown == summary for summary, shown in _recoveries(c).values())
    finally:
        c.close()
    i18n.set_language("zh-CN")
    shown = stale_units_after_truncation(tmp_path / "stale-zh")["recovery_shown"]
    assert "在 190 处截掉尾部：entry at 190: pos 4294967296 != 190" in shown, shown
