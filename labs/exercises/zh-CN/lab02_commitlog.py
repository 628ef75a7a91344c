"""实验 02 练习：逐字节实现 CommitLog 存储。

改写下面各个函数的函数体，然后在笔记本里检查（``check("lab02.encode_record")``），或在终端里运行
``rocketlab grade lab02``。评分器把你的代码装进磁盘上真实的存储（CommitLog、ConsumeQueue、IndexFile），
写入消息、让它宕机、再恢复，然后把所有数据读回来核对。函数名和签名不要改；可以自己添加辅助函数。
"""

from __future__ import annotations

import struct  # noqa: F401  （供你使用）
import zlib  # noqa: F401

from rocketlab.store.message import Host, Message, MessageSysFlag, pack_host  # noqa: F401

MESSAGE_MAGIC_CODE = -626843481  # 0xDAA320A7：v1，topic 长度占 1 字节
MESSAGE_MAGIC_CODE_V2 = -626843477  # 0xDAA320AB：v2，topic 长度占 2 字节（topic 超过 127 字节时）
END_FILE_MIN_BLANK_LENGTH = 8  # 文件末尾的 END_OF_FILE 空白：剩余长度（int32）+ BLANK_MAGIC_CODE（int32）
CQ_STORE_UNIT_SIZE = 20  # ConsumeQueue 的一个存储单元：commitLogOffset int64、size int32、tagsCode int64
INDEX_HEADER_SIZE = 40
HASH_SLOT_SIZE = 4
INDEX_SIZE = 20  # keyHash int32、phyOffset int64、timeDiff int32、prevIndex int32


def encode_record(msg: Message, born_timestamp: int, store_host: Host) -> bytes:
    """``msg`` 的一条 CommitLog 记录，逐字节与 ``MessageExtEncoder.encode`` 写出的一致。

    大端序，依次为：TOTALSIZE i32 | MAGICCODE i32 | BODYCRC i32（``zlib.crc32(body) &
    0x7FFFFFFF``）| QUEUEID i32 | FLAG i32 | QUEUEOFFSET i64 | PHYSICALOFFSET i64 | SYSFLAG i32 |
    BORNTIMESTAMP i64 | BORNHOST | STORETIMESTAMP i64 | STOREHOSTADDRESS | RECONSUMETIMES i32 |
    PREPARED TRANSACTION OFFSET i64 | body 长度 i32 + body | topic 长度（v1 为 i8，v2 为 i16）+
    UTF-8 编码的 topic | properties 长度 i16 + properties。

    * QUEUEOFFSET、PHYSICALOFFSET 和 STORETIMESTAMP 写 0：它们由存储在持有写入锁时填写
      （``DefaultAppendMessageCallback``）。
    * BORNTIMESTAMP 取 ``msg.born_timestamp``（若已设置），否则取 ``born_timestamp``。
    * 主机地址：``pack_host(host)`` 给出 8 字节（IPv4 + 端口）或 20 字节（IPv6 + 端口）。SYSFLAG 为
      ``msg.sys_flag``，当且仅当对应主机是 IPv6 时置上 ``MessageSysFlag.BORNHOST_V6_FLAG`` /
      ``STOREHOSTADDRESS_V6_FLAG``（否则清除）。
    * topic 的 UTF-8 编码不超过 127 字节：用 MESSAGE_MAGIC_CODE，长度占 1 字节；更长的：用
      MESSAGE_MAGIC_CODE_V2，长度占 2 字节。
    * properties：按 ``msg.properties`` 的顺序，每项写成 ``name\\x01value``，各项之间用 ``\\x02`` 连接，
      最后一项之后不加（RocketMQ 4.9.5 的 ``messageProperties2String``），UTF-8 编码；空 dict 的长度为 0。
      不合法的消息在调用你之前已被存储拒绝。
    """
    raise NotImplementedError("lab02.encode_record")


def is_end_of_file(record_length: int, wrote_position: int, file_size: int) -> bool:
    """``DefaultAppendMessageCallback.doAppend``：这条记录是否必须写到下一个文件？

    每个文件在最后一条记录之后都必须留出 8 字节的 END_OF_FILE 空白（END_FILE_MIN_BLANK_LENGTH）。因此，
    在 ``file_size`` 字节的文件的 ``wrote_position`` 处写入 ``record_length`` 字节的记录，如果写完后剩余
    不足 8 字节，就放不下（返回 True：写入空白，滚动到新文件）。
    """
    raise NotImplementedError("lab02.is_end_of_file")


def unit_position(index: int, mapped_file_size: int) -> tuple[int, int]:
    """``ConsumeQueue.getIndexBuffer``：队列偏移量 ``index`` 的存储单元在哪里。

    每个单元 CQ_STORE_UNIT_SIZE（20）字节，首尾相接地排布在若干个 ``mapped_file_size`` 字节（20 的倍数）
    的文件中；第一个文件从逻辑偏移量 0 开始。返回 ``(file_from_offset, position)``：存放该单元的文件
    起始处的逻辑偏移量，以及该单元在文件内的字节位置。
    """
    raise NotImplementedError("lab02.unit_position")


def index_positions(key_hash: int, hash_slot_num: int, index_count: int) -> tuple[int, int]:
    """``IndexFile.putKey`` 中的算术：``(slot_position, entry_position)``，都是索引文件内的字节位置。

    文件先是 40 字节的文件头，接着是 ``hash_slot_num`` 个 4 字节的哈希槽，然后是 20 字节一个的索引条目。
    key 落在第 ``key_hash % hash_slot_num`` 个槽；新条目是第 ``index_count`` 个条目（第 0 个条目从不使用，
    所以槽里的 0 表示“空”）。
    """
    raise NotImplementedError("lab02.index_positions")
