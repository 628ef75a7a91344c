"""What the cluster viewer draws, as plain data: a *film* made from a trace.

The viewer (the modules of ``js/``) replays a film in the browser: it folds the events up to the instant on the
slider into node states, messages in flight and per-node logs, so scrubbing needs no kernel and the
offline report works from a file. This module builds films:

* :func:`film_event` keeps a trace event's fields and adds ``text`` (``describe()``'s line) and ``why``
  (the decision-table row that produced it, e.g. ``handleVote check 4: REJECT_SMALL_LEDGER_END_INDEX``);
* :func:`election_timer` reads a live DLedger member's election timer (the trace does not carry it:
  the live viewer samples it after every kernel event, see ``session.py``);
* :func:`make_film` puts events, timer samples and the cluster's description together.

The "why" lines cite ``DLedgerLeaderElector`` (``handleVote``'s checks, the ParseResult table,
``handleHeartBeat``'s rows) from the tables beside the decision code in
:mod:`rocketlab.dledger.elector_decisions` (``VOTE_CHECKS``, ``VOTE_ROUND_RULES``, ``HEART_BEAT_ROWS``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rocketlab.dledger.elector_decisions import HEART_BEAT_ROWS, VOTE_CHECKS, VOTE_ROUND_RULES, is_quorum
from rocketlab.i18n import N_, _
from rocketlab.trace.faults import viewer_faults
from rocketlab.trace.recorder import describe
from rocketlab.trace.schema import view_vocabulary
from rocketlab.viz.figures.messages import drop_reason
from rocketlab.viz.language import kernel_language
from rocketlab.viz.style import GRANTED_COLOR, NO_ANSWER_COLOR, REJECTED_COLOR, ROLE_COLORS
from rocketlab.viz.timeline import fault_line, natural_key, node_ids

FILM_VERSION = 1

MESSAGE_CLASSES: dict[str, str] = {
    "VoteRequest": "vote", "VoteResponse": "vote", "HeartBeatRequest": "heartbeat",
    "HeartBeatResponse": "heartbeat", "PushEntryRequest": "push", "PushEntryResponse": "push",
    "AppendEntryRequest": "client", "AppendEntryResponse": "client",
    "LeadershipTransferRequest": "transfer", "LeadershipTransferResponse": "transfer",
    # an application's traffic (the kit's client and the brokers' client processors) and the name server's
    **dict.fromkeys(("SendMessageRequest", "SendMessageResponse", "PullMessageRequest", "PullMessageResponse",
                     "HeartbeatRequest", "ClientAnswer", "NotifyConsumerIdsChanged", "QueryConsumerOffsetRequest",
                     "OffsetResponse", "UpdateConsumerOffsetOneway", "GetConsumerListRequest", "ConsumerListResponse",
                     "UnregisterClientRequest", "ConsumerSendMsgBackRequest", "GetMaxOffsetRequest"), "app"),
    **dict.fromkeys(("RegisterBrokerRequest", "RegisterBrokerResponse", "GetRouteInfoRequest", "GetRouteInfoResponse",
                     "UnregisterBrokerRequest", "UnregisterBrokerResponse"), "route"),
}
MESSAGE_COLORS: dict[str, str] = {  # Okabe-Ito; the dot's tooltip names the message as the second cue
    "vote": "#E69F00", "heartbeat": "#56B4E9", "push": "#009E73", "client": "#CC79A7", "ha": "#0072B2",
    "transfer": "#D55E00", "app": "#000000", "route": "#F0E442", "other": "#999999",
}


def message_class(name: str, channel: str = "") -> str:
    """The colour class of a message on the wire (vote, heartbeat, push, client, ha, transfer, app: an
    application's sends, pulls and offsets, route: the name server's registrations and routes, other)."""
    if name in MESSAGE_CLASSES:
        return MESSAGE_CLASSES[name]
    if channel.startswith("ha") or name.startswith("HA") or "stream" in channel:
        return "ha"
    return "other"


# Kinds whose why line is their fields in words (KeyError when a field is missing: no line then).
WHY_TEMPLATES: dict[str, str] = {
    "term": N_("nextTerm: the candidate moves from term {prev} to {term} and votes for itself"),
    "append": N_("entry {index} (term {term}) written at pos {pos}"),
    "commit": N_("committed index {index}: a majority holds it (QuorumAckChecker / the leader's push)"),
    "truncate": N_("handleDoTruncate: entries from {index} on removed, they disagreed with the leader's log"),
    "push_state": N_("EntryDispatcher for {peer}: {state} at index {index}"),
    "msg_drop": N_("{msg} {src} -> {dst} lost: {reason}"),
    "violation": N_("INVARIANT VIOLATED {invariant}: {detail}"),
    "put": N_("put {status} at phy offset {phy_offset} ({latency_ms:g} ms)"),
    "ha_report": N_("slave {slave} reports it holds the CommitLog up to offset {offset}"),
    "ha_transfer": N_("master sends {size} bytes from offset {offset} to {slave}"),
}


def vote_round_rule(event: Mapping[str, Any], peer_size: int) -> int:
    """Which ParseResult rule produced a ``vote_round`` event, inferred from its counters, for traces
    recorded before the event carried ``rule``. Rules 1 and 2 hang on what the counters do not hold (a
    bigger known term, a REJECT_ALREADY_HAS_LEADER): rule 1 is a guess when rule 7 fits as well."""
    result, valid = event["result"], event["valid"]
    accepted, not_ready, bigger = event["accepted"], event["not_ready"], event["bigger_ledger"]
    if result == "PASSED":
        return 5
    if result == "REVOTE_IMMEDIATELY":
        return 6
    if result == "WAIT_TO_REVOTE":
        if not is_quorum(valid, peer_size):
            return 3
        if not is_quorum(valid - bigger, peer_size):
            return 4
        return 2
    if is_quorum(valid, peer_size) and is_quorum(valid - bigger, peer_size) \
            and not is_quorum(accepted + not_ready, peer_size):
        return 7
    return 1


def why(event: Mapping[str, Any], peer_size: int, profile: str | None = None) -> str:
    """One line saying which rule of the Java code produced ``event`` ('' when there is nothing to add), in
    the kit's language: the Java names (methods, results, codes) stay, the words around them are translated."""
    kind = event["kind"]
    if kind == "vote_response":
        return _vote_answer_why(event["result"], profile)
    if kind == "vote_round":
        if profile == "raft":
            return _("Raft vote count: {result} ({accepted} of {all} granted)").format(
                result=event["result"], accepted=event["accepted"], all=event["all"])
        rule = event.get("rule") or vote_round_rule(event, peer_size)
        return _("parseVoteResult rule {rule}: {result} ({accepted} accepted, {not_ready} not ready, "
                 "{bigger_ledger} bigger ledger, {valid} valid of {all}) - {meaning}").format(
            rule=rule, result=event["result"], accepted=event["accepted"], not_ready=event["not_ready"],
            bigger_ledger=event["bigger_ledger"], valid=event["valid"], all=event["all"],
            meaning=_(VOTE_ROUND_RULES[rule]))
    if kind == "heartbeat":
        code = event.get("code")
        if code is None:
            return _("heartbeat to {to} got no answer (lost, or the follower is down)").format(to=event["to"])
        row, meaning = HEART_BEAT_ROWS.get(code, (0, ""))
        if not row:
            return f"handleHeartBeat: {code}"
        return _("handleHeartBeat row {row}: {code} - {meaning}").format(row=row, code=code, meaning=_(meaning))
    if kind == "role":
        return _role_why(event)
    if kind == "fault":
        return _("operator: {fault}").format(fault=fault_line(event))
    if kind == "msg_drop":
        event = {**event, "reason": drop_reason(str(event["reason"]))}
    template = WHY_TEMPLATES.get(kind)
    return _(template).format_map(event) if template else ""


def _vote_answer_why(result: str, profile: str | None) -> str:
    if profile == "raft":
        return f"Raft RequestVote: {result}"
    check, meaning = VOTE_CHECKS.get(result, (0, N_("no answer (lost or timed out)")))
    if not check:
        return _("{result}: {meaning}").format(result=result, meaning=_(meaning))
    return _("handleVote check {check}: {result} - {meaning}").format(check=check, result=result, meaning=_(meaning))


def _role_why(event: Mapping[str, Any]) -> str:
    term, role = event["term"], event["role"]
    if role == "LEADER":
        return _("changeRoleToLeader: won term {term}").format(term=term)
    if role == "CANDIDATE":
        return _("changeRoleToCandidate: election timer expired or stepped down (term {term})").format(term=term)
    if role == "FOLLOWER":
        return _("changeRoleToFollower: follows {leader} in term {term}").format(leader=event.get("leader"), term=term)
    return _("role {role} (term {term})").format(role=role, term=term)


_DROPPED_FIELDS = ("seq",)


def film_event(event: Mapping[str, Any], peer_size: int, profile: str | None = None) -> dict[str, Any]:
    """A trace event as the viewer gets it: its fields plus ``text`` and ``why``."""
    out = {k: v for k, v in event.items() if k not in _DROPPED_FIELDS and v is not None}
    out["text"] = describe(dict(event))
    try:
        reason = why(event, peer_size, profile)
    except (KeyError, TypeError, ValueError):  # a hand-written or older trace without a field: no why line
        reason = ""
    if reason:
        out["why"] = reason
    if event["kind"] in ("msg_send", "msg_recv", "msg_drop"):
        out["cls"] = message_class(event.get("msg", ""), event.get("channel", ""))
    return out


NEXT_HEARTBEAT = N_("next heartbeat")
ELECTION_TIMEOUT = N_("election timeout")


def election_timer(core: Any) -> tuple[str, int, int | None] | None:
    """A live DLedger member's timer, from ``DLedgerLeaderElector``'s fields: ``(what, end_ms, start_ms)``
    with ``start_ms`` None when the timer's start is not kept by the member (a candidate's random wait:
    the viewer takes the instant it first saw the deadline). None for systems without an elector."""
    server = getattr(core, "server", core)
    elector = getattr(server, "elector", None)
    if elector is None or not hasattr(elector, "last_leader_heart_beat_time"):
        return None
    cfg, ms = elector.config, elector.member_state
    if hasattr(elector, "election_deadline_ms"):  # the raft profile's RaftLeaderElector
        if ms.is_leader():
            return (_(NEXT_HEARTBEAT), elector.next_heart_beat_ms, None)
        deadline = elector.election_deadline_ms
        return None if deadline is None else (_(ELECTION_TIMEOUT), deadline, None)
    if ms.is_leader():
        last = elector.last_send_heart_beat_time
        if last < 0:
            return None
        return (_(NEXT_HEARTBEAT), last + cfg.heart_beat_time_interval_ms, last)
    if ms.is_follower():
        last = elector.last_leader_heart_beat_time
        if last < 0:
            return None
        return (_(ELECTION_TIMEOUT), last + cfg.max_heart_beat_leak * cfg.heart_beat_time_interval_ms + 1, last)
    if elector.vote_round is not None:
        return (_("waiting for votes"), elector.vote_round.deadline_ms, elector.vote_round.started_ms)
    return (_("next vote round"), max(elector.next_time_to_request_vote, 0), None)


def make_film(events: Sequence[Mapping[str, Any]], meta: Mapping[str, Any], timers: Iterable[Mapping[str, Any]] = (),
              *, end_ms: int | None = None, nodes: Sequence[str] | None = None, live: bool = False,
              generation: int = 0) -> dict[str, Any]:
    """The whole film: ``meta`` is the cluster's ``describe()`` (or a run's meta.json)."""
    ids = list(nodes or meta.get("nodes") or node_ids(events))
    ids.sort(key=natural_key)
    profile = meta.get("profile")
    last = events[-1]["t"] if events else 0
    return {
        "version": FILM_VERSION, "lang": kernel_language(),  # the viewer's words (js/strings*.js)
        "system": meta.get("system", "unknown"), "nodes": ids,
        "node_kinds": dict(meta.get("node_kinds") or {}),  # a node that is no broker: namesrv, producer, consumer
        "seed": meta.get("seed"), "profile": profile, "scenario": meta.get("scenario"),
        "network": meta.get("network"), "live": live, "generation": generation,
        "end_ms": max(end_ms if end_ms is not None else last, last),
        "events": [film_event(e, len(ids), profile) for e in events],
        "timers": [dict(t) for t in timers],
        "faults": viewer_faults(),  # what the viewer draws and offers of each fault kind
        "view": view_vocabulary(),  # the filter groups and navigation stops of each event kind
        "bookmarks": [],  # named stops a lab sets (ClusterView.bookmark)
        "colors": {"roles": ROLE_COLORS, "messages": MESSAGE_COLORS, "granted": GRANTED_COLOR,
                   "rejected": REJECTED_COLOR, "no_answer": NO_ANSWER_COLOR},
    }
