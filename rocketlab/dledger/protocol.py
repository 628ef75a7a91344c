"""DLedger's wire vocabulary: request/response codes, one frozen dataclass per Java request/response.

Theory of operation
-------------------
Every message is an immutable value named after its Java class (``VoteRequest``, ``PushEntryRequest``,
...) with Java's fields in snake_case. The base fields of ``RequestOrResponse`` (group, remote_id,
local_id, code, leader_id, term) are on every message; ``code`` is a :class:`DLedgerResponseCode`.
Outcomes keep Java's constant names (``VoteResponse.Result.REJECT_ALREADY_VOTED``,
``PushEntryRequest.Type.COMPARE``, ``DLedgerResponseCode.EXPIRED_TERM`` = 403) because they are teaching
material and appear verbatim in the trace.

The byte encoding lives in :mod:`rocketlab.dledger.codec` (``DLedgerCodec``).

Java files: ``protocol/*.java`` (DLedgerRequestCode, DLedgerResponseCode, RequestOrResponse,
VoteRequest/Response, HeartBeatRequest/Response, PushEntryRequest/Response, AppendEntryRequest/Response,
BatchAppendEntryRequest, GetEntriesRequest/Response, MetadataRequest/Response,
LeadershipTransferRequest/Response), ``exception/DLedgerException.java``; DLedger 0.3.1.2.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields, replace
from typing import Any

from rocketlab.dledger.entry import DLedgerEntry
from rocketlab.errors import RocketlabError


class DLedgerRequestCode(enum.IntEnum):
    """Models DLedgerRequestCode (0.3.1.2): the remoting request codes. PULL is declared, unused."""

    UNKNOWN = -1
    METADATA = 50000
    APPEND = 50001
    GET = 50002
    VOTE = 51001
    HEART_BEAT = 51002
    PULL = 51003
    PUSH = 51004
    LEADERSHIP_TRANSFER = 51005


class DLedgerResponseCode(enum.IntEnum):
    """Models DLedgerResponseCode (0.3.1.2) with its numeric codes; ``value_of`` maps unknown ints to UNKNOWN."""

    UNKNOWN = -1
    SUCCESS = 200
    TIMEOUT = 300
    METADATA_ERROR = 301
    NETWORK_ERROR = 302
    UNSUPPORTED = 303
    UNKNOWN_GROUP = 400
    UNKNOWN_MEMBER = 401
    UNEXPECTED_MEMBER = 402
    EXPIRED_TERM = 403
    NOT_LEADER = 404
    NOT_FOLLOWER = 405
    INCONSISTENT_STATE = 406
    INCONSISTENT_TERM = 407
    INCONSISTENT_INDEX = 408
    INCONSISTENT_LEADER = 409
    INDEX_OUT_OF_RANGE = 410
    UNEXPECTED_ARGUMENT = 411
    REPEATED_REQUEST = 412
    REPEATED_PUSH = 413
    DISK_ERROR = 414
    DISK_FULL = 415
    TERM_NOT_READY = 416
    FALL_BEHIND_TOO_MUCH = 417
    TAKE_LEADERSHIP_FAILED = 418
    INDEX_LESS_THAN_LOCAL_BEGIN = 419
    REQUEST_WITH_EMPTY_BODYS = 420
    PUSH_REQUEST_IS_FULL = 421
    INTERNAL_ERROR = 500
    TERM_CHANGED = 501
    WAIT_QUORUM_ACK_TIMEOUT = 502
    LEADER_PENDING_FULL = 503
    ILLEGAL_MEMBER_STATE = 504
    LEADER_NOT_READY = 505
    LEADER_TRANSFERRING = 506

    @classmethod
    def value_of(cls, code: int) -> DLedgerResponseCode:
        try:
            return cls(code)
        except ValueError:
            return cls.UNKNOWN


Code = DLedgerResponseCode


class DLedgerException(RocketlabError):
    """Models DLedgerException: a protocol precondition failed; ``code`` is what the caller is answered."""

    def __init__(self, code: DLedgerResponseCode, message: str = "") -> None:
        self.code = code
        super().__init__(f"{code.name}({int(code)}){': ' + message if message else ''}")


def check(condition: bool, code: DLedgerResponseCode, message: str = "") -> None:
    """Models PreConditions.check: raise :class:`DLedgerException` with ``code`` unless ``condition``."""
    if not condition:
        raise DLedgerException(code, message)


class VoteResult(enum.Enum):
    """Models VoteResponse.RESULT (0.2.0+ spelling), in Java's declaration order."""

    UNKNOWN = 0
    ACCEPT = 1
    REJECT_UNKNOWN_LEADER = 2
    REJECT_UNEXPECTED_LEADER = 3
    REJECT_EXPIRED_VOTE_TERM = 4
    REJECT_ALREADY_VOTED = 5
    REJECT_ALREADY_HAS_LEADER = 6
    REJECT_TERM_NOT_READY = 7
    REJECT_TERM_SMALL_THAN_LEDGER = 8
    REJECT_EXPIRED_LEDGER_TERM = 9
    REJECT_SMALL_LEDGER_END_INDEX = 10
    REJECT_TAKING_LEADERSHIP = 11


class ParseResult(enum.Enum):
    """Models VoteResponse.ParseResult: the outcome of one vote round, in Java's order."""

    WAIT_TO_REVOTE = 0
    REVOTE_IMMEDIATELY = 1
    PASSED = 2
    WAIT_TO_VOTE_NEXT = 3


class PushType(enum.Enum):
    """Models PushEntryRequest.Type (0.3.x)."""

    APPEND = 0
    COMMIT = 1
    COMPARE = 2
    TRUNCATE = 3


_FIELD_NAMES: dict[type, frozenset[str]] = {}
"""Per message type, its init fields (for :meth:`RequestOrResponse.with_`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestOrResponse:
    """Models RequestOrResponse: the base fields every DLedger request and response carries."""

    group: str | None = None
    remote_id: str | None = None
    local_id: str | None = None
    code: DLedgerResponseCode = DLedgerResponseCode.SUCCESS
    leader_id: str | None = None
    term: int = -1

    def with_(self, **changes: Any) -> Any:
        """A copy with some fields changed (Java's fluent setters): :func:`dataclasses.replace` with the
        field names looked up once per type (a voter answers every vote request with one)."""
        cls = type(self)
        names = _FIELD_NAMES.get(cls)
        if names is None:
            names = _FIELD_NAMES[cls] = frozenset(f.name for f in fields(cls) if f.init)
        if not changes.keys() <= names:
            return replace(self, **changes)  # its error names the field
        return cls(**{name: getattr(self, name) for name in names - changes.keys()}, **changes)

    def base_info(self) -> dict[str, Any]:
        """Models copyBaseInfo: the base fields, copied as-is (ids are not swapped)."""
        return {"group": self.group, "term": self.term, "code": self.code, "local_id": self.local_id,
                "remote_id": self.remote_id, "leader_id": self.leader_id}


@dataclass(frozen=True, slots=True, kw_only=True)
class VoteRequest(RequestOrResponse):
    """Models VoteRequest: the candidate is ``leader_id``; ledger end index/term are its log's end."""

    ledger_end_index: int = -1
    ledger_end_term: int = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class VoteResponse(RequestOrResponse):
    """Models VoteResponse; ``VoteResponse.Result`` and ``VoteResponse.ParseResult`` are the Java enums."""

    Result = VoteResult
    ParseResult = ParseResult

    vote_result: VoteResult = VoteResult.UNKNOWN


@dataclass(frozen=True, slots=True, kw_only=True)
class HeartBeatRequest(RequestOrResponse):
    """Models HeartBeatRequest: only the base fields (no commit index, no log position)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HeartBeatResponse(RequestOrResponse):
    """Models HeartBeatResponse: the answer is in ``code`` (and ``term`` for EXPIRED_TERM)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PushEntryRequest(RequestOrResponse):
    """Models PushEntryRequest (0.3.x): one entry, or a batch in ``batch_entry``, or none for COMMIT."""

    Type = PushType

    commit_index: int = -1
    type: PushType = PushType.APPEND
    entry: DLedgerEntry | None = None
    batch_entry: tuple[DLedgerEntry, ...] = ()
    total_size: int = 0

    @property
    def is_batch(self) -> bool:
        return bool(self.batch_entry)

    @property
    def first_entry_index(self) -> int:
        if self.batch_entry:
            return self.batch_entry[0].index
        return self.entry.index if self.entry is not None else -1

    @property
    def last_entry_index(self) -> int:
        if self.batch_entry:
            return self.batch_entry[-1].index
        return self.entry.index if self.entry is not None else -1

    @property
    def count(self) -> int:
        if self.batch_entry:
            return len(self.batch_entry)
        return 1 if self.entry is not None else 0

    def entries(self) -> tuple[DLedgerEntry, ...]:
        if self.batch_entry:
            return self.batch_entry
        return (self.entry,) if self.entry is not None else ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PushEntryResponse(RequestOrResponse):
    """Models PushEntryResponse: the pushed first index and count, plus the follower's begin/end index."""

    index: int | None = None
    begin_index: int = -1
    end_index: int = -1
    count: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class AppendEntryRequest(RequestOrResponse):
    """Models AppendEntryRequest: a client's body to append on the leader."""

    body: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchAppendEntryRequest(AppendEntryRequest):
    """Models BatchAppendEntryRequest: several bodies, one entry each; the answer waits for the last."""

    batch_msgs: tuple[bytes, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AppendEntryResponse(RequestOrResponse):
    """Models AppendEntryResponse: where the entry went (pos -1 when refused). ``positions``: batches."""

    index: int = -1
    pos: int = -1
    positions: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class GetEntriesRequest(RequestOrResponse):
    """Models GetEntriesRequest (handled as in 0.3.1.2: one entry at ``begin_index``)."""

    begin_index: int = -1
    max_size: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class GetEntriesResponse(RequestOrResponse):
    """Models GetEntriesResponse."""

    entries: tuple[DLedgerEntry, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataRequest(RequestOrResponse):
    """Models MetadataRequest."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataResponse(RequestOrResponse):
    """Models MetadataResponse: the peer map (id -> address)."""

    peers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class LeadershipTransferRequest(RequestOrResponse):
    """Models LeadershipTransferRequest: to the leader (``transfer_id``) or the transferee."""

    transfer_id: str | None = None
    transferee_id: str | None = None
    take_leadership_ledger_index: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class LeadershipTransferResponse(RequestOrResponse):
    """Models LeadershipTransferResponse."""


MESSAGE_TYPES: tuple[type[RequestOrResponse], ...] = (
    VoteRequest, VoteResponse, HeartBeatRequest, HeartBeatResponse, PushEntryRequest, PushEntryResponse,
    AppendEntryRequest, BatchAppendEntryRequest, AppendEntryResponse, GetEntriesRequest, GetEntriesResponse,
    MetadataRequest, MetadataResponse, LeadershipTransferRequest, LeadershipTransferResponse,
)

REQUEST_CODES: dict[type[RequestOrResponse], DLedgerRequestCode] = {
    VoteRequest: DLedgerRequestCode.VOTE,
    HeartBeatRequest: DLedgerRequestCode.HEART_BEAT,
    PushEntryRequest: DLedgerRequestCode.PUSH,
    AppendEntryRequest: DLedgerRequestCode.APPEND,
    BatchAppendEntryRequest: DLedgerRequestCode.APPEND,
    GetEntriesRequest: DLedgerRequestCode.GET,
    MetadataRequest: DLedgerRequestCode.METADATA,
    LeadershipTransferRequest: DLedgerRequestCode.LEADERSHIP_TRANSFER,
}


def describe(msg: Any, src: str | None = None, dst: str | None = None) -> str:
    """One stable line per message: ``n0->n1 VoteRequest term=3 ledger_end=7/2``."""
    head = f"{src}->{dst} " if src is not None and dst is not None else ""
    name = type(msg).__name__
    if isinstance(msg, VoteRequest):
        detail = f"term={msg.term} candidate={msg.leader_id} ledger_end={msg.ledger_end_index}/{msg.ledger_end_term}"
    elif isinstance(msg, VoteResponse):
        detail = f"term={msg.term} {msg.vote_result.name}"
    elif isinstance(msg, PushEntryRequest):
        detail = (f"term={msg.term} {msg.type.name} first={msg.first_entry_index} count={msg.count} "
                  f"commit={msg.commit_index}")
    elif isinstance(msg, PushEntryResponse):
        detail = f"term={msg.term} {msg.code.name} index={msg.index} end={msg.end_index}"
    elif isinstance(msg, AppendEntryResponse):
        detail = f"term={msg.term} {msg.code.name} index={msg.index} pos={msg.pos}"
    elif isinstance(msg, RequestOrResponse):
        detail = f"term={msg.term} leader={msg.leader_id} {msg.code.name}"
    else:
        detail = repr(msg)
    return f"{head}{name} {detail}"
