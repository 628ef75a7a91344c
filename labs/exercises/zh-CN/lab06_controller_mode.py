"""实验 06 练习：RocketMQ 5 的 Controller 模式。

改写下面各个函数的函数体，然后在笔记本里检查（``check("lab06.find_consistent_point")``），或在终端
里运行 ``rocketlab grade lab06``。评分器把你的代码装进模拟的 Controller 模式集群中真实的组件：
``find_consistent_point`` 装进每个重新上线的 Slave 的握手（``AutoSwitchHAClient``），``elect_master`` 装进
每个 Controller 的选主（``DefaultElectPolicy``）；然后在多个种子下让 Master 宕机、重启，反复扰动集群，
由 Controller 模式的不变式判定对错（allAckInSyncStateSet 下已确认的消息不丢失，每个 Slave 的日志都是其
Master 日志的字节前缀）。函数名和签名不要改；可以自己添加辅助函数。
"""

from __future__ import annotations

from collections.abc import Callable

from rocketlab.controller.elect_policy import java_int  # noqa: F401  （供你使用）
from rocketlab.controller.heartbeat_manager import BrokerLiveInfo  # noqa: F401
from rocketlab.ha.epoch_file_cache import LONG_MAX, EpochEntry  # noqa: F401


def find_consistent_point(local: list[EpochEntry], other: list[EpochEntry]) -> int:
    """``EpochFileCache.findConsistentPoint``：本 Broker 的日志与 Master 的日志一致到哪里。

    每个列表是一个 Broker 的纪元文件，从旧到新：``EpochEntry(epoch, start_offset, end_offset)`` 表示
    该纪元（epoch）的 Master 写下了这个 Broker 日志中 ``[start_offset, end_offset)`` 的字节（最后一项的
    ``end_offset`` 就是该 Broker 的最大偏移量）。两份日志都有某个纪元，**且起始偏移量相同**时，它们在这个
    纪元里的字节相同：一致的范围到两个结束偏移量中较小的那个为止。从 ``local`` 最新的一项开始往前找这样的
    纪元；返回一致到的偏移量，没有任何纪元匹配时返回 -1（Slave 无法重新同步）。Slave 随后在这里截断日志。
    """
    raise NotImplementedError("lab06.find_consistent_point")


def elect_master(sync_state_brokers: set[int] | None, all_replica_brokers: set[int] | None,
                 old_master: int | None, prefer_broker_id: int | None, is_valid: Callable[[int], bool],
                 live_info: Callable[[int], BrokerLiveInfo] | None) -> int | None:
    """``DefaultElectPolicy.elect``：一个 Broker 组新 Master 的 broker id，或 None。

    先在 SyncStateSet（``sync_state_brokers``）里选；只有这样选不出任何 Broker、并且给出了
    ``all_replica_brokers``（``enableElectUncleanMaster``）时，才在所有副本里选。在一个候选集合里
    （``tryElect``）：

    1. 只保留 ``is_valid(id)`` 认可的候选 Broker（在心跳表里存活），按 id 升序；一个都不剩：None；
    2. 旧 Master 如果仍是候选 Broker，且没有偏好*别的* Broker（``prefer_broker_id`` 为 None 或就是它），
       继续当 Master；
    3. 偏好的 Broker 是候选 Broker 时它当选，否则谁也不选（None）；
    4. 其余情况，有 ``live_info`` 时按各候选 Broker 最近一次心跳选最好的：先比 ``epoch``（大者优先），再比
       ``max_offset``（大者优先），再比 ``election_priority``（小者优先）；Java 对每一对按
       ``(int)(o2 - o1)`` 比较（``java_int``：差值超过 2**31 会回绕），三项都相同时保留排在前面的那个；
    5. 没有 ``live_info``（None）时，取第一个候选 Broker。
    """
    raise NotImplementedError("lab06.elect_master")
