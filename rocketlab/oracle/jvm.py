"""The Java oracle's JVMs: find the class path and a JDK, compile our driver, run it as a subprocess.

The real RocketMQ and DLedger are found through one setting per release, never through a path of this
repository: ``ROCKETLAB_JAVA_4`` (RocketMQ 4.9.5 and DLedger 0.3.1.2) and ``ROCKETLAB_JAVA_5`` (RocketMQ
5.3.3), each a Java class path (entries separated by ``:``; ``dir/*`` takes every jar of ``dir``), or
``@FILE`` naming a file that holds one (what ``mvn dependency:build-classpath -Dmdep.outputFile=FILE``
writes). The two class paths never share a JVM.

Our driver (``java/``: ``rocketlab.oracle.Main`` and the commands it runs, over ``java/lines``' JSON-lines
protocol, which the client application shares) is compiled with ``javac``
against the class path the first time it is needed and cached by a hash of its sources, the class path
and the JDK. Each :class:`OracleProcess` is one JVM in a session of its own, spoken to in JSON lines on
its stdin/stdout (the protocol is in ``Main.java``); it is stopped by its PID, and every one still
running when Python exits is killed, so no JVM outlives the tests. JPype is not used: it gives one JVM
per process and a JVM inside ours cannot be SIGKILLed.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import weakref
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlab.errors import RocketlabError
from rocketlab.sigstop import pause

RELEASES = ("4.9.5", "5.3.3")
ENV = {"4.9.5": "ROCKETLAB_JAVA_4", "5.3.3": "ROCKETLAB_JAVA_5"}
MIN_JAVA = 17
SOURCES = Path(__file__).with_name("java")

REQUIRED: dict[str, tuple[tuple[str, str], ...]] = {
    "4.9.5": (
        ("org/apache/rocketmq/store/MessageExtBrokerInner.class", "rocketmq-store 4.9.5"),
        ("org/apache/rocketmq/common/message/MessageDecoder.class", "rocketmq-common 4.9.5"),
        ("org/apache/rocketmq/remoting/protocol/RemotingCommand.class", "rocketmq-remoting 4.9.5"),
        ("org/apache/rocketmq/logging/InternalLogger.class", "rocketmq-logging 4.9.5"),
        ("io/openmessaging/storage/dledger/DLedgerServer.class", "dledger 0.3.1.2"),
        ("com/alibaba/fastjson/JSON.class", "fastjson"),
        ("io/netty/channel/Channel.class", "netty-transport"),
        ("org/slf4j/Logger.class", "slf4j-api"),
        ("com/fasterxml/jackson/databind/ObjectMapper.class", "jackson-databind"),
    ),
    "5.3.3": (
        ("org/apache/rocketmq/common/message/MessageExtBrokerInner.class", "rocketmq-common 5.3.3"),
        ("org/apache/rocketmq/store/queue/ConsumeQueueInterface.class", "rocketmq-store 5.3.3"),
        ("org/apache/rocketmq/remoting/protocol/RemotingCommand.class", "rocketmq-remoting 5.3.3"),
        ("io/openmessaging/storage/dledger/DLedgerServer.class", "dledger 0.3.1.2"),
        ("com/alibaba/fastjson/JSON.class", "fastjson"),
        ("io/netty/channel/Channel.class", "netty-transport"),
        ("org/slf4j/Logger.class", "slf4j-api"),
        ("com/fasterxml/jackson/databind/ObjectMapper.class", "jackson-databind"),
    ),
}
"""Per release, classes the driver needs and where they come from (so a missing jar is named)."""

JDK17_OPTIONS = (
    "--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens", "java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang=ALL-UNNAMED", "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "-Djna.boot.library.path=/usr/lib/x86_64-linux-gnu/jni", "-Djna.boot.library.name=jnidispatch.system",
    "-Drocketmq.client.logUseSlf4j=true", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-XX:-UsePerfData", "-XX:+UseSerialGC",
)
"""What JDK 17 needs for RocketMQ's code (module openings, the system JNA), quiet logs, a small footprint:
every JVM of the oracle has them."""
JVM_OPTIONS = (*JDK17_OPTIONS, "-Xss1m")
"""Our driver's and the client application's JVMs."""


class OracleUnavailable(RocketlabError):
    """The oracle cannot run here; the message says why and what to do."""


class OracleError(RocketlabError):
    """The Java side answered a command with an error (its exception, one line)."""


class OracleDied(RocketlabError):
    """The JVM exited or stopped answering; the message ends with its last stderr line."""


# --------------------------------------------------------------------------------- the JDK
@dataclass(frozen=True)
class Jdk:
    java: str
    javac: str
    version: str
    major: int


def find_jdk() -> Jdk:
    """``JAVA_HOME``'s java and javac, else those on ``PATH``; Java 17 or newer, with javac."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        java, javac = os.path.join(home, "bin", "java"), os.path.join(home, "bin", "javac")
        javac = javac if os.access(javac, os.X_OK) else None
    else:
        java, javac = shutil.which("java"), shutil.which("javac")
    if not java:
        raise OracleUnavailable("no Java found (JAVA_HOME or java on PATH): install a JDK 17, "
                                "e.g. Debian's openjdk-17-jdk-headless")
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.SubprocessError) as exc:
        raise OracleUnavailable(f"{java} -version failed: {exc}") from None
    m = re.search(r'version "([^"]+)"', out)
    if not m:
        raise OracleUnavailable(f"{java} -version printed no version: {out.strip()[:120]!r}")
    version = m.group(1)
    parts = version.split(".")
    major = int(parts[1] if parts[0] == "1" else re.match(r"\d+", parts[0]).group())  # type: ignore[union-attr]
    if major < MIN_JAVA:
        raise OracleUnavailable(f"{java} is Java {version}; the oracle needs Java {MIN_JAVA} or newer")
    if not javac:
        raise OracleUnavailable(f"{java} has no javac beside it: the oracle compiles its driver, install a JDK "
                                "(not only a JRE), e.g. Debian's openjdk-17-jdk-headless")
    return Jdk(java, javac, version, major)


# --------------------------------------------------------------------------------- the class path
def class_path_setting(release: str) -> str | None:
    """The raw setting for ``release`` (``ROCKETLAB_JAVA_4`` / ``ROCKETLAB_JAVA_5``), or None."""
    if release not in ENV:
        raise OracleUnavailable(f"no oracle for RocketMQ {release}; known: {', '.join(RELEASES)}")
    value = os.environ.get(ENV[release], "").strip()
    return value or None


def parse_class_path(value: str, setting: str) -> tuple[str, ...]:
    """The entries of a class path (``a.jar:dir/*:classes``), or of the file ``@FILE`` names; every
    entry must exist (a ``dir/*`` expands to the jars of ``dir``)."""
    if value.startswith("@"):
        path = Path(value[1:])
        try:
            value = path.read_text().strip()
        except OSError as exc:
            raise OracleUnavailable(f"{setting}: cannot read the class-path file {path}: {exc.strerror}") from None
    entries: list[str] = []
    for entry in (e for e in value.split(os.pathsep) if e):
        if entry.endswith("/*") or entry == "*":
            directory = Path(entry[:-1] or ".")
            if not directory.is_dir():
                raise OracleUnavailable(f"{setting}: {directory} (from {entry}) is not a directory")
            entries += sorted(str(p) for p in directory.glob("*.jar"))
        elif not os.path.exists(entry):
            raise OracleUnavailable(f"{setting}: {entry} does not exist")
        else:
            entries.append(entry)
    if not entries:
        raise OracleUnavailable(f"{setting} is set but names no jar")
    return tuple(entries)


def _class_names(entries: tuple[str, ...]) -> set[str]:
    names: set[str] = set()
    for entry in entries:
        if os.path.isdir(entry):
            names.update(str(p.relative_to(entry)) for p in Path(entry).rglob("*.class"))
            continue
        try:
            with zipfile.ZipFile(entry) as jar:
                names.update(jar.namelist())
        except (zipfile.BadZipFile, OSError) as exc:
            raise OracleUnavailable(f"{entry} is not a readable jar: {exc}") from None
    return names


def require_classes(entries: tuple[str, ...], required: tuple[tuple[str, str], ...], setting: str) -> None:
    """:class:`OracleUnavailable` naming the first class of ``required`` (``(path.class, where it comes
    from)``) that no entry of the class path has."""
    names = _class_names(entries)
    for cls_file, where in required:
        if cls_file not in names:
            raise OracleUnavailable(f"{setting}: no entry of the class path has "
                                    f"{cls_file[:-6].replace('/', '.')} ({where})")


def compile_cached(jdk: Jdk, class_path_text: str, sources: list[Path], *, label: str, marker: str, what: str,
                   javac_options: tuple[str, ...] = ()) -> Path:
    """``sources`` compiled by ``javac`` against ``class_path_text`` into the user's cache, once: the folder
    ``rocketlab/oracle/LABEL-HASH`` (a hash of the sources, the class path and the JDK) is reused when it has
    ``marker``; a failed compile raises :class:`OracleUnavailable` with javac's first error (``what`` says
    what was compiled). Builds in a temporary folder renamed into place, so concurrent processes agree."""
    digest = hashlib.sha256()
    for src in sources:
        digest.update(src.name.encode() + b"\0" + src.read_bytes())
    digest.update(class_path_text.encode() + jdk.version.encode())
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rocketlab" / "oracle"
    target = cache / f"{label}-{digest.hexdigest()[:16]}"
    if (target / marker).exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix="build-", dir=cache))
    proc = subprocess.run([jdk.javac, "-nowarn", "-encoding", "UTF-8", "-d", str(build), *javac_options,
                           "-cp", class_path_text, *map(str, sources)], capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(build, ignore_errors=True)
        first = next((line for line in proc.stderr.splitlines() if "error:" in line), proc.stderr.strip())
        raise OracleUnavailable(f"javac could not compile {what}: {first.strip()[:300]}")
    try:
        build.rename(target)
    except OSError:  # another process compiled it first
        shutil.rmtree(build, ignore_errors=True)
    return target


def java_command(jdk: Jdk, main: str, *args: str, class_path: tuple[str, ...], home: str | os.PathLike[str],
                 heap_mb: int, options: tuple[str, ...]) -> list[str]:
    """``java OPTIONS -XmxHEAP_MBm -Duser.home=HOME -Drocketmq.home.dir=HOME -cp CLASS_PATH MAIN ARGS``, the scratch
    ``home`` made (RocketMQ keeps its files there: kvConfig.json, the client's offsets)."""
    Path(home).mkdir(parents=True, exist_ok=True)
    return [jdk.java, *options, f"-Xmx{heap_mb}m", f"-Duser.home={home}", f"-Drocketmq.home.dir={home}",
            "-cp", os.pathsep.join(class_path), main, *args]


# --------------------------------------------------------------------------------- the oracle
@dataclass(frozen=True)
class ClassPathJava:
    """A class path (from one setting) and the JDK that runs it; our sources compiled against it once."""

    class_path: tuple[str, ...]
    jdk: Jdk
    _compiled: list[Path] = field(default_factory=list, compare=False, repr=False)

    @staticmethod
    def resolve(setting: str, value: str | None, required: tuple[tuple[str, str], ...],
                off: str) -> tuple[tuple[str, ...], Jdk]:
        """The class path ``value`` of ``setting`` (checked for ``required``) and a JDK; ``off`` says what
        is off when the setting is not set."""
        if not value:
            raise OracleUnavailable(f"{setting} is not set: {off}")
        entries = parse_class_path(value, setting)
        require_classes(entries, required, setting)
        return entries, find_jdk()

    @property
    def class_path_text(self) -> str:
        return os.pathsep.join(self.class_path)

    def _compile_once(self, parts: tuple[Path, ...], *, label: str, marker: str, what: str,
                      javac_options: tuple[str, ...] = ()) -> Path:
        """The ``*.java`` of ``parts`` compiled (:func:`compile_cached`) on first use, then the same folder."""
        if not self._compiled:
            sources = [src for part in parts for src in sorted(part.rglob("*.java"))]
            self._compiled.append(compile_cached(self.jdk, self.class_path_text, sources, label=label, marker=marker,
                                                 what=what, javac_options=javac_options))
        return self._compiled[0]


@dataclass(frozen=True, kw_only=True)
class Oracle(ClassPathJava):
    """The real RocketMQ ``release`` on ``class_path``, runnable with ``jdk``."""

    release: str

    @classmethod
    def find(cls, release: str) -> Oracle:
        """The oracle of ``release`` from its setting; :class:`OracleUnavailable` says what is missing."""
        value = class_path_setting(release)
        entries, jdk = cls.resolve(ENV[release], value, REQUIRED[release],
                                   f"the RocketMQ {release} oracle is off (see rocketlab.oracle for how to get it)")
        return cls(entries, jdk, release=release)

    def classes(self) -> Path:
        """Our driver compiled for this release (compiled once, then cached)."""
        flavour = "v4" if self.release.startswith("4.") else "v5"
        return self._compile_once((SOURCES / "lines", SOURCES / "common", SOURCES / flavour), label=self.release,
                                  marker="rocketlab/oracle/Main.class",
                                  what=f"the oracle driver against {ENV[self.release]}",
                                  javac_options=("--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED"))

    def command(self, main: str, *args: str, home: str | os.PathLike[str], heap_mb: int = 512,
                jvm_options: tuple[str, ...] = ()) -> list[str]:
        """The ``java`` command line running class ``main`` (ours, or one of the release's own, such as
        ``org.apache.rocketmq.controller.ControllerStartup``) with ``args``, its scratch home ``home``."""
        return java_command(self.jdk, main, *args, class_path=(str(self.classes()), *self.class_path), home=home,
                            heap_mb=heap_mb, options=(*JVM_OPTIONS, *jvm_options))

    def start(self, workdir: str | os.PathLike[str], *, name: str = "oracle", heap_mb: int = 512,
              jvm_options: tuple[str, ...] = ()) -> OracleProcess:
        """A new JVM running our driver; its scratch home and stderr log (``NAME.log``) in ``workdir``."""
        work = Path(workdir)
        cmd = self.command("rocketlab.oracle.Main", home=work / f"{name}-home", heap_mb=heap_mb,
                           jvm_options=jvm_options)
        return OracleProcess(cmd, work / f"{name}.log", self.release)


def find_oracle(release: str) -> tuple[Oracle | None, str]:
    """``(oracle, "")`` where the oracle of ``release`` can run, else ``(None, why not)``."""
    try:
        oracle = Oracle.find(release)
        oracle.classes()
        return oracle, ""
    except OracleUnavailable as exc:
        return None, str(exc)


# --------------------------------------------------------------------------------- one JVM
_LIVE: weakref.WeakSet[OracleProcess] = weakref.WeakSet()


@atexit.register
def _kill_stray_jvms() -> None:
    for proc in list(_LIVE):
        proc.kill()


class OracleProcess:
    """One running JVM: :meth:`request` sends a command and returns its reply; lines the JVM sends on
    its own (``{"event": ...}``) are in :meth:`next_event`."""

    def __init__(self, cmd: list[str], log: Path, release: str, start_timeout_s: float = 120.0) -> None:
        self.release = release
        self.log_path = log
        self._log = open(log, "ab")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                     start_new_session=True)
        self.pid = self.proc.pid
        _LIVE.add(self)
        self._replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._lock = threading.Lock()
        self._unanswered = 0  # commands sent with send(): their replies come before the next request's
        threading.Thread(target=self._read, name=f"oracle-{self.pid}", daemon=True).start()
        hello = self._reply(start_timeout_s, "start")
        self.java_version = hello.get("java")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue  # not ours: the driver writes JSON only
            (self._events if "event" in msg else self._replies).put(msg)
        self._replies.put(None)
        self._events.put(None)

    def last_error_line(self) -> str:
        """The last line of the JVM's stderr that says something (an exception, an error)."""
        try:
            lines = [ln.strip() for ln in self.log_path.read_text(errors="replace").splitlines() if ln.strip()]
        except OSError:
            return ""
        for line in reversed(lines):
            if re.search(r"Exception|Error|error|FATAL|Caused by", line):
                return line[:300]
        return lines[-1][:300] if lines else ""

    def _died(self, what: str) -> OracleDied:
        code = self.proc.poll()
        state = f"exited with {code}" if code is not None else "stopped answering"
        detail = self.last_error_line()
        return OracleDied(f"the RocketMQ {self.release} JVM (pid {self.pid}) {state} during {what}"
                          + (f": {detail}" if detail else f" (log: {self.log_path})"))

    def _reply(self, timeout_s: float, what: str) -> dict[str, Any]:
        try:
            msg = self._replies.get(timeout=timeout_s)
        except queue.Empty:
            self.kill()
            raise self._died(what) from None
        if msg is None:
            self.proc.wait()
            raise self._died(what)
        return msg

    def _write(self, cmd: str, fields: dict[str, Any]) -> None:
        line = json.dumps({"cmd": cmd, **fields}, ensure_ascii=False) + "\n"
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(line.encode("utf-8"))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died(cmd) from None

    def send(self, cmd: str, **fields: Any) -> None:
        """Send a command without waiting for its reply (what it emits meanwhile: :meth:`next_event`)."""
        with self._lock:
            self._write(cmd, fields)
            self._unanswered += 1

    def request(self, cmd: str, timeout_s: float = 120.0, **fields: Any) -> dict[str, Any]:
        """Send ``{"cmd": cmd, **fields}``; return the reply, or raise :class:`OracleError` (the Java
        side failed the command) or :class:`OracleDied`."""
        with self._lock:
            self._write(cmd, fields)
            while self._unanswered:
                self._reply(timeout_s, f"{cmd} (after an earlier command)")
                self._unanswered -= 1
            reply = self._reply(timeout_s, cmd)
        if not reply.get("ok"):
            raise OracleError(f"RocketMQ {self.release} {cmd}: {reply.get('error', reply)}")
        return reply

    def next_event(self, timeout_s: float = 60.0) -> dict[str, Any]:
        """The next line the JVM sent on its own; :class:`OracleDied` if it exits first."""
        try:
            msg = self._events.get(timeout=timeout_s)
        except queue.Empty:
            raise self._died("waiting for an event") from None
        if msg is None:
            raise self._died("waiting for an event")
        return msg

    def alive(self) -> bool:
        return self.proc.poll() is None

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the JVM's process group (SIGSTOP/SIGCONT pause and resume it; SIGSTOP returns
        once every JVM thread has stopped, :func:`rocketlab.sigstop.pause`)."""
        if not self.alive():
            return
        if sig == signal.SIGSTOP:
            pause(self.pid, group=True)
        else:
            os.killpg(self.pid, sig)

    def kill(self) -> None:
        """SIGKILL the JVM (a crash: nothing is flushed or shut down) and reap it."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        self._close_pipes()

    def close(self, timeout_s: float = 60.0) -> None:
        """Ask the driver to shut everything down and exit; kill it if it does not."""
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()  # end of input: the driver closes what is open and exits
                self.proc.wait(timeout=timeout_s)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def _close_pipes(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
        self._log.close()
        _LIVE.discard(self)

    def __enter__(self) -> OracleProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
