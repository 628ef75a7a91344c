"""实验 04 练习：DLedger 的日志复制。

``quorum_index`` 和 ``decide_compare`` 是热身题（照 DLedger 给定的规则实现）；``commit_rule`` 要你自己
设计。改写下面各个函数的函数体，然后在笔记本里检查（``check("lab04.quorum_index")``），或在终端里
运行 ``rocketlab grade lab04``。评分器把你的代码装进模拟组里真实的 Leader（QuorumAckChecker、
EntryDispatcher），让集群经受宕机、网络分区和丢包网络，由不变式检查器判定对错。函数名和签名不要改；
可以自己添加辅助函数。
"""

from __future__ import annotations

from collections.abc import Callable

from rocketlab.dledger.entry_dispatcher import CompareDecision  # noqa: F401  （供你使用）
from rocketlab.dledger.protocol import DLedgerResponseCode


def quorum_index(water_marks: dict[str, int], term: int, committed_index: int, commit_only_current_term: bool,
                 term_of: Callable[[int], int]) -> int:
    """热身：QuorumAckChecker 在当前任期 ``term`` 下的提交位点。

    ``water_marks`` 把每个成员（包括 Leader 自己）映射到它持有的最大索引（-1：一条也没有）。多数派索引是
    被多数派持有的最大索引：把这些水位从高到低排序，取位置 ``len // 2`` 上的那个。DLedger 直接提交这个
    索引（``dledger-0.3.1.2`` 和 ``dledger-0.3.2`` 配置）。打开 ``commit_only_current_term`` 时（``raft``
    配置），答案是下面你的 ``commit_rule`` 给出的值：先设计好它，再在这里调用。
    """
    raise NotImplementedError("lab04.quorum_index")


def decide_compare(compare_index: int, code: DLedgerResponseCode, f_begin: int, f_end: int,
                   l_begin: int, l_end: int) -> CompareDecision:
    """Follower 应答 COMPARE 推送之后 Leader 的 EntryDispatcher（``doCompare``，0.1–0.3.x）。

    Leader 发出了自己位于 ``compare_index`` 的日志条目；Follower 以 ``code`` 应答（SUCCESS：它持有同一个
    条目；INCONSISTENT_STATE：没有），并带上自己日志的首、末索引 ``f_begin``、``f_end``。Leader 自己的
    日志范围是 ``l_begin..l_end``。返回 ``CompareDecision(rule, action, index)``，``action`` 为
    "append"（从 ``index + 1`` 开始追加）、"truncate"（截断 Follower 日志中 ``index`` 之后的部分）或
    "compare"（下一次比较 ``index``）：

    * SUCCESS 且 ``compare_index == f_end``：规则 "match"，append，``compare_index``。
    * 其余 SUCCESS（Follower 的日志更长）："match-follower-longer"，在 ``compare_index`` 处 truncate。
    * INCONSISTENT_STATE，两份日志没有交集（``f_end < l_begin`` 或 ``f_begin > l_end``）：
      "no-intersection"，在 ``l_begin`` 处 truncate。
    * INCONSISTENT_STATE，两份日志有交集，且 ``compare_index < f_begin``（发出的条目在 Follower 第一个
      条目之前，Follower 无从比较）："below-follower-begin"，在 ``l_begin`` 处 truncate（是 Leader 的
      第一个条目，不是 Follower 的）。
    * INCONSISTENT_STATE，``compare_index > f_end``（Follower 的日志更短）："above-follower-end"，
      下一次比较 ``f_end``。
    * 其余 INCONSISTENT_STATE（``f_begin <= compare_index <= f_end``，该位置上是另一个条目）：
      "mismatch-step-back"，下一次比较 ``compare_index - 1``。
    * 最后，除 "match" 外的每条规则：取此刻的比较索引（"above-follower-end" 或 "mismatch-step-back" 之后
      是新的那个，其余规则是发出的那个）；如果它小于 ``l_begin``，在规则名后加上 "+below-leader-begin"，
      并在 ``l_begin`` 处 truncate，即使该规则本来就是截断（``decide_compare(0, INCONSISTENT_STATE, 3, 9,
      2, 9)`` 为 ``CompareDecision("below-follower-begin+below-leader-begin", "truncate", 2)``）。
    """
    raise NotImplementedError("lab04.decide_compare")


def commit_rule(water_marks: dict[str, int], term: int, committed_index: int, term_of: Callable[[int], int]) -> int:
    """设计题：让图 8 变得安全。返回 Leader 新的提交位点。

    任期 ``term`` 的 Leader 在 ``dledger-0.3.1.2`` 配置下（成为 Leader 时不写 NOOP 条目），QuorumAckChecker
    每一轮都调用它来代替 ``quorum_index``。``water_marks`` 把每个成员（包括 Leader 自己）映射到它持有的
    最大索引（-1：一条也没有）；``committed_index`` 是 Leader 目前已提交到的位置；``term_of(index)`` 是
    Leader 日志中 ``index`` 处条目的任期（读不到时为 -1）。DLedger 像 ``quorum_index`` 那样直接提交多数派
    索引，实验 04 第 7 节展示了这样做如何丢掉一条已提交的日志条目。

    修改这条规则，使得无论怎样宕机、怎样选主，已提交的日志条目都永不丢失；同时只要多数派在线，写入仍能
    在有限时间内提交（从不提交、或要等所有成员的规则都不及格）。评分器会重演图 8、同类的带种子调度，
    以及只有多数派在线的组，每个 Leader 都用你的规则，由不变式检查器判定；``rocketlab grade lab04 --only
    lab04.commit_rule --stress 300`` 会试 300 个种子。
    """
    raise NotImplementedError("lab04.commit_rule")
