"""The PutMessageStatus a DLedger-backed put answers, per RocketMQ release.

Models the mapping of DLedger's response code in ``DLedgerCommitLog.asyncPutMessage`` (RocketMQ 4.9.5
and 5.3.3); :class:`~rocketlab.broker.dledger_commit_log.DLedgerCommitLog` and the DLedger broker use it.
"""

from __future__ import annotations

from rocketlab.dledger.protocol import DLedgerResponseCode
from rocketlab.store.status import PutMessageStatus

Code = DLedgerResponseCode

ROCKETMQ_VERSIONS = ("4.9.5", "5.3.3")  # the releases whose put-status mapping can be chosen

CODE_TO_STATUS_4_9_5: dict[DLedgerResponseCode, PutMessageStatus] = {
    Code.SUCCESS: PutMessageStatus.PUT_OK,
    Code.INCONSISTENT_LEADER: PutMessageStatus.SERVICE_NOT_AVAILABLE,
    Code.NOT_LEADER: PutMessageStatus.SERVICE_NOT_AVAILABLE,
    Code.LEADER_NOT_READY: PutMessageStatus.SERVICE_NOT_AVAILABLE,
    Code.DISK_FULL: PutMessageStatus.SERVICE_NOT_AVAILABLE,
    # "Do not return flush_slave_timeout to the client, for the ons client will ignore it."
    Code.WAIT_QUORUM_ACK_TIMEOUT: PutMessageStatus.OS_PAGECACHE_BUSY,
    Code.LEADER_PENDING_FULL: PutMessageStatus.OS_PAGECACHE_BUSY,
}
"""How ``asyncPutMessage`` of rocketmq-all-4.9.5 maps the DLedger answer (``DLedgerCommitLog.java``
507-525); any other code is UNKNOWN_ERROR."""

CODE_TO_STATUS_5_3_3: dict[DLedgerResponseCode, PutMessageStatus] = {
    **CODE_TO_STATUS_4_9_5,
    Code.WAIT_QUORUM_ACK_TIMEOUT: PutMessageStatus.IN_SYNC_REPLICAS_NOT_ENOUGH,
}
"""rocketmq-all-5.3.3 (``DLedgerCommitLog.java`` 627-645): WAIT_QUORUM_ACK_TIMEOUT becomes
IN_SYNC_REPLICAS_NOT_ENOUGH; the rest as 4.9.5 (``OS_PAGECACHE_BUSY`` is spelt ``OS_PAGE_CACHE_BUSY``)."""

CODE_TO_STATUS: dict[str, dict[DLedgerResponseCode, PutMessageStatus]] = {
    "4.9.5": CODE_TO_STATUS_4_9_5, "5.3.3": CODE_TO_STATUS_5_3_3}
"""The mapping per ``rocketmq_version`` (``DLedgerBrokerConfig``; 4.9.5 is the default)."""


def put_status_of(code: DLedgerResponseCode | None, rocketmq_version: str = "4.9.5") -> PutMessageStatus:
    """The PutMessageStatus ``asyncPutMessage`` of ``rocketmq_version`` answers for DLedger's ``code``."""
    return CODE_TO_STATUS[rocketmq_version].get(code, PutMessageStatus.UNKNOWN_ERROR) if code is not None \
        else PutMessageStatus.UNKNOWN_ERROR

