"""The real RocketMQ 4.9.5 name server and broker for tests: ``brokeroracle.NamesrvMain`` / ``BrokerMain`` on the
class path ``ROCKETLAB_JAVA_BROKER`` names (``.ci/oracle-classpath broker JARS_DIR``), with the JVM
options the jars' README gives. Without it (or without java) a test skips saying why; under
CI=true it fails. Each process is stopped by its PID (TERM, then KILL)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ENV = "ROCKETLAB_JAVA_BROKER"
JVM_OPTIONS = (
    "-Xmx256m", "-XX:MaxDirectMemorySize=128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
    "--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-exports", "java.base/sun.security.x509=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.ref=ALL-UNNAMED", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "-Djna.boot.library.path=/usr/lib/x86_64-linux-gnu/jni", "-Djna.boot.library.name=jnidispatch.system",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.logFile=System.err",
    "-Drocketmq.client.logUseSlf4j=true")


def java_broker_class_path() -> str:
    """The class path, or skip (fail under CI=true) saying what is missing."""
    value = os.environ.get(ENV, "").strip()
    why = None
    if not value:
        why = f"{ENV} is not set (.ci/oracle-classpath broker JARS_DIR prints it)"
    elif shutil.which("java") is None:
        why = "no java on PATH"
    else:
        missing = [p for p in value.split(os.pathsep) if p and not os.path.exists(p)]
        if missing:
            why = f"{ENV} names missing files: {', '.join(missing[:3])}"
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the real 4.9.5 name server is required under CI=true: {why}", pytrace=False)
        pytest.skip(why)
    return value


class JavaProcess:
    """One JVM running ``main args``; ready once it printed its JSON line on stdout."""

    def __init__(self, main: str, args: list[str], workdir: Path, ready_key: str, timeout_s: float = 60.0) -> None:
        class_path = java_broker_class_path()
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "home").mkdir(exist_ok=True)
        self.log = workdir / f"{main.rsplit('.', 1)[-1]}.log"
        cmd = ["java", *JVM_OPTIONS, f"-Duser.home={workdir}/home", f"-Drocketmq.home.dir={workdir}/home",
               f"-Doracle.dir={workdir}", "-cp", class_path, main, *args]
        with open(self.log, "ab") as err:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, text=True)
        deadline = time.monotonic() + timeout_s
        line = ""
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            if line.startswith("{") and ready_key in json.loads(line):
                self.ready = json.loads(line)
                return
        self.stop()
        raise AssertionError(f"{main} did not start: {line!r}; log: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def java_namesrv(port: int, workdir: Path) -> JavaProcess:
    return JavaProcess("brokeroracle.NamesrvMain", [str(port)], workdir, "namesrv")


def java_broker(properties: Path, workdir: Path, *overrides: str) -> JavaProcess:
    return JavaProcess("brokeroracle.BrokerMain", [str(properties), *overrides], workdir, "broker", timeout_s=90.0)
