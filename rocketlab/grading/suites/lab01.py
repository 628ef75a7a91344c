"""Lab 01's graded tests: the slave's ``TransferParser`` and ``decide_wait_transfer``.

Scenarios run a simulated master and slave(s) whose TCP streams split and merge writes at random, with
the every-event checkers of classic HA: the slave's CommitLog is always a byte prefix of the master's,
and a SYNC_MASTER's PUT_OK only once the message is on a slave.
"""

from __future__ import annotations

import itertools
import random
import struct

from rocketlab.errors import RemoteProtocolError
from rocketlab.grading.registry import Ctx, graded
from rocketlab.grading.suites._common import Calls, compare_table, drain, expect
from rocketlab.ha.group_transfer import decide_wait_transfer
from rocketlab.ha.wire import NEED_DATA, encode_transfer
from rocketlab.i18n import N_, _
from rocketlab.sim.cluster import Cluster


# ---------------------------------------------------------------------- TransferParser
def _frames(seed: int) -> list[tuple[int, bytes]]:
    rng = random.Random(seed)
    offset, frames = 0, []
    for _frame in range(12):
        size = rng.choice((0, 0, 1, 7, 12, 13, 200, 4096))
        body = bytes(rng.randrange(256) for _byte in range(size))
        frames.append((offset, body))
        offset += size
    return frames


def _parse(impl, chunks: list[bytes], max_body: int | None = None) -> list[tuple[int, bytes]]:
    parser = impl() if max_body is None else impl(max_body)
    return [(event.phy_offset, bytes(event.body)) for events in drain(parser, chunks, NEED_DATA) for event in events]


def _show(frames: list[tuple[int, bytes]]) -> str:
    return ", ".join(_("(phyOffset {offset}, {n} bytes)").format(offset=o, n=len(b)) for o, b in frames[:6]) + (
        " ..." if len(frames) > 6 else "")


@graded("lab01.transfer_parser", points=2,
        about=N_("Frames read whole, all in one read and one per read: heartbeats (bodySize 0) and data frames."))
def whole_frames(ctx: Ctx) -> None:
    frames = _frames(1)
    stream = [encode_transfer(o, b) for o, b in frames]
    for chunks, how in ((stream, _("one frame per read")), ([b"".join(stream)], _("all frames in one read"))):
        got = _parse(ctx.impl, chunks)
        expect(got == frames, _("{how}: you returned {n} frames [{got}], expected {want_n} [{want}]").format(
            how=how, n=len(got), got=_show(got), want_n=len(frames), want=_show(frames)))


@graded("lab01.transfer_parser", points=3,
        about=N_("The same frames read one byte at a time, and cut at random places (headers cut too): the same "
                 "events, NEED_DATA while a frame is incomplete."))
def split_reads(ctx: Ctx) -> None:
    for seed in range(20):
        frames = _frames(seed)
        data = b"".join(encode_transfer(o, b) for o, b in frames)
        rng = random.Random(seed)
        cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randrange(1, 40))))
        chunks = [data[i:j] for i, j in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        if seed == 0:
            chunks = [data[i:i + 1] for i in range(len(data))]
        got = _parse(ctx.impl, chunks)
        expect(got == frames, _("reads cut at bytes {cuts} of a {size}-byte stream: you returned {n} frames [{got}], "
                                "expected {want_n} [{want}]").format(
            cuts=f"{cuts[:8]}{'...' if len(cuts) > 8 else ''}", size=len(data), n=len(got), got=_show(got),
            want_n=len(frames), want=_show(frames)))


@graded("lab01.transfer_parser", points=2,
        about=N_("A negative phyOffset, a negative bodySize or one above max_body raise RemoteProtocolError; a "
                 "body of exactly max_body is fine."))
def bad_frames(ctx: Ctx) -> None:
    header = struct.Struct(">qi")
    cases = [(header.pack(-1, 0), _("a negative phyOffset")), (header.pack(0, -5), _("a negative bodySize")),
             (header.pack(0, 101), _("bodySize 101 with max_body 100"))]
    for data, what in cases:
        try:
            _parse(ctx.impl, [data + bytes(200)], max_body=100)
        except RemoteProtocolError:
            continue
        raise AssertionError(_("a frame with {what} was accepted: raise RemoteProtocolError (the slave must close "
                               "the connection)").format(what=what))
    got = _parse(ctx.impl, [header.pack(0, 100) + bytes(100)], max_body=100)
    expect(got == [(0, bytes(100))], _("a frame with bodySize == max_body (100) gave {got}").format(got=_show(got)))


@graded("lab01.transfer_parser", points=2,
        about=N_("The header is judged as soon as its 12 bytes are in: a bad one raises RemoteProtocolError before"
                 " any of its body arrives (a bodySize of 2 GiB must not make the slave wait for 2 GiB), a good "
                 "one answers NEED_DATA until its body is complete."))
def header_alone(ctx: Ctx) -> None:
    header = struct.Struct(">qi")
    for offset, size, max_body in ((0, 2**31 - 1, 1024), (0, 1025, 1024), (-(2**63), 10, 1024), (7, -1, 1024),
                                   (0, 65, 64)):
        parser = ctx.impl(max_body)
        raw = header.pack(offset, size)
        parser.receive_data(raw[:5])  # the header in two reads, then nothing more
        parser.receive_data(raw[5:])
        try:
            event = parser.next_event()
        except RemoteProtocolError:
            continue
        raise AssertionError(_("a header alone (phyOffset {offset}, bodySize {size}, max_body {max_body}) answered "
                               "{event}: validate the header as soon as its 12 bytes are in and raise "
                               "RemoteProtocolError, without waiting for the body").format(
            offset=offset, size=size, max_body=max_body, event=repr(event)))
    parser = ctx.impl(64)
    parser.receive_data(header.pack(5, 64) + bytes(63))
    expect(parser.next_event() is NEED_DATA, _("a good header with 63 of its 64 body bytes must answer NEED_DATA"))
    parser.receive_data(b"\x01")
    event = parser.next_event()
    expect(event is not NEED_DATA and (event.phy_offset, bytes(event.body)) == (5, bytes(63) + b"\x01"),
           _("once the last body byte arrived the frame must come out; got {event}").format(event=repr(event)))


def _chunks(rng: random.Random, data: bytes) -> list[bytes]:
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randrange(1, 30)))) if len(data) > 1 else []
    return [data[i:j] for i, j in zip([0, *cuts], [*cuts, len(data)], strict=True)]


@graded("lab01.transfer_parser", points=2,
        about=N_("Two parsers (two connections, as after a slave's reconnect or with two slaves) fed in turns, "
                 "each read cut at random: each parser must return its own stream's frames (no state shared "
                 "between them), and a parser that raised leaves the other one unharmed. 30 seeded streams."))
def two_connections(ctx: Ctx) -> None:
    for seed in range(30):
        rng = random.Random(f"two-connections/{seed}")
        streams = [_frames(seed * 2 + k) for k in range(2)]
        parsers = [ctx.impl() for _ in range(2)]
        pending = [_chunks(rng, b"".join(encode_transfer(o, b) for o, b in frames)) for frames in streams]
        got: list[list[tuple[int, bytes]]] = [[], []]
        while pending[0] or pending[1]:
            k = rng.choice([i for i in (0, 1) if pending[i]])
            events = drain(parsers[k], [pending[k].pop(0)], NEED_DATA)[0]
            got[k] += [(event.phy_offset, bytes(event.body)) for event in events]
        for k in (0, 1):
            expect(got[k] == streams[k], _("seed {seed}: two parsers fed in turns; parser {k} returned {n} frames "
                                           "[{got}], expected {want_n} [{want}] (each connection needs its own "
                                           "buffer)").format(seed=seed, k=k, n=len(got[k]), got=_show(got[k]),
                                                             want_n=len(streams[k]), want=_show(streams[k])))
    good, bad = ctx.impl(100), ctx.impl(100)
    good.receive_data(encode_transfer(0, b"abc")[:7])
    bad.receive_data(struct.pack(">qi", -1, 0))
    try:
        bad.next_event()
    except RemoteProtocolError:
        pass
    good.receive_data(encode_transfer(0, b"abc")[7:])
    event = good.next_event()
    expect(event is not NEED_DATA and (event.phy_offset, bytes(event.body)) == (0, b"abc"),
           _("a parser whose neighbour rejected a bad frame lost its own half-read frame: got {event}").format(
               event=repr(event)))


def replication(ctx: Ctx, role: str = "ASYNC_MASTER") -> Cluster:
    c = ctx.keep(Cluster.master_slave(role, slaves=1, seed=ctx.seed))
    rng = random.Random(ctx.seed)
    c.run_for(6_000)
    for i in range(60):
        c.put(bytes(rng.randrange(256) for _ in range(rng.choice((10, 300, 3000)))), wait=False, keys=f"k{i}")
        c.run_for(rng.choice((0, 1, 5, 50)))
        if i == 30:
            c.crash("n1")
            c.run_for(500)
            c.restart("n1")
    master = c.node("n0").store.commit_log
    expect(c.run_until(lambda c: c.alive("n1") and c.node("n1").store.commit_log.get_max_offset()
                       == master.get_max_offset(), timeout_ms=20_000),
           _("the slave did not catch up with the master within 20 s: slave at {slave}, master at {master}; the "
             "slave's HA client closed with: {reasons}").format(
               slave=c.node('n1').store.commit_log.get_max_offset(), master=master.get_max_offset(),
               reasons=c.node('n1').ha_client.close_reasons[-3:]))
    return c


@graded("lab01.transfer_parser", points=3, seeds=range(4), name="replication",
        about=N_("Your parser in a real slave: 60 puts of 10 B-3 KB over a stream that splits and merges writes, "
                 "the slave restarted half-way; it must end byte-identical to the master (checked at every event)."))
def parser_replication(ctx: Ctx) -> None:
    replication(ctx)


# ---------------------------------------------------------------------- decide_wait_transfer
def transfer_cases() -> list[tuple[int, int, int, int, list[int], int]]:
    cases = []
    for next_offset, ack_nums, push2, acks, now in itertools.product(
            (100, 200), (1, 2, 3), (0, 99, 100, 101, 200), ([], [100], [99, 100], [100, 250], [50, 60]),
            (900, 999, 1000, 1001)):
        cases.append((next_offset, ack_nums, 1000, push2, acks, now))
    return cases


@graded("lab01.decide_wait_transfer", points=3,
        about=N_("doWaitTransfer for one put: 4.x (ack_nums 1) and 5.x counts (2, 3), before, at and after the "
                 "deadline, acks below, at and beyond the put's end."))
def transfer_table(ctx: Ctx) -> None:
    compare_table(transfer_cases(), Calls(ctx.impl, lambda c: (c[0], c[1], c[2], c[3], list(c[4]), c[5])),
                  lambda c: decide_wait_transfer(c[0], c[1], c[2], c[3], list(c[4]), c[5]),
                  lambda c: (f"decide_wait_transfer(next_offset={c[0]}, ack_nums={c[1]}, deadline_ms={c[2]}, "
                             f"push2_slave_max_offset={c[3]}, slave_acks={c[4]}, now_ms={c[5]})"))


def any_transfer_cases(seed: int = 11, count: int = 4000) -> list[tuple[int, int, int, int, list[int], int]]:
    """Seeded draws over the whole domain: 1 to 4 acks needed, 0 to 4 slaves, every offset and clock at,
    just below or just above the put's end and deadline."""
    rng = random.Random(seed)
    cases = []
    for _case in range(count):
        end, deadline = rng.choice((0, 1, 100, 2**40)), rng.choice((0, 1000))
        near = lambda v: max(0, v + rng.choice((-1, 0, 0, 1, rng.randrange(-50, 50))))  # noqa: E731
        acks = [near(end) for _ in range(rng.randrange(5))]
        cases.append((end, rng.randrange(1, 5), deadline, near(end), acks, near(deadline)))
    return cases


@graded("lab01.decide_wait_transfer", points=2,
        about=N_("4,000 seeded draws: 1 to 4 acks needed from 0 to 4 slaves, offsets and clocks at every boundary."))
def any_transfer(ctx: Ctx) -> None:
    compare_table(any_transfer_cases(), Calls(ctx.impl, lambda c: (c[0], c[1], c[2], c[3], list(c[4]), c[5])),
                  lambda c: decide_wait_transfer(c[0], c[1], c[2], c[3], list(c[4]), c[5]),
                  lambda c: (f"decide_wait_transfer(next_offset={c[0]}, ack_nums={c[1]}, deadline_ms={c[2]}, "
                             f"push2_slave_max_offset={c[3]}, slave_acks={c[4]}, now_ms={c[5]})"))


def _sync_puts(c: Cluster, n: int, what: str) -> list[str]:
    statuses = []
    for i in range(n):
        h = c.put(b"sync-%d" % i)
        expect(h.done, _("{what}: put {i} was never answered (a put must end by its deadline)").format(what=what, i=i))
        statuses.append(h.status)
    return statuses


@graded("lab01.decide_wait_transfer", points=3, seeds=range(3), name="sync_master",
        about=N_("Your decision in a SYNC_MASTER: with the slave up every put is PUT_OK (and on the slave), with "
                 "it down each ends FLUSH_SLAVE_TIMEOUT at its deadline, and PUT_OK again once it is back."))
def sync_master(ctx: Ctx) -> None:
    c = ctx.keep(Cluster.master_slave("SYNC_MASTER", slaves=1, seed=ctx.seed))
    c.run_for(7_000)
    up = _sync_puts(c, 10, _("slave up"))
    expect(up == ["PUT_OK"] * 10, _("with the slave up the puts answered {statuses}").format(statuses=up))
    c.crash("n1")
    t0 = c.now_ms
    down = _sync_puts(c, 2, _("slave down"))
    expect(set(down) <= {"FLUSH_SLAVE_TIMEOUT", "SLAVE_NOT_AVAILABLE"},
           _("with the slave down the puts answered {statuses}").format(statuses=down))
    took = c.now_ms - t0
    expect(took <= 2 * 3_000 + 500, _("two puts with the slave down took {took} ms; each must end at its 3 s "
                                       "deadline").format(took=took))
    c.restart("n1")
    c.run_for(7_000)
    back = _sync_puts(c, 5, _("slave back"))
    expect(back == ["PUT_OK"] * 5, _("once the slave was back the puts answered {statuses}").format(statuses=back))


@graded("lab01.decide_wait_transfer", points=2, seeds=range(2), name="in_sync_replicas",
        about=N_("RocketMQ 5's counting: 2 slaves, inSyncReplicas 2 keeps PUT_OK with one slave down (the master "
                 "counts as one), inSyncReplicas 3 times out until both are up."))
def in_sync_replicas(ctx: Ctx) -> None:
    for need, expected_down in ((2, "PUT_OK"), (3, "FLUSH_SLAVE_TIMEOUT")):
        c = ctx.keep(Cluster.master_slave("SYNC_MASTER", slaves=2, seed=ctx.seed, ha={"in_sync_replicas": need}))
        c.run_for(7_000)
        up = _sync_puts(c, 5, _("inSyncReplicas {need}, both slaves up").format(need=need))
        expect(up == ["PUT_OK"] * 5, _("inSyncReplicas {need} with both slaves up: the puts answered {statuses}").format(
            need=need, statuses=up))
        c.crash("n2")
        down = _sync_puts(c, 2, _("inSyncReplicas {need}, one slave down").format(need=need))
        expect(down == [expected_down] * 2,
               _("inSyncReplicas {need} with one of two slaves down: the puts answered {statuses}, expected "
                 "{want}").format(need=need, statuses=down, want=expected_down))
        c.close()
