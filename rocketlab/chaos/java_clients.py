"""The campaign's producers as the unchanged Java 4.9.5 client (``rocketlab chaos run --client java``).

One :class:`~rocketlab.oracle.client_app.ClientApp` JVM (the kit's driver of ``DefaultMQProducer``,
:mod:`rocketlab.oracle.client_jvm`) runs one background producing run per campaign process, ``p<N>``,
through the campaign's name server: synchronous sends to :data:`~rocketlab.chaos.clients.TOPIC` every
``interval_ms``, ``pollNameServerInterval`` 1 s (as the kit's producers), ``sendMsgTimeout`` 3 s. Its
``send`` lines become the history (:mod:`rocketlab.chaos.history`): the run and index of a message
(its user properties ``run`` and ``i``) are its id ``p<N>-<i>``, as the kit's producers' bodies are, so the
checker, the read-back (:func:`rocketlab.chaos.clients.message_id`) and the stores
(:mod:`rocketlab.chaos.stores`) name it the same way.

Difference from the kit's producers: ``retryTimesWhenSendFailed`` is 0. A Java application does not see
the attempts of a send (the driver registers no ``SendMessageHook``), so with retries a message stored
twice by a retry could not be told from one the system duplicated; with one attempt per send every
duplicate is the system's, and a failed send is ``fail`` only when its one attempt was refused
(``CODE: 13/14/16/17``), never connected, or found no route, else ``unknown``. The queue a send starts
from is Java's own (``ThreadLocalIndex`` starts at random): the history of a seed replays the faults,
not the queue choices.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rocketlab.chaos.clients import PRODUCER_GROUP, TOPIC
from rocketlab.chaos.history import History
from rocketlab.errors import CodecError
from rocketlab.oracle.client_app import ClientApp
from rocketlab.oracle.client_jvm import BrokerJava, find_broker_java
from rocketlab.oracle.jvm import OracleUnavailable
from rocketlab.store.message_codec import decode_message_id

HEAP_MB = 256
_REFUSED = re.compile(r"CODE: (13|14|16|17)\b|No route info|RemotingConnectException|connect to .* failed")


def java_available() -> tuple[bool, str]:
    """(True, "") where the Java 4.9.5 client can run here, else (False, why not)."""
    java, why = find_broker_java()
    return java is not None, why


class JavaProducers:
    """The campaign's producers in one ClientApp JVM (see the module docstring)."""

    def __init__(self, workdir: Path, namesrv: str, producers: int, history: History,
                 node_of: Callable[[str], str | None], interval_ms: int = 20) -> None:
        java, why = find_broker_java()
        if java is None:
            raise OracleUnavailable(f"--client java: {why}")
        self.java: BrokerJava = java
        self.namesrv, self.producers, self.history, self.node_of = namesrv, producers, history, node_of
        self.interval_ms = interval_ms
        self.app = ClientApp(java, workdir, name="chaos-producers", heap_mb=HEAP_MB)
        self.seen = 0

    def start(self) -> None:
        for p in range(self.producers):
            self.app.request("produce", namesrv=self.namesrv, topic=TOPIC, count=1 << 30, run=f"p{p}",
                             group=PRODUCER_GROUP, interval_ms=self.interval_ms, background=True, retries=0,
                             poll_namesrv_ms=1000, send_timeout_ms=3000)

    def collect(self) -> None:
        """Every ``send`` line not yet in the history, as an ``invoke`` and its outcome."""
        sends = self.app.events("send")
        for e in sends[self.seen:]:
            self.record(e)
        self.seen = len(sends)

    def record(self, e: dict[str, Any]) -> None:
        record_send(self.history, e, self.node_of)

    def stop(self) -> None:
        for p in range(self.producers):
            self.app.request("stop_produce", run=f"p{p}")
        self.collect()

    def close(self) -> None:
        self.app.close()


def record_send(history: History, e: dict[str, Any], node_of: Callable[[str], str | None]) -> None:
    """One ``send`` line of the Java driver as an ``invoke`` and its outcome (see the module docstring)."""
    process = int(str(e["run"])[1:])
    op_id = f"{e['run']}-{e['i']}"
    history.record(type="invoke", process=process, id=op_id)
    if e.get("status") is None:
        error = str(e.get("error") or "")
        refused = bool(_REFUSED.search(error))
        history.record(type="fail" if refused else "unknown", process=process, id=op_id,
                       error=error.splitlines()[0][:300] if error else "",
                       attempts=[{"result": "refused" if refused else "error", "stored": not refused}])
        return
    fields: dict[str, Any] = {"msg_id": e.get("uniq"), "offset_msg_id": e.get("offset_msg_id"),
                              "broker_name": e.get("broker"), "queue": e.get("queue"),
                              "queue_offset": e.get("queue_offset"),
                              "attempts": [{"result": e["status"], "stored": True}]}
    try:
        (host, port), phy_offset = decode_message_id(str(e.get("offset_msg_id") or ""))
        fields.update(broker=node_of(f"{host}:{port}"), phy_offset=phy_offset)
    except CodecError:
        pass
    history.record(type="ok" if e["status"] == "SEND_OK" else "unknown", process=process, id=op_id,
                   status=e["status"], **fields)
