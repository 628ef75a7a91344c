"""The command line's promise (docs/cli.md): bad input is one line on stderr and exit 2, never a traceback;
a closed output pipe too; every option and subcommand has a help text.

Most cases run ``main()`` in this process (an uncaught exception would fail the test with its traceback);
the closed pipe and a few representative cases run the real command in a subprocess.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocketlab.cli import build_parser, main

UNWRITABLE = "/proc/rocketlab-nope"  # /proc refuses new entries, even to root


@pytest.fixture
def files(tmp_path):
    """A text file, random bytes named like a store file, a run directory and a submission that is not .py."""
    (tmp_path / "notes.txt").write_text("not a submission\n")
    rnd = tmp_path / "cq" / "T" / "0"
    rnd.mkdir(parents=True)
    (rnd / "00000000000000000000").write_bytes(bytes((i * 197 + 89) % 256 for i in range(20 * 64)))
    (tmp_path / "cl").mkdir()
    (tmp_path / "cl" / "00000000000000000000").write_bytes(bytes((i * 31 + 7) % 256 for i in range(4096)))
    assert main(["sim", "smoke", "--duration", "300", "--out", str(tmp_path / "run")]) == 0
    return tmp_path


def cases(t: Path) -> list[tuple[list[str], str]]:
    return [
        # unwritable or wrong outputs
        (["sim", "smoke", "--out", f"{UNWRITABLE}/run"], f"--out {UNWRITABLE}/run: cannot create the directory"),
        (["sim", "smoke", "--out", str(t / "notes.txt")], "exists and is not a directory"),
        (["demo", "--out", str(t / "notes.txt")], f"--out {t / 'notes.txt'}: exists and is not a directory"),
        (["demo", "--out", f"{UNWRITABLE}/demo"], "cannot create the directory"),
        (["view", str(t / "run"), "--html", f"{UNWRITABLE}/v.html"], "cannot create the directory"),
        (["view", str(t / "run"), "--html", str(t)], "is a directory, not a file"),
        (["grade", "lab03", "--reference", "--json", f"{UNWRITABLE}/r.json"], "cannot create the directory"),
        (["data", "regenerate", "--root", f"{UNWRITABLE}/data"], "cannot create the directory"),
        (["init", str(t / "notes.txt")], "exists and is not a directory"),
        (["init", f"{UNWRITABLE}/ws"], "cannot create the directory"),
        (["sweep", "smoke", "--seeds", "1..2", "--out", f"{UNWRITABLE}/s"], "cannot create the directory"),
        # bad numbers
        (["sim", "smoke", "--nodes", "0"], "argument --nodes: must be a positive integer, got 0"),
        (["sim", "smoke", "--duration", "-5"], "argument --duration: must be a positive integer, got -5"),
        (["sim", "smoke", "--seed", "x"], "invalid int value"),
        (["sim", "smoke", "--nodes", "2"], "at least 3 nodes"),
        (["sweep", "smoke", "--seeds", "5..1", "--out", str(t / "s")], "5..1"),
        (["sweep", "smoke", "--seeds", "1", "--partitions", "0", "--out", str(t / "s")], "positive integer"),
        (["lab", "--port", "70000"], "--port must be between 1 and 65535"),
        (["doctor", "--port", "0"], "--port must be between 1 and 65535"),
        (["grade", "lab03", "--time-limit", "-1", "--reference"], "--time-limit must be > 0"),
        # bad paths and names
        (["view", str(t / "notes.txt")], "not a run directory (a file, not a directory)"),
        (["view", str(t / "missing")], "not a run directory (no such directory)"),
        (["analyze", str(t / "notes.txt")], "not a run directory (a file, not a directory)"),
        (["lab", "--dir", str(t / "notes.txt")], "not a directory"),
        (["grade", "lab03", "--submission", str(t / "notes.txt")], "not a Python file (.py)"),
        (["grade", "lab03", "--submission", str(t / "missing.py")], "no such file"),
        (["grade", "lab03", "--submission", str(t)], "not a file"),
        (["grade", "lab99"], "unknown lab 'lab99'"),
        (["consumequeue", "dump", str(t / "cq")], "not a consume queue unit"),
        (["commitlog", "dump", str(t / "cl")], "invalid record at phy offset 0"),
        (["dledger", "dump", str(t / "missing")], "missing"),
        (["node", "--config", str(t / "missing.properties")], "does not exist"),
        (["bench", "nope"], "no benchmark named 'nope'"),
        (["sim", "nope"], "no scenario named 'nope'"),
        (["data", "regenerate", "--root", str(t / "d"), "--only", "nope"], "no sample run named nope"),
        # missing subcommands
        (["data"], "data needs a subcommand: regenerate"),
        (["commitlog"], "commitlog needs a subcommand: dump"),
        (["consumequeue"], "consumequeue needs a subcommand: dump"),
        (["dledger"], "dledger needs a subcommand: dump"),
        (["frobnicate"], "invalid choice"),
    ]


def test_each_bad_input_is_one_line_on_stderr_and_exit_2(files, capsys):
    capsys.readouterr()
    failures = []
    for argv, expected in cases(files):
        code = run(argv)
        err = capsys.readouterr().err
        lines = err.strip().splitlines()
        if code != 2 or len(lines) != 1 or not lines[0].startswith("rocketlab: ") or expected not in lines[0]:
            failures.append(f"{' '.join(argv)} -> exit {code}, stderr {err!r} (expected {expected!r})")
    assert not failures, "\n".join(failures)
    assert not (files / "missing").exists() and not (files / "d").exists()  # nothing created on the way


def run(argv: list[str]) -> int:
    """``main``'s exit code (argparse's own usage errors end in SystemExit)."""
    try:
        return main(argv)
    except SystemExit as e:
        return int(e.code)


def test_bad_input_in_a_real_process_has_no_traceback(tmp_path):
    (tmp_path / "f").write_text("x")
    for argv in (["sim", "smoke", "--out", f"{UNWRITABLE}/x"], ["demo", "--out", str(tmp_path / "f")],
                 ["sim", "smoke", "--nodes", "0"], ["data"]):
        proc = subprocess.run([sys.executable, "-m", "rocketlab.cli", *argv], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (argv, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith("rocketlab: ")


def test_a_closed_output_pipe_is_one_line_and_exit_2_not_a_traceback():
    """``rocketlab sim --list | head -0``: the reader is gone before the first write."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    proc = subprocess.run([sys.executable, "-m", "rocketlab.cli", "sim", "--list"], stdout=write_end,
                          stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(write_end)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == "rocketlab: the output was closed before the command finished (broken pipe)\n"


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("rocketlab",)):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield (*path, name), None if helps.get(name) else f"subcommand {name} has no help"
                yield from _parsers(sub, (*path, name))


def test_every_subcommand_and_option_has_a_help_text():
    missing, seen = [], 0
    for path, parser in _parsers(build_parser()):
        if isinstance(parser, str) or parser is None:
            if parser:
                missing.append(f"{' '.join(path)}: {parser}")
            continue
        parser.format_help()  # a stray % in a help text would raise here
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            seen += 1
            if not action.help or action.help == argparse.SUPPRESS or not action.help.strip():
                missing.append(f"{' '.join(path)} {'/'.join(action.option_strings) or action.dest}")
    assert seen > 50
    assert not missing, "options without help: " + ", ".join(missing)
