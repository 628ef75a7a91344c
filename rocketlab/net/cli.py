"""``rocketlab node --config FILE``: one real node (see rocketlab.net.node for the keys)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("node", help="run one real node (broker or DLedger member) on TCP")
    p.add_argument("--config", required=True, help="properties file (nodeKind, selfId, peers, ...)")
    p.set_defaults(func=cmd_node)


def cmd_node(args: argparse.Namespace) -> int:
    from rocketlab.net.node import main_node

    return main_node(args.config)
