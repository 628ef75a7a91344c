"""实验 05 练习：跑在 DLedger 上的 RocketMQ CommitLog。

改写下面各个函数的函数体，然后在笔记本里检查（``check("lab05.phy_offset")``），或在终端里运行
``rocketlab grade lab05``。评分器把你的代码装进模拟 Broker 组里真实的 DLedgerCommitLog（写入、主从切换、
从旧 CommitLog 平滑升级），再把每条消息读回来核对。函数名和签名不要改；可以自己添加辅助函数。
"""

from __future__ import annotations


def phy_offset(entry_pos: int) -> int:
    """位于 ``entry_pos`` 的 DLedger 日志条目中那条消息的物理偏移量。

    DLedger 的数据文件里日志条目首尾相接，每个条目是条目头加条目体；跑在 DLedger 上的 Broker 在每个条目体里
    放一条 RocketMQ 记录。消息的物理偏移量（记录里 PHYSICALOFFSET 字段的值、ConsumeQueue 指向的位置、
    生产者收到的 wroteOffset）就是这条记录开始的位置，由 AppendHook 在 DLedger 追加条目时写入。条目头有多长，
    请从实验 05 第 1 节的十六进制转储里读出来（或看 DLedger 源码中的 ``DLedgerEntry``）；在看转储下方的
    答案之前先自己读。
    """
    raise NotImplementedError("lab05.phy_offset")


def which_log(offset: int, divided_commitlog_offset: int, committed_pos: int) -> str | None:
    """``DLedgerCommitLog.getData``：物理偏移量 ``offset`` 处的读取由哪份日志提供。

    从经典 CommitLog 升级上来的 Broker 把旧文件保留在 ``dividedCommitlogOffset`` 之下（没有旧文件时为
    -1），从这里开始写 DLedger 的文件。偏移量落在旧文件里返回 "commitlog"，落在 DLedger 文件里返回
    "dledger"；偏移量等于或超过 DLedger 的 ``committed_pos`` 时返回 None：多数派还没有持有的字节绝不对外
    提供。
    """
    raise NotImplementedError("lab05.which_log")
