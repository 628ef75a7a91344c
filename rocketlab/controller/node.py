"""``nodeKind=controller``: one controller of RocketMQ 5's controller mode on TCP, for ``rocketlab node``.

Keys: ``controllerIds`` (the controllers' node ids, comma-separated: the controllers' DLedger group;
every node of the cluster - controllers and brokers - is in ``peers``, the message addresses), the
ControllerConfig keys (``enableElectUncleanMaster``, ``scanNotActiveBrokerInterval``,
``scanInactiveMasterInterval``, ``electMasterMaxRetryCount``, ``notifyBrokerRoleChanged``) and the
controllers' DLedger timers by DLedger's names (``heartBeatTimeIntervalMs``, ``maxHeartBeatLeak``,
``minVoteIntervalMs``, ``maxVoteIntervalMs``, ``profile``, ...; Java's defaults otherwise). The DLedger log
lives in ``runDir/nodes/<selfId>``. The runtime's keys (``nodeKind``, ``selfId``, ``peers``, ``runDir``,
``seed``, ``traceNetwork``) are read by :mod:`rocketlab.net.node`.
"""

from __future__ import annotations

import dataclasses
import re

from rocketlab.controller.config import ControllerConfig
from rocketlab.controller.controller_core import ControllerNodeConfig, make_controller
from rocketlab.controller.wire import ControllerNodeCodec
from rocketlab.core import NodeSpec
from rocketlab.dledger.config import DLedgerConfig
from rocketlab.errors import ConfigError
from rocketlab.i18n import _

RUNTIME_KEYS = frozenset({"nodeKind", "selfId", "peers", "runDir", "seed", "traceNetwork", "streamListenPort",
                          "streamPeers", "controllerIds"})


def controller_ids(props: dict[str, str]) -> tuple[str, ...]:
    ids = tuple(i.strip() for i in props.get("controllerIds", "").split(",") if i.strip())
    if not ids:
        raise ConfigError(_("controllerIds is required: the controllers' node ids, comma-separated"))
    return ids


def build_controller(props: dict[str, str]) -> NodeSpec:
    """The NodeSpec of a controller (see the module docstring)."""
    ids = controller_ids(props)
    if props.get("selfId") not in ids:
        raise ConfigError(_("selfId={self_id!r} is not one of controllerIds ({ids})").format(
            self_id=props.get("selfId"), ids=", ".join(ids)))
    controller_keys = {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), f.name)
                       for f in dataclasses.fields(ControllerConfig)}
    dledger_keys = {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), f.name)
                    for f in dataclasses.fields(DLedgerConfig) if f.init}
    controller, dledger = {}, {}
    for key, value in props.items():
        if key in RUNTIME_KEYS:
            continue
        if key in controller_keys:
            controller[key] = value
        elif key in dledger_keys and key not in ("group", "selfId", "peers"):
            dledger[re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()] = value
        else:
            raise ConfigError(_("{key}: not a controller or DLedger key").format(key=key))
    config = ControllerNodeConfig(ControllerConfig.load(controller), dledger, ids)
    return NodeSpec(lambda ctx: make_controller(ctx, config), ControllerNodeCodec(serves=("controller", "dledger")))
