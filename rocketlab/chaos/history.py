"""The campaign's history: what its applications saw, one JSON object per line (``history.jsonl`` of a run,
``t`` in ms since the schedule began).

Every send is an ``invoke`` then exactly one of ``ok`` (the producer's SendResult was SEND_OK: acknowledged),
``fail`` (the send raised and no attempt of it can have stored anything: refused, or never connected) or
``unknown`` (a SendResult of a message stored but not confirmed - FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE,
FLUSH_DISK_TIMEOUT - or an exception after an attempt that may have stored it: no answer in time, a broken
connection, SYSTEM_ERROR - on DLedger a quorum-ack timeout or a term change, whose entry may still be
committed). Each outcome carries the client's ``attempts`` and, for a SendResult, ``msg_id``, ``offset_msg_id``,
``broker_name``, ``queue``, ``queue_offset``, ``broker`` (the node of the store host) and ``phy_offset``
(:mod:`rocketlab.chaos.clients` writes them). What the consumer read back is ``reads.json``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class History:
    """Appends ops to ``path`` as they happen and keeps them."""

    path: Path
    t0: float = field(default_factory=time.monotonic)
    ops: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._file = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def record(self, **op: Any) -> dict[str, Any]:
        op = {"t": int((time.monotonic() - self.t0) * 1000), **op}
        self.ops.append(op)
        self._file.write(json.dumps(op) + "\n")
        self._file.flush()
        return op

    def close(self) -> None:
        self._file.close()


def load_history(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
