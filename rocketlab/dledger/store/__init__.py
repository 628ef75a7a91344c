"""DLedger stores: the interface, the file store (byte-exact with DLedger 0.3.x) and the memory store."""

from rocketlab.dledger.store.dledger_store import AppendHook, DLedgerStore
from rocketlab.dledger.store.memory_store import DLedgerMemoryStore
from rocketlab.dledger.store.mmap_file_list import MmapFile, MmapFileList
from rocketlab.dledger.store.mmap_file_store import DLedgerMmapFileStore
from rocketlab.dledger.store.mmap_recovery import RecoveryReport

__all__ = [
    "AppendHook", "DLedgerMemoryStore", "DLedgerMmapFileStore", "DLedgerStore", "MmapFile", "MmapFileList",
    "RecoveryReport",
]
