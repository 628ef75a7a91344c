"""rocketlab doctor: every check reported with what to do when a part is missing; exit 1 only when the
kit cannot run."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

from rocketlab import doctor
from rocketlab.grading import sandbox


def test_doctor_reports_every_part_and_exits_0_here(monkeypatch):
    monkeypatch.delenv("ROCKETLAB_JAVA_4", raising=False)
    monkeypatch.setenv("ROCKETLAB_JAVA_5", "/no/such/jars/*")
    proc = subprocess.run([sys.executable, "-m", "rocketlab.cli", "doctor", "--no-spark", "--json"],
                          capture_output=True, text=True, timeout=300)
    checks = {c["name"]: c for c in map(json.loads, proc.stdout.splitlines())}
    assert {"Python", "workspace", "sandbox", "Java", "Chromium", "oracle 4.9.5", "oracle 5.3.3", "port 8888",
            "port 4040"} <= set(checks)
    missing = [c for c in checks.values() if c["status"] == "MISSING"]
    assert proc.returncode == (1 if missing else 0), proc.stderr
    for release, setting in (("4.9.5", "ROCKETLAB_JAVA_4"), ("5.3.3", "ROCKETLAB_JAVA_5")):
        oracle = checks[f"oracle {release}"]
        assert oracle["status"] == "optional" and setting in oracle["found"] and "docs/oracle.md" in oracle["todo"]


def test_the_sandbox_check_runs_a_trivial_submission_and_names_a_setup_failure(monkeypatch, tmp_path):
    check = doctor.check_sandbox()
    assert check.status in ("ok", "warn") and "trivial submission ran" in check.found, check
    if os.geteuid() == 0 and check.status == "ok":  # a directory to expose that nobody may enter: the grader's failure
        closed = tmp_path / "closed"
        closed.mkdir(mode=0o700)
        real = sandbox.exposed_paths
        monkeypatch.setattr(sandbox, "exposed_paths", lambda hide: [*real(hide), str(closed)])
        check = doctor.check_sandbox()
        assert check.status == "MISSING" and "the grader could not start its sandbox" in check.found, check
        assert str(closed) in check.found


def test_a_taken_port_says_which_port_to_use_instead():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        checks = doctor.check_ports(port)
    assert checks[0].status == "warn" and f"rocketlab lab --port {port + 1}" in checks[0].todo


def test_missing_java_is_missing_with_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    check = doctor.check_java()
    assert check.status == "MISSING" and "openjdk-17" in check.todo


def test_python_outside_the_supported_range(monkeypatch):
    from types import SimpleNamespace

    monkeypatch.setattr(doctor.sys, "version_info", SimpleNamespace(major=3, minor=9, micro=18))
    assert doctor.check_python().status == "MISSING" and "3.10 or newer" in doctor.check_python().todo
    monkeypatch.setattr(doctor.sys, "version_info", SimpleNamespace(major=3, minor=14, micro=0))
    assert doctor.check_python().status == "warn"


def test_spark_starts_and_is_timed(spark):
    check = doctor.check_spark()  # the shared session is running: reused, left running
    assert check.status == "ok" and "ran a job in" in check.found and spark.range(2).count() == 2
    proc = subprocess.run([sys.executable, "-m", "rocketlab.cli", "doctor"], capture_output=True, text=True,
                          timeout=600)  # its own first start, in a process of its own
    assert "local session started and ran a job in" in proc.stdout, proc.stdout + proc.stderr
