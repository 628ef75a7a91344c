"""A crash of the store's process, for the simulator: ``kill -9``, or a power loss.

A killed process leaves what it wrote in the page cache, so the files keep every appended byte but the
``abort`` file stays and the next start recovers abnormally. A power loss (``lose_unflushed=True``)
also loses what was written to the CommitLog but not yet flushed: those bytes are zeroed, as if they
never reached the disk. Nothing is flushed on the way down. Simplified: consume queues and index
files keep their unflushed bytes (recovery trims and rebuilds them from the CommitLog anyway).
"""

from __future__ import annotations

import os

from rocketlab.store.message_store import DefaultMessageStore


def simulate_crash(store: DefaultMessageStore, lose_unflushed: bool = False) -> int:
    """Close the store's files as a crash would; returns how many CommitLog bytes were lost."""
    store.shutdown_flag = True
    store.halt_services()  # a flush under way finishes; none starts after (files close below)
    lost = 0
    if store.commit_log is not None:
        for mf in store.commit_log.mapped_file_queue.mapped_files:
            if lose_unflushed and mf.available and mf.wrote_position > mf.flushed_position:
                lost += mf.wrote_position - mf.flushed_position
                mf.mm[mf.flushed_position:mf.wrote_position] = bytes(mf.wrote_position - mf.flushed_position)
            mf.close()
        store.commit_log = None
    for cq in store._all_consume_queues():
        for mf in cq.mapped_file_queue.mapped_files:
            mf.close()
    if store.index_service is not None:
        for index_file in store.index_service.index_file_list:
            index_file.close()
        store.index_service = None
    checkpoint = store.store_checkpoint
    if checkpoint is not None and checkpoint._fd >= 0:
        os.close(checkpoint._fd)
        checkpoint._fd = -1
    store.store_checkpoint = None
    store._release()
    return lost
