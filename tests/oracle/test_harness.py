"""The oracle harness on bad input: a class path that lacks a jar or names nothing, a JDK older than 17 or
without javac, a JVM that dies: each is one clear line (the test that needs the oracle is skipped or failed
with it), and no JVM outlives its Python process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from rocketlab.oracle.jvm import (
    Oracle,
    OracleDied,
    OracleUnavailable,
    find_jdk,
    find_oracle,
    parse_class_path,
)


def jar(path: Path, *classes: str) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name in classes:
            z.writestr(name, b"")
    return path


def one_line(text: str) -> bool:
    return "\n" not in text and 0 < len(text) < 400


def test_an_unset_setting_says_how_to_get_the_oracle(monkeypatch):
    monkeypatch.delenv("ROCKETLAB_JAVA_4", raising=False)
    oracle, why = find_oracle("4.9.5")
    assert oracle is None and one_line(why) and "ROCKETLAB_JAVA_4 is not set" in why


def test_a_class_path_that_lacks_a_jar_names_what_is_missing(monkeypatch, tmp_path):
    store = jar(tmp_path / "rocketmq-store.jar", "org/apache/rocketmq/store/MessageExtBrokerInner.class")
    monkeypatch.setenv("ROCKETLAB_JAVA_4", f"{store}{os.pathsep}{tmp_path}/nothing-here.jar")
    oracle, why = find_oracle("4.9.5")
    assert oracle is None and one_line(why) and why.endswith("nothing-here.jar does not exist")
    monkeypatch.setenv("ROCKETLAB_JAVA_4", str(store))
    _, why = find_oracle("4.9.5")
    assert one_line(why) and "no entry of the class path has org.apache.rocketmq.common.message.MessageDecoder " \
                             "(rocketmq-common 4.9.5)" in why
    # a 5.x class path given for 4.9.5: its MessageExtBrokerInner lives in another package
    five = jar(tmp_path / "five.jar", "org/apache/rocketmq/common/message/MessageExtBrokerInner.class")
    monkeypatch.setenv("ROCKETLAB_JAVA_4", str(five))
    assert "org.apache.rocketmq.store.MessageExtBrokerInner (rocketmq-store 4.9.5)" in find_oracle("4.9.5")[1]


def test_class_path_forms(tmp_path):
    a, b = jar(tmp_path / "a.jar"), jar(tmp_path / "b.jar")
    assert parse_class_path(f"{tmp_path}/*", "X") == (str(a), str(b))
    (tmp_path / "cp.txt").write_text(f"{a}{os.pathsep}{b}\n")
    assert parse_class_path(f"@{tmp_path}/cp.txt", "X") == (str(a), str(b))
    with pytest.raises(OracleUnavailable, match="cannot read the class-path file"):
        parse_class_path(f"@{tmp_path}/missing.txt", "X")
    with pytest.raises(OracleUnavailable, match="is not a directory"):
        parse_class_path(f"{tmp_path}/nope/*", "X")
    (tmp_path / "broken.jar").write_bytes(b"not a zip")
    env = dict(os.environ, ROCKETLAB_JAVA_4=str(tmp_path / "broken.jar"))
    out = subprocess.run([sys.executable, "-c", "from rocketlab.oracle import find_oracle; print(find_oracle('4.9.5')[1])"],
                         env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert one_line(out) and "broken.jar is not a readable jar" in out


def fake_java_home(tmp_path: Path, version: str, javac: bool = True) -> Path:
    home = tmp_path / f"jdk-{version}"
    (home / "bin").mkdir(parents=True)
    for tool in ("java", "javac") if javac else ("java",):
        script = home / "bin" / tool
        script.write_text(f'#!/bin/sh\necho \'openjdk version "{version}" 2021-01-19\' >&2\n')
        script.chmod(0o755)
    return home


def test_a_jdk_older_than_17_or_without_javac_is_refused_in_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("JAVA_HOME", str(fake_java_home(tmp_path, "11.0.2")))
    with pytest.raises(OracleUnavailable) as old:
        find_jdk()
    assert one_line(str(old.value)) and "is Java 11.0.2; the oracle needs Java 17 or newer" in str(old.value)
    monkeypatch.setenv("JAVA_HOME", str(fake_java_home(tmp_path, "1.8.0_292")))
    with pytest.raises(OracleUnavailable, match="is Java 1.8.0_292"):
        find_jdk()
    monkeypatch.setenv("JAVA_HOME", str(fake_java_home(tmp_path, "17.0.9", javac=False)))
    with pytest.raises(OracleUnavailable, match="has no javac beside it"):
        find_jdk()


def test_a_jvm_that_dies_is_one_line_and_reaped(oracle4, tmp_path):
    member = tmp_path / "base" / "dledger-n0" / "data"
    member.mkdir(parents=True)
    (member / "00000000000000000000").write_bytes(b"\0" * 100)  # not the configured file size
    proc = oracle4.start(tmp_path, name="doomed")
    config = {"storeBaseDir": str(tmp_path / "base"), "selfId": "n0", "peers": "n0-127.0.0.1:1",
              "mappedFileSizeForEntryData": 4096, "mappedFileSizeForEntryIndex": 512}
    with pytest.raises(OracleDied) as died:
        proc.request("dledgerOpen", config=config)  # DLedgerMmapFileStore.load: System.exit(-1)
    assert one_line(str(died.value)) and "exited with 255 during dledgerOpen" in str(died.value)
    assert not proc.alive()
    proc.close()


def test_no_jvm_outlives_its_python_process(oracle4, tmp_path):
    """A Python process that exits with JVMs still running kills them (atexit); one that is killed closes
    their stdin, and the driver exits at the end of its input."""
    script = ("import sys; from rocketlab.oracle import Oracle; o = Oracle.find('4.9.5');"
              f"p = o.start({str(tmp_path)!r}); print(p.pid, flush=True); sys.stdin.read() if sys.argv[1:] else None")
    for how in ("exit", "sigkill"):
        child = subprocess.Popen([sys.executable, "-c", script, *(["wait"] if how == "sigkill" else [])],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        pid = int(child.stdout.readline())
        if how == "sigkill":
            child.kill()
        child.wait(60)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.1)
        assert not _alive(pid), f"the JVM {pid} outlived its Python process ({how})"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_the_oracle_reports_its_release_and_java(oracle4, tmp_path):
    with oracle4.start(tmp_path, name="hello") as proc:
        assert proc.release == "4.9.5" and int(proc.java_version.split(".")[0]) >= 17
    assert isinstance(oracle4, Oracle)
