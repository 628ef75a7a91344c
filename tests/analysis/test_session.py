"""The SparkSession helper: settings, reuse of the running session, Java discovery."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from rocketlab.analysis import session as S
from rocketlab.errors import RocketlabError

pytestmark = pytest.mark.spark


def test_session_settings(spark):
    conf = spark.sparkContext.getConf()
    assert spark.sparkContext.master == "local[2]"
    assert conf.get("spark.app.name") == "rocketlab-tests"
    assert conf.get("spark.ui.enabled") == "false"
    assert conf.get("spark.ui.showConsoleProgress") == "false"
    assert conf.get("spark.driver.bindAddress") == "127.0.0.1"
    assert conf.get("spark.driver.host") == "127.0.0.1"
    assert spark.conf.get("spark.sql.shuffle.partitions") == "2"
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    options = conf.get("spark.driver.extraJavaOptions")
    assert "-XX:TieredStopAtLevel=1" in options and "-XX:+UseSerialGC" in options
    assert f"-Dlog4j.configurationFile=file:{S.LOG4J_FILE}" in options
    assert S.LOG4J_FILE.is_file() and "rootLogger.level = error" in S.LOG4J_FILE.read_text()
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    assert os.environ["SPARK_LOCAL_IP"] == "127.0.0.1"


def test_python_workers_run_this_interpreter(spark):
    """The PYSPARK_PYTHON gotcha: a UDF must run in the venv's Python, not python3 from PATH."""
    workers = spark.sparkContext.parallelize([0], 1).map(lambda _: sys.executable).collect()
    assert workers == [sys.executable]


def test_get_spark_reuses_the_running_session(spark, monkeypatch):
    assert S.get_spark() is spark  # default local[*] accepts the running local session
    assert S.get_spark(master="local[2]") is spark
    monkeypatch.setenv("SPARK_MASTER", "local[2]")
    assert S.get_spark() is spark
    assert S.active_session() is spark


def test_get_spark_refuses_another_master_while_one_runs(spark):
    with pytest.raises(RocketlabError, match=r"master local\[2\] is already running.*spark.stop\(\)"):
        S.get_spark(master="spark://elsewhere:7077")


def test_resolve_master_precedence(monkeypatch):
    monkeypatch.delenv("SPARK_MASTER", raising=False)
    assert S.resolve_master() == "local[*]"
    monkeypatch.setenv("SPARK_MASTER", "spark://head:7077")
    assert S.resolve_master() == "spark://head:7077"
    assert S.resolve_master("local[3]") == "local[3]"


def test_spark_conf_local_and_cluster():
    local = S.spark_conf("local[3]", "x", **{"spark.sql.shuffle.partitions": 7})
    assert local["spark.driver.bindAddress"] == "127.0.0.1"
    assert local["spark.default.parallelism"] == "3"
    assert local["spark.sql.shuffle.partitions"] == "7"  # caller's conf wins
    cluster = S.spark_conf("spark://head:7077")
    assert "spark.driver.bindAddress" not in cluster and "spark.driver.host" not in cluster
    assert cluster["spark.ui.enabled"] == "false"
    assert S.local_threads("local[*]") == (os.cpu_count() or 2)
    assert S.local_threads("local") == 1
    assert local["spark.sql.python.filterPushdown.enabled"] == "true"  # the store sources push filters
    assert local["spark.driver.extraJavaOptions"].startswith(S.JVM_OPTIONS + " ")
    full = S.spark_conf("local[2]", jit="full")
    assert full["spark.driver.extraJavaOptions"].startswith(S.THROUGHPUT_JVM_OPTIONS + " ")
    assert "TieredStopAtLevel" not in full["spark.driver.extraJavaOptions"]
    with pytest.raises(RocketlabError, match="jit must be 'quick' or 'full'"):
        S.spark_conf("local[2]", jit="fast")


def test_find_java_on_this_machine():
    java = S.find_java()
    assert java.major in S.SUPPORTED_JAVA
    assert Path(java.path).exists()


@pytest.mark.parametrize(("version", "major"),
                         [("17.0.15", 17), ("21", 21), ("1.8.0_292", 8), ("11.0.2", 11)])
def test_parse_java_version(version, major):
    assert S.parse_java_version(version) == major


def _fake_java_home(root: Path, version: str) -> Path:
    java = root / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f'#!/bin/sh\necho \'openjdk version "{version}" 2024-01-16\' >&2\n')
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    return root


def test_find_java_accepts_21_from_java_home(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(_fake_java_home(tmp_path / "jdk21", "21.0.4")))
    java = S.find_java()
    assert (java.major, java.version) == (21, "21.0.4")
    assert java.path == str(tmp_path / "jdk21" / "bin" / "java")


@pytest.mark.parametrize("version", ["11.0.2", "1.8.0_292", "25"])
def test_find_java_refuses_other_versions(tmp_path, monkeypatch, version):
    monkeypatch.setenv("JAVA_HOME", str(_fake_java_home(tmp_path / "jdk", version)))
    expected = rf"Spark 4 needs Java 17 or 21, but JAVA_HOME=.* is Java {version};.*openjdk-17-jre-headless"
    with pytest.raises(RocketlabError, match=expected):
        S.find_java()


def test_find_java_java_home_without_java(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(RocketlabError, match=r"JAVA_HOME=.* has no bin/java; install Java 17 or 21"):
        S.find_java()


def test_find_java_missing_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RocketlabError, match=r"no java on PATH.*openjdk-17-jre-headless.*environment.yml"):
        S.find_java()
