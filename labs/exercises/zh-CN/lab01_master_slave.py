"""实验 01 练习：经典 HA 主从复制中 Slave 一侧的逻辑。

改写下面各个函数的函数体，然后在笔记本里检查（``check("lab01.transfer_parser")``），或在终端里运行
``rocketlab grade lab01``。评分器把你的代码装进模拟的 Master 和 Slave 里真实的 HAClient 与
GroupTransferService，所以一处错误会表现为集群行为异常。函数名和签名不要改；可以自己添加辅助函数。
"""

from __future__ import annotations

import struct

from rocketlab.errors import RemoteProtocolError  # noqa: F401  （供你使用）
from rocketlab.ha.wire import MAX_TRANSFER_BODY, NEED_DATA, TransferFrame  # noqa: F401

HEADER = struct.Struct(">qi")  # phyOffset（int64）、bodySize（int32），大端序：共 12 字节


class TransferParser:
    """Slave 读取 Master 传输帧的解析器，h11 风格（``HAClient.processReadEvent``）。

    Master 发送的每一帧先是 12 字节的帧头：``phyOffset``（int64）和 ``bodySize``（int32），都是大端序，
    后面跟着 ``bodySize`` 字节的 CommitLog 数据；``bodySize`` 为 0 的帧是心跳。TCP 可能在任意位置切开一帧，
    也可能把几帧粘在一起，因此：

    * ``receive_data(data)`` 把到达的字节追加到缓冲区；
    * ``next_event()`` 返回下一个完整的帧 ``TransferFrame(phy_offset, body)``（``body`` 为 ``bytes``），
      缓冲区里还没有完整的帧时返回 ``NEED_DATA``。反复调用，直到返回 ``NEED_DATA``。
      同样的字节无论怎样切分，得到的帧都必须相同。
    * ``phyOffset`` 为负数，或 ``bodySize`` 不在 ``0..max_body`` 之内，抛出 ``RemoteProtocolError``
      （HAClient 随后关闭连接）。
    """

    def __init__(self, max_body: int = MAX_TRANSFER_BODY) -> None:
        self.max_body = max_body
        raise NotImplementedError("lab01.transfer_parser: set up your buffer")

    def receive_data(self, data: bytes) -> None:
        raise NotImplementedError("lab01.transfer_parser: receive_data")

    def next_event(self) -> TransferFrame | object:
        raise NotImplementedError("lab01.transfer_parser: next_event")


def decide_wait_transfer(next_offset: int, ack_nums: int, deadline_ms: int, push2_slave_max_offset: int,
                         slave_acks: list[int], now_ms: int) -> bool | None:
    """``GroupTransferService.doWaitTransfer`` 里一条等待中的 SYNC_MASTER 写入。

    这次写入结束于 ``next_offset``（``wroteOffset + wroteBytes``）。已复制完成时返回 True（写入返回
    PUT_OK）；截止时间先到时返回 False（``now_ms >= deadline_ms``：FLUSH_SLAVE_TIMEOUT，消息仍保存在
    Master 上）；还要继续等待时返回 None。

    * ``ack_nums <= 1``（RocketMQ 4.x）：``push2_slave_max_offset``，即所有 Slave 中确认得最远的位置，
      达到 ``next_offset`` 时算复制完成。
    * ``ack_nums > 1``（5.x，``inSyncReplicas``）：``ack_nums`` 个副本持有这条消息时算复制完成；Master
      自己算一个，``slave_acks`` 里确认位置达到 ``next_offset`` 的每个 Slave 各算一个。

    恰好在截止时间那一刻复制完成的写入，算复制完成（True）。
    """
    raise NotImplementedError("lab01.decide_wait_transfer")
