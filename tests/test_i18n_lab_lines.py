"""The lines labs 00, 02 and 08 print through their helpers (``rocketlab.labs_support``) instead of English written in their
code cells: in English word for word what the cells printed before (the twins share the cells, so the English lab
must not change), in Chinese through the catalogue. Lab 02's recovery line is the store's own summary (which the
store logs in English) said again in the reader's language."""

from __future__ import annotations

import pytest

from rocketlab import i18n
from rocketlab.labs_support import commitlog, lab08


@pytest.fixture
def speak(monkeypatch):
    monkeypatch.setattr(i18n, "_chosen", None)  # restored after the test, whatever it chose
    return i18n.set_language


def test_lab02s_recovery_line_is_the_stores_summary_in_english_and_chinese_in_a_twin(tmp_path, speak):
    flip = commitlog.flip_one_byte(tmp_path / "flip", count=60, victim=30, body_size=200)
    report = flip["report"]
    assert report.truncated and report.removed_files and report.index_files_dropped  # every clause shows
    speak("en")
    assert commitlog.recovery_line(report) == report.summary() == flip["summary"]
    speak("zh-CN")
    line = commitlog.recovery_line(report)
    assert line.startswith("从 00000000000000000000 开始异常恢复（发现了 abort 文件）：30 条有效记录")
    assert "裁掉 30 个 ConsumeQueue 存储单元" in line and report.stop_reason in line  # the store's why, as it says it


def test_lab08s_lines_keep_their_english_and_speak_chinese(speak):
    dups = [{"why": "owned twice"}, {"why": "owned twice"}, {"why": "consumer left"}]
    speak("en")
    assert lab08.crash_line("a0", 13000, 83000) == "crashed a0 at t=13000 ms; the run goes on to t=83000 ms"
    assert lab08.duplicates_line(dups) == "messages consumed twice: 3; why: {'owned twice': 2, 'consumer left': 1}"
    speak("zh-CN")
    assert lab08.crash_line("a0", 13000, 83000) == "a0 在 t=13000 毫秒宕机；运行继续到 t=83000 毫秒"
    assert lab08.duplicates_line([]) == "被消费两次的消息：0 条；原因：{}"
