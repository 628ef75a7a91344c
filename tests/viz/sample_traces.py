"""Hand-written traces with the exact field names of docs/trace.md: a DLedger failover story and a SYNC_MASTER
losing its slave. Every event passes ``validate_event``, so these are what the real cores must emit."""

from __future__ import annotations

from typing import Any

from rocketlab.trace.schema import validate_event


class TraceBuilder:
    """Appends envelope-stamped, schema-checked events in time order."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def emit(self, t: int, node: str | None, kind: str, **fields: Any) -> TraceBuilder:
        event = {"t": t, "seq": len(self.events), "node": node, "kind": kind, **fields}
        validate_event(event)
        self.events.append(event)
        return self

    def done(self) -> list[dict[str, Any]]:
        """The events in time order with ``seq`` renumbered, as a recorder would have stamped them."""
        ordered = sorted(self.events, key=lambda e: (e["t"], e["seq"]))
        return [{**e, "seq": i} for i, e in enumerate(ordered)]

    def fault(self, t: int, action: str, *targets: str) -> TraceBuilder:
        return self.emit(t, None, "fault", action=action, targets=list(targets))

    def role(self, t: int, node: str, role: str, term: int, leader: str | None) -> TraceBuilder:
        return self.emit(t, node, "role", term=term, role=role, leader=leader)

    def vote(self, t: int, term: int, candidate: str, answers: dict[str, str], end: tuple[int, int] = (-1, -1)):
        """A candidate asks everyone (itself first); ``answers`` maps voter -> VoteResponse result name."""
        for voter in answers:
            self.emit(t, candidate, "vote_request", term=term, candidate=candidate, voter=voter,
                      ledger_end_index=end[0], ledger_end_term=end[1])
        for i, (voter, result) in enumerate(answers.items()):
            self.emit(t + 2 * i, candidate, "vote_response", term=term, candidate=candidate, voter=voter,
                      result=result)
        return self

    def vote_round(self, t: int, node: str, term: int, result: str, accepted: int, valid: int, all_: int):
        return self.emit(t, node, "vote_round", term=term, result=result, accepted=accepted, not_ready=0,
                         bigger_ledger=0, valid=valid, all=all_)

    def append(self, t: int, nodes: list[str], index: int, term: int, size: int = 100) -> TraceBuilder:
        for node in nodes:
            self.emit(t, node, "append", index=index, term=term, pos=index * size, size=size)
        return self

    def commit(self, t: int, nodes: list[str], index: int, size: int = 100) -> TraceBuilder:
        for node in nodes:
            self.emit(t, node, "commit", index=index, pos=(index + 1) * size)
        return self

    def message(self, t: int, src: str, dst: str, msg: str, msg_id: int, lost: str | None = None):
        self.emit(t, src, "msg_send", src=src, dst=dst, msg=msg, channel="request", msg_id=msg_id, bytes=64)
        if lost:
            return self.emit(t + 1, dst, "msg_drop", src=src, dst=dst, msg=msg, channel="request",
                             msg_id=msg_id, reason=lost)
        return self.emit(t + 1, dst, "msg_recv", src=src, dst=dst, msg=msg, channel="request",
                         msg_id=msg_id, bytes=64)


def dledger_failover() -> list[dict[str, Any]]:
    """n1 leads term 1 and commits 0..3; n1 crashes with index 4 uncommitted; term 2 is a split vote
    between n0 and n2; n2 wins term 3; n1 restarts, truncates index 4 and follows; then n2 is cut off."""
    b = TraceBuilder()
    _term_1_n1_leads(b)
    _term_2_split_then_term_3_n2_leads(b)
    _n1_rejoins_then_n2_is_cut_off(b)
    return b.done()


def _term_1_n1_leads(b: TraceBuilder) -> None:
    for node in ("n0", "n1", "n2"):
        b.role(0, node, "CANDIDATE", 0, None)
    b.emit(150, "n1", "term", term=1, prev=0)
    b.vote(150, 1, "n1", {"n1": "ACCEPT", "n0": "ACCEPT", "n2": "ACCEPT"}, end=(-1, -1))
    b.vote_round(160, "n1", 1, "PASSED", accepted=3, valid=3, all_=3)
    b.role(160, "n1", "LEADER", 1, "n1").role(162, "n0", "FOLLOWER", 1, "n1").role(162, "n2", "FOLLOWER", 1, "n1")
    for i in range(4):
        b.append(200 + 100 * i, ["n1", "n0", "n2"], i, 1).commit(205 + 100 * i, ["n1", "n0", "n2"], i)
    b.append(650, ["n1"], 4, 1)
    for k, t in enumerate(range(170, 1000, 50)):
        for j, peer in enumerate(("n0", "n2")):
            b.message(t, "n1", peer, "HeartBeatRequest", 2 * k + j + 1)
            b.emit(t + 2, "n1", "heartbeat", term=1, leader="n1", to=peer, code="SUCCESS")


def _term_2_split_then_term_3_n2_leads(b: TraceBuilder) -> None:
    b.fault(1000, "crash", "n1")
    b.emit(1001, "n0", "heartbeat", term=1, leader="n1", to="n1", code=None)  # a lost one: code is null
    b.role(1300, "n0", "CANDIDATE", 1, None).role(1310, "n2", "CANDIDATE", 1, None)
    b.emit(1320, "n0", "term", term=2, prev=1).emit(1321, "n2", "term", term=2, prev=1)
    b.vote(1322, 2, "n0", {"n0": "ACCEPT", "n1": "UNKNOWN", "n2": "REJECT_ALREADY_VOTED"}, end=(3, 1))
    b.vote(1323, 2, "n2", {"n2": "ACCEPT", "n0": "REJECT_ALREADY_VOTED", "n1": "UNKNOWN"}, end=(3, 1))
    b.vote_round(1330, "n0", 2, "WAIT_TO_VOTE_NEXT", accepted=1, valid=2, all_=3)
    b.vote_round(1331, "n2", 2, "WAIT_TO_VOTE_NEXT", accepted=1, valid=2, all_=3)
    b.emit(1500, "n2", "term", term=3, prev=2)
    b.vote(1500, 3, "n2", {"n2": "ACCEPT", "n0": "ACCEPT", "n1": "UNKNOWN"}, end=(3, 1))
    b.vote_round(1506, "n2", 3, "PASSED", accepted=2, valid=2, all_=3)
    b.role(1506, "n2", "LEADER", 3, "n2").role(1508, "n0", "FOLLOWER", 3, "n2")
    for i in range(4, 7):
        b.append(1600 + 100 * i, ["n2", "n0"], i, 3).commit(1605 + 100 * i, ["n2", "n0"], i)


def _n1_rejoins_then_n2_is_cut_off(b: TraceBuilder) -> None:
    b.fault(2500, "restart", "n1")
    b.role(2500, "n1", "CANDIDATE", 1, None).role(2520, "n1", "FOLLOWER", 3, "n2")
    b.emit(2540, "n1", "truncate", index=4)
    for i in range(4, 7):
        b.append(2541, ["n1"], i, 3)
    b.commit(2550, ["n1"], 6)
    b.fault(3000, "partition", "n2", "n0,n1")
    for k in range(3):
        b.message(3050 + 100 * k, "n2", "n0", "PushEntryRequest", 100 + k, lost="partition")
    b.append(3100, ["n2"], 7, 3)
    b.fault(3500, "heal")
    b.append(3600, ["n0", "n1"], 7, 3).commit(3605, ["n2", "n0", "n1"], 7)
    b.emit(3800, "n2", "heartbeat", term=3, leader="n2", to="n0", code="SUCCESS")


def ha_sync_master() -> list[dict[str, Any]]:
    """A SYNC_MASTER m0 with slave s1: puts acknowledged by the slave, then s1 crashes and puts wait
    for the slave until FLUSH_SLAVE_TIMEOUT / SLAVE_NOT_AVAILABLE; a put with no latency recorded."""
    b = TraceBuilder()
    b.role(0, "m0", "MASTER", 0, "m0").role(0, "s1", "SLAVE", 0, "m0")
    offset = 0
    for i in range(12):
        t = 100 + 50 * i
        b.emit(t, "m0", "ha_transfer", slave="s1", offset=offset, size=200)
        b.emit(t + 2, "m0", "ha_report", slave="s1", offset=offset + 200)
        b.emit(t + 2, "m0", "put", topic="T", queue_id=0, queue_offset=i, phy_offset=offset, size=200,
               status="PUT_OK", latency_ms=2.0 + (i % 3))
        offset += 200
    b.fault(800, "crash", "s1")
    for i in range(12, 16):
        t = 900 + 100 * i
        status = "FLUSH_SLAVE_TIMEOUT" if i < 14 else "SLAVE_NOT_AVAILABLE"
        b.emit(t, "m0", "put", topic="T", queue_id=0, queue_offset=i, phy_offset=offset, size=200,
               status=status, latency_ms=3000.0 if status == "FLUSH_SLAVE_TIMEOUT" else 0.5)
        offset += 200
    b.emit(2600, "m0", "put", topic="T", queue_id=0, queue_offset=16, phy_offset=offset, size=200,
           status="PUT_OK", latency_ms=None)
    b.emit(2700, "m0", "put", topic="T", queue_id=0, queue_offset=-1, phy_offset=-1, size=0,
           status="MESSAGE_ILLEGAL", latency_ms=0.1)
    return b.done()
