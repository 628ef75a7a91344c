"""A second client nobody here wrote: PyPI's ``rocketmq`` 0.4.4 (a ctypes binding of Apache's
rocketmq-client-cpp, bundled as ``librocketmq.so`` in its manylinux wheel), run in a process of its own.

``python -m rocketlab.oracle.pypi_client NAMESRV TOPIC COUNT GROUP`` sends COUNT messages (``send_sync``, tag
``TagA``, key ``py-<i>``, body ``pypi-<i>-größe``), then push-consumes them with a ``PushConsumer`` of GROUP
(clustering, from the group's offset: a new group starts at 0 while the queue's first message is in memory)
until all COUNT are back or 60 s pass. One JSON line per send and per receipt, then a summary line. The C++
client writes its logs under ``$HOME/logs/rocketmq-cpp``: the caller gives it a scratch ``HOME``. Its own
process, because the C++ client's threads and a crash in it must not take the caller with it.
"""

from __future__ import annotations

import json
import sys
import threading
import time

try:
    from rocketmq.client import (  # an optional dependency (the test extra)
        Message,
        Producer,
        PushConsumer,
        SendStatus,
    )
except ImportError:  # reported by run(); the module stays importable
    Message = Producer = PushConsumer = SendStatus = None  # type: ignore[assignment,misc]

IMPORT_ERROR = "PyPI's rocketmq (0.4.4) is not installed: pip install rocketmq==0.4.4"


def _text(value: object) -> object:
    return value.decode("utf-8") if isinstance(value, bytes) else value


_OUT = threading.Lock()


def emit(**fields: object) -> None:
    """One JSON line (the C++ client calls back on several threads: one line at a time)."""
    with _OUT:
        print(json.dumps({k: _text(v) for k, v in fields.items()}, ensure_ascii=False), flush=True)


def run(namesrv: str, topic: str, count: int, group: str, timeout_s: float = 60.0) -> int:
    if Producer is None:
        emit(error=IMPORT_ERROR)
        return 2
    producer = Producer(f"{group}_producer")
    producer.set_namesrv_addr(namesrv)
    producer.start()
    sent: dict[str, int] = {}
    for i in range(count):
        msg = Message(topic)
        msg.set_keys(f"py-{i}")
        msg.set_tags("TagA")
        msg.set_body(f"pypi-{i}-größe")
        msg.set_property("i", str(i))
        result = producer.send_sync(msg)
        emit(event="send", i=i, status=result.status.name, msg_id=result.msg_id, offset=result.offset)
        if result.status == SendStatus.OK:  # the binding names SEND_OK "OK"
            sent[result.msg_id] = i
    producer.shutdown()
    got: dict[str, int] = {}
    lock = threading.Lock()

    def on_message(msg) -> None:
        with lock:
            got[msg.id] = got.get(msg.id, 0) + 1
        emit(event="recv", msg_id=msg.id, queue=msg.queue_id, queue_offset=msg.queue_offset,
             body=msg.body, tags=msg.tags, keys=msg.keys, i=msg.get_property("i"))

    consumer = PushConsumer(group)
    consumer.set_namesrv_addr(namesrv)
    consumer.subscribe(topic, on_message)
    consumer.start()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not set(sent) <= set(got):
        time.sleep(0.2)
    time.sleep(1.0)  # a duplicate that follows is counted too
    consumer.shutdown()
    emit(sent=len(sent), received=len(set(sent) & set(got)), duplicates=sum(n - 1 for n in got.values()),
         unexpected=len(set(got) - set(sent)))
    return 0 if len(sent) == count and set(sent) <= set(got) else 1


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print("usage: python -m rocketlab.oracle.pypi_client NAMESRV TOPIC COUNT GROUP", file=sys.stderr)
        sys.exit(2)
    sys.exit(run(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]))
