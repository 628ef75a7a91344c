"""ALL_FAMILIES: every message family of the kit, for the codecs that must read any node's messages.

A node kind's codec carries only the families it sends and receives, built by the package that owns the
kind (:class:`~rocketlab.dledger.codec.DLedgerCodec`, :func:`~rocketlab.broker.protocol.broker_codec`,
...). A client that may talk to any node (:class:`~rocketlab.net.client.NetClient` by default), the
oracle's frame comparisons and the tests need them all; they import them from here, above the cores.
rocketlab's own (no Java class).
"""

from __future__ import annotations

from rocketlab.broker.client_family import CLIENT_FAMILY
from rocketlab.broker.group_check import GROUP_CHECK_FAMILY
from rocketlab.broker.protocol import BROKER_FAMILY
from rocketlab.broker.send_protocol import SEND_BACK_FAMILY
from rocketlab.controller.wire import CONTROLLER_FAMILY, NOTIFY_FAMILY
from rocketlab.dledger.codec import DLEDGER_FAMILY
from rocketlab.namesrv.protocol import NAMESRV_FAMILY
from rocketlab.pingpong import PINGPONG_FAMILY
from rocketlab.remoting.family import Family

ALL_FAMILIES: tuple[Family, ...] = (DLEDGER_FAMILY, BROKER_FAMILY, SEND_BACK_FAMILY, CLIENT_FAMILY, GROUP_CHECK_FAMILY,
                                    CONTROLLER_FAMILY, NOTIFY_FAMILY, PINGPONG_FAMILY, NAMESRV_FAMILY)
"""Every family, in the order a codec given them all consults them."""
