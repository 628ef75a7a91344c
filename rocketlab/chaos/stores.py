"""What a campaign's stores hold at the end, read from their files (rocketlab's own).

* :func:`member_logs` - a DLedger group's members' logs: (index, term, the message's campaign id in the
  entry: :func:`rocketlab.chaos.clients.message_id`, its body for the kit's producers);
* :func:`commit_log_end` - where a classic broker's CommitLog ends;
* :func:`surviving_bodies` - per surviving replica, the message bodies its store holds (a classic pair's
  master is lost for good at the end: only its slave survives; in a DLedger group and in controller mode
  every broker does). The loss naming (:mod:`rocketlab.chaos.losses`) tells a message kept but never
  read back from one no replica kept.
"""

from __future__ import annotations

import base64
from pathlib import Path

from rocketlab.chaos.clients import message_id
from rocketlab.chaos.systems import System
from rocketlab.dledger.cli import iter_entries
from rocketlab.errors import RocketlabError
from rocketlab.store.cli import iter_commit_log
from rocketlab.store.message_codec import decode_message


def _store_dir(out: Path, node: str) -> Path:
    return out / "cluster" / "nodes" / node / "store"


def member_logs(out: Path, sys_: System) -> dict[str, list[tuple[int, int, str]]]:
    """A DLedger group's members' logs from their files: (index, term, the message body in the entry)."""
    if sys_.name != "dledger":
        return {}
    logs = {}
    for n in sys_.brokers:
        entries = []
        try:
            for e in iter_entries(str(_store_dir(out, n) / f"dledger-{n}")):
                try:
                    m = decode_message(base64.b64decode(e["body_base64"]))
                    text = message_id(m.body, m.properties)
                except Exception:  # noqa: BLE001 - an entry that is no message record (a NOOP)
                    text = ""
                entries.append((e["index"], e["term"], text))
        except RocketlabError:
            pass
        logs[n] = entries
    return logs


def surviving_replicas(sys_: System) -> tuple[str, ...]:
    """The brokers whose stores survive a run (a classic pair's master is lost for good at the end)."""
    return ("n1",) if sys_.name in ("sync-pair", "async-pair") else sys_.brokers


def commit_log_end(out: Path, node: str) -> int | None:
    """Where ``node``'s CommitLog ends (the end of its last message; None without one)."""
    end = None
    try:
        for rec in iter_commit_log(str(_store_dir(out, node) / "commitlog")):
            if rec["type"] == "message":
                end = rec["phy_offset"] + rec["total_size"]
    except RocketlabError:
        pass  # a torn tail: it ends where the good records do
    return end


def surviving_bodies(out: Path, sys_: System, logs: dict[str, list[tuple[int, int, str]]] | None = None
                     ) -> dict[str, set[str]]:
    """Per surviving replica, the bodies of the messages its store holds (see the module docstring)."""
    if sys_.name == "dledger":
        logs = logs if logs is not None else member_logs(out, sys_)
        return {n: {text for _, _, text in log if text} for n, log in logs.items()}
    found: dict[str, set[str]] = {}
    for n in surviving_replicas(sys_):
        bodies: set[str] = set()
        try:
            for rec in iter_commit_log(str(_store_dir(out, n) / "commitlog")):
                if rec["type"] == "message":
                    bodies.add(message_id(rec["body"], rec.get("properties")))
        except RocketlabError:
            pass  # a torn tail: what came before it counts
        found[n] = bodies
    return found
