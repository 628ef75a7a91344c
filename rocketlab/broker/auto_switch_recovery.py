"""What a controller-mode broker does to its store when it starts or changes role (RocketMQ 5.3.3):
``AutoSwitchHAService.truncateInvalidMsg``, ``ConsumeQueueStore.compensateForHA`` and the consume queues'
ends as ``ConsumeQueue.recover`` finds them on disk. Used by
:class:`~rocketlab.broker.auto_switch_broker.AutoSwitchBrokerCore`."""

from __future__ import annotations

from pathlib import Path

from rocketlab.ha.autoswitch_client import lower_confirm_offset
from rocketlab.store import MessageStore
from rocketlab.store.consume_queue import INT_MAX as CQ_FILLER_SIZE
from rocketlab.store.consume_queue import UNIT
from rocketlab.store.message_codec import check_message_and_return_size


def truncate_invalid_msg(store: MessageStore) -> int:
    """``AutoSwitchHAService.truncateInvalidMsg``: the store cuts a half-written tail behind the dispatch
    point; when it cut something, ``CommitLog.truncateDirtyFiles`` also lowers the confirm offset to the
    cut. Returns where it cut (-1: nothing was behind)."""
    before = store.get_max_phy_offset()
    cut = store.truncate_invalid_msg()
    if 0 <= cut < before:
        lower_confirm_offset(store, cut)
    return cut


def compensate_for_ha(store: MessageStore) -> None:
    """``ConsumeQueueStore.compensateForHA`` (#7689's fix, 5.2.0): the records between the confirm offset
    and the end of the log are in no consume queue yet; each one's queue offset + 1 becomes its queue's
    next offset, so a new master never hands out a queue offset a record already holds."""
    cl = store.commit_log
    start = max(store.get_confirm_offset(), 0)
    top = store.get_max_phy_offset()
    found: dict[tuple[str, int], int] = {}
    while start < top:
        data = cl.get_data(start)
        if not data:
            break
        request = check_message_and_return_size(data, 0, len(data), check_crc=True, read_body=False,
                                                expected_offset=start)
        if not request.success:
            break
        if request.msg_size == 0:  # the blank at a file's end
            start = cl.roll_next_file(start)
            continue
        found[(request.topic, request.queue_id)] = request.consume_queue_offset + 1
        start += request.msg_size
    if found:
        with cl.put_message_lock:
            cl.topic_queue_table.update(found)


def consume_queue_ends(root: Path) -> dict[tuple[str, int], int]:
    """Where each consume queue under ``root`` (``consumequeue/<topic>/<queueId>/``) ends on disk: the commit
    log end of its last valid unit (``offset >= 0 and size > 0``, filler units skipped), read from its
    last three files as ``ConsumeQueue.recover`` scans them; read only."""
    ends: dict[tuple[str, int], int] = {}
    if not root.is_dir():
        return ends
    for topic_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for queue_dir in sorted(p for p in topic_dir.iterdir() if p.is_dir() and p.name.lstrip("-").isdigit()):
            files = sorted((p for p in queue_dir.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
            end, whole = -1, True
            for f in files[-3:]:
                data = f.read_bytes()
                for offset, size, _ in UNIT.iter_unpack(data[:len(data) - len(data) % UNIT.size]):
                    if offset < 0 or size <= 0:
                        whole = False
                        break
                    if size != CQ_FILLER_SIZE:
                        end = offset + size
                if not whole:
                    break
            if end >= 0:
                ends[(topic_dir.name, int(queue_dir.name))] = end
    return ends
