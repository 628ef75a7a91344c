"""DLedgerEntry: one log entry, and the byte-layout constants every replica shares.

Layout (big-endian, 48-byte header then the body), as DLedger 0.1 - 0.3.x writes it::

    offset  size  field
    0       4     magic      1 (MAGIC_1); rocketlab's no-op entries use 2 (master's EntryType.NOOP)
    4       4     size       48 + body length
    8       8     index      0-based, contiguous
    16      8     term
    24      8     pos        absolute byte offset in the data-file address space (POS_OFFSET)
    32      4     channel    reserved, 0
    36      4     chainCrc   reserved, never computed: 0
    40      4     bodyCrc    reserved, never computed: 0
    44      4     bodySize   (HEADER_SIZE = 44 is the offset of this field)
    48      n     body       (BODY_OFFSET)

Java file: ``entry/DLedgerEntry.java`` (DLedger 0.3.1.2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAGIC_1 = 1
CURRENT_MAGIC = MAGIC_1
MAGIC_NOOP = 2
VALID_MAGICS = (MAGIC_1, MAGIC_NOOP)
HEADER_SIZE = 44
BODY_OFFSET = 48
POS_OFFSET = 24
INDEX_UNIT_SIZE = 32
BLANK_MAGIC_CODE = -1
MIN_BLANK_LEN = 8


@dataclass(frozen=True, slots=True)
class DLedgerEntry:
    """Models DLedgerEntry, DLedger 0.3.1.2.

    Equality compares size, magic, index, term, channel, pos and body - not the two CRCs - exactly as
    Java's ``equals``; the 0.3.x COMPARE step relies on it (the ``pos`` included).

    Simplified: immutable (Java's setters become :meth:`with_`); ``body`` is ``None`` only when a
    decoded header's bodySize was impossible (Java's "corrupt bodySize -> body null").
    """

    magic: int = CURRENT_MAGIC
    size: int = 0
    index: int = 0
    term: int = 0
    pos: int = 0
    channel: int = 0
    chain_crc: int = field(default=0, compare=False)
    body_crc: int = field(default=0, compare=False)
    body: bytes | None = b""

    def compute_size_in_bytes(self) -> int:
        """``HEADER_SIZE + 4 + body.length``."""
        return HEADER_SIZE + 4 + len(self.body or b"")

    @property
    def is_noop(self) -> bool:
        return self.magic == MAGIC_NOOP

    def with_(self, **changes: Any) -> DLedgerEntry:
        fields = {"magic": self.magic, "size": self.size, "index": self.index, "term": self.term, "pos": self.pos,
                  "channel": self.channel, "chain_crc": self.chain_crc, "body_crc": self.body_crc, "body": self.body}
        unknown = changes.keys() - fields.keys()
        if unknown:
            raise TypeError(f"DLedgerEntry has no field(s) {sorted(unknown)}")
        fields.update(changes)
        return DLedgerEntry(**fields)

    def __repr__(self) -> str:
        body = self.body if self.body is None or len(self.body) <= 16 else self.body[:16] + b"..."
        return (f"DLedgerEntry(index={self.index}, term={self.term}, pos={self.pos}, size={self.size}, "
                f"magic={self.magic}, body={body!r})")
