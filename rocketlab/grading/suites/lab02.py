"""Lab 02's graded tests: the CommitLog record, END_OF_FILE, consume-queue units, index-file slots.

Scenarios open a real store on disk (tiny mapped files so they roll often), put random messages with
the learner's function plugged in, kill it (the crash simulation: the ``abort`` file stays), recover it
as RocketMQ does (abnormal recovery, ``checkCRCOnRecover``), and read every message back by queue and by
key. A message lost, changed or misplaced fails the test with what went wrong.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from contextlib import contextmanager

from rocketlab.grading.registry import Ctx, graded, learner_terms
from rocketlab.grading.suites._common import Calls, compare_table, expect, scratch_dir
from rocketlab.i18n import N_, _
from rocketlab.scenarios.commitlog_store import TickClock, queue_messages, record_fields
from rocketlab.store import Message, MessageStore, PutMessageStatus
from rocketlab.store.commit_log import is_end_of_file
from rocketlab.store.consume_queue import unit_position
from rocketlab.store.crash import simulate_crash
from rocketlab.store.index_file import index_positions
from rocketlab.store.message import MessageSysFlag
from rocketlab.store.message_codec import MessageRejected, decode_message, encode_record

SMALL = {"mapped_file_size_commit_log": 4096, "mapped_file_size_consume_queue": 20 * 16,
         "max_hash_slot_num": 16, "max_index_num": 64}
HOSTS = [("127.0.0.1", 8123), ("10.1.2.3", 40000), ("::1", 9876), ("fe80::1:2", 10911)]

def random_bytes(rng: random.Random, n: int) -> bytes:
    """``bytes(rng.randrange(256) for _ in range(n))``, the same bytes and the same state of ``rng`` after
    (``randrange(256)`` draws 9 bits until one is below 256), in a third of the time."""
    get = rng.getrandbits
    out = bytearray()
    for _i in range(n):
        r = get(9)
        while r >= 256:
            r = get(9)
        out.append(r)
    return bytes(out)


def random_message(rng: random.Random, i: int, *, long_topic: bool = False, any_topic: bool = False) -> Message:
    """A message with random fields; ``any_topic`` allows a UTF-8 topic a broker would refuse (encoder
    tests only), ``long_topic`` one over 127 bytes (the v2 layout)."""
    topics = ("TopicA", "TopicB", "主题") if any_topic else ("TopicA", "TopicB", "%RETRY%Group_1")
    topic = rng.choice(topics) if not long_topic else "T" * rng.choice((128, 300))
    size = rng.choice((0, 1, 33, 200, 700))
    props = {}
    if rng.random() < 0.7:
        props["KEYS"] = f"key-{i % 9}"
    if rng.random() < 0.5:
        props["TAGS"] = rng.choice(("TagA", "TagB"))
    if rng.random() < 0.3:
        props["custom"] = "x" * rng.randrange(1, 40)
    return Message(topic=topic, body=random_bytes(rng, size), queue_id=rng.randrange(2),
                   flag=rng.randrange(4), properties=props, born_timestamp=1_700_000_000_000 + i,
                   born_host=rng.choice(HOSTS), sys_flag=rng.choice((0, 0, MessageSysFlag.COMPRESSED_FLAG)),
                   reconsume_times=rng.randrange(3))


def _field_at(record: bytes, pos: int) -> str:
    for row in record_fields(record):
        if row["offset"] <= pos < row["offset"] + row["length"]:
            return f"{row['field']} (bytes {row['offset']}-{row['offset'] + row['length'] - 1})"
    return "past the end of the record"


def _diff(mine: bytes, want: bytes) -> str | None:
    if mine == want:
        return None
    for i, (a, b) in enumerate(zip(mine, want, strict=False)):
        if a != b:
            return _("first difference at byte {i}, in {field}: yours {mine}, RocketMQ's {want}").format(
                i=i, field=_field_at(want, i), mine=mine[i:i + 8].hex(' '), want=want[i:i + 8].hex(' '))
    return _("yours is {mine} bytes, RocketMQ's {want} (the common part is identical)").format(mine=len(mine),
                                                                                              want=len(want))


# ---------------------------------------------------------------------- encode_record
@graded("lab02.encode_record", points=3,
        about=N_("Byte-exact records: IPv4 and IPv6 hosts, empty and large bodies, properties, flags, a long "
                 "topic."))
def golden_records(ctx: Ctx) -> None:
    rng = random.Random(2)
    cases = []
    for i in range(60):
        msg = random_message(rng, i, long_topic=i % 15 == 14, any_topic=True)
        store_host = HOSTS[i % len(HOSTS)]
        cases.append((msg, store_host, encode_record(msg, 1_700_000_000_999, store_host)))
    answers = Calls(ctx.impl, lambda c: (c[0], 1_700_000_000_999, c[1]), post=bytes).answers(cases)
    for i, ((msg, store_host, want), (mine, error)) in enumerate(zip(cases, answers, strict=True)):
        if error is not None:
            raise AssertionError(_("{case} raised {error}").format(case=f"encode_record({msg!r})",
                                                                   error=learner_terms(error, '', ''))) from error
        problem = _diff(mine, want)
        expect(problem is None, _("message {i} (topic {topic}, {size}-byte body, born host {born}, store host "
                                  "{store}, properties {properties}): {problem}").format(
            i=i, topic=repr(msg.topic[:20]), size=len(msg.body), born=msg.born_host, store=store_host,
            properties=msg.properties, problem=problem))


TEXTS = ("a", "TagA", "ключ", "値", "é" * 70, "🚀 rocket", "\u00ff" * 3, "x" * 130)
V6_BITS = MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG


def any_message(rng: random.Random, i: int) -> tuple[Message, tuple[str, int]]:
    """A message drawn from everything a producer can send: UTF-8 topics of 1 to 300 bytes (a 70-character
    topic of 140 bytes needs the long layout), non-ASCII property keys and values, any sys_flag bits
    (the v6 host bits included, whatever the hosts), IPv4 and IPv6 born and store hosts, extreme flags,
    timestamps, reconsume counts and transaction offsets; and the store host."""
    topic = rng.choice(("T", "TopicA", "主题" * rng.randrange(1, 30), "é" * rng.choice((63, 64, 70)), "T" * 127,
                        "T" * 128, "%RETRY%g"))
    props = {rng.choice(TEXTS) + str(k): rng.choice(TEXTS) for k in range(rng.randrange(4))}
    extremes = (0, 1, -1, 2**31 - 1, -(2**31))
    msg = Message(topic=topic, body=random_bytes(rng, rng.choice((0, 1, 50, 300))),
                  queue_id=rng.choice((0, 1, 7, 2**31 - 1)), flag=rng.choice(extremes), properties=props,
                  born_timestamp=rng.choice((None, 0, 1_700_000_000_000 + i, 2**63 - 1)),
                  born_host=rng.choice(HOSTS), sys_flag=rng.randrange(0x400) | rng.choice((0, V6_BITS)),
                  reconsume_times=rng.choice((0, 3, 2**31 - 1)),
                  prepared_transaction_offset=rng.choice((0, 4096, 2**62)))
    return msg, rng.choice(HOSTS)


@graded("lab02.encode_record", points=2,
        about=N_("400 seeded messages from the whole domain a producer can send: non-ASCII topics and properties "
                 "(lengths are UTF-8 bytes), every sys_flag bit with IPv4 and IPv6 hosts (the v6 bits say what the"
                 " hosts are, not what the producer set), extreme numbers; byte-exact against RocketMQ's encoder."))
def any_message_record(ctx: Ctx) -> None:
    rng = random.Random("lab02/any-message")
    cases = []
    for i in range(402):
        msg, store_host = any_message(rng, i)
        if i >= 400:  # a body of exactly the 4 MiB limit, and one byte over it (refused by the broker)
            msg.body = bytes(4 * 1024 * 1024 + i - 400)
        try:
            cases.append((i, msg, store_host, encode_record(msg, 1_700_000_000_999, store_host)))
        except MessageRejected:  # a message the broker refuses is outside the domain
            continue
    answers = Calls(ctx.impl, lambda c: (c[1], 1_700_000_000_999, c[2]), post=bytes).answers(cases)
    for (i, msg, store_host, want), (mine, error) in zip(cases, answers, strict=True):
        if error is not None:
            raise AssertionError(_("message {i} ({message}, store host {store}) raised {error}").format(
                i=i, message=repr(msg), store=store_host, error=learner_terms(error, '', ''))) from error
        problem = _diff(mine, want)
        expect(problem is None, _("message {i} (topic {topic} = {size} UTF-8 bytes, properties {properties}, "
                                  "sys_flag {flag}, born host {born}, store host {store}): {problem}").format(
            i=i, topic=repr(msg.topic[:20]), size=len(msg.topic.encode()), properties=msg.properties,
            flag=f"{msg.sys_flag:#x}", born=msg.born_host, store=store_host, problem=problem))


class CrashableStore:
    """A store on :data:`SMALL` files in a scratch directory that can be killed and reopened."""

    def __init__(self, root) -> None:
        self.root, self.clock = root, TickClock()
        self.store = MessageStore.open(root, clock=self.clock, threads=False, **SMALL)

    def put_all(self, msgs: list[Message]) -> None:
        for m in msgs:
            r = self.store.put_message(m)
            expect(r.status is PutMessageStatus.PUT_OK, _("the store refused a put: {result}").format(result=r))
        self.store.reput()

    def crash_and_reopen(self) -> None:
        """``kill -9`` (the abort file stays) and the next start's abnormal recovery."""
        self.store.reput()
        simulate_crash(self.store)
        self.store = MessageStore.open(self.root, clock=self.clock, threads=False, **SMALL)


@contextmanager
def crashable_store() -> Iterator[CrashableStore]:
    with scratch_dir("rocketlab-grade-") as root:
        s = CrashableStore(root)
        try:
            yield s
        finally:
            s.store.shutdown()


def round_trip(ctx: Ctx, n: int = 60) -> None:
    """Put ``n`` random messages, crash, recover, read back every queue: the same messages, in order."""
    rng = random.Random(ctx.seed)
    msgs = [random_message(rng, i) for i in range(n)]
    with crashable_store() as s:
        s.put_all(msgs)
        s.crash_and_reopen()
        for topic, queue_id in sorted({(m.topic, m.queue_id) for m in msgs}):
            sent = [m for m in msgs if (m.topic, m.queue_id) == (topic, queue_id)]
            got = queue_messages(s.store, topic, queue_id)
            expect(len(got) == len(sent),
                   _("after a crash and recovery, queue {queue} holds {n} of the {sent} messages put (recovery keeps "
                     "the records up to the first one that fails its checks and cuts the rest)").format(
                       queue=f"{topic}/{queue_id}", n=len(got), sent=len(sent)))
            for k, (m, g) in enumerate(zip(sent, got, strict=True)):
                same = (g.body == m.body and g.topic == m.topic and g.queue_id == m.queue_id
                        and g.flag == m.flag and g.properties.get("KEYS") == m.properties.get("KEYS")
                        and g.born_host == m.born_host and g.queue_offset == k)
                expect(same, _("queue {queue} message {k} came back different: put {put}, got {got}").format(
                    queue=f"{topic}/{queue_id}", k=k, put=repr(m), got=repr(g)))


@graded("lab02.encode_record", points=3, seeds=range(3), name="store_round_trip",
        about=N_("Your records in a real store: 60 random messages, a crash, recovery with CRC checks, every queue"
                 " read back (a record RocketMQ cannot parse is cut off by recovery, and everything after it)."))
def encode_round_trip(ctx: Ctx) -> None:
    round_trip(ctx)


# ---------------------------------------------------------------------- END_OF_FILE
def eof_cases() -> list[tuple[int, int, int]]:
    cases = []
    for size in (100, 4096):
        for length, pos in itertools.product(range(0, size + 2, 1 if size == 100 else 97), range(0, size + 1, 1 if size == 100 else 61)):
            cases.append((length, pos, size))
    return cases


@graded("lab02.is_end_of_file", points=3,
        about=N_("Does a record fit? Every length and position of a 100-byte file (and many of a 4 KiB one), "
                 "including a record that leaves exactly 8 bytes (it fits) and 7 (it does not)."))
def eof_table(ctx: Ctx) -> None:
    compare_table(eof_cases(), Calls(ctx.impl, post=bool), lambda c: is_end_of_file(*c),
                  lambda c: f"is_end_of_file(record_length={c[0]}, wrote_position={c[1]}, file_size={c[2]})",
                  why=lambda c, want: _("{left} bytes remain, the record needs {n} + 8 for the blank").format(
                      left=c[2] - c[1], n=c[0]))


@graded("lab02.is_end_of_file", points=3, seeds=range(3), name="rolling_files",
        about=N_("Your decision in a real store with 4 KiB files: records sized to leave exactly 8, 7 and 0 bytes,"
                 " random ones, a crash and recovery; every message must come back."))
def eof_rolling(ctx: Ctx) -> None:
    rng = random.Random(ctx.seed)
    msgs: list[Message] = []
    probe = len(encode_record(Message("TopicA", b"", born_host=HOSTS[0]), 0, ("127.0.0.1", 10911)))
    with crashable_store() as s:
        for i in range(50):
            size = rng.randrange(1, 900)
            files = s.store.commit_log.mapped_file_queue.mapped_files
            if i % 4 == 3 and files:  # sized so that it leaves exactly 8, 7 or 0 bytes of its file
                left = files[-1].file_size - files[-1].wrote_position
                if left - 8 - probe > 0:
                    size = left - rng.choice((8, 7, 0)) - probe
            msgs.append(Message("TopicA", random_bytes(rng, size), born_host=HOSTS[0],
                                born_timestamp=1_700_000_000_000 + i))
            s.put_all(msgs[-1:])
        s.crash_and_reopen()
        got = queue_messages(s.store, "TopicA", 0)
        expect(len(got) == len(msgs), _("after a crash and recovery {n} of {sent} messages remain (a file must end "
                                        "in a record that leaves at least 8 bytes, then the 8-byte END_OF_FILE "
                                        "blank)").format(n=len(got), sent=len(msgs)))
        expect([g.body for g in got] == [m.body for m in msgs], _("messages came back in the wrong order or changed"))


@graded("lab02.is_end_of_file", points=1,
        about=N_("3,000 seeded records and positions in files from 8 bytes to 1 GiB, at and around the last 8."))
def any_position(ctx: Ctx) -> None:
    rng = random.Random("lab02/any-position")
    cases = []
    for _i in range(3000):
        size = rng.choice((8, 100, 4096, 1 << 30))
        pos = rng.choice((0, size, rng.randrange(size + 1)))
        left = size - pos
        length = max(0, rng.choice((left - 8, left - 7, left - 9, left, rng.randrange(size + 2))))
        cases.append((length, pos, size))
    compare_table(cases, Calls(ctx.impl, post=bool), lambda c: is_end_of_file(*c),
                  lambda c: f"is_end_of_file(record_length={c[0]}, wrote_position={c[1]}, file_size={c[2]})",
                  why=lambda c, want: _("{left} bytes remain, the record needs {n} + 8 for the blank").format(
                      left=c[2] - c[1], n=c[0]))


# ---------------------------------------------------------------------- consume queue
@graded("lab02.unit_position", points=3,
        about=N_("The file and position of units 0..999 with files of 16, 1 and 300,000 units."))
def unit_table(ctx: Ctx) -> None:
    cases = [(i, size) for size in (20 * 16, 20, 20 * 300_000) for i in range(1000)] + [(10**9, 20 * 300_000)]
    compare_table(cases, Calls(ctx.impl, post=tuple), lambda c: unit_position(*c),
                  lambda c: f"unit_position(index={c[0]}, mapped_file_size={c[1]})")


@graded("lab02.unit_position", points=3, seeds=range(3), name="pull_every_queue",
        about=N_("Your lookup behind every pull: 60 messages over 4 queues with 16-unit consume-queue files, read "
                 "back in pulls of 1 to 32 from every offset, before and after a crash."))
def unit_pulls(ctx: Ctx) -> None:
    rng = random.Random(ctx.seed)
    msgs = [Message("TopicA", b"m%d" % i, queue_id=rng.randrange(4), born_host=HOSTS[0]) for i in range(60)]
    with crashable_store() as s:
        s.put_all(msgs)
        for before, phase in ((True, _("before the crash")), (False, _("after a crash and recovery"))):
            for q in range(4):
                sent = [m.body for m in msgs if m.queue_id == q]
                for start in range(len(sent)):
                    got = s.store.get_message("TopicA", q, start, rng.randrange(1, 33))
                    bodies = [m.body for m in got.messages]
                    expect(bool(bodies) and bodies == sent[start:start + len(bodies)],
                           _("{phase}: a pull of queue {q} from offset {start} returned {got}..., expected "
                             "{want}...").format(phase=phase, q=q, start=start, got=bodies[:3],
                                                 want=sent[start:start + 3]))
            if before:
                s.crash_and_reopen()


@graded("lab02.unit_position", points=1,
        about=N_("3,000 seeded unit indexes up to 2^40 with files of 1 to 300,000 units (the first and last unit "
                 "of a file and the first of the next)."))
def any_unit(ctx: Ctx) -> None:
    rng = random.Random("lab02/any-unit")
    cases = []
    for _i in range(3000):
        units = rng.choice((1, 2, 16, 300_000, rng.randrange(1, 10_000)))
        index = max(0, rng.choice((rng.randrange(2**40), rng.randrange(50) * units + rng.randrange(-1, 2))))
        cases.append((index, units * 20))
    compare_table(cases, Calls(ctx.impl, post=tuple), lambda c: unit_position(*c),
                  lambda c: f"unit_position(index={c[0]}, mapped_file_size={c[1]})")


# ---------------------------------------------------------------------- index file
@graded("lab02.index_positions", points=3,
        about=N_("Slot and entry positions for many key hashes, slot counts and entry numbers."))
def index_table(ctx: Ctx) -> None:
    rng = random.Random(5)
    cases = [(rng.randrange(2**31), slots, count) for slots in (1, 16, 5_000_000) for count in (1, 2, 63, 1000)
             for _i in range(40)] + [(0, 16, 1), (15, 16, 1), (16, 16, 1), (2**31 - 1, 5_000_000, 20_000_000)]
    compare_table(cases, Calls(ctx.impl, post=tuple), lambda c: index_positions(*c),
                  lambda c: f"index_positions(key_hash={c[0]}, hash_slot_num={c[1]}, index_count={c[2]})")


@graded("lab02.index_positions", points=1,
        about=N_("3,000 seeded key hashes (0 to 2^31 - 1, multiples of the slot count and one off), slot counts "
                 "and entry numbers."))
def any_slot(ctx: Ctx) -> None:
    rng = random.Random("lab02/any-slot")
    cases = []
    for _i in range(3000):
        slots = rng.choice((1, 2, 16, 500, 5_000_000))
        key = min(2**31 - 1, max(0, rng.choice((rng.randrange(2**31), rng.randrange(20) * slots + rng.randrange(-1, 2)))))
        cases.append((key, slots, rng.choice((1, 2, rng.randrange(1, 20_000_001)))))
    compare_table(cases, Calls(ctx.impl, post=tuple), lambda c: index_positions(*c),
                  lambda c: f"index_positions(key_hash={c[0]}, hash_slot_num={c[1]}, index_count={c[2]})")


@graded("lab02.index_positions", points=3, seeds=range(3), name="query_by_key",
        about=N_("Your arithmetic in every index write and lookup: 150 messages over 9 keys with 16 slots and 64 "
                 "entries per file (chains of collisions, three files), each key queried after a crash."))
def index_queries(ctx: Ctx) -> None:
    rng = random.Random(ctx.seed)
    msgs = [Message("TopicA", b"m%d" % i, keys=f"key-{rng.randrange(9)}", born_host=HOSTS[0]) for i in range(150)]
    with crashable_store() as s:
        s.put_all(msgs)
        s.crash_and_reopen()
        for k in range(9):
            key = f"key-{k}"
            want = sorted(m.body for m in msgs if m.properties.get("KEYS") == key)
            result = s.store.query_message("TopicA", key, max_num=64)
            # a set: after the crash the message at the end of the index files kept is indexed again (as Java)
            got = sorted({decode_message(buf).body for buf in result.message_buffer_list})
            expect(got == want[-len(got):] if got else not want,
                   _("query by key {key} found {n} messages, expected {want_n} (e.g. {want}, got {got})").format(
                       key=repr(key), n=len(got), want_n=len(want), want=want[:3], got=got[:3]))
            expect(len(got) == len(want), f"query by key {key!r} found {len(got)} of its {len(want)} messages")
