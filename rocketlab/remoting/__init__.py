"""RocketMQ remoting, the wire of every node: commands and frames, a sans-IO connection, one codec.

* :mod:`~rocketlab.remoting.command` — ``RemotingCommand`` and its frame (JSON or RocketMQ header);
* :mod:`~rocketlab.remoting.connection` — ``RemotingConnection``, one connection's frames, h11 style;
* :mod:`~rocketlab.remoting.family` — how one protocol's messages map to commands;
* :mod:`~rocketlab.remoting.codec` — ``RemotingCodec``, routing every family's messages by class and
  request code;
* :mod:`~rocketlab.remoting.fastjson` — JSON as fastjson writes it (sorted bean properties, Java
  ``HashMap`` order).
"""

from rocketlab.remoting.codec import RemotingCodec
from rocketlab.remoting.command import MAX_FRAME, RemotingCommand, encode_command, parse_frame
from rocketlab.remoting.connection import CLOSED, NEED_DATA, RemotingConnection

__all__ = ["CLOSED", "MAX_FRAME", "NEED_DATA", "RemotingCodec", "RemotingCommand", "RemotingConnection",
           "encode_command", "parse_frame"]
