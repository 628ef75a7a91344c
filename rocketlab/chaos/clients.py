"""The campaign's applications: producers and the read-back consumer are RocketMQ clients going through the
name server with the 4.9.5 client protocol (the kit's :mod:`rocketlab.client`), so the history is what an
application saw.

* :class:`ClientProducer` - process ``p``: a ``DefaultMQProducer`` (:class:`rocketlab.client.Producer`,
  Java's defaults: ``sendMsgTimeout`` 3 s, ``retryTimesWhenSendFailed`` 2, ``sendLatencyFaultEnable`` off)
  sending bodies ``p<process>-<seq>`` to topic :data:`TOPIC`, one synchronous send at a time, on the queue
  ``MQFaultStrategy`` picks (round robin from ``start_index`` = the process number). It records an ``invoke``
  and one outcome per send (:class:`~rocketlab.chaos.history.History`): ``ok`` (SEND_OK: ``msg_id``,
  ``offset_msg_id``, ``broker_name``, ``queue``, ``queue_offset``, and from the offset msg id the store host's
  node ``broker`` and the CommitLog offset ``phy_offset``), ``unknown`` (a SendResult of FLUSH_DISK_TIMEOUT,
  FLUSH_SLAVE_TIMEOUT or SLAVE_NOT_AVAILABLE: stored, not confirmed; or an exception after an attempt that may
  have stored it) or ``fail`` (an exception where no attempt can have stored anything: every attempt found
  no connection or was refused with a code that stores nothing, :data:`REFUSED_CODES`). Every outcome keeps
  the client's ``attempts`` (what Java's ``SendMessageHook`` sees: each try's broker name, queue and result),
  so a message stored twice by the client's own retry is told from one the system duplicated.
  ``pollNameServerInterval`` is 1 s (Java's default 30 s would leave every producer on a dead master for
  half a minute after a failover: longer than a campaign's steps);
* :func:`read_back` - after the heal, every queue of the topic's route pulled from offset 0 (a
  ``DefaultMQPullConsumer``'s ``pull``: PULL_MESSAGE with the route's addresses, no offset committed) from the
  master the name server names, or from a slave when the route has no master (a classic pair whose master
  is lost for good), until two reads a second apart agree;
* :func:`create_topic` - the topic with :data:`QUEUES` queues (UPDATE_AND_CREATE_TOPIC sent to every broker,
  as ``mqadmin updateTopic -c`` does; a slave or a DLedger follower refuses it, the master takes it), before
  the producers start; a master elected later without it creates it from TBW102 on the first send
  (``autoCreateTopicEnable``, with the producer's 4 queues).

Client trace events (``client_route``, ``client_send``) go to ``events-client-p<N>.jsonl`` beside the nodes',
timed on the nodes' clock (monotonic ms), so the merged trace shows what each application did.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from rocketlab.broker.send_protocol import CreateTopicRequest
from rocketlab.chaos.history import History
from rocketlab.client import Message, MQClientInstance, Producer, ProducerConfig
from rocketlab.client.message import decode_pulled
from rocketlab.client.producer import Call, MQClientException, RemotingError
from rocketlab.client.protocol import BrokerAnswerError, PullMessageRequest, ResponseCode, SendMessageRequest
from rocketlab.client.route import MASTER_ID
from rocketlab.errors import CodecError, RocketlabError
from rocketlab.net.client import NetClient
from rocketlab.store.message_codec import decode_message_id
from rocketlab.trace.recorder import TraceRecorder

TOPIC = "Chaos"
QUEUES = 4
PRODUCER_GROUP = "ChaosProducers"
READER_GROUP = "ChaosReader"
POLL_NAME_SERVER_MS = 1000
NOT_STORE_OK = frozenset({"FLUSH_DISK_TIMEOUT", "FLUSH_SLAVE_TIMEOUT", "SLAVE_NOT_AVAILABLE"})
"""SendResult statuses of a message stored on the master but not confirmed: ``unknown``."""
REFUSED_CODES = frozenset({ResponseCode.SERVICE_NOT_AVAILABLE, ResponseCode.MESSAGE_ILLEGAL,
                           ResponseCode.NO_PERMISSION, ResponseCode.TOPIC_NOT_EXIST})
"""Broker answers that store nothing (a slave's or a fenced master's refusal, an illegal message)."""
FLAG_SUBSCRIPTION = 0x4
CLIENT_ERRORS = (MQClientException, RemotingError, BrokerAnswerError, CodecError)


def message_id(body: bytes | str | None, properties: Mapping[str, str] | None) -> str:
    """The campaign's id of a stored message: ``<run>-<i>`` from the Java producers' user properties
    (:mod:`rocketlab.chaos.java_clients`), else its body, ``p<process>-<seq>`` (the kit's producers)."""
    props = properties or {}
    if "run" in props and "i" in props:
        return f"{props['run']}-{props['i']}"
    if isinstance(body, bytes):
        return body.decode(errors="replace")
    return body or ""


class RecordingInstance(MQClientInstance):
    """``MQClientInstance`` recording each send attempt in :attr:`attempts` (cleared by the application)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.attempts: list[dict[str, Any]] = []

    async def call(self, step: Call) -> Any:
        if not isinstance(step.request, SendMessageRequest):
            return await super().call(step)
        h = step.request.header
        attempt: dict[str, Any] = {"broker_name": h["brokerName"], "queue": h["queueId"], "addr": step.addr}
        self.attempts.append(attempt)
        try:
            answer = await super().call(step)
        except RemotingError as e:
            attempt["result"], attempt["stored"] = e.kind, e.kind != "connect"
            raise
        except BrokerAnswerError as e:
            attempt["result"] = f"code {e.response_code}"
            attempt["stored"] = e.response_code not in REFUSED_CODES
            raise
        except CodecError:
            attempt["result"], attempt["stored"] = "garbage", True
            raise
        attempt["result"], attempt["stored"] = answer.status, True
        return answer


class MonotonicSink:
    """A trace subscriber writing each client event with ``t`` on the nodes' clock (monotonic ms)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def __call__(self, event: dict[str, Any]) -> None:
        self.file.write(json.dumps({**event, "t": int(time.monotonic() * 1000)}, separators=(",", ":")) + "\n")
        self.file.flush()

    def close(self) -> None:
        self.file.close()


def recorder_to(path: Path) -> tuple[TraceRecorder, MonotonicSink]:
    sink = MonotonicSink(path)
    recorder = TraceRecorder(keep=False)
    recorder.subscribe(sink)
    return recorder, sink


class ClientProducer:
    """Process ``process`` of the campaign (see the module docstring); ``node_of`` maps a store host
    ``ip:port`` to its node's name."""

    def __init__(self, process: int, namesrv: str, history: History, node_of: Callable[[str], str | None],
                 trace_path: Path | None = None, interval_ms: int = 20) -> None:
        self.process, self.history, self.node_of = process, history, node_of
        self.interval_s = interval_ms / 1000
        self.recorder, self.sink = recorder_to(trace_path) if trace_path is not None else (None, None)
        self.instance = RecordingInstance(namesrv, instance_name=f"chaos-p{process}",
                                          poll_name_server_interval=POLL_NAME_SERVER_MS, start_index=process,
                                          recorder=self.recorder)
        self.producer = Producer(self.instance, ProducerConfig(producer_group=PRODUCER_GROUP))

    async def run(self, stop: asyncio.Event) -> None:
        await self.producer.start()
        seq = 0
        while not stop.is_set():
            op_id = f"p{self.process}-{seq}"
            seq += 1
            self.history.record(type="invoke", process=self.process, id=op_id)
            self.instance.attempts = []
            try:
                r = await self.producer.send(Message(TOPIC, op_id.encode()))
            except CLIENT_ERRORS as e:
                attempts = self.instance.attempts
                kind = "unknown" if any(a.get("stored", True) for a in attempts) else "fail"
                self.history.record(type=kind, process=self.process, id=op_id, error=str(e).splitlines()[0][:300],
                                    attempts=attempts)
                await asyncio.sleep(0.05)
                continue
            self.history.record(type="ok" if r.send_status == "SEND_OK" else "unknown", process=self.process,
                                id=op_id, status=r.send_status, **self._result(r))
            await asyncio.sleep(self.interval_s)

    def _result(self, r: Any) -> dict[str, Any]:
        out = {"msg_id": r.msg_id, "offset_msg_id": r.offset_msg_id, "broker_name": r.message_queue.broker_name,
               "queue": r.message_queue.queue_id, "queue_offset": r.queue_offset, "attempts": self.instance.attempts}
        try:
            (host, port), phy_offset = decode_message_id(r.offset_msg_id)
        except CodecError:
            return out
        return {**out, "broker": self.node_of(f"{host}:{port}"), "phy_offset": phy_offset}

    async def close(self) -> None:
        await self.producer.shutdown()
        await self.instance.shutdown()
        if self.sink is not None:
            self.sink.close()


async def create_topic(addresses: list[tuple[str, int]], queues: int = QUEUES) -> list[str]:
    """UPDATE_AND_CREATE_TOPIC of :data:`TOPIC` at each broker; the errors (one line each, empty: none)."""
    errors = []
    for address in addresses:
        try:
            client = await NetClient(address, client_id="chaos-admin").connect(2.0)
            try:
                answer = await client.request(CreateTopicRequest(TOPIC, queues, queues), 3.0)
            finally:
                await client.close()
            if answer.code != 0:
                errors.append(f"{address[0]}:{address[1]}: code {answer.code} {answer.remark}")
        except RocketlabError as e:
            errors.append(f"{address[0]}:{address[1]}: {e}")
    return errors


async def _pull_queue(instance: MQClientInstance, addr: str, broker_name: str, queue: int,
                      timeout_ms: int = 3000) -> list[tuple[int, str]]:
    """Every message of one queue at ``addr`` from offset 0 (``DefaultMQPullConsumer.pull`` in a loop)."""
    out: list[tuple[int, str]] = []
    offset = 0
    while True:
        req = PullMessageRequest(READER_GROUP, TOPIC, queue, offset, 32, FLAG_SUBSCRIPTION, 0, 0, "*", 0, "TAG",
                                 broker_name)
        answer = await instance.call(Call(addr, req, timeout_ms))
        if answer.pull_status == "FOUND":
            out += [(m.queue_offset, message_id(m.body, m.properties)) for m in decode_pulled(answer.body)]
        elif answer.pull_status == "OFFSET_ILLEGAL" and offset == 0 and answer.min_offset > 0:
            pass  # the queue starts later (never here: no retention)
        elif answer.pull_status != "NO_MATCHED_MSG":
            return out
        if answer.next_begin_offset <= offset:
            return out
        offset = answer.next_begin_offset


async def read_once(instance: MQClientInstance, need_master: bool) -> tuple[str, dict[int, list[tuple[int, str]]]]:
    """(the address read, queue -> [(queue offset, body)]) through the route the name server gives now;
    ``need_master``: RocketlabError when the route names no master."""
    route = await instance.get_topic_route_info_from_name_server(TOPIC)
    instance.broker_addrs.update(route)
    reads: dict[int, list[tuple[int, str]]] = {}
    addr = ""
    for qd in route.queue_datas:
        found = instance.broker_addrs.find_broker_address_in_subscribe(qd.broker_name, MASTER_ID, need_master)
        if found is None:
            raise RocketlabError(f"the route of {TOPIC} has no {'master' if need_master else 'broker'} for "
                                 f"{qd.broker_name}")
        addr = found[0]
        for q in range(qd.read_queue_nums):
            reads[q] = await _pull_queue(instance, addr, qd.broker_name, q)
    return addr, reads


async def read_back(namesrv: str, need_master: bool, alive: Callable[[str], bool],
                    node_of: Callable[[str], str | None],
                    timeout_s: float = 60.0) -> tuple[str, dict[int, list[tuple[int, str]]]]:
    """Every queue, through the name server's route (see the module docstring): (the node read, the reads).
    RocketlabError naming the last failure when no read succeeded in ``timeout_s`` (no route, no master, a
    broker that answers garbage or nothing)."""
    instance = MQClientInstance(namesrv, instance_name="chaos-reader")
    deadline = time.monotonic() + timeout_s
    last: tuple[str, dict[int, list[tuple[int, str]]]] | None = None
    why = "nothing tried"
    try:
        while time.monotonic() < deadline:
            try:
                addr, reads = await read_once(instance, need_master)
            except (*CLIENT_ERRORS, RocketlabError) as e:
                why = str(e).splitlines()[0]
                await asyncio.sleep(1.0)
                continue
            node = node_of(addr)
            if node is None or not alive(node):
                why = f"the route names {addr}, {'no node of the campaign' if node is None else f'{node}, dead'}"
            elif last is not None and last == (node, reads):
                return node, reads
            else:
                last = (node, reads)
            await asyncio.sleep(1.0)
    finally:
        await instance.shutdown()
    if last is None:
        raise RocketlabError(f"read back of {TOPIC} through the name server {namesrv}: nothing read in "
                             f"{timeout_s:.0f} s ({why})")
    return last
