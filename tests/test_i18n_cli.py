"""The command line in Chinese: every subcommand's help (its description, every option's help, the nested
subcommands') and its one-line errors speak the kit's language.

The help check walks the parser ``rocketlab.cli.build_parser`` builds in zh-CN, nested subparsers included,
and fails on a run of English words (the heuristic of tests/test_lab_twins.py: four or more plain words in a
row, outside code spans, the glossary's English terms allowed) and on a help text with no Chinese that is more
than names (two plain English words in a row). It is shown to catch the English parser, so it is not vacuous.
The error check runs representative bad input through ``rocketlab.cli.main`` (a missing path, a malformed
config file, a garbage store file, argparse's own usage errors): one Chinese line on stderr, exit 2."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketlab import cli, i18n
from rocketlab.grading.runner import grade
from tests.i18n_support import IDEOGRAPH, no_language_set  # noqa: F401  (the fixture)
from tests.test_lab_twins import english_runs, glossary_terms

pytestmark = pytest.mark.usefixtures("no_language_set")

TWO_WORDS = re.compile(r"(?<![\w.$/-])[A-Za-z][a-z]+[ \t]+[a-z]+(?![\w-])")
"""Two plain English words in a row: more than a list of names (``sync-pair, dledger-0.3.1.2``)."""
CODE = re.compile(r"`[^`\n]*`")


def help_texts(parser: argparse.ArgumentParser, path: str = "rocketlab") -> Iterator[tuple[str, str]]:
    """(where, text) for the parser's description and every help text under it, nested subparsers included."""
    if parser.description:
        yield f"{path}: description", parser.description
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                if choice.help:
                    yield f"{path} {choice.dest}: help", choice.help
            for name, sub in action.choices.items():
                yield from help_texts(sub, f"{path} {name}")
        elif action.help and action.help is not argparse.SUPPRESS:
            yield f"{path} {'/'.join(action.option_strings) or action.dest}", action.help


def english_left(parser: argparse.ArgumentParser) -> list[str]:
    terms = glossary_terms()
    problems = []
    for where, text in help_texts(parser):
        runs = english_runs(text, terms)
        if runs:
            problems.append(f"{where}: {runs}")
        elif not IDEOGRAPH.search(text) and TWO_WORDS.search(CODE.sub(" ", text)):
            problems.append(f"{where}: no Chinese in {text!r}")
    return problems


def _parser(lang: str) -> argparse.ArgumentParser:
    i18n.set_language(lang)
    return cli.build_parser()


def test_every_help_text_of_every_subcommand_is_chinese():
    parser = _parser("zh-CN")
    texts = list(help_texts(parser))
    assert len(texts) > 150  # the walk reaches every option
    subcommands = {where.split()[1] for where, _text in texts if len(where.split()) > 2}
    assert {"analyze", "sweep", "commitlog", "consumequeue", "dledger", "node", "chaos", "collect", "autograder",
            "assign", "submit", "mutate", "data", "grade", "sim", "init"} <= subcommands
    assert not english_left(parser), "\n".join(english_left(parser))


def test_the_check_finds_the_english_help():
    problems = english_left(_parser("en"))
    assert len(problems) > 150
    assert any(p.startswith("rocketlab chaos run --seed") for p in problems)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_:
        raise SystemExit(cli.main(list(argv)))
    assert exit_.value.code == 2, argv
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("rocketlab: "), err
    return err.removeprefix("rocketlab: ").rstrip("\n")


def test_one_line_errors_are_chinese_on_stderr_with_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(i18n.ENV, "zh-CN")
    missing = tmp_path / "missing"
    bad_conf = tmp_path / "broker.conf"
    bad_conf.write_text("nodeKind=broker\n=garbage\n", encoding="utf-8")
    junk = tmp_path / "store" / "commitlog"
    junk.mkdir(parents=True)
    (junk / "00000000000000000000").write_bytes(b"\x00\x00\x00\x40\x12\x34\x56\x78" + b"\xff" * 56)
    bad_role = tmp_path / "role.conf"
    bad_role.write_text("nodeKind=broker\nbrokerRole=LEADER\nlistenPort=10911\n", encoding="utf-8")
    dledger = tmp_path / "notdata.txt"
    dledger.write_text("hello", encoding="utf-8")
    said = {
        "analyze": _run(capsys, "analyze", str(missing)),
        "commitlog": _run(capsys, "commitlog", "dump", str(tmp_path / "store")),
        "consumequeue": _run(capsys, "consumequeue", "dump", str(missing)),
        "dledger": _run(capsys, "dledger", "dump", str(dledger)),
        "node": _run(capsys, "node", "--config", str(bad_conf)),
        "node-missing": _run(capsys, "node", "--config", str(missing)),
        "node-role": _run(capsys, "node", "--config", str(bad_role)),
        "sim": _run(capsys, "sim", "smoke", "--network", "lossy", "--out", str(tmp_path / "sim")),
        "chaos": _run(capsys, "chaos", "run", "--system", "nope", "--seed", "1"),
        "sweep": _run(capsys, "sweep", "smoke", "--seeds", "9..1", "--out", str(tmp_path / "sweep")),
        "grade": _run(capsys, "grade", "lab03", "--time-limit", "0"),
        "collect": _run(capsys, "collect", "lab03", "--submissions", str(missing), "--out", str(tmp_path / "c")),
        "autograder": _run(capsys, "autograder", "lab03", "--out", str(tmp_path / "a.tar")),
        "assign": _run(capsys, "assign", "--source", str(missing), "--out", str(tmp_path / "as")),
        "submit": _run(capsys, "submit", "lab99"),
        "mutate": _run(capsys, "mutate", "lab99"),
        "data": _run(capsys, "data", "regenerate", "--only", "nope"),
        "usage": _run(capsys, "chaos", "run"),
        "choice": _run(capsys, "chaos", "run", "--system", "dledger", "--seed", "1", "--client", "x"),
        "subcommand": _run(capsys, "commitlog"),
    }
    print("\n".join(f"{k}: {v}" for k, v in said.items()))
    assert said["node"] == f"{bad_conf} 第 2 行：应为 key=value，实际是 '=garbage'"
    assert said["analyze"] == f"{missing}：不是运行目录（目录不存在）"
    assert said["usage"] == "缺少必需的参数：--system, --seed"
    assert said["node-role"] == "brokerRole='LEADER' 不在 ASYNC_MASTER, SYNC_MASTER, SLAVE 之中"
    assert not [k for k, v in said.items() if not IDEOGRAPH.search(v) or english_runs(v, [])], said
    assert not (tmp_path / "sweep").exists()  # refused before any work


def test_the_sandboxs_own_lines_follow_the_runners_language(tmp_path, monkeypatch):
    """What the sandbox's child says (a submission that calls sys.exit; an exception's line in the learner's
    file) arrives in the runner's language, as the judge's lines do; English stays as it was."""
    source = (Path(__file__).resolve().parents[1] / "labs" / "exercises" / "lab03_dledger_election.py").read_text()
    exits = tmp_path / "exits.py"
    exits.write_text(source + "\n\ndef handle_vote(*args, **kwargs):\n    raise SystemExit(3)\n", encoding="utf-8")
    broken = tmp_path / "broken.py"
    broken.write_text(source + "\n\ndef handle_vote(*args, **kwargs):\n    return 1 / 0\n", encoding="utf-8")
    said = {}
    for lang in ("en", "zh-CN"):
        monkeypatch.setenv(i18n.ENV, lang)
        for name, path in (("exits", exits), ("broken", broken)):
            report = grade("lab03", path, only=["lab03.handle_vote/decision_table"])
            said[lang, name] = report.tests[0].message
    print(said)
    assert "your code called sys.exit(3)" in said["en", "exits"]
    assert "你的代码调用了 sys.exit(3)" in said["zh-CN", "exits"]
    assert re.search(r"ZeroDivisionError: division by zero at line \d+ of your file", said["en", "broken"])
    assert re.search(r"ZeroDivisionError: division by zero，位于你的文件第 \d+ 行", said["zh-CN", "broken"])
