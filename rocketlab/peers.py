"""Peer lists in DLedger's form: ``n0-127.0.0.1:40911;n1-127.0.0.1:40912``.

The id is everything before the first ``-``; the address is ``host:port`` (``[::1]:9000`` for IPv6).
"""

from __future__ import annotations

import re

from rocketlab.errors import ConfigError
from rocketlab.i18n import _

_ID = re.compile(r"^[A-Za-z0-9_.]+$")


def parse_address(text: str, what: str = "address") -> tuple[str, int]:
    """``host:port`` -> (host, port); ConfigError naming ``what`` when malformed."""
    host, sep, port_text = text.strip().rpartition(":")
    if not sep or not host:
        raise ConfigError(_("{what} {text!r}: expected host:port").format(what=what, text=text))
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        port = int(port_text)
    except ValueError:
        raise ConfigError(_("{what} {text!r}: port {port!r} is not a number").format(
            what=what, text=text, port=port_text)) from None
    if not 0 < port < 65536:
        raise ConfigError(_("{what} {text!r}: port must be 1-65535").format(what=what, text=text))
    return host, port


def parse_peers(text: str, field: str = "peers") -> dict[str, tuple[str, int]]:
    """Parse a peers string into ``{id: (host, port)}`` in the order given."""
    if not text or not text.strip():
        raise ConfigError(_("{field} is empty: expected n0-host:port;n1-host:port").format(field=field))
    peers: dict[str, tuple[str, int]] = {}
    for item in text.strip().strip(";").split(";"):
        item = item.strip()
        node_id, sep, address = item.partition("-")
        if not sep or not node_id or not address:
            raise ConfigError(_("{field}: {item!r} is not id-host:port").format(field=field, item=item))
        if not _ID.match(node_id):
            raise ConfigError(_("{field}: node id {node_id!r} may use letters, digits, '_' and '.' only").format(
                field=field, node_id=node_id))
        if node_id in peers:
            raise ConfigError(_("{field}: node id {node_id!r} appears twice").format(field=field, node_id=node_id))
        peers[node_id] = parse_address(address, f"{field} entry {node_id}")
    return peers


def format_peers(peers: dict[str, tuple[str, int]]) -> str:
    return ";".join(f"{n}-{h}:{p}" for n, (h, p) in peers.items())
