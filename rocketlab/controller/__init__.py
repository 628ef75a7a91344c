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

Fidelity to RocketMQ 5.3.3: the one list
-----------------------------------------
Where the kit's controller mode (this package, :mod:`rocketlab.broker.auto_switch_broker`,
:mod:`rocketlab.broker.replicas_manager`, :mod:`rocketlab.ha.autoswitch_service`,
:mod:`rocketlab.ha.autoswitch_client`) once differed from 5.3.3, and what it does now (issue #32):

* ``changeToMaster`` adopts the new SyncStateSet first, dispatches everything up to the confirm offset, then
  rebuilds the queue-offset table with ``compensateForHA`` - the kit once rebuilt the table under the old
  set and handed a queue offset out twice after a re-promotion (invariant I6, ``controller-repromotion``);
* a crashed broker is inactive at once: its channel closes (``onBrokerChannelClose``, the runtimes'
  ``on_peer_closed``) and the leader elects; the heartbeat timeout and the scans are for a failed host or a
  cut network;
* every successful election is notified to the live members, the ones brokers and admins ask for too;
* the master's ``connectionCaughtUpTimeTable`` survives role changes (Java never clears it);
* a truncation (handshake or half-written tail) lowers the confirm offset (``truncateDirtyFiles``);
* a role change the HA service refuses (an epoch below the epoch file's last) still makes the broker
  SYNC_MASTER with brokerId 0, or SLAVE (ReplicasManager ignores the answer);
* a restart no longer cuts every consume queue back to the confirm offset: after an abnormal exit recovery
  re-dispatches only up to it and keeps the units on disk (``recoverAbnormally``), after a clean exit it
  dispatches the whole log (``recoverNormally``) - judged against the real store;
* a fenced broker sends no periodic heartbeats (only start-up's own);
* the controller leader is the first one named by any controller's answer;
* retention works in controller mode and drops the epochs it leaves behind (``truncatePrefixByOffset``).

Kit switches, off by default (``AutoSwitchBrokerConfig``):

* ``before_5798`` - the master's SyncStateSet before PR #5798 (RocketMQ 5.1.1, the fix of #5663): a
  proposal counts only once the controller answers (``controller-5663 --profile before-5798``). It models
  that one behaviour, not RocketMQ 5.1.0 (which also keyed the set by address, lacked the #6662 and
  ack > 0 guards and the shrink of unconnected members, polled transfers every 1000 ms and dropped the last
  property separator);
* ``cut_consume_queues_on_every_restart`` - the kit's earlier rule: consume queues cut back to the confirm
  offset after any restart, so consumers never see what was not confirmed (5.3.3 shows them what a clean
  exit left in the log, and what an abnormal one left in the queue files).

Deliberate differences that remain are listed in each module's docstring.
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
