"""实验 07 练习：跨多次运行的 Spark 查询。

改写下面的函数体，然后在笔记本里检查（``check("lab07.acked_but_lost")``），或在终端里运行
``rocketlab grade lab07``。评分器把你的查询装进 ``rocketlab.analysis.lost.lost_messages``，在 ``data/``
里的样例运行和新跑的主从宕机场景（ASYNC 和 SYNC，多个种子）上执行，并把你找到的结果与模拟器所知的丢失
消息对比。使用 DataFrame 操作（``where``、``select``、``join``、窗口函数、``explode``）；不需要 Python
UDF。函数名和签名不要改；可以自己添加辅助函数。
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window  # noqa: F401  （供你使用）
from pyspark.sql import functions as F  # noqa: F401


def acked_but_lost(events: DataFrame, records: DataFrame) -> DataFrame:
    """已确认、却没有任何存活副本持有的消息，可跨任意多次运行。

    ``events`` 是轨迹事件（``read_events``：列 ``run, t, seq, node, kind, ...``）。``status`` 为 ``PUT_OK``
    的 ``put`` 事件表示生产者已被告知：``(run, phy_offset)`` 处 ``size`` 字节的消息已存储。某次运行中，
    如果 ``action`` 为 ``crash`` 或 ``restart``、``targets``（数组）里含有某节点的 ``fault`` 事件中最后
    一个是 crash，这个节点就是**运行结束时宕机**的；“最后”指 ``t`` 最大，``t`` 相同时 ``seq`` 最大。

    ``records`` 是同一批运行的 ``rocketmq-commitlog`` 行（``run, node, phy_offset, total_size,
    corrupt, ...``）。如果某个未宕机节点上有一条未损坏（``corrupt`` 为 null）的记录，``run`` 和
    ``phy_offset`` 都相同且 ``total_size == size``，这条消息就算被持有。

    返回恰好有 ``run, phy_offset, size`` 三列的 DataFrame：每条已确认但未被持有的消息一行，按 ``run``、
    再按 ``phy_offset`` 排序。
    """
    raise NotImplementedError("lab07.acked_but_lost")
