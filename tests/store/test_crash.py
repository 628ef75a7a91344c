"""A real process is SIGKILLed while it writes with SYNC_FLUSH; after restart every acknowledged
message is readable and intact, and new puts work.

The default run uses a few seeds; ``ROCKETLAB_FULL=1`` (or ``-m slow``) runs a wider sweep. The seed
is in the test id and in every assertion message.
"""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
import time
import zlib

import pytest

from rocketlab.store import GetMessageStatus, Message, MessageStore, PutMessageStatus
from tests.store.crash_writer import OPTIONS, PRODUCERS, TOPIC, expected_body

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_writer_until_killed(root: str, seed: int, rng: random.Random) -> list[tuple[int, int, int, int]]:
    """Start the writer, SIGKILL it after a random number of acks (plus a random delay), return the acks."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.store.crash_writer", root, str(seed)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    kill_after = rng.randint(1, 300)
    acks = []
    buffer = b""
    deadline = time.monotonic() + 60
    poller = select.poll()  # not select(): the suite may hold descriptors above 1023 by now
    poller.register(proc.stdout.fileno(), select.POLLIN)
    try:
        while len(acks) < kill_after:
            assert time.monotonic() < deadline, f"seed {seed}: writer too slow"
            ready = poller.poll(1000)
            if not ready:
                assert proc.poll() is None, f"seed {seed}: writer died: {proc.stderr.read().decode()[-2000:]}"
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            assert chunk, f"seed {seed}: writer closed stdout: {proc.stderr.read().decode()[-2000:]}"
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            acks += [tuple(map(int, ln.split()[1:])) for ln in lines if ln.startswith(b"ack ")]
        time.sleep(rng.uniform(0, 0.02))
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        rest, _ = proc.communicate()
    buffer += rest
    acks += [tuple(map(int, ln.split()[1:])) for ln in buffer.split(b"\n") if ln.startswith(b"ack ")]
    assert proc.returncode == -signal.SIGKILL
    return acks


def check_after_restart(root: str, seed: int, acks: list) -> None:
    with MessageStore.open(root, threads=False, **OPTIONS) as store:
        report = store.recovery_report
        assert not report.normal, f"seed {seed}: the abort file should have been left by the kill"
        for producer, index, wrote_offset, queue_offset in acks:
            body = expected_body(seed, producer, index)
            m = store.look_message_by_offset(wrote_offset)
            assert m is not None and m.body == body, f"seed {seed}: ack {producer}/{index} at {wrote_offset} lost"
            assert m.keys == f"{producer}-{index}" and m.queue_offset == queue_offset, f"seed {seed}"
            got = store.get_message(TOPIC, producer, queue_offset, max_msg_nums=1)
            assert got.status is GetMessageStatus.FOUND and got.messages[0].body == body, f"seed {seed}: {report}"
        for producer in range(PRODUCERS):  # everything in the queue is intact and in order
            offset = 0
            while True:
                got = store.get_message(TOPIC, producer, offset)
                if not got.message_buffer_list:
                    break
                for m in got.messages:
                    expected = {expected_body(seed, producer, m.queue_offset), b"after-crash"}
                    assert m.body in expected, f"seed {seed}: queue {producer} offset {m.queue_offset}"
                    assert m.body_crc == zlib.crc32(m.body) & 0x7FFFFFFF, f"seed {seed}"
                offset = got.next_begin_offset
        before = {p: store.get_max_offset_in_queue(TOPIC, p) for p in range(PRODUCERS)}
        for p in range(PRODUCERS):
            r = store.put_message(Message(TOPIC, b"after-crash", queue_id=p))
            assert r.status is PutMessageStatus.PUT_OK and r.queue_offset == before[p], f"seed {seed}"
        store.reput()
        for p in range(PRODUCERS):
            assert store.get_message(TOPIC, p, before[p]).messages[0].body == b"after-crash", f"seed {seed}"
    with MessageStore.open(root, threads=False, **OPTIONS) as store:
        assert store.recovery_report.normal and not store.recovery_report.truncated, f"seed {seed}"


def crash_cycle(tmp_path, seed: int, rounds: int) -> None:
    root = str(tmp_path / f"crash-{seed}")
    rng = random.Random(seed)
    for _ in range(rounds):
        acks = run_writer_until_killed(root, seed, rng)
        assert acks, f"seed {seed}: no message was acknowledged"
        check_after_restart(root, seed, acks)


@pytest.mark.realnet
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sigkill_sync_flush_writer(tmp_path, seed):
    crash_cycle(tmp_path, seed, rounds=1)


@pytest.mark.slow
@pytest.mark.realnet
@pytest.mark.parametrize("seed", range(100, 120))
def test_sigkill_sync_flush_writer_sweep(tmp_path, seed):
    crash_cycle(tmp_path, seed, rounds=3)
