"""Lab 02 exercises: the CommitLog store, byte by byte.

Edit the bodies below, then check them from the notebook (``check("lab02.encode_record")``) or from a
shell (``rocketlab grade lab02``). The grader plugs your code into a real store on disk (CommitLog,
ConsumeQueue, IndexFile), puts messages through it, crashes it, recovers it and reads everything back.
Keep the names and signatures; you may add helpers.
"""

from __future__ import annotations

import struct  # noqa: F401  (yours to use)
import zlib  # noqa: F401

from rocketlab.store.message import Host, Message, MessageSysFlag, pack_host  # noqa: F401

MESSAGE_MAGIC_CODE = -626843481  # 0xDAA320A7: v1, 1-byte topic length
MESSAGE_MAGIC_CODE_V2 = -626843477  # 0xDAA320AB: v2, 2-byte topic length (topics over 127 bytes)
END_FILE_MIN_BLANK_LENGTH = 8  # the END_OF_FILE blank: remaining (int32) + BLANK_MAGIC_CODE (int32)
CQ_STORE_UNIT_SIZE = 20  # a consume-queue unit: commitLogOffset int64, size int32, tagsCode int64
INDEX_HEADER_SIZE = 40
HASH_SLOT_SIZE = 4
INDEX_SIZE = 20  # keyHash int32, phyOffset int64, timeDiff int32, prevIndex int32


def encode_record(msg: Message, born_timestamp: int, store_host: Host) -> bytes:
    """One CommitLog record for ``msg``, byte for byte as ``MessageExtEncoder.encode`` writes it.

    Big-endian, in this order: TOTALSIZE i32 | MAGICCODE i32 | BODYCRC i32 (``zlib.crc32(body) &
    0x7FFFFFFF``) | QUEUEID i32 | FLAG i32 | QUEUEOFFSET i64 | PHYSICALOFFSET i64 | SYSFLAG i32 |
    BORNTIMESTAMP i64 | BORNHOST | STORETIMESTAMP i64 | STOREHOSTADDRESS | RECONSUMETIMES i32 |
    PREPARED TRANSACTION OFFSET i64 | body length i32 + body | topic length (i8 for v1, i16 for v2) +
    UTF-8 topic | properties length i16 + properties.

    * QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP are written as 0: the store stamps them under its
      put lock (``DefaultAppendMessageCallback``).
    * BORNTIMESTAMP is ``msg.born_timestamp`` if set, else ``born_timestamp``.
    * Hosts: ``pack_host(host)`` gives 8 bytes (IPv4 + port) or 20 (IPv6 + port). SYSFLAG is
      ``msg.sys_flag`` with ``MessageSysFlag.BORNHOST_V6_FLAG`` / ``STOREHOSTADDRESS_V6_FLAG`` set exactly
      when that host is IPv6 (cleared otherwise).
    * Topic of at most 127 UTF-8 bytes: MESSAGE_MAGIC_CODE, 1-byte length; longer: MESSAGE_MAGIC_CODE_V2,
      2-byte length.
    * Properties: ``name\\x01value`` for each of ``msg.properties`` in order, joined by ``\\x02`` with none
      after the last (RocketMQ 4.9.5's ``messageProperties2String``), UTF-8; an empty dict is length 0.
      The store refuses bad messages before calling you.
    """
    raise NotImplementedError("lab02.encode_record")


def is_end_of_file(record_length: int, wrote_position: int, file_size: int) -> bool:
    """``DefaultAppendMessageCallback.doAppend``: must this record go to the next file?

    A file must always keep room for the 8-byte END_OF_FILE blank (END_FILE_MIN_BLANK_LENGTH) after the
    last record, so a record of ``record_length`` bytes written at ``wrote_position`` of a
    ``file_size``-byte file does not fit (True: write the blank, roll to a new file) when it would leave
    fewer than 8 bytes.
    """
    raise NotImplementedError("lab02.is_end_of_file")


def unit_position(index: int, mapped_file_size: int) -> tuple[int, int]:
    """``ConsumeQueue.getIndexBuffer``: where the unit of queue offset ``index`` lives.

    Units are CQ_STORE_UNIT_SIZE (20) bytes, back to back across files of ``mapped_file_size`` bytes
    (a multiple of 20); the first file starts at logical offset 0. Return ``(file_from_offset,
    position)``: the logical offset where the file holding the unit starts, and the unit's byte position
    inside that file.
    """
    raise NotImplementedError("lab02.unit_position")


def index_positions(key_hash: int, hash_slot_num: int, index_count: int) -> tuple[int, int]:
    """``IndexFile.putKey``'s arithmetic: ``(slot_position, entry_position)``, both byte positions in
    the index file.

    The file is a 40-byte header, then ``hash_slot_num`` slots of 4 bytes, then entries of 20 bytes.
    A key goes to slot ``key_hash % hash_slot_num``; the new entry is entry number ``index_count`` (entry
    0 is never used, so a slot holding 0 means "empty").
    """
    raise NotImplementedError("lab02.index_positions")

