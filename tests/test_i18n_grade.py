"""The grader in Chinese: ``rocketlab grade lab03`` in a ``--lang zh-CN`` workspace prints Chinese
feedback (descriptions, failure messages, the replay and viewer lines' labels) while the replay and
viewer lines stay runnable code, and the same submission scores the same in both languages, test by
test, over the whole of lab 03 (the template as shipped, its Chinese twin, the kit's own code)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rocketlab import i18n, workspace
from rocketlab.grading.runner import grade
from tests.i18n_support import IDEOGRAPH as CJK
from tests.i18n_support import no_language_set  # noqa: F401  (the fixture)

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "labs" / "exercises" / "lab03_dledger_election.py"
TWIN = ROOT / "labs" / "exercises" / "zh-CN" / "lab03_dledger_election.py"


pytestmark = pytest.mark.usefixtures("no_language_set")


def _graded(submission: Path | None) -> tuple[list[tuple[str, float, float, bool, int | None]], list[str]]:
    report = grade("lab03", submission, reference=submission is None)
    return ([(t.name, t.score, t.max_score, t.passed, t.seed) for t in report.tests],
            [t.output() for t in report.tests])


def test_the_whole_of_lab03_scores_the_same_in_both_languages(monkeypatch):
    scores, feedback = {}, {}
    for lang, graded in (("en", (("template", TEMPLATE), ("kit", None))),
                         ("zh-CN", (("template", TEMPLATE), ("twin", TWIN), ("kit", None)))):
        monkeypatch.setenv(i18n.ENV, lang)
        for name, submission in graded:
            scores[lang, name], feedback[lang, name] = _graded(submission)
    assert len(scores["en", "kit"]) == 13 and all(t[3] for t in scores["en", "kit"])
    assert not any(t[3] for t in scores["en", "template"])  # nothing written yet, and the planted heartbeat bug
    for name in ("template", "kit"):
        assert scores["en", name] == scores["zh-CN", name], name
    assert scores["zh-CN", "twin"] == scores["en", "template"]  # the twins are the same code
    for en, zh in zip(feedback["en", "template"], feedback["zh-CN", "template"], strict=True):
        assert en.startswith("FAIL ") and zh.startswith("未通过 ")
        head, message = zh.splitlines()[:2]
        assert CJK.search(head.split(": ", 1)[1]) and CJK.search(message), zh  # description and message
        replay_en = [line for line in en.splitlines() if "rocketlab grade lab03 --only" in line]
        replay_zh = [line for line in zh.splitlines() if "rocketlab grade lab03 --only" in line]
        # the replay command and the viewer's code are the same runnable text; only their labels differ
        assert [line.split(": ", 1)[1] for line in replay_en] == [line.split("：", 1)[1] for line in replay_zh]
        viewer_en = [line.split(": ", 1)[1] for line in en.splitlines() if line.startswith("in the cluster viewer")]
        viewer_zh = [line.split("：", 1)[1] for line in zh.splitlines() if line.startswith("在集群查看器")]
        assert viewer_en == viewer_zh
    failing = [zh for zh in feedback["zh-CN", "template"] if "--seed" in zh]
    assert failing and all(re.search(r"^种子 \d+：", zh, re.M) for zh in failing)
    assert all(zh.startswith("通过 ") for zh in feedback["zh-CN", "kit"])


def test_rocketlab_grade_lab03_in_a_chinese_workspace_speaks_chinese(tmp_path):
    ws = tmp_path / "ws"
    workspace.init_workspace(ws, lang="zh-CN")
    assert (ws / "labs" / "exercises" / TEMPLATE.name).read_bytes() == TWIN.read_bytes()
    env = {k: v for k, v in os.environ.items() if k not in (i18n.ENV, workspace.ENV, "LC_ALL", "LC_MESSAGES")}
    env.update(PYTHONPATH=str(ROOT), LANG="C.UTF-8")
    run = subprocess.run([sys.executable, "-m", "rocketlab.cli", "grade", "lab03"], cwd=ws / "labs",
                         capture_output=True, text=True, timeout=600, env=env)
    print(run.stdout[-3000:], run.stderr[-2000:])
    assert run.returncode == 1, run.stderr  # the template fails every test
    assert str(ws / "labs" / "exercises" / TEMPLATE.name) in run.stdout
    assert "未通过 lab03.handle_vote/decision_table" in run.stdout
    assert "handle_vote 还没有实现" in run.stdout
    assert "不同：在集群查看器里" in run.stdout  # the heartbeat table's failure message
    assert "FAIL " not in run.stdout and "is not implemented yet" not in run.stdout
    assert re.search(r"rocketlab grade lab03 --only lab03\.handle_heart_beat/\w+ --seed \d+", run.stdout)


@pytest.mark.parametrize("fork", ["1", "0"])
def test_the_judge_speaks_the_runners_language_whatever_its_environment(fork, monkeypatch):
    """The language chosen in the grading process alone (``set_language``, no ``ROCKETLAB_LANG``, no
    workspace): the judge, a separate process started afresh with its own environment (or forked), still
    writes its failure messages in it, because the runner passes it along with the request."""
    monkeypatch.setenv("ROCKETLAB_GRADER_FORK", fork)
    i18n.set_language("zh-CN")
    report = grade("lab03", TEMPLATE, only=["lab03.handle_heart_beat/heart_beat_fixed_alone"])
    (test,) = report.tests
    assert not test.passed and "个心跳判定中有" in test.message, test.message
    i18n.set_language("en")
    (test,) = grade("lab03", TEMPLATE, only=["lab03.handle_heart_beat/heart_beat_fixed_alone"]).tests
    assert "heartbeat decisions differ from DLedger's handleHeartBeat" in test.message, test.message
