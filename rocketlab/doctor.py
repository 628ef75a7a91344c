"""``rocketlab doctor``: what this machine has for the kit, and what to do about anything missing.

Each check is one row: ``ok``, ``MISSING`` (the kit needs it), ``optional`` (only some tests or tools need
it) or ``warn`` (works, with a caveat), what was found, and what to do when it is not there:

* Python: the running interpreter against the supported versions (:data:`SUPPORTED_PYTHON`);
* the kit's files and the workspace the current directory is in (``rocketlab init DIR`` makes one);
* the grader's sandbox: a trivial submission loaded and called in it, as ``rocketlab grade`` would;
* Java: the one Spark will launch (``JAVA_HOME``, else ``java`` on PATH), 17 or 21;
* Spark: a local session started and one job run, timed (its first start after an install takes longest);
* Chromium: the browser the viewer's browser tests and ``bench_viewer`` drive;
* the Java oracle: the real RocketMQ 4.9.5 and 5.3.3 (:func:`rocketlab.oracle.find_oracle`);
* free ports: ``rocketlab lab``'s port on 127.0.0.1 and a port for Spark's UI.

Exit 0 when everything the kit needs is there (optional parts may be missing), 1 otherwise.
"""

from __future__ import annotations

import argparse
import errno
import json
import re
import shutil
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from rich.cells import cell_len

from rocketlab.analysis.session import active_session, find_java, get_spark
from rocketlab.errors import RocketlabError
from rocketlab.grading.sandbox import Sandbox, SandboxError, SandboxSetupError
from rocketlab.i18n import N_, _
from rocketlab.oracle import ENV, find_oracle
from rocketlab.workspace import checkout_root, find_workspace, kit_root

SUPPORTED_PYTHON = ((3, 10), (3, 13))
"""Oldest and newest supported Python (3.11 runs the whole suite in CI; 3.10, 3.12, 3.13 the wheel smoke run)."""
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
SPARK_UI_PORT = 4040
IN_USE = "in use"
LABELS = {"workspace": N_("workspace"), "sandbox": N_("sandbox"), "oracle": N_("oracle {release}"),
          "port": N_("port {port}")}
"""How the report names a check (``--json`` keeps its ``name``)."""
STATUS = {"ok": N_("ok"), "MISSING": N_("MISSING"), "optional": N_("optional"), "warn": N_("warn")}
"""The report's status words (``--json`` keeps them as they are: a machine reads them)."""


@dataclass
class Check:
    """One row of the doctor's report."""

    name: str
    status: str  # ok, MISSING, optional, warn
    found: str
    todo: str = ""

    @property
    def required_missing(self) -> bool:
        return self.status == "MISSING"


def check_python() -> Check:
    v = sys.version_info
    found = f"{v.major}.{v.minor}.{v.micro} ({sys.executable})"
    low, high = SUPPORTED_PYTHON
    if (v.major, v.minor) < low:
        return Check("Python", "MISSING", found, _("the kit needs Python {version} or newer: install 3.11 (the "
                     "version CI tests) and create the venv with it").format(version=f"{low[0]}.{low[1]}"))
    if (v.major, v.minor) > high:
        return Check("Python", "warn", found, _("newer than the newest tested ({version}); if pyspark or a wheel "
                     "will not install, use Python 3.11").format(version=f"{high[0]}.{high[1]}"))
    return Check("Python", "ok", found + (_(" (the version CI tests)") if (v.major, v.minor) == (3, 11) else ""))


def check_workspace() -> Check:
    kit = kit_root()
    workspace = find_workspace()
    if workspace is not None:
        return Check("workspace", "ok", _("{workspace} (kit files from {kit})").format(workspace=workspace, kit=kit))
    checkout = checkout_root()
    if checkout is not None:
        return Check("workspace", "ok", _("the checkout {checkout} (a clone is its own workspace)").format(
            checkout=checkout))
    return Check("workspace", "warn", _("none here (kit files in {kit})").format(kit=kit),
                 _("rocketlab init DIR lays one out; then cd DIR for rocketlab lab, grade, demo"))


def check_sandbox() -> Check:
    """The grader's sandbox, started as for a grading, with a trivial submission: loaded, called, answered."""
    started = time.perf_counter()
    try:
        box = Sandbox("lab05")
    except SandboxSetupError as e:
        return Check("sandbox", "MISSING", str(e), _("rocketlab grade cannot run here: see "
                     "docs/grading-trust.md (the sandbox's user must reach the interpreter and the kit)"))
    try:
        box.load("def answer(x):\n    return x + 1\n", "doctor_check.py")
        got = box.call("answer", (41,))
    except SandboxError as e:
        return Check("sandbox", "MISSING", _("a trivial submission failed in it: {why}").format(why=e.text),
                     _("see docs/grading-trust.md"))
    finally:
        box.stop()
    if got != 42:
        return Check("sandbox", "MISSING", _("a trivial submission answered {got!r}, not 42").format(got=got), "")
    took = f"{time.perf_counter() - started:.1f} s"
    if not box.isolated:
        return Check("sandbox", "warn", _("a trivial submission ran ({took}) without namespaces (unshare "
                     "cannot make them here, or ROCKETLAB_SANDBOX=plain)").format(took=took),
                     _("a submission can then read what this user can: docs/grading-trust.md says what still holds"))
    return Check("sandbox", "ok", _("a trivial submission ran in new PID, mount and network namespaces "
                 "({took})").format(took=took))


def check_java() -> Check:
    try:
        java = find_java()
    except RocketlabError as e:
        return Check("Java", "MISSING", _("no usable Java for Spark"), str(e))
    return Check("Java", "ok", _("Java {version} at {path}").format(version=java.version, path=java.path))


def check_spark() -> Check:
    started = time.perf_counter()
    running = active_session()
    try:
        spark = running or get_spark(master="local[1]", app_name="rocketlab-doctor")
        rows = spark.range(1000).count()
    except RocketlabError as e:
        return Check("Spark", "MISSING", _("a local session did not start"),
                     _("{error}; check Java first, then see docs/troubleshooting.md").format(error=e))
    seconds = time.perf_counter() - started
    if running is None:
        spark.stop()
    if rows != 1000:
        return Check("Spark", "MISSING", _("a local job counted {rows} rows, not 1000").format(rows=rows),
                     _("reinstall pyspark"))
    if running is not None:
        return Check("Spark", "ok", _("a session was running here ({master}) and ran a job in {seconds} s").format(
            master=spark.sparkContext.master, seconds=f"{seconds:.1f}"))
    note = _(" (a first start after an install takes longest, up to ~30 s on a small machine; later ones "
             "~5-10 s)") if seconds > 15 else ""
    return Check("Spark", "ok", _("local session started and ran a job in {seconds} s").format(
        seconds=f"{seconds:.1f}") + note)


def check_chromium() -> Check:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return Check("Chromium", "ok", found)
    return Check("Chromium", "optional", _("not found"),
                 _("only the browser tests and benchmarks/bench_viewer.py need it: apt-get install chromium "
                   "(the labs run in any browser you open the URL in)"))


def check_oracle(release: str) -> Check:
    oracle, why = find_oracle(release)
    if oracle is None:
        return Check(f"oracle {release}", "optional",
                     re.sub(r"\s*\(see rocketlab\.oracle[^)]*\)", "", why),
                     _("only the oracle tests need it: set {env} to the class path of RocketMQ {release} "
                       "(docs/oracle.md says how to get it)").format(env=ENV[release], release=release))
    return Check(f"oracle {release}", "ok", _(
        "RocketMQ {release} with Java {java} ({entries} class-path entries)").format(
        release=release, java=oracle.jdk.version, entries=len(oracle.class_path)))


def port_free(port: int, host: str = "127.0.0.1") -> str | None:
    """None when ``host:port`` can be listened on, else why not."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as e:
            return IN_USE if e.errno == errno.EADDRINUSE else (e.strerror or str(e))
    return None


def _state(why: str | None) -> str:
    return _("free") if why is None else (_("in use") if why == IN_USE else why)


def check_ports(lab_port: int) -> list[Check]:
    checks = []
    why = port_free(lab_port)
    checks.append(Check(f"port {lab_port}", "ok" if why is None else "warn",
                        _("127.0.0.1:{port} is {state} (rocketlab lab)").format(port=lab_port, state=_state(why)),
                        "" if why is None else _("start the lab on another port: rocketlab lab --port {port}").format(
                            port=lab_port + 1)))
    why = port_free(SPARK_UI_PORT)
    checks.append(Check(f"port {SPARK_UI_PORT}", "ok" if why is None else "warn",
                        _("127.0.0.1:{port} is {state} (Spark's UI)").format(port=SPARK_UI_PORT, state=_state(why)),
                        "" if why is None else _("nothing to do: Spark takes the next free port (4041, ...) itself")))
    return checks


def run_checks(*, spark: bool = True, lab_port: int = 8888,
               report: Callable[[Check], None] | None = None) -> list[Check]:
    """Every check in order; ``report`` is called as each one finishes (Spark takes seconds)."""
    steps: list[Callable[[], Check | list[Check]]] = [check_python, check_workspace, check_sandbox, check_java]
    if spark:
        steps.append(check_spark)
    steps += [check_chromium, lambda: check_oracle("4.9.5"), lambda: check_oracle("5.3.3"),
              lambda: check_ports(lab_port)]
    out: list[Check] = []
    for step in steps:
        result = step()
        for c in result if isinstance(result, list) else [result]:
            out.append(c)
            if report:
                report(c)
    return out


def label(name: str) -> str:
    """A check's name as the report shows it, in the kit's language."""
    head, _sep, tail = name.partition(" ")
    if name in LABELS:
        return _(LABELS[name])
    if head in LABELS:
        return _(LABELS[head]).format(release=tail, port=tail)
    return name


def pad(text: str, width: int) -> str:
    """``text`` left-aligned in ``width`` terminal columns (a CJK character takes two)."""
    return text + " " * max(0, width - cell_len(text))


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "doctor", help=_("check what this machine has for the kit (Python, Java, Spark, Chromium, the Java "
                       "oracle, free ports) and say what to do about anything missing"),
        description=_("Check Python, the workspace, the grader's sandbox, Java, Spark's start, Chromium, the Java oracle and free ports; "
                    "exit 1 if something the kit needs is missing."))
    p.add_argument("--no-spark", action="store_true", help=_("skip starting Spark (the slowest check)"))
    p.add_argument("--port", type=int, default=8888, help=_("the port rocketlab lab will use (default 8888)"))
    p.add_argument("--json", action="store_true", help=_("one JSON object per check and line"))
    p.set_defaults(func=_cmd_doctor)


def _cmd_doctor(args: argparse.Namespace) -> int:
    if not 1 <= args.port <= 65535:
        raise RocketlabError(_("--port must be between 1 and 65535, got {port}").format(port=args.port))
    if not args.json:
        print(_("rocketlab doctor: what this machine has for the kit")
              + ("" if args.no_spark else _(" (starting Spark takes a few seconds)")), flush=True)

    def show(c: Check) -> None:
        if args.json:
            print(json.dumps(asdict(c)), flush=True)
        else:
            todo = f"  -> {c.todo}" if c.todo else ""
            print(f"  {pad(_(STATUS[c.status]), 8)} {pad(label(c.name), 13)} {c.found}{todo}", flush=True)

    checks = run_checks(spark=not args.no_spark, lab_port=args.port, report=show)
    missing = [label(c.name) for c in checks if c.required_missing]
    if not args.json:
        print(_("missing: {names}").format(names=", ".join(missing)) if missing
              else _("everything the kit needs is here"))
    return 1 if missing else 0


__all__ = ["Check", "run_checks"]
