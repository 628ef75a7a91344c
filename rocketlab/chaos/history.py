"""The campaign's clients: producers that record a history, and the consumer that reads every queue back.

History (``history.jsonl`` of a run, one JSON object per line, ``t`` in ms since the schedule began):
every put is an ``invoke`` then exactly one of ``ok`` (PUT_OK: acknowledged, with the queue offset and
the CommitLog offset the broker answered), ``fail`` (a definite refusal that stored nothing: a slave's or
a fenced broker's SERVICE_NOT_AVAILABLE, an illegal message) or ``unknown`` (no answer in time, a broken
connection, or any other answer: FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE and FLUSH_DISK_TIMEOUT are stored
on the master but not confirmed; on DLedger OS_PAGECACHE_BUSY is a quorum-ack timeout and UNKNOWN_ERROR
a term change, and the entry may still be committed - it may or may not survive). A producer waits
``interval_ms`` (20) after each answered put: about 50 puts a second each, a history a checker and a
timeline can hold. Each producer writes its own queue, bodies
``p<process>-<seq>``, one put at a time, never retrying (a duplicate is the system's own).

A producer sends to the broker it last found accepting puts; a refusal or no answer moves it to the next
broker (a client library would ask the NameServer; the kit has none).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketlab.broker.protocol import PullMessageRequest, SendMessageRequest, role_probe
from rocketlab.errors import RocketlabError
from rocketlab.net.client import NetClient

TOPIC = "Chaos"
REFUSED = frozenset({"SERVICE_NOT_AVAILABLE", "MESSAGE_ILLEGAL", "PROPERTIES_SIZE_EXCEEDED"})
"""Answers that store nothing: a definite ``fail``."""


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


class Producer:
    """Process ``process``: puts into queue ``process`` until ``stop`` is set (see the module docstring)."""

    def __init__(self, process: int, brokers: dict[str, tuple[str, int]], history: History,
                 timeout_s: float = 3.0, interval_ms: int = 20) -> None:
        self.process, self.brokers, self.history, self.timeout_s = process, brokers, history, timeout_s
        self.interval_s = interval_ms / 1000
        self.order = list(brokers)
        self.at = 0
        self.clients: dict[str, NetClient] = {}

    async def _client(self, broker: str) -> NetClient:
        client = self.clients.get(broker)
        if client is None or client.writer is None or client.writer.is_closing() or \
                (client.pump is not None and client.pump.done()):
            client = await NetClient(self.brokers[broker], client_id=f"producer-{self.process}").connect(1.0)
            self.clients[broker] = client
        return client

    def _next(self) -> None:
        self.at = (self.at + 1) % len(self.order)

    async def run(self, stop: asyncio.Event) -> None:
        seq = 0
        while not stop.is_set():
            broker = self.order[self.at]
            op_id = f"p{self.process}-{seq}"
            seq += 1
            self.history.record(type="invoke", process=self.process, id=op_id, queue=self.process, broker=broker)
            try:
                client = await self._client(broker)
                r = await client.request(SendMessageRequest(TOPIC, op_id.encode(), self.process), self.timeout_s)
            except RocketlabError as e:
                stale = self.clients.pop(broker, None)
                if stale is not None:
                    await stale.close()
                self.history.record(type="unknown", process=self.process, id=op_id, broker=broker, error=str(e)[:200])
                self._next()
                await asyncio.sleep(0.05)
                continue
            if r.status == "PUT_OK":
                self.history.record(type="ok", process=self.process, id=op_id, broker=broker,
                                    queue_offset=r.queue_offset, phy_offset=r.phy_offset)
            elif r.status in REFUSED:
                self.history.record(type="fail", process=self.process, id=op_id, broker=broker, status=r.status)
                self._next()
                await asyncio.sleep(0.05)
            else:
                self.history.record(type="unknown", process=self.process, id=op_id, broker=broker, status=r.status,
                                    queue_offset=r.queue_offset, phy_offset=r.phy_offset)
            await asyncio.sleep(self.interval_s)

    async def close(self) -> None:
        for client in self.clients.values():
            await client.close()


async def read_queue(address: tuple[str, int], queue: int, timeout_s: float = 3.0) -> tuple[int, list[tuple[int, str]]]:
    """Every message of ``queue`` on the broker at ``address``: (0 if it answers the role probe as a master
    (:func:`~rocketlab.broker.protocol.role_probe`), else 1; [(queue offset, body)])."""
    client = await NetClient(address, client_id="consumer").connect(2.0)
    out: list[tuple[int, str]] = []
    broker_id = -1
    try:
        offset = 0
        while True:
            r = await client.request(PullMessageRequest(TOPIC, queue, offset, 32), timeout_s)
            if r.status != "FOUND":
                probe = await client.request(role_probe(TOPIC, queue), timeout_s)
                broker_id = 0 if probe.answered_as_master else 1
                if offset == 0 and r.min_offset > 0:  # the queue starts later (never here: no retention)
                    offset = r.min_offset
                    continue
                return broker_id, out
            messages = r.messages
            out += [(m["queue_offset"], m["body"].decode(errors="replace")) for m in messages]
            offset = r.next_begin_offset
    finally:
        await client.close()
