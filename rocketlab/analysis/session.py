"""The one place that builds a SparkSession for rocketlab (notebooks, tests, ``rocketlab analyze``).

``get_spark()`` runs ``local[*]`` by default; a master URL comes from the argument or ``SPARK_MASTER``,
so the same analysis runs on a real cluster. For local masters it binds the driver to 127.0.0.1 and
uses the settings measured on a 2-core machine (reference/environment-notes.md): UI off, no console
progress bars, few shuffle partitions, a quick JIT and the serial GC, and a packaged log4j2 file at
level ``error``. Java 17 or 21 is required (Spark 4); :func:`find_java` says what to install otherwise.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from rocketlab.errors import RocketlabError
from rocketlab.i18n import N_, _

SUPPORTED_JAVA = (17, 21)
DEFAULT_MASTER = "local[*]"
LOG4J_FILE = Path(__file__).with_name("log4j2.properties")
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""The driver JVM's options by default: quick to start on a small machine (the C1 compiler only)."""
THROUGHPUT_JVM_OPTIONS = "-XX:+UseParallelGC"
"""The options of ``get_spark(jit="full")``: the full JIT; slower to start, 2-3x Spark's intake of a Python
data source's Arrow batches (0.5 -> 1.1-1.7M rows/s measured on two cores), for reading big stores."""

_INSTALL_HINT = N_(
    "install Java 17 or 21 (Debian/Ubuntu: apt-get install openjdk-17-jre-headless; "
    "conda: conda env create -f environment.yml) or point JAVA_HOME at one"
)


@dataclass(frozen=True)
class JavaInfo:
    """The Java runtime Spark will launch: its executable, major version and version string."""

    path: str
    major: int
    version: str


def find_java() -> JavaInfo:
    """Find the Java that Spark's launcher will use (``JAVA_HOME``, else ``java`` on PATH) and check it.

    Raises :class:`RocketlabError` saying what to install when there is none, or when its major version
    is not one Spark 4 supports (17 or 21).
    """
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        java = Path(java_home) / "bin" / "java"
        if not java.is_file():
            raise RocketlabError(_("JAVA_HOME={java_home} has no bin/java; {hint}").format(
                java_home=java_home, hint=_(_INSTALL_HINT)))
        origin = f"JAVA_HOME={java_home}"
        path = str(java)
    else:
        found = shutil.which("java")
        if found is None:
            raise RocketlabError(_("Spark needs Java but there is no JAVA_HOME and no java on PATH; {hint}").format(
                hint=_(_INSTALL_HINT)))
        origin = f"java on PATH ({found})"
        path = found
    major, version = _java_version(path)
    if major not in SUPPORTED_JAVA:
        raise RocketlabError(_("Spark 4 needs Java 17 or 21, but {origin} is Java {version}; {hint}").format(
            origin=origin, version=version, hint=_(_INSTALL_HINT)))
    return JavaInfo(path=path, major=major, version=version)


@lru_cache(maxsize=8)
def _java_version(java: str) -> tuple[int, str]:
    """Major version and version string of ``java`` as printed by ``java -version``."""
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RocketlabError(_("cannot run {java} -version: {why}; {hint}").format(
            java=java, why=e, hint=_(_INSTALL_HINT))) from None
    out = proc.stderr + proc.stdout
    match = re.search(r'version "([^"]+)"', out)
    if proc.returncode != 0 or match is None:
        first = out.strip().splitlines()[0] if out.strip() else f"exit code {proc.returncode}"
        raise RocketlabError(_("{java} -version did not report a version ({first}); {hint}").format(
            java=java, first=first, hint=_(_INSTALL_HINT)))
    return parse_java_version(match.group(1)), match.group(1)


def parse_java_version(version: str) -> int:
    """The major version of a Java version string: ``"17.0.15"`` → 17, ``"1.8.0_292"`` → 8."""
    parts = re.findall(r"\d+", version)
    if not parts:
        raise RocketlabError(_("cannot read a Java version from {version!r}").format(version=version))
    major = int(parts[0])
    if major == 1 and len(parts) > 1:
        major = int(parts[1])
    return major


def resolve_master(master: str | None = None) -> str:
    """The master URL to use: the argument, else ``SPARK_MASTER``, else ``local[*]``."""
    return master or os.environ.get("SPARK_MASTER") or DEFAULT_MASTER


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-cluster[")


def local_threads(master: str) -> int:
    """Worker threads of a ``local[N]`` / ``local[*]`` / ``local[N,F]`` master (1 for ``local``)."""
    match = re.fullmatch(r"local\[(\*|\d+)(?:,\s*\d+)?\]", master)
    if match is None:
        return 1 if master == "local" else max(2, os.cpu_count() or 2)
    return (os.cpu_count() or 2) if match.group(1) == "*" else int(match.group(1))


def spark_conf(master: str, app_name: str = "rocketlab", jit: str = "quick", **conf: Any) -> dict[str, str]:
    """The configuration :func:`get_spark` applies (``conf`` entries win over the defaults); ``jit``
    ``quick`` (:data:`JVM_OPTIONS`) or ``full`` (:data:`THROUGHPUT_JVM_OPTIONS`)."""
    if jit not in ("quick", "full"):
        raise RocketlabError(_("jit must be 'quick' or 'full', not {jit!r}").format(jit=jit))
    jvm = JVM_OPTIONS if jit == "quick" else THROUGHPUT_JVM_OPTIONS
    settings: dict[str, str] = {
        "spark.master": master,
        "spark.app.name": app_name,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.python.filterPushdown.enabled": "true",
        "spark.driver.extraJavaOptions": f"{jvm} -Dlog4j.configurationFile=file:{LOG4J_FILE}",
    }
    if is_local(master):
        threads = str(max(1, local_threads(master)))
        settings.update({
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.host": "127.0.0.1",
            "spark.sql.shuffle.partitions": threads,
            "spark.default.parallelism": threads,
        })
    settings.update({key: str(value) for key, value in conf.items()})
    return settings


def active_session():
    """The SparkSession already running in this process, or None (never starts one)."""
    from pyspark import SparkContext  # lazy: Spark, only where it runs
    from pyspark.sql import SparkSession  # lazy: Spark, only where it runs

    if SparkContext._active_spark_context is None:  # noqa: SLF001 - pyspark has no public accessor
        return None
    return SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()


def get_spark(master: str | None = None, app_name: str = "rocketlab", jit: str = "quick", **conf: Any):
    """Return a SparkSession for rocketlab, starting one if none runs in this process.

    ``master``: a Spark master URL (default ``SPARK_MASTER`` or ``local[*]``). ``jit``: ``quick`` (the
    default, fast to start) or ``full`` (the JVM's full JIT, for reading big stores: see
    :data:`THROUGHPUT_JVM_OPTIONS`). ``conf``: extra Spark
    settings, e.g. ``get_spark(**{"spark.executor.memory": "2g"})``. An already running session is
    returned as is when it has the requested master; asking for another master raises
    :class:`RocketlabError` (stop the running session first).
    """
    master = resolve_master(master)
    running = active_session()
    if running is not None:
        current = running.sparkContext.master
        if current != master and not (master == DEFAULT_MASTER and current.startswith("local")):
            raise RocketlabError(_("a SparkSession with master {current} is already running in this process; "
                                   "call spark.stop() before asking for master {master}").format(
                                       current=current, master=master))
        _register(running)
        return running
    find_java()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if is_local(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

    from pyspark.sql import SparkSession  # lazy: Spark, only where it runs

    builder = SparkSession.builder
    for key, value in spark_conf(master, app_name, jit, **conf).items():
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()
    except Exception as e:  # py4j/pyspark raise several types when the JVM does not come up
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise RocketlabError(_("could not start Spark (master {master}): {why}").format(master=master, why=first)) from e
    session.sparkContext.setLogLevel("ERROR")
    _register(session)
    return session


def _register(session: Any) -> None:
    """The store formats (``rocketmq-commitlog``, ...) in every session rocketlab hands out."""
    from rocketlab.analysis.datasources import register_data_sources  # lazy: loads pyarrow

    register_data_sources(session)
