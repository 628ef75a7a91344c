"""The trace event contract (docs/trace.md) as data: envelope, kinds and their fields with types.

Every event is one flat JSON object: the envelope ``t`` (ms), ``seq`` (total order), ``node`` (id or
None), ``kind``, then the kind's own fields. Readers (pandas, Spark, plots, graders, checkers) rely on
these names; renaming or removing one is a breaking change. A kind may carry extra fields beyond the
required ones; :data:`FIELD_TYPES` gives each known field one type across all kinds so that a columnar
reader (Spark, Parquet) can use a single explicit schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rocketlab.errors import RocketlabError
from rocketlab.trace.faults import fault_actions

ENVELOPE: dict[str, str] = {"t": "long", "seq": "long", "node": "string", "kind": "string"}

# One type per field name, whichever kind uses it: "long", "double", "string", "bool", "strings".
FIELD_TYPES: dict[str, str] = {
    # elections and replication
    "term": "long", "prev": "long", "role": "string", "leader": "string", "candidate": "string",
    "voter": "string", "ledger_end_index": "long", "ledger_end_term": "long", "result": "string",
    "accepted": "long", "not_ready": "long", "bigger_ledger": "long", "valid": "long", "all": "long",
    "to": "string", "code": "string", "index": "long", "pos": "long", "size": "long", "peer": "string",
    "state": "string", "count": "long", "ledger_begin_index": "long",
    "rule": "long",  # vote_round: the ParseResult table rule that decided (DLedger's elector only)
    # store and HA
    "topic": "string", "queue_id": "long", "queue_offset": "long", "phy_offset": "long",
    "status": "string", "latency_ms": "double", "slave": "string", "offset": "long",
    # faults and checks
    "action": "string", "targets": "strings", "invariant": "string", "detail": "string",
    # the simulated / real network
    "src": "string", "dst": "string", "msg": "string", "channel": "string", "msg_id": "long",
    "reason": "string", "bytes": "long",
    # the name server and registration with it
    "cluster": "string", "broker_name": "string", "broker_id": "long", "broker_addr": "string",
    "first": "bool", "namesrv": "string", "master_addr": "string", "ha_server_addr": "string",
    # smoke ping/pong
    "ping_seq": "long", "rtt_ms": "double", "ok": "bool",
    # the send path: retries, dead letters, delayed delivery; a message's two ids (msg_id is the network's)
    "group": "string", "uniq_key": "string", "offset_msg_id": "string", "reconsume_times": "long",
    "delay_level": "long",
    # a broker's clients: consumer groups and long polling
    "client": "string", "event": "string", "members": "long", "timeout_ms": "long",
    "held_ms": "long",
    # the kit's client (rocketlab.client)
    "attempt": "long",
}

# kind -> required fields (docs/trace.md's table plus the network and smoke kinds).
KINDS: dict[str, tuple[str, ...]] = {
    "role": ("term", "role", "leader"),
    "term": ("term", "prev"),
    "vote_request": ("term", "candidate", "voter", "ledger_end_index", "ledger_end_term"),
    "vote_response": ("term", "candidate", "voter", "result"),
    "vote_round": ("term", "result", "accepted", "not_ready", "bigger_ledger", "valid", "all"),
    "heartbeat": ("term", "leader", "to", "code"),
    "append": ("index", "term", "pos", "size"),
    "commit": ("index", "pos"),
    "truncate": ("index",),
    "push_state": ("peer", "state", "index"),
    "clean_space": ("count", "ledger_begin_index"),
    "put": ("topic", "queue_id", "queue_offset", "phy_offset", "size", "status", "latency_ms"),
    "ha_report": ("slave", "offset"),
    "ha_transfer": ("slave", "offset", "size"),
    "ha_close": ("slave", "reason"),
    "fault": ("action", "targets"),
    "violation": ("invariant", "detail"),
    "config_error": ("detail",),
    # network: one event when a message enters the network, one when it is delivered or lost
    "msg_send": ("src", "dst", "msg", "channel", "msg_id", "bytes"),
    "msg_recv": ("src", "dst", "msg", "channel", "msg_id", "bytes"),
    "msg_drop": ("src", "dst", "msg", "channel", "msg_id", "reason"),
    # byte streams
    "stream_open": ("src", "dst", "channel"),
    "stream_close": ("src", "dst", "reason"),
    # a process died: a node that had a connection with it (src) is told (dst)
    "peer_closed": ("src", "dst", "reason"),
    # the name server: a broker registered (first: new under its id), removed (reason: unregister, channel
    # destroyed), expired (120 s without a registration); a route asked for (ok: found)
    "broker_registered": ("cluster", "broker_name", "broker_id", "broker_addr", "first"),
    "broker_unregistered": ("broker_addr", "reason"),
    "broker_expired": ("broker_addr",),
    "route_query": ("topic", "ok"),
    # a broker's registration with one name server answered (ok) or not; a slave's master_addr/ha_server_addr
    "namesrv_register": ("namesrv", "broker_id", "ok"),
    # smoke scenario
    "ping": ("to", "ping_seq", "ok", "rtt_ms"),
    # the send path (broker.send_path): a failed message sent back for retry, moved to its group's DLQ,
    # stored to wait for its delay level, delivered to its real topic
    "send_back": ("group", "topic", "uniq_key", "offset_msg_id", "reconsume_times", "delay_level"),
    "dlq": ("group", "topic", "uniq_key", "offset_msg_id", "reconsume_times"),
    "schedule": ("topic", "delay_level", "uniq_key"),
    "schedule_deliver": ("topic", "delay_level", "uniq_key", "offset_msg_id", "status"),
    # a broker's clients: a consumer group gains or loses a member (event: register, unregister,
    # channel_closed, expired), the broker tells a member so (NOTIFY_CONSUMER_IDS_CHANGED); a pull with
    # nothing new is held (long polling) and woken by a message or its timeout (status: the answer's)
    "consumer_group": ("group", "event", "client", "members"),
    "consumer_ids_notified": ("group", "client"),
    "pull_held": ("topic", "queue_id", "offset", "client", "timeout_ms"),
    "pull_woken": ("topic", "queue_id", "offset", "client", "status", "held_ms"),
    # the kit's client (node: its client id): a route read from a name server (targets: its brokers' masters),
    # one send attempt and its answer (status SEND_OK..., or why it failed), a group member's queues after a
    # rebalance (targets: broker:queue), one pull and its answer (latency_ms: how long the broker held it),
    # one message handed to the application (status CONSUME_SUCCESS, RECONSUME_LATER, POLLED), one sent back
    "client_route": ("topic", "ok", "targets"),
    "client_send": ("topic", "broker_name", "queue_id", "status", "uniq_key", "attempt"),
    "client_rebalance": ("group", "topic", "targets"),
    "client_pull": ("topic", "broker_name", "queue_id", "offset", "status", "latency_ms"),
    "client_consume": ("group", "topic", "queue_id", "queue_offset", "uniq_key", "status"),
    "client_send_back": ("group", "uniq_key", "ok"),
    # what the application is thrown when every attempt failed; a consumer's offset written to its broker
    # (reason: persist, the oneway UPDATE_CONSUMER_OFFSET every 5 s or on losing the queue; pull, a pull's
    # commitOffset)
    "client_send_failed": ("topic", "uniq_key", "reason"),
    "client_commit": ("group", "topic", "broker_name", "queue_id", "offset", "reason"),
}

# How the cluster viewer files each kind (rocketlab.viz.cluster_view; its films carry :func:`view_vocabulary`):
# the filter group an event of the kind is listed under. A kind without a row is in "other".
VIEW_GROUPS: dict[str, bool] = {  # group -> listed (and stepped through) by default
    "faults": True, "violations": True, "roles": True, "elections": True, "heartbeats": False,
    "replication": True, "commits": True, "client": True, "ha": True, "lost messages": True,
    "routes": True, "retries": True, "network": False, "other": False,
}
VIEW_KINDS: dict[str, str] = {
    "fault": "faults", "violation": "violations", "config_error": "violations", "role": "roles",
    "term": "elections", "vote_request": "elections", "vote_response": "elections", "vote_round": "elections",
    "heartbeat": "heartbeats", "append": "replication", "truncate": "replication", "push_state": "replication",
    "commit": "commits", "put": "client", "ha_report": "ha", "ha_transfer": "ha", "ha_close": "ha",
    "msg_drop": "lost messages", "msg_send": "network", "msg_recv": "network", "stream_open": "network",
    "stream_close": "network", "peer_closed": "network", "clean_space": "other", "ping": "other",
    "client_route": "client", "client_send": "client", "client_rebalance": "client", "client_pull": "client",
    "client_consume": "client", "client_send_back": "client", "client_send_failed": "client",
    "client_commit": "client",
    "broker_registered": "routes", "broker_unregistered": "routes", "broker_expired": "routes",
    "route_query": "routes", "namesrv_register": "routes", "consumer_group": "client",
    "consumer_ids_notified": "client", "pull_held": "client", "pull_woken": "client", "send_back": "retries",
    "dlq": "retries", "schedule": "retries", "schedule_deliver": "retries",
}
# The viewer's "next / previous ..." stops: stop -> (kind, field values an event of that kind must have).
VIEW_STOPS: dict[str, tuple[str, dict[str, tuple[str, ...]]]] = {
    "fault": ("fault", {}),
    "vote round": ("vote_round", {}),
    "leader change": ("role", {"role": ("LEADER", "MASTER")}),
    "commit": ("commit", {}),
    "violation": ("violation", {}),
}


def view_vocabulary() -> dict[str, Any]:
    """The viewer's filter groups and navigation stops as JSON-ready data (a film's ``view``)."""
    return {"groups": [{"name": g, "shown": shown} for g, shown in VIEW_GROUPS.items()],
            "kinds": {kind: VIEW_KINDS.get(kind, "other") for kind in KINDS},
            "stops": [{"name": name, "kind": kind, "when": {f: list(v) for f, v in when.items()}}
                      for name, (kind, when) in VIEW_STOPS.items()]}


FAULT_ACTIONS = fault_actions()
"""The ``action`` of a ``fault`` event: one per row of :data:`rocketlab.trace.faults.FAULT_KINDS`."""

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "long": (int,), "double": (int, float), "string": (str,), "bool": (bool,), "strings": (list, tuple),
}


class TraceSchemaError(RocketlabError):
    """An event does not follow the trace contract."""


def validate_event(event: Mapping[str, Any]) -> None:
    """Raise :class:`TraceSchemaError` naming the problem if ``event`` breaks the contract."""
    for name in ("t", "seq", "kind"):
        if name not in event:
            raise TraceSchemaError(f"event lacks envelope field {name!r}: {dict(event)!r}")
    if "node" not in event:
        raise TraceSchemaError(f"event lacks envelope field 'node': {dict(event)!r}")
    kind = event["kind"]
    if kind not in KINDS:
        raise TraceSchemaError(f"unknown event kind {kind!r}")
    for name in KINDS[kind]:
        if name not in event:
            raise TraceSchemaError(f"{kind} event lacks field {name!r}: {dict(event)!r}")
    for name, value in event.items():
        _check_type(kind, name, value)


def _check_type(kind: str, name: str, value: Any) -> None:
    if value is None:
        return
    type_name = ENVELOPE.get(name) or FIELD_TYPES.get(name)
    if type_name is None:
        raise TraceSchemaError(f"{kind} event has field {name!r} that the schema does not know")
    ok = isinstance(value, _PY_TYPES[type_name])
    if type_name in ("long", "double") and isinstance(value, bool):
        ok = False
    if type_name == "strings" and ok:
        ok = all(isinstance(v, str) for v in value)
    if not ok:
        raise TraceSchemaError(f"{kind}.{name} should be {type_name}, got {value!r}")


def all_fields() -> dict[str, str]:
    """Envelope plus every known field, in a stable order: the columns of a flat trace table."""
    return {**ENVELOPE, **FIELD_TYPES}
