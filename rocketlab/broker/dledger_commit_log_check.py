"""One record of a DLedger-backed commit log, in either format: an old CommitLog record or a DLedger entry.

Models ``DLedgerCommitLog.checkMessageAndReturnSize`` (RocketMQ 4.9.5), which the reput and the recovery
of the old files use: an old record is told from a DLedger entry by its second int (an old magic code);
a DLedger entry's 48-byte header is skipped; DLedger's blank rolls to the next file.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from rocketlab.dledger.entry import BLANK_MAGIC_CODE as DLEDGER_BLANK_MAGIC_CODE
from rocketlab.dledger.entry import BODY_OFFSET, VALID_MAGICS
from rocketlab.dledger.entry_coder import decode_header
from rocketlab.store.dispatch_request import DispatchRequest
from rocketlab.store.message import MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2
from rocketlab.store.message_codec import check_message_and_return_size as check_old_format
from rocketlab.store.record_layout import BLANK_MAGIC_CODE, TOTAL_SIZE_AND_MAGIC

_OLD_FORMAT_SECOND_INT = (MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2, BLANK_MAGIC_CODE)


class Checked(NamedTuple):
    """What :func:`check_message_and_return_size` found: the DispatchRequest and how many bytes the
    reader advances over (``buffer_size``: the record, plus 48 for a DLedger entry; 0 = roll to the
    next file; -1 = stop here, torn or garbage)."""

    request: DispatchRequest
    buffer_size: int


def check_message_and_return_size(buf: Any, offset: int, limit: int, *, base: int | None = None,
                                  check_crc: bool = False, read_body: bool = False,
                                  old_format_only: bool = False) -> Checked:
    """``DLedgerCommitLog.checkMessageAndReturnSize``: one record of either format; never raises.

    ``buf[offset:limit]`` holds the bytes at absolute offset ``base + offset`` (``base=None`` skips the
    position checks). Old format when the second int is an old magic (message v1/v2 or the old blank);
    a first int of -1 is DLedger's blank (roll); otherwise a DLedger entry: its header must be sane
    (valid magic, ``size = bodySize + 48``, ``pos`` = where it sits) and its body one whole record whose
    PHYSICALOFFSET is ``pos + 48``. A NOOP entry (empty body) is skipped: success, ``msg_size`` 0,
    ``buffer_size`` 48. ``old_format_only`` is ``isInrecoveringOldCommitlog``.
    """
    if limit - offset < 8:
        return Checked(DispatchRequest.failure(-1, f"only {max(limit - offset, 0)} bytes at {offset}"), -1)
    first, second = TOTAL_SIZE_AND_MAGIC.unpack_from(buf, offset)
    if old_format_only or second in _OLD_FORMAT_SECOND_INT:
        expected = base + offset if base is not None else None
        req = check_old_format(buf, offset, limit, check_crc=check_crc, read_body=read_body, expected_offset=expected)
        return Checked(req, req.msg_size)
    if first == DLEDGER_BLANK_MAGIC_CODE:
        return Checked(DispatchRequest(msg_size=0, success=True), 0)
    if limit - offset < BODY_OFFSET:
        return Checked(DispatchRequest.failure(-1, f"DLedger header torn: {limit - offset} of 48 bytes"), -1)
    magic, size, _index, _term, pos, body_size = decode_header(bytes(buf[offset:offset + BODY_OFFSET]))
    where = base + offset if base is not None else None
    if magic not in VALID_MAGICS or size != body_size + BODY_OFFSET or body_size < 0:
        return Checked(DispatchRequest.failure(-1, f"no DLedger entry at {where}: magic {magic}, size {size}, "
                                                   f"bodySize {body_size}"), -1)
    if where is not None and pos != where:
        return Checked(DispatchRequest.failure(-1, f"DLedger entry at {where} says pos {pos}"), -1)
    if size > limit - offset:
        return Checked(DispatchRequest.failure(-1, f"DLedger entry of {size} bytes at {where}: only "
                                                   f"{limit - offset} there"), -1)
    if body_size == 0:
        return Checked(DispatchRequest(msg_size=0, success=True, reason="noop entry"), BODY_OFFSET)
    req = check_old_format(buf, offset + BODY_OFFSET, offset + size, check_crc=check_crc, read_body=read_body,
                           expected_offset=pos + BODY_OFFSET)
    if req.success and req.msg_size != body_size:
        return Checked(DispatchRequest.failure(size, f"record of {req.msg_size} bytes in a body of {body_size}"),
                       size)
    if req.success or req.msg_size > 0:
        return Checked(req, req.msg_size + BODY_OFFSET)
    return Checked(req, -1)

