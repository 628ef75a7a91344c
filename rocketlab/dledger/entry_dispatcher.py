"""EntryDispatcher: the leader's per-follower replication state machine, COMPARE -> TRUNCATE -> APPEND.

Theory of operation
-------------------
Every new term starts in COMPARE: the dispatcher sends the leader's entry at ``compare_index`` (first its
last entry) and waits for the answer; :func:`decide_compare` says whether the follower matches
(-> APPEND at that index), holds extra entries or cannot intersect (-> TRUNCATE), or whether to walk
the compare index down. TRUNCATE sends the leader's entry at the truncate index; on SUCCESS the
dispatcher goes to APPEND with watermark = that index and ``write_index`` = index + 1.

APPEND pipelines pushes (up to ``max_pending_size`` in flight), one entry per push or batches of up to
``max_batch_push_size`` bytes; SUCCESS answers raise the follower's watermark, INCONSISTENT_STATE sends
it back to COMPARE, anything else is only noted. The one retransmission: when the push at
``watermark + 1`` has been unanswered for ``max_push_time_out_ms``, it is sent again. When everything
is sent, a pure COMMIT push carries the commit index at most every ``push_commit_interval_ms``.

Every change of state is traced as a ``push_state`` event of the leader (``peer``, ``state``, ``index``:
the new water mark for APPEND, the truncate index for TRUNCATE, -1 for COMPARE, which starts from the
leader's last entry); Java only logs it.

COMPARE and TRUNCATE are synchronous in Java (the thread waits up to 3 s): here the dispatcher does
nothing else until that answer (or its loss) arrives. A failure (bad answer, store error) sends it to
COMPARE and idles for ``dispatcher_error_backoff_ms`` (500 ms), as DLedger 0.2.3+ does.

Java file: ``DLedgerEntryPusher.java``, inner class ``EntryDispatcher`` (DLedger 0.3.1.2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rocketlab import plugs
from rocketlab.core import OutputBuilder
from rocketlab.dledger.entry import DLedgerEntry
from rocketlab.dledger.protocol import (
    DLedgerException,
    DLedgerResponseCode,
    PushEntryRequest,
    PushEntryResponse,
    PushType,
)

DECIDE_COMPARE_PLUG = plugs.point("lab04.decide_compare")
"""The override point of this module (a graded exercise plugs in here: :mod:`rocketlab.plugs`)."""

if TYPE_CHECKING:
    from rocketlab.dledger.entry_pusher import DLedgerEntryPusher

NEVER = -1
Code = DLedgerResponseCode


@dataclass(frozen=True, slots=True)
class CompareDecision:
    """What to do after a COMPARE answer: ``action`` is "append", "truncate" or "compare"."""

    rule: str
    action: str
    index: int


def decide_compare(compare_index: int, code: DLedgerResponseCode, f_begin: int, f_end: int,
                   l_begin: int, l_end: int) -> CompareDecision:
    """doCompare's decision (0.1 - 0.3.x) after a SUCCESS or INCONSISTENT_STATE answer."""
    truncate_index = -1
    if code is Code.SUCCESS:
        if compare_index == f_end:
            return CompareDecision("match", "append", compare_index)
        rule, truncate_index = "match-follower-longer", compare_index
    elif f_end < l_begin or f_begin > l_end:
        rule, truncate_index = "no-intersection", l_begin
    elif compare_index < f_begin:
        rule, truncate_index = "below-follower-begin", l_begin
    elif compare_index > f_end:
        rule, compare_index = "above-follower-end", f_end
    else:
        rule, compare_index = "mismatch-step-back", compare_index - 1
    if compare_index < l_begin:
        rule, truncate_index = rule + "+below-leader-begin", l_begin
    if truncate_index != -1:
        return CompareDecision(rule, "truncate", truncate_index)
    return CompareDecision(rule, "compare", compare_index)


@dataclass
class Quota:
    """Models util/Quota: bytes sampled into a 5-slot per-second window."""

    max_per_second: int
    window: int = 5
    samples: list[int] = field(default_factory=lambda: [0] * 5)
    stamps: list[int] = field(default_factory=lambda: [-1] * 5)

    def sample(self, value: int, now_ms: int) -> None:
        second = now_ms // 1000
        slot = second % self.window
        if self.stamps[slot] != second:
            self.stamps[slot], self.samples[slot] = second, 0
        self.samples[slot] += value

    def validate_now(self, now_ms: int) -> bool:
        second = now_ms // 1000
        slot = second % self.window
        return self.stamps[slot] == second and self.samples[slot] >= self.max_per_second

    @staticmethod
    def left_now(now_ms: int) -> int:
        return 1000 - now_ms % 1000


class EntryDispatcher:
    """Models DLedgerEntryPusher.EntryDispatcher, DLedger 0.3.1.2 (see the module docstring).

    Simplified: a plain object advanced by :meth:`do_work` and RPC continuations instead of a thread;
    the quota sleep and the 500 ms error sleep become "idle until" deadlines; the quota is checked after
    sending the entry that exhausted it (Java sleeps just before sending it).
    """

    def __init__(self, pusher: DLedgerEntryPusher, peer_id: str) -> None:
        self.pusher = pusher
        self.peer_id = peer_id
        self.type = PushType.COMPARE
        self.compare_index = -1
        self.write_index = -1
        self.term = -1
        self.leader_id: str | None = None
        self.pending_map: dict[int, int] = {}
        self.batch_pending_map: dict[int, tuple[int, int]] = {}
        self.batch: list[DLedgerEntry] = []
        self.batch_size = 0
        self.last_push_commit_time_ms = NEVER
        self.last_check_leak_time_ms = NEVER
        self.idle_until_ms = NEVER
        self.waiting = False
        self.quota = Quota(pusher.config.peer_push_quota)
        self.quiet: tuple[tuple[int, str | None, int], int | None] | None = None
        """After a :meth:`do_work` that left nothing to send: (the leader's (term, leader, ledger end) then,
        :meth:`next_deadline_ms`). Until that deadline, with the same key and no reply in between,
        :meth:`do_work` would do nothing (only a commit push or a resend, both timed, are left), so the
        pusher skips it; any reply or state change clears it. A saving of the simulator, not a model of Java."""

    # ------------------------------------------------------------------ quiet (skipped by the pump)
    def is_quiet(self, key: tuple[int, str | None, int], now_ms: int) -> bool:
        quiet = self.quiet
        return quiet is not None and quiet[0] == key and (quiet[1] is None or now_ms < quiet[1])

    def note_quiet(self, key: tuple[int, str | None, int]) -> None:
        """After :meth:`do_work`: remember its deadline if only time can give it work (APPEND, everything
        sent, not waiting or idle, this term's state)."""
        if (self.type is PushType.APPEND and not self.waiting and self.idle_until_ms == NEVER and not self.batch
                and self.term == key[0] and self.write_index > key[2]):
            self.quiet = (key, self.next_deadline_ms())
        else:
            self.quiet = None

    # ------------------------------------------------------------------ state
    def check_and_fresh_state(self, out: OutputBuilder) -> bool:
        ms = self.pusher.member_state
        if not ms.is_leader():
            return False
        if self.term != ms.curr_term or self.leader_id is None or self.leader_id != ms.leader_id:
            self.term, self.leader_id = ms.curr_term, ms.self_id
            if self.type is PushType.COMPARE:  # a new term starts in COMPARE: traced even if it was there
                self.pusher.state_changes.append((self.peer_id, PushType.COMPARE.name, -1))
            self.change_state(-1, PushType.COMPARE)
            if self.pusher.config.fresh_compare_on_new_term:  # Java keeps a compareIndex of an older term
                self.compare_index = -1
        return True

    def change_state(self, index: int, target: PushType) -> None:
        self.quiet = None
        if target is not self.type or target is PushType.APPEND:
            self.pusher.state_changes.append((self.peer_id, target.name, index))
        if target is PushType.APPEND:
            self.compare_index = -1
            self.pusher.update_peer_water_mark(self.term, self.peer_id, index)
            self.write_index = index + 1
            self.batch, self.batch_size = [], 0
        elif target is PushType.COMPARE:
            if self.type is PushType.APPEND:
                self.compare_index = -1
                self.pending_map.clear()
                self.batch_pending_map.clear()
        elif target is PushType.TRUNCATE:
            self.compare_index = -1
        self.type = target

    def fail(self, now_ms: int) -> None:
        """Any error: back to COMPARE, idle for the back-off (Java: log, changeState, sleep 500 ms)."""
        self.change_state(-1, PushType.COMPARE)
        self.idle_until_ms = now_ms + self.pusher.config.dispatcher_error_backoff_ms

    def build_push_request(self, entry: DLedgerEntry | None, target: PushType,
                           batch: tuple[DLedgerEntry, ...] = ()) -> PushEntryRequest:
        ms, store = self.pusher.member_state, self.pusher.store
        return PushEntryRequest(group=ms.group, remote_id=self.peer_id, leader_id=self.leader_id,
                                local_id=self.leader_id, term=self.term, entry=entry, type=target,
                                commit_index=store.committed_index, batch_entry=batch,
                                total_size=sum(e.size for e in batch) if batch else 0)

    # ------------------------------------------------------------------ main loop
    def do_work(self, now_ms: int, out: OutputBuilder) -> None:
        if self.waiting:
            return
        if self.idle_until_ms != NEVER:
            if now_ms < self.idle_until_ms:
                return
            self.idle_until_ms = NEVER
        try:
            if not self.check_and_fresh_state(out):
                return
            if self.type is PushType.APPEND:
                if self.pusher.config.is_enable_batch_push:
                    self.do_batch_append(now_ms, out)
                else:
                    self.do_append(now_ms, out)
            else:
                self.do_compare(now_ms, out)
        except DLedgerException:
            self.fail(now_ms)

    def signature(self) -> tuple[object, ...]:
        """Changes whenever :meth:`do_work` made progress (the pusher pumps until it stops changing)."""
        return (self.type, self.waiting, self.write_index, self.compare_index, self.term, self.idle_until_ms)

    def next_deadline_ms(self) -> int | None:
        if self.waiting or not self.pusher.member_state.is_leader():
            return None
        if self.idle_until_ms != NEVER:
            return self.idle_until_ms
        store, cfg = self.pusher.store, self.pusher.config
        if self.term != self.pusher.member_state.curr_term:
            return 0
        if self.type is not PushType.APPEND:
            return 0 if (self.compare_index != -1 or store.ledger_end_index != -1) else None
        pending = self.batch_pending_map if cfg.is_enable_batch_push else self.pending_map
        if self.write_index <= store.ledger_end_index and len(pending) < cfg.max_pending_size:
            return 0
        times = []
        if self.write_index > store.ledger_end_index:
            last = self.last_push_commit_time_ms
            times.append(0 if last == NEVER else last + cfg.push_commit_interval_ms + 1)
        first = self.pusher.get_peer_water_mark(self.term, self.peer_id) + 1
        sent = self.batch_pending_map[first][0] if cfg.is_enable_batch_push and first in self.batch_pending_map \
            else self.pending_map.get(first)
        if sent is not None:
            times.append(sent + cfg.max_push_time_out_ms + 1)
        return min(times) if times else None

    # ------------------------------------------------------------------ COMPARE / TRUNCATE
    def do_compare(self, now_ms: int, out: OutputBuilder) -> None:
        store = self.pusher.store
        if self.type not in (PushType.COMPARE, PushType.TRUNCATE):
            return
        if self.compare_index == -1 and store.ledger_end_index == -1:
            return
        if self.compare_index == -1:
            self.compare_index = store.ledger_end_index
        elif self.compare_index > store.ledger_end_index or self.compare_index < store.ledger_begin_index:
            self.compare_index = store.ledger_end_index
        entry = store.get(self.compare_index)
        request = self.build_push_request(entry, PushType.COMPARE)
        self._send_sync(request, self._on_compare_response, out)

    def _send_sync(self, request: PushEntryRequest, handler: Callable[[PushEntryResponse | None, int, OutputBuilder],
                   None], out: OutputBuilder) -> None:
        self.waiting = True

        def on_reply(resp: PushEntryResponse | None, now_ms: int, out2: OutputBuilder) -> None:
            self.waiting = False
            self.quiet = None
            try:
                if self.check_and_fresh_state(out2):
                    handler(resp, now_ms, out2)
            except DLedgerException:
                self.fail(now_ms)
            self.pusher.wakeup()

        self.pusher.rpc.request(out, self.peer_id, request, on_reply)

    def _on_compare_response(self, resp: PushEntryResponse | None, now_ms: int, out: OutputBuilder) -> None:
        if self.type not in (PushType.COMPARE, PushType.TRUNCATE):
            return
        if resp is None or resp.code not in (Code.SUCCESS, Code.INCONSISTENT_STATE):
            raise DLedgerException(Code.UNKNOWN if resp is None else resp.code, f"compareIndex={self.compare_index}")
        store = self.pusher.store
        d = plugs.resolve(DECIDE_COMPARE_PLUG, decide_compare)(self.compare_index, resp.code, resp.begin_index, resp.end_index,
                           store.ledger_begin_index, store.ledger_end_index)
        if d.action == "append":
            self.change_state(d.index, PushType.APPEND)
        elif d.action == "truncate":
            self.change_state(d.index, PushType.TRUNCATE)
            self.do_truncate(d.index, out)
        else:
            self.compare_index = d.index
            self.do_compare(now_ms, out)

    def do_truncate(self, truncate_index: int, out: OutputBuilder) -> None:
        entry = self.pusher.store.get(truncate_index)
        request = self.build_push_request(entry, PushType.TRUNCATE)

        def on_truncate(resp: PushEntryResponse | None, now_ms: int, out2: OutputBuilder) -> None:
            if resp is None or resp.code is not Code.SUCCESS:
                raise DLedgerException(Code.UNKNOWN if resp is None else resp.code, f"truncateIndex={truncate_index}")
            self.last_push_commit_time_ms = now_ms
            self.change_state(truncate_index, PushType.APPEND)

        self._send_sync(request, on_truncate, out)

    # ------------------------------------------------------------------ APPEND
    def _forget_acked(self, now_ms: int) -> None:
        """Every leak interval or when full, forget pending pushes below the follower's watermark."""
        cfg = self.pusher.config
        full = len(self.batch_pending_map if cfg.is_enable_batch_push else self.pending_map) >= cfg.max_pending_size
        if full or now_ms - self.last_check_leak_time_ms > cfg.leak_check_interval_ms or self.last_check_leak_time_ms < 0:
            mark = self.pusher.get_peer_water_mark(self.term, self.peer_id)
            self.pending_map = {i: t for i, t in self.pending_map.items() if i >= mark}
            self.batch_pending_map = {i: p for i, p in self.batch_pending_map.items() if i + p[1] - 1 > mark}
            self.last_check_leak_time_ms = now_ms

    def do_append(self, now_ms: int, out: OutputBuilder) -> None:
        cfg, store = self.pusher.config, self.pusher.store
        while self.check_and_fresh_state(out) and self.type is PushType.APPEND:
            if self.write_index > store.ledger_end_index:
                self.do_commit(now_ms, out)
                self.do_check_append_response(now_ms, out)
                return
            self._forget_acked(now_ms)
            if len(self.pending_map) >= cfg.max_pending_size:
                self.do_check_append_response(now_ms, out)
                return
            if self.idle_until_ms != NEVER:
                return
            self.do_append_inner(self.write_index, now_ms, out)
            self.write_index += 1

    def get_entry_for_append(self, index: int) -> DLedgerEntry | None:
        try:
            return self.pusher.store.get(index)
        except DLedgerException as e:
            if e.code is Code.INDEX_LESS_THAN_LOCAL_BEGIN:
                self.change_state(-1, PushType.COMPARE)
                return None
            raise

    def do_append_inner(self, index: int, now_ms: int, out: OutputBuilder) -> None:
        entry = self.get_entry_for_append(index)
        if entry is None:
            return
        request = self.build_push_request(entry, PushType.APPEND)
        self.pusher.rpc.request(out, self.peer_id, request, self._on_append_response)
        self.pending_map[index] = now_ms
        self.last_push_commit_time_ms = now_ms
        self.check_quota(entry, now_ms)

    def check_quota(self, entry: DLedgerEntry, now_ms: int) -> None:
        """checkQuotaAndWait: throttle only a follower lagging > max_pending_size entries and > the
        throttle point in bytes (file store only)."""
        store, cfg = self.pusher.store, self.pusher.config
        files = getattr(store, "data_file_list", None)
        if files is None or store.ledger_end_index - entry.index <= cfg.max_pending_size:
            return
        if files.max_wrote_position - entry.pos < cfg.peer_push_throttle_point:
            return
        self.quota.sample(entry.size, now_ms)
        if self.quota.validate_now(now_ms):
            self.idle_until_ms = now_ms + self.quota.left_now(now_ms)

    def _on_append_response(self, resp: PushEntryResponse | None, now_ms: int, out: OutputBuilder) -> None:
        self.quiet = None
        if resp is None:
            return
        if resp.code is Code.SUCCESS:
            count = max(resp.count, 1)
            if self.pusher.config.is_enable_batch_push:
                self.batch_pending_map.pop(resp.index, None)
            else:
                self.pending_map.pop(resp.index, None)
            self.pusher.update_peer_water_mark(resp.term, self.peer_id, resp.index + count - 1)
            self.pusher.wakeup()
        elif resp.code is Code.INCONSISTENT_STATE:
            self.change_state(-1, PushType.COMPARE)
            self.pusher.wakeup()

    def do_check_append_response(self, now_ms: int, out: OutputBuilder) -> None:
        mark = self.pusher.get_peer_water_mark(self.term, self.peer_id)
        sent = self.pending_map.get(mark + 1)
        if sent is not None and now_ms - sent > self.pusher.config.max_push_time_out_ms:
            self.do_append_inner(mark + 1, now_ms, out)

    def do_commit(self, now_ms: int, out: OutputBuilder) -> None:
        """A pure COMMIT push carrying the commit index, at most every push_commit_interval_ms."""
        last = self.last_push_commit_time_ms
        if last == NEVER or now_ms - last > self.pusher.config.push_commit_interval_ms:
            request = self.build_push_request(None, PushType.COMMIT)
            self.pusher.rpc.request(out, self.peer_id, request, lambda resp, now, o: None)
            self.last_push_commit_time_ms = now_ms

    # ------------------------------------------------------------------ batch APPEND
    def do_batch_append(self, now_ms: int, out: OutputBuilder) -> None:
        cfg, store = self.pusher.config, self.pusher.store
        while self.check_and_fresh_state(out) and self.type is PushType.APPEND:
            if self.write_index > store.ledger_end_index:
                if self.batch:
                    self.send_batch_append_entry_request(now_ms, out)
                self.do_commit(now_ms, out)
                self.do_check_batch_append_response(now_ms, out)
                return
            self._forget_acked(now_ms)
            if len(self.batch_pending_map) >= cfg.max_pending_size:
                self.do_check_batch_append_response(now_ms, out)
                return
            entry = self.get_entry_for_append(self.write_index)
            if entry is not None:
                self.batch.append(entry)
                self.batch_size += entry.size
                if self.batch_size >= cfg.max_batch_push_size:
                    self.send_batch_append_entry_request(now_ms, out)
            self.write_index += 1

    def send_batch_append_entry_request(self, now_ms: int, out: OutputBuilder) -> None:
        batch = tuple(self.batch)
        self.batch, self.batch_size = [], 0
        request = self.build_push_request(None, PushType.APPEND, batch)
        self.pusher.rpc.request(out, self.peer_id, request, self._on_append_response)
        self.batch_pending_map[batch[0].index] = (now_ms, len(batch))
        self.last_push_commit_time_ms = now_ms

    def do_check_batch_append_response(self, now_ms: int, out: OutputBuilder) -> None:
        mark = self.pusher.get_peer_water_mark(self.term, self.peer_id)
        pending = self.batch_pending_map.get(mark + 1)
        if pending is not None and now_ms - pending[0] > self.pusher.config.max_push_time_out_ms:
            first, last = mark + 1, mark + pending[1]
            self.batch, self.batch_size = [], 0
            for i in range(first, last + 1):
                entry = self.pusher.store.get(i)
                self.batch.append(entry)
                self.batch_size += entry.size
            self.send_batch_append_entry_request(now_ms, out)
