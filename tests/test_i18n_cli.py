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
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketlab import cli, i18n
from rocketlab.analysis.store_files import find_commit_logs
from rocketlab.broker.config_manager import BrokerMetadata
from rocketlab.errors import ConfigError, RocketlabError
from rocketlab.grading.runner import grade
from rocketlab.sim.faults import FaultSchedule
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


def test_deeper_config_and_decoder_errors_are_one_chinese_line(tmp_path, capsys, monkeypatch):
    """What the node kinds' own configs refuse (DLedger's fields, the classic broker's HA and role keys, the
    controller's keys), a broker's offset file, and the commit-log decoder's detail behind ``rocketlab
    commitlog``: one line on stderr, exit 2, in Chinese under zh-CN and as before in English."""
    confs = {
        "dledger": "nodeKind=dledger\nselfId=n0\npeers=n0-127.0.0.1:40911\nheartBeatTimeIntervalMss=1\n",
        "ha": "nodeKind=broker\nbrokerRole=ASYNC_MASTER\nhaSendHeartbeatInterval=0\n",
        "slave": "nodeKind=broker\nbrokerRole=SLAVE\n",
        "controller": "nodeKind=controller\nselfId=c0\ncontrollerIds=c0\npeers=c0-127.0.0.1:40999\n"
                      "enableElectUncleanMaster=maybe\n",
    }
    for name, text in confs.items():
        (tmp_path / f"{name}.conf").write_text(text, encoding="utf-8")
    logs = tmp_path / "store" / "commitlog"
    logs.mkdir(parents=True)
    (logs / "00000000000000000000").write_bytes(b"\x00\x00\x00\x40\x12\x34\x56\x78" + b"\xff" * 56)
    said = {}
    for lang in ("en", "zh-CN"):
        monkeypatch.setenv(i18n.ENV, lang)
        for name in confs:
            said[lang, name] = _run(capsys, "node", "--config", str(tmp_path / f"{name}.conf"))
        said[lang, "commitlog"] = _run(capsys, "commitlog", "dump", str(tmp_path / "store"))
    print("\n".join(f"{k}: {v}" for k, v in said.items()))
    assert said["en", "dledger"] == "heartBeatTimeIntervalMss: unknown DLedger config field"
    assert said["zh-CN", "dledger"] == "heartBeatTimeIntervalMss：未知的 DLedger 配置项"
    assert said["en", "ha"] == "ha_send_heartbeat_interval must be > 0, got 0"
    assert said["zh-CN", "ha"] == "ha_send_heartbeat_interval 必须大于 0，实际是 0"
    assert said["en", "slave"] == "a SLAVE needs haMasterAddress=host:port (the master's haListenPort) or namesrvAddr"
    assert said["zh-CN", "slave"] == "SLAVE 需要配置 haMasterAddress=host:port（Master 的 haListenPort）或 namesrvAddr"
    assert said["en", "controller"] == "enableElectUncleanMaster='maybe': expected true or false"
    assert said["zh-CN", "controller"] == "enableElectUncleanMaster='maybe'：应为 true 或 false"
    assert said["en", "commitlog"] == ("00000000000000000000: invalid record at phy offset 0: bad magic code "
                                       "0x12345678 (at offset 0)")
    assert said["zh-CN", "commitlog"] == "00000000000000000000：物理偏移量 0 处的记录无效：魔数 0x12345678 无效（位于偏移量 0）"
    assert not [k for k, v in said.items() if k[0] == "zh-CN" and (not IDEOGRAPH.search(v) or english_runs(v, []))]


def test_a_corrupt_offset_file_and_store_file_checks_speak_chinese(tmp_path, monkeypatch):
    """consumerOffset.json that is no object, and ``analyze --store``'s file checks, where the file kind's
    display name is translated apart from the value the code branches on."""
    monkeypatch.setenv(i18n.ENV, "zh-CN")
    (tmp_path / "consumerOffset.json").write_text('{"offsetTable": {"TopicTest@g": {"x": 1}}}', encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        BrokerMetadata(tmp_path).load()
    assert str(refused.value) == f"{tmp_path / 'consumerOffset.json'}：offsetTable['TopicTest@g'] 中有不是整数的队列 id 或偏移量"
    logs = tmp_path / "run" / "commitlog"
    logs.mkdir(parents=True)
    (logs / "00000000000000000000").write_bytes(b"\0" * 1024)
    (logs / "00000000000000001024").write_bytes(b"\0" * 512)
    with pytest.raises(RocketlabError) as refused:
        find_commit_logs(tmp_path / "run")
    assert str(refused.value) == f"{logs}：CommitLog 文件大小不一致（512, 1024 字节）"
    monkeypatch.setenv(i18n.ENV, "en")
    with pytest.raises(RocketlabError, match=r"commitlog: commit log files differ in size \(512, 1024 bytes\)$"):
        find_commit_logs(tmp_path / "run")


def test_a_node_that_cannot_open_its_store_or_port_says_so_in_one_chinese_line(tmp_path, capsys, monkeypatch):
    """Errors a node meets as it starts (its store directory is a file; its port is taken; a DLedger member's
    ``currterm`` file is corrupt): one line, exit 2, in the kit's language."""
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    with taken:
        port = taken.getsockname()[1]
        not_a_dir = tmp_path / "afile"
        not_a_dir.write_text("x", encoding="utf-8")
        store = tmp_path / "store.conf"
        with socket.socket() as free:  # a port no one listens on, for the broker that fails before it listens
            free.bind(("127.0.0.1", 0))
            free_port = free.getsockname()[1]
        store.write_text(f"nodeKind=broker\nstorePathRootDir={not_a_dir}\nlistenPort={free_port}\n"
                         f"runDir={tmp_path / 'run'}\n", encoding="utf-8")
        member = tmp_path / "dl" / "dledger-n0"
        member.mkdir(parents=True)
        (member / "currterm").write_text("currTerm=abc\n", encoding="utf-8")
        term = tmp_path / "term.conf"
        term.write_text(f"nodeKind=dledger\nselfId=n0\npeers=n0-127.0.0.1:{free_port}\nstoreBaseDir={tmp_path / 'dl'}\n"
                        f"runDir={tmp_path / 'run3'}\n", encoding="utf-8")
        busy = tmp_path / "busy.conf"
        busy.write_text(f"nodeKind=pingpong\nlistenPort={port}\nrunDir={tmp_path / 'run2'}\n", encoding="utf-8")
        said = {}
        for lang in ("en", "zh-CN"):
            monkeypatch.setenv(i18n.ENV, lang)
            said[lang, "store"] = _run(capsys, "node", "--config", str(store))
            said[lang, "busy"] = _run(capsys, "node", "--config", str(busy))
            said[lang, "term"] = _run(capsys, "node", "--config", str(term))
    print(said)
    assert said["en", "store"].startswith(f"{not_a_dir}: cannot create the store directory: ")
    assert said["zh-CN", "store"].startswith(f"{not_a_dir}：无法创建存储目录：")
    assert said["en", "busy"] == f"port 127.0.0.1:{port} is already in use"
    assert said["zh-CN", "busy"] == f"端口 127.0.0.1:{port} 已被占用"
    assert said["en", "term"] == f"{member / 'currterm'}: currTerm is not an integer: 'abc'"
    assert said["zh-CN", "term"] == f"{member / 'currterm'}：currTerm 不是整数：'abc'"


def test_scenario_and_fault_schedule_errors_speak_chinese(tmp_path, capsys, monkeypatch):
    """``rocketlab sim`` refusing a scenario's arguments, and a fault schedule's bad line as a notebook's
    ``Cluster.apply_schedule`` meets it: the kit's language, English as before."""
    said = {}
    for lang in ("en", "zh-CN"):
        monkeypatch.setenv(i18n.ENV, lang)
        said[lang, "sim"] = _run(capsys, "sim", "smoke", "--nodes", "2", "--out", str(tmp_path / "sim"))
        with pytest.raises(ConfigError) as refused:
            FaultSchedule.parse("100 crash\n200 heal n0\n")
        said[lang, "faults"] = str(refused.value)
    print(said)
    assert said["en", "sim"] == "the smoke scenario needs at least 3 nodes, got 2"
    assert said["zh-CN", "sim"] == "smoke 场景至少需要 3 个节点，实际是 2 个"
    assert said["en", "faults"] == "fault schedule line 1 ('100 crash'): crash needs at least one node"
    assert said["zh-CN", "faults"] == "故障计划第 1 行（'100 crash'）：crash 至少需要一个节点"
