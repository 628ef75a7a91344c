"""The client application's harness on its own: the class-path setting's errors, the JVM's answers to bad
commands, the backends' refusals (issue 39)."""

from __future__ import annotations

import socket

import pytest

from rocketlab.oracle.broker_group import Backend, BackendError, free_port
from rocketlab.oracle.client_app import ClientApp, exactly_once, queue_order
from rocketlab.oracle.client_jvm import SETTING, BrokerJava
from rocketlab.oracle.jvm import OracleError, OracleUnavailable
from tests.oracle.conftest import need_broker_java


def test_the_setting_missing_or_short_of_a_jar_says_which(monkeypatch, tmp_path):
    monkeypatch.delenv(SETTING, raising=False)
    with pytest.raises(OracleUnavailable, match=f"{SETTING} is not set"):
        BrokerJava.find()
    monkeypatch.setenv(SETTING, str(tmp_path / "nothing.jar"))
    with pytest.raises(OracleUnavailable, match="does not exist"):
        BrokerJava.find()
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv(SETTING, f"{tmp_path / 'empty'}/*")
    with pytest.raises(OracleUnavailable, match="names no jar"):
        BrokerJava.find()


def test_a_port_block_is_free_around_its_port():
    port = free_port(spacing=2)
    for p in range(port - 2, port + 3):
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))


def test_backends_refuse_what_they_cannot_run(tmp_path):
    with pytest.raises(BackendError, match="no 4.9.5 twin"):
        Backend("java", tmp_path / "c", None, "controller")._controller_group()
    with pytest.raises(BackendError, match="needs the Java 4.9.5 servers"):
        Backend("java", tmp_path / "j", None).start()


def test_the_checks_name_what_is_wrong():
    sends = [{"uniq": u, "status": "SEND_OK"} for u in ("a", "b", "c")] + [{"uniq": "d", "error": "x"}]
    recvs = [{"uniq": u, "store_host": "h:1", "queue": 0, "queue_offset": o} for u, o in (("a", 0), ("a", 0), ("e", 1))]
    problems = exactly_once(sends, recvs)
    assert len(problems) == 3 and "2 of 3 acknowledged never received" in problems[0]
    assert "more than once" in problems[1] and "not sent here" in problems[2]
    assert queue_order(recvs) == ["queue ('h:1', 0): offset 0 after 0"]


def test_the_client_jvm_answers_a_bad_command_with_one_line(tmp_path):
    java = need_broker_java()
    with ClientApp(java, tmp_path) as app:
        with pytest.raises(OracleError, match="unknown command nonsense"):
            app.request("nonsense")
        with pytest.raises(OracleError, match="unknown consumer style sideways"):
            app.request("consume", name="x", style="sideways", namesrv="127.0.0.1:1", topic="T", group="g")
        with pytest.raises(OracleError, match="no background run"):
            app.request("stop_produce", run="never")
        assert app.request("now")["t_us"] > 0  # still answering
