"""RocketMQ's store files as Spark tables, with Spark 4's Python data source API.

    spark.read.format("rocketmq-commitlog").load(run_dir)       # every record of every commit log below
    spark.read.format("rocketmq-consumequeue").load(run_dir)    # every consume-queue unit
    spark.read.format("rocketmq-index").load(run_dir)           # every index-file entry

:func:`register_data_sources` makes the three formats known to a session (``get_spark`` calls it). Each
reads one partition per mapped file, with an explicit schema (:mod:`rocketlab.analysis.store_files` has
the columns and the decoding). Options: ``mappedFileSize`` (commit logs: refuse files of another size),
``mode`` ``PERMISSIVE`` (default: a record that does not decode is a row whose ``corrupt`` column names
the file and offset, and its file is read no further) or ``FAILFAST`` (the query fails there);
``hashSlotNum`` (index files: the store's ``maxHashSlotNum``; by default what the file size implies at
RocketMQ's 4 entries per slot, see :func:`~rocketlab.analysis.store_files.index_slot_count`).
rocketlab's own addition.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from rocketlab.analysis import store_files
from rocketlab.analysis.store_files import StoreFile
from rocketlab.errors import RocketlabError

MODES = ("PERMISSIVE", "FAILFAST")


def mapped_file_size(value: Any) -> int | None:
    """The ``mappedFileSize`` option (bytes; given as text through Spark's options) or None."""
    try:
        return int(value) if value is not None else None
    except ValueError:
        raise RocketlabError(f"rocketmq-commitlog: mappedFileSize {value!r} is not a number of bytes") from None


def hash_slot_num(value: Any) -> int | None:
    """The ``hashSlotNum`` option (given as text through Spark's options) or None."""
    try:
        slots = int(value) if value is not None else None
    except ValueError:
        raise RocketlabError(f"rocketmq-index: hashSlotNum {value!r} is not a number") from None
    if slots is not None and slots <= 0:
        raise RocketlabError(f"rocketmq-index: hashSlotNum must be positive, got {slots}")
    return slots


def ddl(columns: list[tuple[str, str]]) -> str:
    return ", ".join(f"{name} {type_}" for name, type_ in columns)


class _FileReader(DataSourceReader):
    def __init__(self, files: list[StoreFile], rows: Callable[[StoreFile], Iterator[tuple]], mode: str,
                 corrupt_at: int) -> None:
        self.files, self.rows, self.mode, self.corrupt_at = files, rows, mode, corrupt_at

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(f) for f in self.files] or [InputPartition(None)]

    def read(self, partition: InputPartition) -> Iterator[tuple]:
        if partition.value is None:
            return
        for row in self.rows(partition.value):
            if self.mode == "FAILFAST" and row[self.corrupt_at] is not None:
                raise RocketlabError(f"corrupt record: {row[self.corrupt_at]}")
            yield row


class _StoreDataSource(DataSource):
    columns: list[tuple[str, str]] = []

    def schema(self) -> str:
        return ddl(self.columns)

    def _path(self) -> str:
        path = self.options.get("path")
        if not path:
            raise RocketlabError(f"{self.name()}: give a directory: spark.read.format({self.name()!r}).load(DIR)")
        return str(path)

    def _mode(self) -> str:
        mode = str(self.options.get("mode", "PERMISSIVE")).upper()
        if mode not in MODES:
            raise RocketlabError(f"{self.name()}: mode {mode!r} is not one of {', '.join(MODES)}")
        return mode

    def _reader(self, files: list[StoreFile], rows: Callable[[StoreFile], Iterator[tuple]]) -> _FileReader:
        names = [n for n, _ in self.columns]
        return _FileReader(files, rows, self._mode(), names.index("corrupt"))


class CommitLogDataSource(_StoreDataSource):
    """``rocketmq-commitlog``: one row per record (classic commit logs and DLedger data files)."""

    columns = store_files.COMMIT_LOG_COLUMNS

    @classmethod
    def name(cls) -> str:
        return "rocketmq-commitlog"

    def reader(self, schema: Any) -> DataSourceReader:
        mapped = mapped_file_size(self.options.get("mappedFileSize"))
        return self._reader(store_files.find_commit_logs(self._path(), mapped), store_files.commit_log_rows)


class ConsumeQueueDataSource(_StoreDataSource):
    """``rocketmq-consumequeue``: one row per consume-queue unit."""

    columns = store_files.CONSUME_QUEUE_COLUMNS

    @classmethod
    def name(cls) -> str:
        return "rocketmq-consumequeue"

    def reader(self, schema: Any) -> DataSourceReader:
        return self._reader(store_files.find_consume_queues(self._path()), store_files.consume_queue_rows)


class IndexDataSource(_StoreDataSource):
    """``rocketmq-index``: one row per index-file entry."""

    columns = store_files.INDEX_COLUMNS

    @classmethod
    def name(cls) -> str:
        return "rocketmq-index"

    def reader(self, schema: Any) -> DataSourceReader:
        rows = partial(store_files.index_rows, hash_slot_num=hash_slot_num(self.options.get("hashSlotNum")))
        return self._reader(store_files.find_index_files(self._path()), rows)


DATA_SOURCES = (CommitLogDataSource, ConsumeQueueDataSource, IndexDataSource)


def register_data_sources(spark: Any) -> None:
    """Make ``rocketmq-commitlog``, ``rocketmq-consumequeue`` and ``rocketmq-index`` known to ``spark``."""
    for source in DATA_SOURCES:
        spark.dataSource.register(source)


def read_store(spark: Any, fmt: str, path: Any, **options: Any) -> Any:
    """``spark.read.format(fmt).load(path)`` after checking the path on the driver, so that bad input is
    one :class:`RocketlabError` line instead of a Python worker's traceback."""
    mapped = mapped_file_size(options.get("mappedFileSize"))
    hash_slot_num(options.get("hashSlotNum"))
    finders = {"rocketmq-commitlog": lambda: store_files.find_commit_logs(path, mapped),
               "rocketmq-consumequeue": lambda: store_files.find_consume_queues(path),
               "rocketmq-index": lambda: store_files.find_index_files(path)}
    if fmt not in finders:
        raise RocketlabError(f"unknown store format {fmt!r}; known: {', '.join(finders)}")
    finders[fmt]()
    reader = spark.read.format(fmt)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(str(path))


__all__ = ["CommitLogDataSource", "ConsumeQueueDataSource", "IndexDataSource", "read_store",
           "register_data_sources"]
