"""``rocketlab node --config FILE``: one real node (see rocketlab.net.node for the keys)."""

from __future__ import annotations

import argparse
from typing import Any

from rocketlab.i18n import _
from rocketlab.net.node import main_node


def register(sub: Any) -> None:
    p = sub.add_parser("node", help=_("run one real node (broker, name server or DLedger member) on TCP"),
                       description=_("Run one real node on TCP (127.0.0.1 or the addresses in peers) until it is "
                                     "stopped; its run directory holds its trace and store files."))
    p.add_argument("--config", required=True, metavar="FILE",
                   help=_("a properties file: nodeKind (broker, namesrv, dledger, controller, pingpong), selfId, "
                          "peers (neither: a node of its own on 127.0.0.1:listenPort), runDir and, for brokers and "
                          "name servers, RocketMQ's keys (see rocketlab/net/node.py, docs/applications.md)"))
    p.set_defaults(func=cmd_node)


def cmd_node(args: argparse.Namespace) -> int:
    return main_node(args.config)
