"""RocketMQ's store files as Spark tables, with Spark 4's Python data source API.

    spark.read.format("rocketmq-commitlog").load(store)       # every record of every commit log below
    spark.read.format("rocketmq-consumequeue").load(store)    # every consume-queue unit
    spark.read.format("rocketmq-index").load(store)           # every index-file entry

:func:`register_data_sources` makes the three formats known to a session (``get_spark`` calls it) and
turns on Spark's filter pushdown for Python data sources (``spark.sql.python.filterPushdown.enabled``,
Spark >= 4.1). ``store`` is a broker's store root (``commitlog/``, ``consumequeue/``, ``index/``), a
DLedger commit log's data directory, a run directory, or one of those directories.

The readers yield Arrow record batches decoded in bulk (:mod:`rocketlab.analysis.store_arrow`), rows
identical to the record-at-a-time decoders of :mod:`rocketlab.analysis.store_files`:

* **columns**: a user schema naming some of the columns (``.schema("topic string, queue_id int")``, each
  with its type) or the option ``columns`` (``"topic,queue_id"``) builds only those: Python data sources
  have no pruning hook, so without one every column is built and crosses into the JVM;
* **pushdown**: filters on ``topic`` (``=``, ``IN``), on queue id, queue offset, physical offset, store and
  born timestamps (``=``, ``<``, ``<=``, ``>``, ``>=``, ``IN``), and for DLedger logs on the entry's index
  and term, are evaluated while decoding (the variable-width columns are built only for the rows kept);
  ``phy_offset`` ranges skip whole commit-log files, topic and queue filters whole consume-queue files;
* **partitions**: about one per core (the option ``partitions``; by default the session's default
  parallelism through :func:`read_store`, else the driver's cores), of equal written bytes (a mapped
  file's zero tail left out): small files grouped, big files cut (a classic commit log anywhere: each
  segment finds its own records; a DLedger file at an entry boundary found on the driver; a consume queue
  at a unit boundary).

A limitation of Spark 4.1-4.3 to know: a DataFrame remembers the reader planned for its first query
with pushed filters (``PythonDataSourceV2`` caches its read plan), so a later query on the *same*
DataFrame object without such filters still gets the earlier filters' rows. Build the DataFrame again
(``spark.read...load``) for each filtered query, or give ``pushdown=false`` (Spark then filters, and the
reader decodes every row).

Other options: ``mappedFileSize`` (commit logs: refuse files of another size), ``mode`` ``PERMISSIVE``
(default: a record that does not decode is a row whose ``corrupt`` column names the file and offset, and
its file is read no further) or ``FAILFAST`` (the query fails there); ``hashSlotNum`` (index files: the
store's ``maxHashSlotNum``; by default what the file size implies at RocketMQ's 4 entries per slot, see
:func:`~rocketlab.analysis.store_files.index_slot_count`). rocketlab's own addition.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, Filter, InputPartition

from rocketlab.analysis import store_arrow, store_files
from rocketlab.analysis.store_arrow_batch import NUMERIC_OPS, Predicate
from rocketlab.analysis.store_files import StoreFile
from rocketlab.errors import RocketlabError
from rocketlab.i18n import _

MODES = ("PERMISSIVE", "FAILFAST")
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
"""Spark's switch for Python data sources' ``pushFilters`` (Spark >= 4.1); :func:`register_data_sources` sets it."""


def mapped_file_size(value: Any) -> int | None:
    """The ``mappedFileSize`` option (bytes; given as text through Spark's options) or None."""
    try:
        return int(value) if value is not None else None
    except ValueError:
        raise RocketlabError(_("rocketmq-commitlog: mappedFileSize {value!r} is not a number of bytes").format(
            value=value)) from None


def hash_slot_num(value: Any) -> int | None:
    """The ``hashSlotNum`` option (given as text through Spark's options) or None."""
    try:
        slots = int(value) if value is not None else None
    except ValueError:
        raise RocketlabError(_("rocketmq-index: hashSlotNum {value!r} is not a number").format(value=value)) from None
    if slots is not None and slots <= 0:
        raise RocketlabError(_("rocketmq-index: hashSlotNum must be positive, got {value}").format(value=slots))
    return slots


def ddl(columns: list[tuple[str, str]]) -> str:
    return ", ".join(f"{name} {type_}" for name, type_ in columns)


def partitions_option(value: Any) -> int:
    """The ``partitions`` option: how many partitions to cut the store into (default: the cores here)."""
    if value is None:
        return max(1, os.cpu_count() or 1)
    try:
        parts = int(value)
    except ValueError:
        raise RocketlabError(_("partitions {value!r} is not a number").format(value=value)) from None
    if parts <= 0:
        raise RocketlabError(_("partitions must be positive, got {value}").format(value=parts))
    return parts


def projection(full: list[tuple[str, str]], schema: Any, option: Any, source: str) -> list[tuple[str, str]]:
    """The columns to build: a user schema's fields (each one of ``full``, same type), or the ``columns``
    option's names, else all."""
    if option is not None and str(option).strip():
        types = dict(full)
        names = [n.strip() for n in str(option).split(",") if n.strip()]
        unknown = [n for n in names if n not in types]
        if unknown:
            raise RocketlabError(_("{source}: no column {name!r}; columns: {columns}").format(
                source=source, name=unknown[0], columns=", ".join(types)))
        return [(n, types[n]) for n in names]
    if schema is None:
        return list(full)
    fields = [(f.name, f.dataType.simpleString()) for f in schema.fields]
    types = dict(full)
    for name, type_ in fields:
        if name not in types:
            raise RocketlabError(_("{source}: no column {name!r}; columns: {columns}").format(
                source=source, name=name, columns=", ".join(types)))
        if types[name] != type_:
            raise RocketlabError(_("{source}: column {name} is {type}, not {asked}").format(
                source=source, name=name, type=types[name], asked=type_))
    return fields


_PUSHABLE = {
    "rocketmq-commitlog": {"topic", "queue_id", "queue_offset", "phy_offset", "physical_offset", "store_timestamp",
                           "born_timestamp", "sys_flag", "dledger_index", "dledger_term"},
    "rocketmq-consumequeue": {"topic", "queue_id", "queue_offset", "phy_offset", "size", "tags_code"},
    "rocketmq-index": {"phy_offset", "key_hash", "slot", "index_no"},
}


def predicate(f: Filter, source: str, columns: list[tuple[str, str]]) -> Predicate | None:
    """The :class:`Predicate` of a pushed Spark filter this source evaluates, or None (Spark keeps it)."""
    op = type(f).__name__
    if op not in ("In", *NUMERIC_OPS) or len(f.attribute) != 1:
        return None
    name = f.attribute[0]
    types = dict(columns)
    if name not in _PUSHABLE[source] or name not in types:
        return None
    wanted: type = str if types[name] == "string" else int
    values = f.value if op == "In" else (f.value,)
    if any(type(v) is not wanted for v in values):
        return None
    bits = {"int": 31, "bigint": 63}.get(types[name])
    if bits is not None and any(not -(2**bits) <= v < 2**bits for v in values):
        return None  # a literal outside the column's type: Spark compares it
    if wanted is str and op not in ("EqualTo", "In"):
        return None
    return Predicate(name, op, tuple(f.value) if op == "In" else f.value)


class _StoreReader(DataSourceReader):
    """Reads a store's files as Arrow batches (:mod:`rocketlab.analysis.store_arrow`): about one partition
    per core, pushed filters evaluated while decoding, only the projected columns built."""

    def __init__(self, source: str, files: list[StoreFile], columns: list[tuple[str, str]], mode: str, parts: int,
                 hash_slot_num: int | None = None, pushdown: bool = True) -> None:
        self.source, self.files, self.columns, self.mode, self.parts = source, files, columns, mode, parts
        self.pushdown = pushdown
        self.hash_slot_num = hash_slot_num
        self.predicates: list[Predicate] = []

    def pushFilters(self, filters: list[Filter]) -> list[Filter]:  # noqa: N802 (Spark's name)
        """Keep the filters this reader evaluates (replacing any of an earlier planning); return the rest."""
        self.predicates, rest = [], []
        for f in filters:
            p = predicate(f, self.source, self.columns) if self.pushdown else None
            if p is None:
                rest.append(f)
            else:
                self.predicates.append(p)
        return rest

    def _wanted(self, f: StoreFile) -> bool:
        """Whether a file can hold a row the pushed filters admit."""
        if self.source == "rocketmq-consumequeue":
            if not all(p.admits(getattr(f, p.column)) for p in self.predicates if p.column in ("topic", "queue_id")):
                return False
            lo, hi = store_arrow.interval(self.predicates, "queue_offset")
            first = int(os.path.basename(f.path)) // 20
            return first + os.path.getsize(f.path) // 20 > lo and first <= hi
        if self.source == "rocketmq-commitlog":
            lo, hi = store_arrow.interval(self.predicates, "phy_offset")
            base = int(os.path.basename(f.path))
            return base + os.path.getsize(f.path) > lo and base <= hi
        return True

    def partitions(self) -> list[InputPartition]:
        files = [f for f in self.files if self._wanted(f)]
        split = {"rocketmq-commitlog": store_arrow.commit_log_split,
                 "rocketmq-consumequeue": store_arrow.consume_queue_split}.get(self.source)
        sizes = None if split is None else [store_arrow.written_bytes(f.path) for f in files]
        plan = store_arrow.plan_partitions(files, self.parts, split, sizes)
        return [InputPartition(p) for p in plan] or [InputPartition([])]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        def fail(text: str) -> None:
            if self.mode == "FAILFAST":
                raise RocketlabError(_("corrupt record: {why}").format(why=text))

        for seg in partition.value:
            if self.source == "rocketmq-commitlog":
                batches = store_arrow.commit_log_batches(seg, self.columns, self.predicates, fail)
            elif self.source == "rocketmq-consumequeue":
                batches = store_arrow.consume_queue_batches(seg, self.columns, self.predicates, fail)
            else:
                batches = store_arrow.index_batches(seg, self.columns, self.predicates, fail, self.hash_slot_num)
            for batch in batches:
                if batch.num_rows:
                    yield batch


class _StoreDataSource(DataSource):
    columns: list[tuple[str, str]] = []

    def schema(self) -> str:
        return ddl(projection(self.columns, None, self.options.get("columns"), self.name()))

    def _path(self) -> str:
        path = self.options.get("path")
        if not path:
            raise RocketlabError(_("{source}: give a directory: spark.read.format({source!r}).load(DIR)").format(
                source=self.name()))
        return str(path)

    def _mode(self) -> str:
        mode = str(self.options.get("mode", "PERMISSIVE")).upper()
        if mode not in MODES:
            raise RocketlabError(_("{source}: mode {mode!r} is not one of {choices}").format(
                source=self.name(), mode=mode, choices=", ".join(MODES)))
        return mode

    def _reader(self, files: list[StoreFile], schema: Any, **extra: Any) -> _StoreReader:
        columns = projection(self.columns, schema, self.options.get("columns"), self.name())
        pushdown = str(self.options.get("pushdown", "true")).lower()
        if pushdown not in ("true", "false"):
            raise RocketlabError(_("{source}: pushdown {value!r} is not true or false").format(
                source=self.name(), value=pushdown))
        return _StoreReader(self.name(), files, columns, self._mode(), partitions_option(self.options.get("partitions")),
                            pushdown=pushdown == "true", **extra)


class CommitLogDataSource(_StoreDataSource):
    """``rocketmq-commitlog``: one row per record (classic commit logs and DLedger data files)."""

    columns = store_files.COMMIT_LOG_COLUMNS

    @classmethod
    def name(cls) -> str:
        return "rocketmq-commitlog"

    def reader(self, schema: Any) -> DataSourceReader:
        mapped = mapped_file_size(self.options.get("mappedFileSize"))
        return self._reader(store_files.find_commit_logs(self._path(), mapped), schema)


class ConsumeQueueDataSource(_StoreDataSource):
    """``rocketmq-consumequeue``: one row per consume-queue unit."""

    columns = store_files.CONSUME_QUEUE_COLUMNS

    @classmethod
    def name(cls) -> str:
        return "rocketmq-consumequeue"

    def reader(self, schema: Any) -> DataSourceReader:
        return self._reader(store_files.find_consume_queues(self._path()), schema)


class IndexDataSource(_StoreDataSource):
    """``rocketmq-index``: one row per index-file entry."""

    columns = store_files.INDEX_COLUMNS

    @classmethod
    def name(cls) -> str:
        return "rocketmq-index"

    def reader(self, schema: Any) -> DataSourceReader:
        return self._reader(store_files.find_index_files(self._path()), schema,
                            hash_slot_num=hash_slot_num(self.options.get("hashSlotNum")))


DATA_SOURCES = (CommitLogDataSource, ConsumeQueueDataSource, IndexDataSource)


def register_data_sources(spark: Any) -> None:
    """Make ``rocketmq-commitlog``, ``rocketmq-consumequeue`` and ``rocketmq-index`` known to ``spark``."""
    spark.conf.set(PUSHDOWN_CONF, "true")
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
        raise RocketlabError(_("unknown store format {name!r}; known: {known}").format(name=fmt, known=", ".join(finders)))
    finders[fmt]()
    columns = options.pop("columns", None)
    if columns is not None and not isinstance(columns, str):
        columns = ",".join(columns)
    full = {"rocketmq-commitlog": store_files.COMMIT_LOG_COLUMNS, "rocketmq-consumequeue":
            store_files.CONSUME_QUEUE_COLUMNS, "rocketmq-index": store_files.INDEX_COLUMNS}[fmt]
    chosen = projection(full, None, columns, fmt)
    partitions_option(options.get("partitions"))
    options.setdefault("partitions", spark.sparkContext.defaultParallelism)
    reader = spark.read.format(fmt)
    if columns is not None:
        reader = reader.schema(ddl(chosen))
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(str(path))


__all__ = ["CommitLogDataSource", "ConsumeQueueDataSource", "IndexDataSource", "read_store",
           "register_data_sources"]
