"""实验 08 练习：主从切换时客户端一侧的逻辑。

``allocate`` 是消费者组对一个 topic 各队列的分配（RocketMQ 4.9.5 的 ``AllocateMessageQueueAveragely``）；
``select_one_message_queue`` 是生产者为每次发送尝试（第一次和每次重试）选择队列
（``MQFaultStrategy.selectOneMessageQueue``）。改写下面各个函数的函数体，然后在笔记本里检查
（``check("lab08.allocate")``），或在终端里运行 ``rocketlab grade lab08``。评分器先在判定表的每个输入上
把你的答案与 RocketMQ 的对比，再把你的代码装进本套件的客户端（负载均衡中的消费者组的每个成员、所连 Broker
宕机的生产者）。函数名和签名不要改；可以自己添加辅助函数。
"""

from __future__ import annotations

from rocketlab.client.message import MessageQueue
from rocketlab.client.route import LatencyView, QueueChoice, java_position  # noqa: F401  （供你使用）


def allocate(consumer_group: str, current_cid: str, mq_all: list[MessageQueue],
             cid_all: list[str]) -> list[MessageQueue]:
    """``consumer_group`` 的成员 ``current_cid`` 消费哪些队列。

    每次负载均衡（Rebalance）时每个成员都调用它，传入相同的 ``mq_all``（topic 的可读队列）和 ``cid_all``
    （Broker 为该组列出的客户端 id），两者都已排序；成员之间互不通信。所以你的答案必须让所有成员分到的队列
    合起来恰好划分 ``mq_all``：每个队列只归一个列出的成员（一个队列归两个成员就会被消费两次，不归任何成员
    就永远没人消费）。

    分配是“平均”的：各成员分到的数量至多相差一，每个成员分到的是 ``mq_all`` 中连续的一段，各段按成员在
    ``cid_all`` 中的顺序排列（第一个成员拿第一段）。队列数不能整除时，哪些成员多拿一个由 RocketMQ 4.9.5
    决定；评分器的判定表覆盖 1–10 个成员的组、1–16 个队列的每种情况，它给出的第一个错误用例会告诉你谁本该
    多拿那个队列。按 ``mq_all`` 的顺序返回队列。``mq_all``、``cid_all`` 或 ``current_cid`` 为空是调用方的
    bug：抛出 ``ValueError``，正如 Java 的检查会抛出 IllegalArgumentException。
    """
    raise NotImplementedError("lab08.allocate")


def select_one_message_queue(queues: list[MessageQueue], index: int, last_broker_name: str | None,
                             latency: LatencyView | None) -> QueueChoice:
    """生产者下一次发送尝试用的队列。

    ``queues`` 是路由中的可写队列列表（Broker 按名字排序）；生产者维护一个计数器 ``index``
    （``sendWhichQueue``）：要取“下一个”时先把计数器加一，再用位置 ``counter % len(queues)``。轮询把发送
    分散到每个 Broker 的每个队列上。计数器是 Java 的 int，会一直数过 2**31 - 1（Java 从一个随机值开始）：
    它的 ``incrementAndGet`` 返回 ``counter & 0x7FFFFFFF``；``java_position(value, n)``（上面已导入）是 Java
    对 int 做的 ``Math.abs(value) % n``，用在会回绕的地方。
    第一次尝试时 ``last_broker_name`` 为 None，否则是这条消息上一次尝试失败的 Broker。只有生产者开启
    ``sendLatencyFaultEnable`` 时 ``latency`` 才不为 None；它告诉你哪些 Broker 正处于故障规避期（失败过或
    响应慢的 Broker 会被规避一段时间，时长随延迟增长：``MQFaultStrategy.LATENCY_MAX`` /
    ``NOT_AVAILABLE_DURATION``）、延迟表认为最不差的 Broker，以及路由中每个 Broker 的写队列数。

    返回 ``QueueChoice(position, queue, index)``：你在 ``queues`` 中取的位置、消息要发往的队列，以及选择
    之后的计数器（生产者保存它，供下一次调用）。

    RocketMQ 4.9.5 的承诺，评分器会在每种路由、计数器和故障状态下检查：

    * 没有延迟表时：只要路由里还有别的 Broker，重试就发往失败的那个之外的 Broker；第一次尝试取轮到的下一个
      队列；
    * 有延迟表时：只要还有别的 Broker 可用，就绝不选处于故障规避期的 Broker 的队列；失败之后失败的 Broker
      已在表中，因此只由延迟表决定；
    * 生产者总能拿到一个队列：所有 Broker 都在故障规避期时，消息照样发出（Java 的兜底逻辑甚至可能发往一个
      已不在 ``queues`` 中的 Broker：此时你返回的 ``queue`` 与 ``queues[position]`` 不同，生产者会改写路由
      中该位置的条目，正如 Java 会修改那个 MessageQueue 对象）。

    计数器在每条路径上前进多少、兜底逻辑究竟做什么，都以 4.9.5 为准（客户端源码中的 ``MQFaultStrategy`` 和
    ``TopicPublishInfo`` 说了算）；判定表给出的第一个错误用例会写明输入和期望的选择。
    """
    raise NotImplementedError("lab08.select_one_message_queue")
