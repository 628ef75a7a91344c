"""The lab table: every graded lab, what it needs, and its exercises - the one place a lab or an exercise is added.

A row (:class:`~rocketlab.grading.registry.Lab`) names the lab's exercise file, notebook and suite, and
whether its tests start a JVM or pass Spark DataFrames; each exercise
(:class:`~rocketlab.grading.registry.Exercise`) names the override point the component declares
(``rocketlab.plugs.point``), the learner's attribute, the Java it models, where the kit calls it and the
kit's own version, imported. Everything else is derived: ``rocketlab grade``'s choices, the autograder's
Java, the sandbox's limits and DataFrames, the static check for delegation, the mutation run. The package
(:mod:`rocketlab.grading`) imports this module and its rows register themselves; the framework's modules never
import it: it may import what the labs teach, the framework may not. rocketlab's own addition.
"""

from __future__ import annotations

from rocketlab.analysis.lost import ACKED_BUT_LOST_PLUG, acked_but_lost
from rocketlab.broker.dledger_commit_log import PHY_OFFSET_PLUG, WHICH_LOG_PLUG, phy_offset, which_log
from rocketlab.client.consumer import ALLOCATE_PLUG, allocate_averagely
from rocketlab.client.route import SELECT_ONE_MESSAGE_QUEUE_PLUG, select_one_message_queue
from rocketlab.controller.elect_policy import ELECT_MASTER_PLUG, elect_master
from rocketlab.dledger.elector_decisions import decide_heart_beat, decide_vote, parse_vote_result
from rocketlab.dledger.entry_dispatcher import DECIDE_COMPARE_PLUG, decide_compare
from rocketlab.dledger.entry_pusher import (
    COMMIT_RULE_PLUG,
    QUORUM_INDEX_PLUG,
    quorum_index,
    safe_commit_index,
)
from rocketlab.dledger.leader_elector import HANDLE_HEART_BEAT_PLUG, HANDLE_VOTE_PLUG, PARSE_VOTE_RESULT_PLUG
from rocketlab.grading.registry import Exercise, Lab, register_lab
from rocketlab.grading.suites import lab01, lab02, lab03, lab04, lab05, lab06, lab07, lab08
from rocketlab.ha.epoch_file_cache import FIND_CONSISTENT_POINT_PLUG, find_consistent_point
from rocketlab.ha.group_transfer import DECIDE_WAIT_TRANSFER_PLUG, decide_wait_transfer
from rocketlab.ha.ha_client import TRANSFER_PARSER_PLUG
from rocketlab.ha.wire import TransferParser
from rocketlab.store.commit_log import ENCODE_RECORD_PLUG, IS_END_OF_FILE_PLUG, is_end_of_file
from rocketlab.store.consume_queue import UNIT_POSITION_PLUG, unit_position
from rocketlab.store.index_file import INDEX_POSITIONS_PLUG, index_positions
from rocketlab.store.message_codec import encode_record

LABS: tuple[Lab, ...] = (
    Lab("lab01", "Classic master-slave HA", "lab01_master_slave.py", "01_master_slave.ipynb", lab01, (
        Exercise(TRANSFER_PARSER_PLUG, "TransferParser", "HAService.HAClient.processReadEvent / dispatchReadRequest",
                 "HAClient: one parser per connection", TransferParser),
        Exercise(DECIDE_WAIT_TRANSFER_PLUG, "decide_wait_transfer", "HAService.GroupTransferService.doWaitTransfer",
                 "GroupTransferService.do_wait_transfer: each waiting put", decide_wait_transfer),
    )),
    Lab("lab02", "The CommitLog store", "lab02_commitlog.py", "02_commitlog.ipynb", lab02, (
        Exercise(ENCODE_RECORD_PLUG, "encode_record", "MessageExtEncoder.encode",
                 "CommitLog: every put (MessageExtEncoder.encode)", encode_record),
        Exercise(IS_END_OF_FILE_PLUG, "is_end_of_file", "CommitLog.DefaultAppendMessageCallback.doAppend",
                 "DefaultAppendMessageCallback.do_append / do_append_batch", is_end_of_file),
        Exercise(UNIT_POSITION_PLUG, "unit_position", "ConsumeQueue.getIndexBuffer",
                 "ConsumeQueue.get_index_buffer: every unit read", unit_position),
        Exercise(INDEX_POSITIONS_PLUG, "index_positions", "IndexFile.putKey",
                 "IndexFile.put_key and select_phy_offset", index_positions),
    )),
    Lab("lab03", "DLedger's leader election", "lab03_dledger_election.py", "03_dledger_election.ipynb", lab03, (
        Exercise(HANDLE_VOTE_PLUG, "handle_vote", "DLedgerLeaderElector.handleVote",
                 "DLedgerLeaderElector.handle_vote", decide_vote),
        Exercise(PARSE_VOTE_RESULT_PLUG, "parse_vote_result", "DLedgerLeaderElector.maintainAsCandidate",
                 "DLedgerLeaderElector.finish_vote_round", parse_vote_result),
        Exercise(HANDLE_HEART_BEAT_PLUG, "handle_heart_beat",
                 "DLedgerLeaderElector.handleHeartBeat (a planted bug to find and fix)",
                 "DLedgerLeaderElector.handle_heart_beat", decide_heart_beat),
    )),
    Lab("lab04", "DLedger's log replication", "lab04_dledger_replication.py", "04_dledger_replication.ipynb", lab04, (
        Exercise(QUORUM_INDEX_PLUG, "quorum_index", "DLedgerEntryPusher.QuorumAckChecker.doWork",
                 "QuorumAckChecker.do_work", quorum_index),
        Exercise(DECIDE_COMPARE_PLUG, "decide_compare", "DLedgerEntryPusher.EntryDispatcher.doCompare",
                 "EntryDispatcher: each COMPARE answer", decide_compare),
        Exercise(COMMIT_RULE_PLUG, "commit_rule", "DLedgerEntryPusher.QuorumAckChecker.doWork (made safe: design)",
                 "QuorumAckChecker.quorum_index, on every profile, in place of quorum_index", safe_commit_index),
    )),
    Lab("lab05", "RocketMQ on DLedger", "lab05_rocketmq_on_dledger.py", "05_rocketmq_on_dledger.ipynb", lab05, (
        Exercise(PHY_OFFSET_PLUG, "phy_offset", "DLedgerCommitLog.appendHook / asyncPutMessage",
                 "DLedgerCommitLog.append_hook and async_put's wroteOffset", phy_offset),
        Exercise(WHICH_LOG_PLUG, "which_log", "DLedgerCommitLog.getData",
                 "DLedgerCommitLog.get_data / get_message", which_log),
    )),
    Lab("lab06", "RocketMQ 5's controller mode", "lab06_controller_mode.py", "06_controller_mode.ipynb", lab06, (
        Exercise(FIND_CONSISTENT_POINT_PLUG, "find_consistent_point", "EpochFileCache.findConsistentPoint",
                 "EpochFileCache.find_consistent_point: a returning slave's handshake", find_consistent_point),
        Exercise(ELECT_MASTER_PLUG, "elect_master", "DefaultElectPolicy.elect / tryElect",
                 "DefaultElectPolicy.elect: every master election of the controller", elect_master),
    )),
    Lab("lab07", "Spark at class scale", "lab07_spark.py", "07_spark.ipynb", lab07, (
        Exercise(ACKED_BUT_LOST_PLUG, "acked_but_lost", "(a Spark query: GroupTransferService's promise, checked)",
                 "lost_messages: the Spark query over every run's trace and commit logs", acked_but_lost),
    ), java=True, spark=lab07.spark),
    Lab("lab08", "Failover as an application lives it", "lab08_client_failover.py", "08_client_failover.ipynb", lab08, (
        Exercise(ALLOCATE_PLUG, "allocate", "AllocateMessageQueueAveragely.allocate",
                 "RebalanceImpl.rebalance_by_topic: each member's share of the queues", allocate_averagely),
        Exercise(SELECT_ONE_MESSAGE_QUEUE_PLUG, "select_one_message_queue", "MQFaultStrategy.selectOneMessageQueue",
                 "DefaultMQProducerImpl.send_default_impl: every send attempt's queue", select_one_message_queue),
    )),
)
"""Every graded lab, in order."""

for _lab in LABS:
    register_lab(_lab)
