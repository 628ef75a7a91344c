"""Store configuration: ``MessageStoreConfig`` with RocketMQ's names and defaults, in snake_case.

Models ``org.apache.rocketmq.store.config.MessageStoreConfig``, ``FlushDiskType`` and
``BrokerRole``. Only the options this store uses are present; each keeps the Java default unless its
comment says otherwise. Labs shrink the file sizes so that rolling and padding happen early.
"""

from __future__ import annotations

import dataclasses
import enum
import os
from dataclasses import dataclass, field
from typing import Any

from rocketlab.errors import ConfigError
from rocketlab.i18n import _
from rocketlab.store.message import ROCKETMQ_RELEASES, keeps_last_property_separator, pack_host


class FlushDiskType(enum.Enum):
    """Models ``org.apache.rocketmq.store.config.FlushDiskType``."""

    ASYNC_FLUSH = "ASYNC_FLUSH"
    SYNC_FLUSH = "SYNC_FLUSH"


class BrokerRole(enum.Enum):
    """Models ``org.apache.rocketmq.store.config.BrokerRole``. A SLAVE refuses puts and is fed by
    ``CommitLog.append_data``."""

    ASYNC_MASTER = "ASYNC_MASTER"
    SYNC_MASTER = "SYNC_MASTER"
    SLAVE = "SLAVE"


CQ_STORE_UNIT_SIZE = 20


@dataclass
class MessageStoreConfig:
    """Models ``MessageStoreConfig``. Validate with :meth:`validate` (``MessageStore.open`` does).

    Deviations from Java defaults, each deliberate:

    * ``auto_message_version_on_topic_len`` is False (4.x behaviour: a topic over 127 bytes is
      ``MESSAGE_ILLEGAL``); 5.x defaults to True (switch to the v2 record).
    * ``read_uncommitted`` is True (4.x behaviour: the reput dispatches up to the max offset, so a
      consumer can see a message before it is flushed). False gives 5.3's bound: under SYNC_FLUSH
      only flushed messages reach the ConsumeQueue.
    * ``broker_ip1``/``listen_port`` come from Java's ``BrokerConfig``/``NettyServerConfig``; they
      make the store host written into every record and its message id.
    * ``rocketmq_version`` (kit switch, one of :data:`~rocketlab.store.message.ROCKETMQ_RELEASES`) is
      the release whose record bytes the store writes: "4.9.5" (the default) and "5.1.0" write the
      properties string without a separator after the last property, "5.3.3" with one
      (:func:`~rocketlab.store.message.keeps_last_property_separator`).
    """

    store_path_root_dir: str = field(default_factory=lambda: os.path.join(os.path.expanduser("~"), "store"))
    mapped_file_size_commit_log: int = 1024 * 1024 * 1024
    mapped_file_size_consume_queue: int = 300_000 * CQ_STORE_UNIT_SIZE
    max_message_size: int = 1024 * 1024 * 4  # limits the body, despite the name
    flush_disk_type: FlushDiskType = FlushDiskType.ASYNC_FLUSH
    broker_role: BrokerRole = BrokerRole.ASYNC_MASTER
    flush_interval_commit_log: int = 500  # ms, ASYNC_FLUSH
    flush_commit_log_least_pages: int = 4
    flush_commit_log_thorough_interval: int = 10_000  # ms
    sync_flush_timeout: int = 5_000  # ms, SYNC_FLUSH -> FLUSH_DISK_TIMEOUT
    flush_interval_consume_queue: int = 1_000  # ms
    flush_consume_queue_least_pages: int = 2
    flush_consume_queue_thorough_interval: int = 60_000  # ms
    check_crc_on_recover: bool = True
    message_index_enable: bool = True
    message_index_safe: bool = False
    max_hash_slot_num: int = 5_000_000
    max_index_num: int = 5_000_000 * 4
    max_msgs_num_batch: int = 64
    file_reserved_time: int = 72  # hours
    delete_when: str = "04"
    disk_max_used_space_ratio: int = 75
    clean_file_forcibly_enable: bool = True  # above 85 % used, delete files whether expired or not
    delete_commit_log_files_interval: int = 100  # ms between two deletions in one run (no sleep here)
    clean_resource_interval: int = 10_000  # ms
    max_transfer_bytes_on_message_in_memory: int = 1024 * 256
    max_transfer_count_on_message_in_memory: int = 32
    max_transfer_bytes_on_message_in_disk: int = 1024 * 64
    max_transfer_count_on_message_in_disk: int = 8
    access_message_in_memory_max_ratio: int = 40
    auto_message_version_on_topic_len: bool = False
    read_uncommitted: bool = True
    offset_check_in_slave: bool = False
    broker_ip1: str = "127.0.0.1"
    listen_port: int = 10911
    rocketmq_version: str = "4.9.5"

    # ---- derived paths (StorePathConfigHelper) ----
    @property
    def store_path_commit_log(self) -> str:
        return os.path.join(self.store_path_root_dir, "commitlog")

    @property
    def store_path_consume_queue(self) -> str:
        return os.path.join(self.store_path_root_dir, "consumequeue")

    @property
    def store_path_index(self) -> str:
        return os.path.join(self.store_path_root_dir, "index")

    @property
    def store_checkpoint(self) -> str:
        return os.path.join(self.store_path_root_dir, "checkpoint")

    @property
    def abort_file(self) -> str:
        return os.path.join(self.store_path_root_dir, "abort")

    @property
    def lock_file(self) -> str:
        return os.path.join(self.store_path_root_dir, "lock")

    @property
    def store_host(self) -> tuple[str, int]:
        return (self.broker_ip1, self.listen_port)

    def consume_queue_file_size(self) -> int:
        """``getMappedFileSizeConsumeQueue``: rounded down to whole 20-byte units."""
        return self.mapped_file_size_consume_queue // CQ_STORE_UNIT_SIZE * CQ_STORE_UNIT_SIZE

    def is_sync_flush(self) -> bool:
        return self.flush_disk_type is FlushDiskType.SYNC_FLUSH

    @property
    def last_property_separator(self) -> bool:
        """Whether records keep the separator after the last property (5.2.0 on)."""
        return keeps_last_property_separator(self.rocketmq_version)

    # ---- construction and validation ----
    @classmethod
    def from_options(cls, **options: Any) -> MessageStoreConfig:
        """Build from keyword options, naming any unknown option; enum options accept their names."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(options) - names)
        if unknown:
            raise ConfigError(_("unknown MessageStoreConfig option(s): {names}").format(names=", ".join(unknown)))
        return cls(**options).validate()

    def replace(self, **options: Any) -> MessageStoreConfig:
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(options) - names)
        if unknown:
            raise ConfigError(_("unknown MessageStoreConfig option(s): {names}").format(names=", ".join(unknown)))
        return dataclasses.replace(self, **options).validate()

    def validate(self) -> MessageStoreConfig:
        """Check every field; coerce enum names given as strings. Returns self."""
        for name, enum_type in (("flush_disk_type", FlushDiskType), ("broker_role", BrokerRole)):
            value = getattr(self, name)
            if isinstance(value, str):
                try:
                    setattr(self, name, enum_type[value.upper()])
                except KeyError:
                    choices = ", ".join(e.name for e in enum_type)
                    raise ConfigError(_("{name}: {value!r} is not one of {choices}").format(
                        name=name, value=value, choices=choices)) from None
            elif not isinstance(value, enum_type):
                raise ConfigError(_("{name}: expected a {type}, got {value!r}").format(
                    name=name, type=enum_type.__name__, value=value))
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.type in ("int", int) and (isinstance(value, bool) or not isinstance(value, int)):
                raise ConfigError(_("{name}: expected an integer, got {value!r}").format(name=f.name, value=value))
            if f.type in ("bool", bool) and not isinstance(value, bool):
                raise ConfigError(_("{name}: expected true or false, got {value!r}").format(name=f.name, value=value))
        # The smallest record (empty body, 1-byte topic, no properties) plus the 8-byte blank.
        if self.mapped_file_size_commit_log < 100:
            raise ConfigError(_(
                "mapped_file_size_commit_log: {size} bytes cannot hold even one message (the smallest record is "
                "92 bytes, plus 8 for the end-of-file blank)").format(size=self.mapped_file_size_commit_log))
        if self.consume_queue_file_size() < CQ_STORE_UNIT_SIZE:
            raise ConfigError(_("mapped_file_size_consume_queue: {size} bytes is less than one {unit}-byte unit").format(
                size=self.mapped_file_size_consume_queue, unit=CQ_STORE_UNIT_SIZE))
        positive = (
            "max_message_size", "max_hash_slot_num", "sync_flush_timeout", "flush_interval_commit_log",
            "flush_interval_consume_queue", "max_msgs_num_batch", "max_transfer_count_on_message_in_memory",
            "max_transfer_count_on_message_in_disk", "max_transfer_bytes_on_message_in_memory",
            "max_transfer_bytes_on_message_in_disk", "clean_resource_interval",
        )  # fmt: skip
        for name in positive:
            if getattr(self, name) <= 0:
                raise ConfigError(_("{name}: must be positive, got {value}").format(name=name, value=getattr(self, name)))
        non_negative = (
            "flush_commit_log_least_pages", "flush_consume_queue_least_pages", "file_reserved_time",
            "flush_commit_log_thorough_interval", "flush_consume_queue_thorough_interval",
            "delete_commit_log_files_interval",
        )  # fmt: skip
        for name in non_negative:
            if getattr(self, name) < 0:
                raise ConfigError(_("{name}: must not be negative, got {value}").format(
                    name=name, value=getattr(self, name)))
        if self.max_index_num < 2:
            raise ConfigError(_("max_index_num: must be at least 2 (entry 0 is never used), got {value}").format(
                value=self.max_index_num))
        if not 0 < self.disk_max_used_space_ratio <= 100:
            raise ConfigError(_("{name}: must be in {low}..{high}, got {value}").format(
                name="disk_max_used_space_ratio", low=1, high=100, value=self.disk_max_used_space_ratio))
        if not 0 <= self.access_message_in_memory_max_ratio <= 100:
            raise ConfigError(_("{name}: must be in {low}..{high}, got {value}").format(
                name="access_message_in_memory_max_ratio", low=0, high=100, value=self.access_message_in_memory_max_ratio))
        if not 0 <= self.listen_port <= 65535:
            raise ConfigError(_("{name}: must be in {low}..{high}, got {value}").format(
                name="listen_port", low=0, high=65535, value=self.listen_port))
        self._check_names()
        return self

    def _check_names(self) -> None:
        """The broker's address, the store's root and the RocketMQ release named."""
        try:
            pack_host(self.store_host)
        except (ValueError, OSError) as exc:
            raise ConfigError(_("{name}: {value!r} is not an IPv4 or IPv6 address").format(
                name="broker_ip1", value=self.broker_ip1)) from exc
        if not self.store_path_root_dir:
            raise ConfigError(_("{name}: must not be empty").format(name="store_path_root_dir"))

        if self.rocketmq_version not in ROCKETMQ_RELEASES:
            raise ConfigError(_("{name}: {value!r} is not one of {choices}").format(
                name="rocketmq_version", value=self.rocketmq_version, choices=", ".join(ROCKETMQ_RELEASES)))
