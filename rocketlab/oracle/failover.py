"""Failover as an application sees it: the unchanged 4.9.5 producer and a push consumer across the SIGKILL of a
broker group's master, finding the new master through the name server.

:func:`measure_failover` starts a :class:`~rocketlab.oracle.broker_group.Backend` (``dledger``: three brokers
on DLedger, Java's or the kit's; ``controller``: the kit's controller mode, which 4.9.5 has no twin of), a
producer sending one message every ``interval_ms`` and a push consumer, kills the broker that stored the last
acknowledged message, and keeps sending until the new master has acknowledged for ``after_s``. It reports:
sends failed (an error or a status other than SEND_OK), lost (acknowledged, never consumed: must be 0),
duplicated (consumed more than once), the time from the kill to the first SEND_OK stored by another broker,
and the consumer's catch-up (kill to the first post-failover message consumed; end of sending to everything
acknowledged consumed). Two more push consumers, in groups of their own, subscribe by tag (``TagA`` and
``TagB || TagC``) across the same failover: ``tag_wrong`` counts messages one received that its expression
excludes, ``tag_lost`` acknowledged messages of its tags it never received (both must be 0). Times are the
client JVM's clock (its ``t_us``), the kill read on it right after.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rocketlab.oracle.broker_group import Backend
from rocketlab.oracle.client_app import ClientApp, acknowledged
from rocketlab.oracle.client_jvm import BrokerJava

TOPIC = "Failover"
TAG_SUBSCRIBERS = {"fo_tag_a": ("TagA", {"TagA"}), "fo_tag_bc": ("TagB || TagC", {"TagB", "TagC"})}
"""Tag-filtered push consumers of the failover run: name -> (subscription expression, the tags it wants)."""


@dataclass
class FailoverResult:
    backend: str
    layout: str
    sent: int
    send_ok: int
    failed: int
    lost: int
    duplicated: int
    killed: str
    new_master: str
    kill_to_first_send_ok_s: float
    kill_to_first_consumed_s: float
    drain_s: float
    first_errors: list[str]
    tag_wrong: int = 0
    tag_lost: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _master_of(backend: Backend, store_host: str) -> str:
    port = int(store_host.rsplit(":", 1)[1])
    return next(s.name for s in backend.brokers() if s.port == port)


def _wait(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"failover: {what} not within {timeout_s} s")
        time.sleep(0.1)


def measure_failover(java: BrokerJava, workdir: Path, backend_name: str = "java", layout: str = "dledger", *,
                     interval_ms: int = 20, before_s: float = 3.0, after_s: float = 2.0,
                     timeout_s: float = 90.0, short_dledger_timers: bool = True) -> FailoverResult:
    """One failover of ``layout`` on ``backend_name`` (see the module docstring); ``short_dledger_timers``
    False gives the kit's DLedger brokers DLedger's default timers, the Java group's."""
    backend = Backend(backend_name, Path(workdir), java, layout, short_dledger_timers=short_dledger_timers)
    backend.start()
    app = ClientApp(java, Path(workdir), name="failover-client")
    try:
        ns = backend.namesrv_addr
        app.create_topic(ns, TOPIC, timeout_s=timeout_s)  # once a master has registered
        app.consume("fo", "push_first", ns, TOPIC, group="g_failover")
        for name, (expr, _) in TAG_SUBSCRIBERS.items():
            app.consume(name, "push_first", ns, TOPIC, group=f"g_{name}", expr=expr)
        app.request("produce", namesrv=ns, topic=TOPIC, count=10**7, run="fo", interval_ms=interval_ms,
                    background=True, send_timeout_ms=1000, retries=2)
        before = int(before_s * 1000 / interval_ms)
        _wait(lambda: len(acknowledged(app.events("send", run="fo"))) >= before, timeout_s, "the first sends")
        victim = _master_of(backend, acknowledged(app.events("send", run="fo"))[-1]["store_host"])
        backend.servers[victim].kill()
        t_kill = app.request("now")["t_us"]

        def after_failover() -> list[dict[str, Any]]:
            return [s for s in acknowledged(app.events("send", run="fo"))
                    if s["t_us"] > t_kill and _master_of(backend, s["store_host"]) != victim]

        _wait(lambda: bool(after_failover()), timeout_s, "a SEND_OK from a new master")
        first_ok = after_failover()[0]
        _wait(lambda: after_failover()[-1]["t_us"] - first_ok["t_us"] >= after_s * 1e6, timeout_s, "sends after")
        summary = app.request("stop_produce", run="fo")
        t_end = app.request("now")["t_us"]
        sends = app.wait_for(summary["sent"], "send", timeout_s=10, run="fo")
        acked = {s["uniq"] for s in acknowledged(sends)}
        _wait(lambda: acked <= {r["uniq"] for r in app.events("recv", consumer="fo")}, timeout_s / 2,
              "the consumer receiving every acknowledged message")
        wanted = {name: {s["uniq"] for s in acknowledged(sends) if s["tags"] in tags}
                  for name, (_, tags) in TAG_SUBSCRIBERS.items()}
        _wait(lambda: all(w <= {r["uniq"] for r in app.events("recv", consumer=n)} for n, w in wanted.items()),
              timeout_s / 2, "the tag subscribers receiving every acknowledged message of their tags")
        time.sleep(1.0)
        recvs = app.events("recv", consumer="fo")
        tagged = {n: app.events("recv", consumer=n) for n in TAG_SUBSCRIBERS}
        counts = Counter(r["uniq"] for r in recvs)
        post = [r["t_us"] for r in recvs if r["uniq"] in {s["uniq"] for s in after_failover()}]
        drained = max(r["t_us"] for r in recvs if r["uniq"] in acked)
        errors = [s.get("error") or s.get("status", "") for s in sends if s.get("status") != "SEND_OK"]
        return FailoverResult(
            backend=backend_name, layout=layout, sent=len(sends), send_ok=len(acked), failed=len(errors),
            lost=len(acked - set(counts)), duplicated=sum(n - 1 for n in counts.values() if n > 1), killed=victim,
            new_master=_master_of(backend, first_ok["store_host"]),
            kill_to_first_send_ok_s=round((first_ok["t_us"] - t_kill) / 1e6, 3),
            kill_to_first_consumed_s=round((min(post) - t_kill) / 1e6, 3) if post else -1.0,
            drain_s=round(max(0, drained - t_end) / 1e6, 3), first_errors=sorted(set(errors))[:3],
            tag_wrong=sum(r["tags"] not in TAG_SUBSCRIBERS[n][1] for n, got in tagged.items() for r in got),
            tag_lost=sum(len(wanted[n] - {r["uniq"] for r in got}) for n, got in tagged.items()))
    finally:
        app.close()
        backend.kill()
