"""A SYNC_FLUSH writer for the crash test: run as ``python -m tests.store.crash_writer ROOT SEED``.

Several producer threads put messages whose bodies are derived from (seed, producer, index); after
each PUT_OK the process prints ``ack <producer> <index> <wrote_offset> <queue_offset>`` and flushes
stdout. The parent SIGKILLs it at a random point and checks every acknowledged message.
"""

from __future__ import annotations

import hashlib
import sys
import threading

from rocketlab.store import Message, MessageStore, PutMessageStatus

TOPIC = "CrashTopic"
PRODUCERS = 4
OPTIONS = dict(
    flush_disk_type="SYNC_FLUSH",
    mapped_file_size_commit_log=128 * 1024,
    mapped_file_size_consume_queue=20 * 50,
    max_hash_slot_num=64,
    max_index_num=128,
)


def expected_body(seed: int, producer: int, index: int) -> bytes:
    """32..384 bytes, and one message in 16 of 16..48 KiB: records vary in size, files roll often, and
    a kill sometimes lands while a large record is being copied."""
    digest = hashlib.sha256(f"{seed}/{producer}/{index}".encode()).digest()
    if digest[1] % 16 == 0:
        return digest * (512 + digest[0] * 4)
    return digest * (1 + (digest[0] % 12))


def main() -> None:
    root, seed = sys.argv[1], int(sys.argv[2])
    store = MessageStore.open(root, threads=True, **OPTIONS)
    out_lock = threading.Lock()
    print("ready", flush=True)

    def produce(producer: int) -> None:
        index = store.get_max_offset_in_queue(TOPIC, producer)  # index == queue offset, across runs
        while True:
            body = expected_body(seed, producer, index)
            r = store.put_message(Message(TOPIC, body, queue_id=producer, keys=f"{producer}-{index}"))
            if r.status is PutMessageStatus.PUT_OK:  # acknowledged: on disk
                with out_lock:
                    print(f"ack {producer} {index} {r.wrote_offset} {r.queue_offset}", flush=True)
            if r.is_ok():  # stored (maybe with a flush timeout): the queue offset moved on
                index += 1

    threads = [threading.Thread(target=produce, args=(p,), daemon=True) for p in range(PRODUCERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
