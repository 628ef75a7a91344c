"""RocketMQ 5's controller mode (RIP-44, as in RocketMQ 5.3.3): a controller elects the master of a classic
broker group and keeps its SyncStateSet; the brokers replicate with epochs.

The sans-IO core so far:

* :mod:`~rocketlab.controller.replicas_info_manager` - the controller's state machine: requests are
  validated against the current state and turned into events (:mod:`~rocketlab.controller.events`),
  which every controller applies once they are committed;
* :mod:`~rocketlab.controller.elect_policy` - ``DefaultElectPolicy`` (SyncStateSet first, unclean
  election only if enabled; epoch, then offset, then priority);
* :mod:`~rocketlab.controller.heartbeat_manager` - each controller's own table of live brokers;
* :mod:`~rocketlab.controller.protocol` - codes, headers and bodies; :mod:`~rocketlab.controller.config`;
* :mod:`~rocketlab.controller.controller_core` - one controller: its DLedger member (the controllers'
  replicated log), the request queue (validate, append, answer after the quorum), apply on commit,
  leader state after an empty entry commits, heartbeat scans and controller-triggered re-election with
  role-change notices; :mod:`~rocketlab.controller.wire` - the RPC messages and the node's codec.

Elections come in three kinds (``ElectMasterRequestHeader``): a broker asks (``of_broker_trigger``: it is
not preferred; no candidate -> ``CONTROLLER_ELECT_MASTER_FAILED``); the controller re-elects after the
master died (``of_controller_trigger``: no candidate -> an ``ElectMasterEvent(False)`` that clears the
master and still bumps ``masterEpoch``, code ``CONTROLLER_MASTER_NOT_AVAILABLE``); an admin designates a
broker (``of_admin_trigger``). The first election of a broker set makes the requester master whatever the
policy says.
"""

from rocketlab.controller.config import ControllerConfig
from rocketlab.controller.elect_policy import DefaultElectPolicy
from rocketlab.controller.events import EventSerializer, EventType
from rocketlab.controller.heartbeat_manager import BrokerLiveInfo, DefaultBrokerHeartbeatManager
from rocketlab.controller.protocol import ControllerRequestCode, ControllerResponseCode
from rocketlab.controller.replicas_info_manager import (
    BrokerReplicaInfo,
    ControllerResult,
    ReplicasInfoManager,
    SyncStateInfo,
)

__all__ = [
    "BrokerLiveInfo", "BrokerReplicaInfo", "ControllerConfig", "ControllerRequestCode", "ControllerResponseCode",
    "ControllerResult", "DefaultBrokerHeartbeatManager", "DefaultElectPolicy", "EventSerializer", "EventType",
    "ReplicasInfoManager", "SyncStateInfo",
]
