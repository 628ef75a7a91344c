"""实验 03 练习：DLedger 的选主。

改写下面各个函数的函数体，然后在笔记本里检查（``check("lab03.handle_vote")``），或在终端里运行
``rocketlab grade lab03``。评分器把你的代码装进每个成员真实的 DLedgerLeaderElector，让集群在宕机、网络
分区和丢包网络下用许多种子反复运行，由不变式检查器判定对错（每个任期至多一个 Leader，已提交的日志条目
永不丢失）。函数名和签名不要改；可以自己添加辅助函数。
"""

from __future__ import annotations

from rocketlab.dledger.elector_decisions import (  # noqa: F401  （供你使用）
    HeartBeatDecision,
    HeartBeatEffect,
    NextVote,
    VoteDecision,
    VoteEffect,
    VoteRoundDecision,
    VoteTally,
    VoteView,
    is_quorum,
)
from rocketlab.dledger.protocol import DLedgerResponseCode, ParseResult, VoteRequest, VoteResult  # noqa: F401


def handle_vote(view: VoteView, request: VoteRequest, is_self: bool) -> VoteDecision:
    """``DLedgerLeaderElector.handleVote``（DLedger 0.2.0+）：投票方对一个 VoteRequest 的应答。

    ``view`` 是投票方自己（它的 id、成员列表 peers、``curr_term``、``curr_vote_for``、``leader_id``、
    日志末尾的索引和任期、``taking_leadership``）；``request`` 带着 Candidate 的 ``leader_id``、``term``、
    ``ledger_end_index`` 和 ``ledger_end_term``；Candidate 给自己投票时 ``is_self`` 为 True。
    返回 ``VoteDecision(check, result, term, effect)``：起决定作用的检查编号（1–10）、VoteResult、
    应答携带的任期（除检查 8 外都是 ``view.curr_term``）以及效果。各项检查按顺序进行，先命中者生效：

    1. Candidate 不在 peers 中：REJECT_UNKNOWN_LEADER
    2. 不是 ``is_self``，而 Candidate 就是本投票方：REJECT_UNEXPECTED_LEADER
    3. Candidate 日志末尾的任期 < 我们的：REJECT_EXPIRED_LEDGER_TERM
    4. 日志末尾任期相同，Candidate 的日志末尾索引 < 我们的：REJECT_SMALL_LEDGER_END_INDEX
    5. 请求的任期 < 我们的任期：REJECT_EXPIRED_VOTE_TERM
    6. 任期相同，且我们已经投给了别人：知道 Leader 时 REJECT_ALREADY_HAS_LEADER，
       否则 REJECT_ALREADY_VOTED
    7. 请求的任期 > 我们的任期：REJECT_TERM_NOT_READY，效果 STEP_DOWN（我们退为 Candidate，并记下请求
       的任期，即 ``knownMaxTermInGroup``；下一次状态检查时直接进入该任期（``nextTerm``）而不发起投票，
       这样约 10 ms 后 Candidate 重新投票时我们就能投赞成票）
    8. 请求的任期 < 我们日志末尾的任期：REJECT_TERM_SMALL_THAN_LEDGER，应答携带我们日志末尾的任期
    9. 不是 ``is_self``，我们正在接任 Leader，日志末尾任期相同，且我们的日志末尾索引 >= Candidate 的：
       REJECT_TAKING_LEADERSHIP
    10. 其余情况 ACCEPT，效果 GRANT（DLedgerLeaderElector 先把这张票持久化，再应答）
    """
    raise NotImplementedError("lab03.handle_vote")


def parse_vote_result(tally: VoteTally, term: int, peer_size: int) -> VoteRoundDecision:
    """Candidate 对一轮投票的判定（``DLedgerLeaderElector.maintainAsCandidate``）。

    ``tally`` 是这一轮的计票：``all_num``、``valid_num``（UNKNOWN 以外的应答）、``accepted_num``、
    ``not_ready_term_num``、``bigger_ledger_num``、``already_has_leader`` 和
    ``known_max_term_in_group``。``n`` 票是否构成多数派用 ``is_quorum(n, peer_size)`` 判断（超过半数）。
    返回 ``VoteRoundDecision(rule, result, next_vote)``；按顺序匹配，先命中的规则生效：

    1. ``known_max_term_in_group > term``：WAIT_TO_VOTE_NEXT，NextVote.DEFAULT（DLedgerLeaderElector 随后以该任期
       成为 Candidate）
    2. ``already_has_leader``：WAIT_TO_REVOTE，NextVote.PLUS_LEAK
    3. 有效应答不足多数派：WAIT_TO_REVOTE，NextVote.DEFAULT
    4. 去掉日志比 Candidate 更长的应答后，有效应答不足多数派：WAIT_TO_REVOTE，
       NextVote.PLUS_MAX_VOTE_INTERVAL
    5. 多数派投了赞成票：PASSED，NextVote.UNCHANGED（Candidate 成为 Leader）
    6. 赞成票加上 TERM_NOT_READY 应答构成多数派：REVOTE_IMMEDIATELY，NextVote.UNCHANGED
    7. 其余情况 WAIT_TO_VOTE_NEXT，NextVote.DEFAULT
    """
    raise NotImplementedError("lab03.parse_vote_result")


def handle_heart_beat(self_id: str, peers: frozenset[str], curr_term: int, leader_id: str | None,
                      request_term: int, request_leader_id: str | None) -> HeartBeatDecision:
    """找 bug：一位同事写的 DLedgerLeaderElector.handleHeartBeat。

    成员按自己的状态应答 ``request_leader_id``（任期 ``request_term``）发来的每个心跳：``self_id``、
    ``peers``、``curr_term`` 和它追随的 ``leader_id``（None 表示还没有）。返回
    ``HeartBeatDecision(row, code, term, effect)``。每个成员都运行这个函数，
    ``check("lab03.handle_heart_beat")`` 失败时会给出种子和一行回放命令：在集群查看器里打开那段运行历史，
    找到集群出错的时刻，再往回看它之前的心跳。错误就在这个函数里，请就地修复（改动很小：评分器还会把每个
    判定与 DLedger 自己的逐一比较）。
    """
    if request_leader_id not in peers:
        return HeartBeatDecision(1, DLedgerResponseCode.UNKNOWN_MEMBER, curr_term)
    if request_leader_id == self_id:
        return HeartBeatDecision(2, DLedgerResponseCode.UNEXPECTED_MEMBER, curr_term)
    if request_term < curr_term:
        return HeartBeatDecision(3, DLedgerResponseCode.EXPIRED_TERM, curr_term)
    if request_term == curr_term:
        if request_leader_id == leader_id or leader_id is None:
            return HeartBeatDecision(4, DLedgerResponseCode.SUCCESS, -1, HeartBeatEffect.REFRESH)
        return HeartBeatDecision(8, DLedgerResponseCode.INCONSISTENT_LEADER, -1)
    return HeartBeatDecision(9, DLedgerResponseCode.TERM_NOT_READY, -1, HeartBeatEffect.STEP_DOWN)
