"""ScheduleMessageService: delayed messages wait in ``SCHEDULE_TOPIC_XXXX`` until their level's delay is up.

Models 4.9.5's ``store/schedule/ScheduleMessageService`` (synchronous delivery, its default) as a sans-IO
part of a broker core: ``messageDelayLevel`` ("1s 5s 10s 30s 1m 2m ... 2h", units s/m/h/d) gives level i+1
its delay; a message of level L sits in queue L-1 of SCHEDULE_TOPIC_XXXX; each level's timer task reads its
queue from the level's offset, and delivers every message whose time has come (store time + delay, or now
when that is further off than the delay: ``correctDeliverTimestamp``) to its REAL_TOPIC / REAL_QID
(``messageTimeup``: the properties string written before DELAY is cleared, so the delivered record keeps
DELAY, REAL_TOPIC and REAL_QID, as Java's does), one put at a time, advancing the level's offset only
after PUT_OK; it looks again after 100 ms (DELAY_FOR_A_WHILE), the first time 1 s after start.
``delayOffset.json`` holds the offsets (:class:`~rocketlab.broker.config_manager.DelayOffsetManager`,
fastjson's form). Only a master delivers.

Differences, for a sans-IO core: a level's timer runs from the first message put to it (or, at start, if
its queue has messages left) until its queue has been empty for ``idle_stop_ms`` (10 s), where Java's runs
forever; the delivery time is computed from the record's store time (the same as the unit's tagsCode, which
the store writes through :meth:`ScheduleMessageService.tags_code_of`, except for units a store rebuilt in
its recovery at open, before the broker set the service: those keep the tags' hash); offsets are persisted
after each delivery round that moved them and at stop (Java: every ``flushDelayOffsetInterval``, 10 s).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rocketlab.broker.config_manager import DelayOffsetManager
from rocketlab.broker.message_accessor import PropertyMap
from rocketlab.broker.topic_validator import RMQ_SYS_SCHEDULE_TOPIC
from rocketlab.core import OutputBuilder
from rocketlab.errors import ConfigError
from rocketlab.i18n import _
from rocketlab.store.message import Message
from rocketlab.store.message_codec import CodecError, decode_message

FIRST_DELAY_TIME = 1000
DELAY_FOR_A_WHILE = 100
_UNITS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def parse_delay_level(text: str) -> dict[int, int]:
    """``parseDelayLevel``: level (from 1) -> delay in ms; ConfigError names the bad entry."""
    table: dict[int, int] = {}
    for i, value in enumerate(text.split(" ")):
        unit, num = _UNITS.get(value[-1:]), value[:-1]
        if unit is None or not num.isdigit():
            raise ConfigError(_("messageDelayLevel={text!r}: {value!r} is not a number followed by s, m, h or d").format(
                text=text, value=value))
        table[i + 1] = int(num) * unit
    return table


def delay_level_of(value: str | None) -> int:
    """``Message.getDelayTimeLevel``: the DELAY property as an int, 0 when absent (ValueError when not one)."""
    if value is None:
        return 0
    text = value.strip() if value.strip() == value else value
    if not text.lstrip("+-").isdigit():
        raise ValueError(f'For input string: "{value}"')
    return int(text)


PutFn = Callable[[Message, int], Any]
"""``put(message, now_ms) -> handle``: the core's put; ``handle.done`` / ``handle.status`` tell the result."""


@dataclass
class _Level:
    next_ms: int
    idle_since: int | None = None
    waiting: Any = None  # the handle of a delivery whose put is not answered yet
    waiting_next: int = 0
    waiting_trace: dict[str, Any] = field(default_factory=dict)


@dataclass
class ScheduleMessageService:
    """See the module docstring. ``store``: the broker's message store; ``offsets``: its delayOffset.json."""

    store: Any
    offsets: DelayOffsetManager
    delay_level_table: dict[int, int]
    idle_stop_ms: int = 10_000
    levels: dict[int, _Level] = field(default_factory=dict)
    delivered: int = 0
    dirty: bool = False

    @property
    def max_delay_level(self) -> int:
        return max(self.delay_level_table, default=0)

    def compute_deliver_timestamp(self, level: int, store_timestamp: int) -> int:
        """``computeDeliverTimestamp``: store time + the level's delay (+ 1 s for an unknown level)."""
        delay = self.delay_level_table.get(level)
        return store_timestamp + (delay if delay is not None else 1000)

    def tags_code_of(self, properties: dict[str, str] | None, store_timestamp: int, tags_code: int) -> int:
        """A SCHEDULE_TOPIC_XXXX unit's tagsCode (``checkMessageAndReturnSize``): the delivery time of its
        DELAY level (capped at the highest), else the tags' hash."""
        try:
            level = delay_level_of((properties or {}).get("DELAY"))
        except ValueError:
            return tags_code
        level = min(level, self.max_delay_level)
        return self.compute_deliver_timestamp(level, store_timestamp) if level > 0 else tags_code

    def offset(self, level: int) -> int:
        return self.offsets.offset_table.get(level, 0)

    def start(self, now_ms: int) -> None:
        """``start``: ``correctDelayOffset``, then a timer 1 s from now for each level with messages left."""
        for level in self.delay_level_table:
            queue_id = level - 1
            low = self.store.get_min_offset_in_queue(RMQ_SYS_SCHEDULE_TOPIC, queue_id)
            high = self.store.get_max_offset_in_queue(RMQ_SYS_SCHEDULE_TOPIC, queue_id)
            current = self.offsets.offset_table.get(level)
            if current is not None and not low <= current <= high:
                self.offsets.offset_table[level] = min(max(current, low), high)
                self.dirty = True
            if high > self.offset(level):
                self.levels[level] = _Level(now_ms + FIRST_DELAY_TIME)

    def wake(self, level: int, now_ms: int) -> None:
        """A message was put to ``level``'s queue: its timer runs (within 100 ms, as Java's polls)."""
        if level in self.delay_level_table and level not in self.levels:
            self.levels[level] = _Level(now_ms + DELAY_FOR_A_WHILE)

    def next_deadline_ms(self) -> int | None:
        return min((lv.next_ms for lv in self.levels.values()), default=None)

    def stop(self) -> None:
        """``shutdown``: persist the offsets (when a delivery moved them since the last persist)."""
        if self.dirty:
            self.offsets.persist()
            self.dirty = False

    def on_tick(self, now_ms: int, put: PutFn, out: OutputBuilder) -> None:
        """Run every level whose timer is due (``DeliverDelayedMessageTimerTask.executeOnTimeup``)."""
        moved = False
        for level in sorted(self.levels):
            state = self.levels[level]
            if now_ms < state.next_ms:
                continue
            moved |= self._execute_on_timeup(level, state, now_ms, put, out)
            state.next_ms = now_ms + DELAY_FOR_A_WHILE
            if state.waiting is None and self.offset(level) >= self._max_offset(level):
                state.idle_since = now_ms if state.idle_since is None else state.idle_since
                if now_ms - state.idle_since >= self.idle_stop_ms:
                    del self.levels[level]
            else:
                state.idle_since = None
        if moved:
            self.offsets.persist()

    def _max_offset(self, level: int) -> int:
        return self.store.get_max_offset_in_queue(RMQ_SYS_SCHEDULE_TOPIC, level - 1)

    def _execute_on_timeup(self, level: int, state: _Level, now_ms: int, put: PutFn, out: OutputBuilder) -> bool:
        moved = False
        if state.waiting is not None:
            if not state.waiting.done:
                return False
            ok = state.waiting.status == "PUT_OK"
            out.trace("schedule_deliver", **state.waiting_trace, status=state.waiting.status)
            state.waiting = None
            if not ok:
                return False
            self.offsets.offset_table[level] = state.waiting_next
            moved = True
        store_now = self.store.clock()
        delay = self.delay_level_table[level]
        while True:
            offset = self.offset(level)
            got = self.store.get_message(RMQ_SYS_SCHEDULE_TOPIC, level - 1, offset=offset, max_msg_nums=32)
            records = list(got.message_buffer_list)
            if not records:
                return moved
            for i, record in enumerate(records):
                try:
                    ext = decode_message(record)
                except CodecError:
                    self.offsets.offset_table[level] = offset + i + 1  # an unreadable unit is skipped
                    moved = True
                    continue
                deliver = self.compute_deliver_timestamp(level, ext.store_timestamp)
                if deliver > store_now + delay:
                    deliver = store_now  # correctDeliverTimestamp
                if deliver - store_now > 0:
                    return moved
                handle = put(message_timeup(ext), now_ms)
                fields = {"topic": ext.properties.get("REAL_TOPIC", ""), "delay_level": level,
                          "uniq_key": ext.uniq_key or "", "offset_msg_id": ext.msg_id}
                if not handle.done:
                    state.waiting, state.waiting_next, state.waiting_trace = handle, offset + i + 1, fields
                    return moved
                out.trace("schedule_deliver", **fields, status=handle.status)
                if handle.status != "PUT_OK":
                    return moved
                self.offsets.offset_table[level] = offset + i + 1
                self.delivered += 1
                moved = True


def message_timeup(ext: Any) -> Message:
    """``messageTimeup``: the message to put back to its real topic and queue."""
    props = PropertyMap(ext.properties)
    stored = props.java_order()  # setPropertiesString before WAIT=false and DELAY is cleared
    real_qid = props.get("REAL_QID") or "0"
    return _Delivered(props.get("REAL_TOPIC") or "", ext.body, int(real_qid) if real_qid.lstrip("-").isdigit() else 0,
                      properties=stored, flag=ext.flag, born_timestamp=ext.born_timestamp, born_host=ext.born_host,
                      sys_flag=ext.sys_flag, reconsume_times=ext.reconsume_times)


class _Delivered(Message):
    """A delivered message: WAIT=false in its map (not in its stored string)."""

    __slots__ = ()

    def is_wait_store_msg_ok(self) -> bool:
        return False
