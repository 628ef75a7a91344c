"""Small helpers shared by the DLedger tests."""

from __future__ import annotations

from typing import Any

from rocketlab.core import OutputBuilder
from rocketlab.dledger import DLedgerConfig

PEERS3 = "n0-127.0.0.1:40911;n1-127.0.0.1:40912;n2-127.0.0.1:40913"


def make_config(**overrides: Any) -> DLedgerConfig:
    """Three members, ``n0`` is self, 1 KiB data files, 8-slot index files, no fsync."""
    base = {"peers": PEERS3, "self_id": "n0", "mapped_file_size_for_entry_data": 1024,
            "mapped_file_size_for_entry_index": 32 * 8, "fsync_policy": "never"}
    return DLedgerConfig(**(base | overrides))


class Replies:
    """A responder that records what it was asked to answer."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def __call__(self, response: Any, out: OutputBuilder) -> None:
        self.sent.append(response)

    @property
    def last(self) -> Any:
        assert self.sent, "nothing was answered"
        return self.sent[-1]
