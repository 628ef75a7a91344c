"""``nodeKind=java-dledger``: ``rocketlab node`` hands its process to a real Java DLedger member.

The judge registers its own node kind with the real runtime (:func:`rocketlab.net.node.register_exec_kind`)
so that the runtime never imports the oracle; ``rocketlab.cli`` imports this module, which is what makes
the kind known to ``rocketlab node``. rocketlab's own (Java's ``DLedgerServer`` is started by our driver,
``java/DLedgerMember.java``, on the release's own classes).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

from rocketlab.errors import ConfigError
from rocketlab.i18n import _
from rocketlab.net.node import register_exec_kind
from rocketlab.oracle.jvm import Oracle, OracleUnavailable

JAVA_KINDS = {"java-dledger": "rocketlab.oracle.DLedgerMember"}
"""``nodeKind`` -> the Java class run in this process's place (our driver of the release's own classes)."""


def exec_java_member(props: dict[str, str], config: str) -> NoReturn:
    """Replace this process with a JVM running a real Java member on the same properties file: for
    ``java-dledger``, DLedger 0.3.1.2's ``DLedgerServer`` (the class path of ``javaRelease``, 4.9.5 by
    default: ``ROCKETLAB_JAVA_4``; see :mod:`rocketlab.oracle`). The JVM keeps this PID, prints the same
    "listening" line, writes ``events-<selfId>.jsonl`` (its role changes) and ``final-<selfId>.json``, and
    stops cleanly on SIGTERM - so a learner or a test runs it as it runs ours. ConfigError when the Java
    oracle is not there (the message says what to set)."""
    kind = props["nodeKind"]
    release = props.get("javaRelease", "4.9.5")
    for key in ("selfId", "peers"):
        if key not in props:
            raise ConfigError(_("{config}: {key} is required").format(config=config, key=key))
    try:
        oracle = Oracle.find(release)
    except OracleUnavailable as e:
        raise ConfigError(f"nodeKind={kind} needs the real Java: {e}") from None
    run_dir = Path(props.get("runDir", f"runs/node-{props['selfId']}"))
    home = run_dir / "nodes" / f"{props['selfId']}-jvm-home"
    cmd = oracle.command(JAVA_KINDS[kind], str(Path(config).resolve()), home=home, heap_mb=256)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(cmd[0], cmd)


for _kind in JAVA_KINDS:
    register_exec_kind(_kind, exec_java_member)
