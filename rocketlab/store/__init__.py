"""RocketMQ's message store, byte-exact: CommitLog, ConsumeQueue, IndexFile, checkpoint and recovery.

Map of the modules (each models the Java class it names):

* :mod:`~rocketlab.store.message` (``Message``, ``MessageExt``, ``MessageSysFlag``, properties,
  Java ``String.hashCode``), :mod:`~rocketlab.store.message_batch` (the producer's packed batch,
  ``MessageExtBatch``), :mod:`~rocketlab.store.record_layout` (magic codes, field positions, lengths,
  the stamps, the blank), :mod:`~rocketlab.store.message_ext_encoder` (``MessageExtEncoder``) and
  :mod:`~rocketlab.store.message_codec` (``MessageDecoder``, ``checkMessageAndReturnSize``, the
  one-record encode functions);
* :mod:`~rocketlab.store.mapped_file` / :mod:`~rocketlab.store.mapped_file_queue` (files named by
  offset, positions, rolling, truncation, expiry);
* :mod:`~rocketlab.store.commit_log` (put, batch put, ``get_data``/``append_data`` for HA) and
  :mod:`~rocketlab.store.flush` (group commit, periodic flush);
* :mod:`~rocketlab.store.consume_queue`, :mod:`~rocketlab.store.index_file`,
  :mod:`~rocketlab.store.index_service`, :mod:`~rocketlab.store.checkpoint` (derived data), built by
  :mod:`~rocketlab.store.reput`;
* :mod:`~rocketlab.store.recovery` (normal and abnormal recovery, with a report),
  :mod:`~rocketlab.store.crash` (a simulated kill or power loss, for the simulator);
* :mod:`~rocketlab.store.message_store` (``DefaultMessageStore``, alias ``MessageStore``: its
  lifecycle), with the rest of the class by job: :mod:`~rocketlab.store.message_store_put`,
  :mod:`~rocketlab.store.message_store_dispatch`, :mod:`~rocketlab.store.message_store_get`,
  :mod:`~rocketlab.store.message_store_services` and :mod:`~rocketlab.store.message_store_ha`;
  :mod:`~rocketlab.store.clean_service` (retention), :mod:`~rocketlab.store.service_thread`;
* :mod:`~rocketlab.store.cli` (``rocketlab commitlog dump`` / ``rocketlab consumequeue dump``).

Usage::

    with MessageStore.open(root_dir, mapped_file_size_commit_log=64 * 1024) as store:
        r = store.put_message(Message(topic="T", body=b"hi", queue_id=0, tags="A", keys="k1"))
        store.reput()                      # dispatch now (a background thread also does it)
        got = store.get_message("T", 0, offset=0, max_msg_nums=32)
"""

from rocketlab.store.checkpoint import StoreCheckpoint
from rocketlab.store.commit_log import CommitLog
from rocketlab.store.config import BrokerRole, FlushDiskType, MessageStoreConfig
from rocketlab.store.consume_queue import ConsumeQueue
from rocketlab.store.dispatch_request import DispatchRequest
from rocketlab.store.flush import PutMessageFuture
from rocketlab.store.index_file import IndexFile
from rocketlab.store.index_service import IndexService
from rocketlab.store.mapped_file import MappedFile
from rocketlab.store.mapped_file_queue import MappedFileQueue
from rocketlab.store.message import (
    MESSAGE_MAGIC_CODE,
    MESSAGE_MAGIC_CODE_V2,
    Message,
    MessageExt,
    MessageSysFlag,
    java_string_hash,
)
from rocketlab.store.message_batch import MessageExtBatch
from rocketlab.store.message_codec import (
    check_message_and_return_size,
    decode_message,
    decode_messages,
    encode_message,
)
from rocketlab.store.message_ext_encoder import MessageExtEncoder
from rocketlab.store.message_filter import MessageFilter, TagsMessageFilter
from rocketlab.store.message_store import DefaultMessageStore, MessageStore
from rocketlab.store.record_layout import BLANK_MAGIC_CODE, stamp_record
from rocketlab.store.recovery import RecoveryReport
from rocketlab.store.status import (
    AppendMessageResult,
    AppendMessageStatus,
    GetMessageResult,
    GetMessageStatus,
    PutMessageResult,
    PutMessageStatus,
    QueryMessageResult,
)

__all__ = [
    "AppendMessageResult",
    "AppendMessageStatus",
    "BLANK_MAGIC_CODE",
    "BrokerRole",
    "CommitLog",
    "ConsumeQueue",
    "DefaultMessageStore",
    "DispatchRequest",
    "FlushDiskType",
    "GetMessageResult",
    "GetMessageStatus",
    "IndexFile",
    "IndexService",
    "MESSAGE_MAGIC_CODE",
    "MESSAGE_MAGIC_CODE_V2",
    "MappedFile",
    "MappedFileQueue",
    "Message",
    "MessageExt",
    "MessageExtBatch",
    "MessageExtEncoder",
    "MessageFilter",
    "MessageStore",
    "MessageStoreConfig",
    "MessageSysFlag",
    "PutMessageFuture",
    "PutMessageResult",
    "PutMessageStatus",
    "QueryMessageResult",
    "RecoveryReport",
    "StoreCheckpoint",
    "TagsMessageFilter",
    "check_message_and_return_size",
    "decode_message",
    "decode_messages",
    "encode_message",
    "java_string_hash",
    "stamp_record",
]
