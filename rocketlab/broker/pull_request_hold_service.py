"""Long polling: pulls that found nothing, held until a message for their queue arrives or they time out.

Models RocketMQ 4.9.5's ``PullRequestHoldService`` (``suspendPullRequest``, ``checkHoldRequest``,
``notifyMessageArriving``), ``PullRequest``, ``ManyPullRequest`` and ``NotifyMessageArrivingListener``
(:class:`MessageArrivingDispatcher`, a dispatcher of the store's reput, as Java's ReputMessageService
calls the listener after each dispatch - on a master with ``longPollingEnable`` only).

Sans-IO: held pulls are state; the service says when it must next look (:meth:`next_deadline_ms`:
its check, every 5 s with long polling, every ``shortPollingTimeMills`` without, on a fixed grid from
its start as Java's thread waits); the broker core calls :meth:`check_hold_request` then, and
:meth:`notify_message_arriving` after each input that dispatched messages. Either returns the pulls to
run again (``executeRequestWhenWakeup``: processed once more, never held again). Simplified: no
check runs while nothing is held (it would find nothing), so an idle broker sets no timer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

LONG_POLLING_CHECK_INTERVAL_MS = 5 * 1000


class MessageFilterLike(Protocol):
    def is_matched_by_consume_queue(self, tags_code: int | None) -> bool: ...


@dataclass(eq=False)
class PullRequest:
    """``PullRequest``: a held PULL_MESSAGE (the client ``src`` and its request id stand for Java's
    channel and request command)."""

    src: str
    request_id: int
    request: Any
    suspend_timestamp: int
    timeout_millis: int
    pull_from_this_offset: int
    message_filter: MessageFilterLike


@dataclass
class MessageArrivingDispatcher:
    """``NotifyMessageArrivingListener`` as a store dispatcher: notes (topic, queue id, queue offset + 1,
    tags code) of every dispatched message while ``enabled`` and something is held."""

    arrived: list[tuple[str, int, int, int]] = field(default_factory=list)
    enabled: bool = False

    def dispatch(self, request: Any) -> None:
        if self.enabled:
            self.arrived.append((request.topic, request.queue_id, request.consume_queue_offset + 1,
                                 request.tags_code))

    def drain(self) -> list[tuple[str, int, int, int]]:
        out, self.arrived = self.arrived, []
        return out


class PullRequestHoldService:
    """See the module docstring. ``max_offset_in_queue(topic, queue_id)``: the store's."""

    def __init__(self, long_polling_enable: bool, short_polling_time_mills: int) -> None:
        self.long_polling_enable = long_polling_enable
        self.interval_ms = LONG_POLLING_CHECK_INTERVAL_MS if long_polling_enable else short_polling_time_mills
        self.pull_request_table: dict[tuple[str, int], list[PullRequest]] = {}
        self.started_ms = 0
        self.next_check_ms: int | None = None

    def start(self, now_ms: int) -> None:
        self.started_ms = now_ms

    @property
    def held(self) -> int:
        return sum(len(v) for v in self.pull_request_table.values())

    def suspend_pull_request(self, topic: str, queue_id: int, request: PullRequest) -> None:
        self.pull_request_table.setdefault((topic, queue_id), []).append(request)
        if self.next_check_ms is None or self.next_check_ms <= request.suspend_timestamp:
            periods = (request.suspend_timestamp - self.started_ms) // self.interval_ms + 1
            self.next_check_ms = self.started_ms + periods * self.interval_ms

    def next_deadline_ms(self) -> int | None:
        return self.next_check_ms if self.pull_request_table else None

    def check_hold_request(self, now_ms: int, max_offset_in_queue: Any) -> list[PullRequest]:
        """``checkHoldRequest``, when its time has come: every held queue against its max offset."""
        if self.next_check_ms is None or now_ms < self.next_check_ms:
            return []
        while self.next_check_ms <= now_ms:
            self.next_check_ms += self.interval_ms
        wake: list[PullRequest] = []
        for topic, queue_id in list(self.pull_request_table):
            wake += self.notify_message_arriving(topic, queue_id, max_offset_in_queue(topic, queue_id), None,
                                                 now_ms, max_offset_in_queue)
        if not self.pull_request_table:
            self.next_check_ms = None
        return wake

    def notify_message_arriving(self, topic: str, queue_id: int, max_offset: int, tags_code: int | None,
                                now_ms: int, max_offset_in_queue: Any) -> list[PullRequest]:
        """The held pulls of one queue that a message at ``max_offset`` (matching ``tags_code``) wakes,
        or whose time is up; the others stay held."""
        requests = self.pull_request_table.pop((topic, queue_id), None)
        if not requests:
            return []
        wake, keep = [], []
        for request in requests:
            newest = max_offset
            if newest <= request.pull_from_this_offset:
                newest = max_offset_in_queue(topic, queue_id)
            if newest > request.pull_from_this_offset and request.message_filter.is_matched_by_consume_queue(tags_code):
                wake.append(request)
            elif now_ms >= request.suspend_timestamp + request.timeout_millis:
                wake.append(request)
            else:
                keep.append(request)
        if keep:
            self.pull_request_table[(topic, queue_id)] = keep
        return wake
