"""``nodeKind=dledger``: one DLedger member on TCP, for ``rocketlab node --config FILE``.

Keys are DLedger's own (``DLedgerConfig``, Java camelCase or snake_case): ``group``, ``selfId``,
``peers`` (``n0-127.0.0.1:40911;n1-127.0.0.1:40912;...``: the members' message addresses, which are also
where clients connect), ``storeBaseDir`` (the member's files go to ``storeBaseDir/dledger-<selfId>``, as
in Java; default ``runDir/nodes/<selfId>``), ``storeType`` (FILE or MEMORY), ``heartBeatTimeIntervalMs``,
``maxHeartBeatLeak``, ``minVoteIntervalMs``, ``maxVoteIntervalMs``, ``profile`` (``dledger-0.3.1.2``, the default, ``dledger-0.3.2`` or ``raft``),
``mappedFileSizeForEntryData``, ``fsyncPolicy``, ... - any field, each validated with a ConfigError that
names it. The node keys ``nodeKind``, ``runDir``, ``seed`` and ``traceNetwork`` are the runtime's.

A client appends by sending an ``AppendEntryRequest`` (``remote_id`` = the member it talks to) with
:class:`~rocketlab.net.client.NetClient` and :class:`~rocketlab.dledger.codec.DLedgerCodec`; the reply
comes when the entry is committed (or refused: NOT_LEADER names the leader). ``MetadataRequest`` tells
the leader and term; ``GetEntriesRequest`` to the leader returns the entry at ``begin_index``.
A clean stop (SIGTERM) writes the member's state to ``runDir/final-<selfId>.json``.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from rocketlab.core import NodeContext, NodeSpec
from rocketlab.dledger.codec import DLedgerCodec
from rocketlab.dledger.config import DLedgerConfig
from rocketlab.dledger.server import DLedgerServer, resolve_config
from rocketlab.errors import ConfigError
from rocketlab.i18n import _

NODE_KEYS = frozenset({"nodeKind", "runDir", "seed", "traceNetwork", "streamListenPort", "streamPeers"})
"""Keys the runtime reads; every other key is a DLedgerConfig field."""


class DLedgerNode(DLedgerServer):
    """A :class:`DLedgerServer` that describes itself for ``final-<selfId>.json``: its state and log ends."""

    def describe(self) -> dict[str, Any]:
        return {**self.snapshot(), "profile": self.config.profile, "group": self.config.group}


def dledger_config_from_properties(props: dict[str, str]) -> DLedgerConfig:
    """The member's DLedgerConfig from a node's properties (ConfigError names a bad or unknown key)."""
    values = {k: v for k, v in props.items() if k not in NODE_KEYS}
    for key in ("selfId", "peers"):
        if key not in values:
            raise ConfigError(_("{key} is required for a DLedger member").format(key=key))
    return DLedgerConfig.load(values)


def build_dledger(props: dict[str, str]):
    """The NodeSpec for a DLedger member (see the module docstring)."""
    config = dledger_config_from_properties(props)
    base = props.get("storeBaseDir") or props.get("store_base_dir")

    def factory(ctx: NodeContext) -> DLedgerNode:
        store_dir = config.default_path if base else ctx.data_dir
        if store_dir is not None:
            store_dir = Path(store_dir)
            store_dir.mkdir(parents=True, exist_ok=True)
        member_ctx = replace(ctx, data_dir=store_dir if config.store_type == "FILE" else None)
        cfg = resolve_config(member_ctx, config)
        rng: random.Random = member_ctx.rng("elector")
        node = DLedgerNode(cfg, member_ctx.data_dir, rng)
        if ctx.threads:
            node.enable_threads()
        return node

    return NodeSpec(factory, DLedgerCodec())
