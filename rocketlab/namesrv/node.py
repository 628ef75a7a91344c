"""``nodeKind=namesrv``: a name server for ``rocketlab node --config namesrv.conf``.

Keys: ``listenPort`` (RocketMQ's name server default 9876; the node listens on 127.0.0.1) and the
common node keys. A ``namesrv.conf`` needs nothing else: without ``selfId``/``peers`` the node is named
``namesrv_<listenPort>`` (:func:`rocketlab.net.node.build_runtime`).
"""

from __future__ import annotations

from rocketlab.core import NodeSpec
from rocketlab.namesrv.namesrv_controller import make_namesrv
from rocketlab.namesrv.protocol import namesrv_codec

DEFAULT_LISTEN_PORT = 9876


def build_namesrv(props: dict[str, str]) -> NodeSpec:
    """The NodeSpec of a name server (its properties need no key of their own)."""
    return NodeSpec(lambda ctx: make_namesrv(ctx), namesrv_codec())
