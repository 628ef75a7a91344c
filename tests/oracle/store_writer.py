"""``python -m tests.oracle.store_writer ROOT RELEASE SEED``: our store with its service threads (flush,
reput, consume-queue flush) putting the oracle mix forever, one ``STATUS WROTE_OFFSET`` line per put, until
it is killed: the crash that ``test_a_rocketlab_store_killed_mid_write_is_recovered_alike`` recovers."""

from __future__ import annotations

import sys

from rocketlab.oracle.mix import mixed_messages
from rocketlab.oracle.store import open_ours
from rocketlab.store.message import keeps_last_property_separator
from tests.oracle.test_store_oracle import OPTIONS


def main(root: str, release: str, seed: int) -> None:
    store = open_ours(root, threads=True, rocketmq_version=release, **OPTIONS)
    items = mixed_messages(seed, 2000, last_separator=keeps_last_property_separator(release), batches=False)
    for msg in items:
        r = store.put_message(msg)
        print(r.status.name, r.wrote_offset, flush=True)
    store.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
