"""``nodeKind=broker``: a broker from RocketMQ-style properties, for ``rocketlab node --config FILE``.

Keys (RocketMQ's spelling): ``brokerName``, ``brokerId``, ``brokerRole`` (ASYNC_MASTER, SYNC_MASTER,
SLAVE), ``haListenPort`` (the master's HA port), ``haMasterAddress`` (a slave's ``host:port`` of the
master's haListenPort), ``storePathRootDir``, ``mappedFileSizeCommitLog``, ``flushDiskType``,
``slaveReadEnable``, ``flushIntervalCommitLog``, ``haSendHeartbeatInterval``,
``haHousekeepingInterval``, ``slaveTimeout``; the send path's (every broker kind, see
:func:`send_config_from_properties`): ``brokerClusterName``, ``autoCreateTopicEnable``,
``defaultTopicQueueNums``, ``brokerPermission``, ``autoCreateSubscriptionGroup``, ``messageDelayLevel``,
``maxMessageSize``, and ``listenPort`` / ``brokerIP1`` for the store host of every record (default: the
node's own address in ``peers``); plus the node keys ``selfId`` and ``peers`` (the
group's message addresses: producers and consumers connect to ``selfId``'s address, a slave pulls
metadata from ``masterId``, default ``n0``; empty: no metadata sync, for a master that is not a rocketlab
node, such as a real Java store). With ``namesrvAddr`` (``;``-separated name servers) the broker registers
with them (``brokerClusterName``, ``listenPort``, ``brokerIP1``, ``brokerIP2``, ``registerNameServerPeriod``,
:mod:`rocketlab.broker.broker_outer_api`); a slave then needs neither ``haMasterAddress`` nor ``masterId``:
it learns both from the name server's answer, as a Java slave does.

With ``enableDLegerCommitLog=true`` the broker keeps its CommitLog on DLedger and fails over by itself
(:mod:`rocketlab.broker.dledger_broker`); ``brokerRole``, ``brokerId`` and the HA keys are then ignored,
as in RocketMQ. Its keys: ``dLegerGroup`` (default ``brokerName``), ``dLegerPeers`` (``n0-host:port;...``,
default: ``peers``; its ids must be the node's peers, and DLedger RPCs travel on each node's message
port, so its addresses are not dialled), ``dLegerSelfId`` (default and required: ``selfId``; one letter
followed by digits), ``preferredLeaderId``, ``enableBatchPush``, ``storePathRootDir``,
``mappedFileSizeCommitLog``, ``slaveReadEnable``; and any DLedgerConfig field by its Java name
(``heartBeatTimeIntervalMs``, ``maxVoteIntervalMs``, ``maxWaitAckTimeMs``, ``profile``, ...) to tune
DLedger (RocketMQ keeps Java's defaults).

Every kind also takes the client processors' keys (``longPollingEnable``, ``shortPollingTimeMills``,
``notifyConsumerIdsChangedEnable``, ``autoCreateSubscriptionGroup``, ``flushConsumerOffsetInterval``,
``totalPhysicalMemory``: :mod:`rocketlab.broker.processor_config`).
"""

from __future__ import annotations

import dataclasses
import re

from rocketlab.broker.auto_switch_broker import AutoSwitchBrokerConfig, AutoSwitchBrokerCore
from rocketlab.broker.broker import BrokerConfig, make_broker
from rocketlab.broker.dledger_broker import DLedgerBrokerConfig, dledger_broker_codec, make_dledger_broker
from rocketlab.broker.processor_config import ProcessorConfig
from rocketlab.broker.protocol import auto_switch_broker_codec, broker_codec
from rocketlab.broker.topic_config_rules import DEFAULT_MESSAGE_DELAY_LEVEL, SendConfig
from rocketlab.controller.node import controller_ids
from rocketlab.core import NodeSpec
from rocketlab.dledger.config import DEFAULT_PROFILE, DLedgerConfig
from rocketlab.errors import ConfigError
from rocketlab.ha.config import HAConfig
from rocketlab.i18n import _
from rocketlab.peers import parse_peers
from rocketlab.properties import bool_property as _bool
from rocketlab.properties import int_property as _int


def send_config_from_properties(props: dict[str, str]) -> SendConfig:
    """The send path's keys (``brokerClusterName``, ``autoCreateTopicEnable``, ``defaultTopicQueueNums``,
    ``brokerPermission``, ``autoCreateSubscriptionGroup``, ``messageDelayLevel``, ``maxMessageSize``), Java's
    defaults; a broker of ``rocketlab node`` keeps the system topics (TBW102, ...) as Java does."""
    return SendConfig(
        broker_cluster_name=props.get("brokerClusterName", "DefaultCluster"),
        auto_create_topic_enable=_bool(props, "autoCreateTopicEnable", True),
        default_topic_queue_nums=_int(props, "defaultTopicQueueNums", 8),
        broker_permission=_int(props, "brokerPermission", 6),
        auto_create_subscription_group=_bool(props, "autoCreateSubscriptionGroup", True),
        message_delay_level=props.get("messageDelayLevel", DEFAULT_MESSAGE_DELAY_LEVEL),
        max_message_size=_int(props, "maxMessageSize", 4 * 1024 * 1024))


def store_host_options(props: dict[str, str]) -> dict[str, object]:
    """``brokerIP1`` and ``listenPort`` for the store host written into every record: ``listenPort`` if
    given, else the port of the node's own address in ``peers``; ``brokerIP1`` if given, else that
    address's host (127.0.0.1 without peers), so the offset message ids point at this broker."""
    own = parse_peers(props["peers"]).get(props.get("selfId", "")) if "peers" in props else None
    options: dict[str, object] = {}
    if "listenPort" in props:
        options["listen_port"] = _int(props, "listenPort", 10911)
    elif own is not None:
        options["listen_port"] = own[1]
    ip = props.get("brokerIP1") or (own[0] if own is not None else None)
    if ip:
        options["broker_ip1"] = ip
    if "maxMessageSize" in props:
        options["max_message_size"] = _int(props, "maxMessageSize", 4 * 1024 * 1024)
    return options


def broker_config_from_properties(props: dict[str, str]):
    role = props.get("brokerRole", "ASYNC_MASTER")
    if role == "SLAVE" and len(props.get("haMasterAddress", "")) < 6 and not props.get("namesrvAddr"):
        raise ConfigError(_("a SLAVE needs haMasterAddress=host:port (the master's haListenPort) or namesrvAddr"))
    ha = HAConfig(
        ha_send_heartbeat_interval=_int(props, "haSendHeartbeatInterval", 5000),
        ha_housekeeping_interval=_int(props, "haHousekeepingInterval", 20000),
        slave_timeout=_int(props, "slaveTimeout", 3000),
    )
    return BrokerConfig(
        broker_name=props.get("brokerName", "broker-a"),
        broker_id=_int(props, "brokerId", 0 if role != "SLAVE" else 1),
        broker_role=role,
        ha_master_address=props.get("haMasterAddress") or None,
        master_id=(props.get("masterId", "" if props.get("namesrvAddr") else "n0") or None) if role == "SLAVE" else None,
        slave_read_enable=_bool(props, "slaveReadEnable", False),
        flush_disk_type=props.get("flushDiskType", "ASYNC_FLUSH"),
        mapped_file_size_commit_log=_int(props, "mappedFileSizeCommitLog", 1024 * 1024 * 1024),
        flush_interval_commit_log=_int(props, "flushIntervalCommitLog", 500),
        store_path_root_dir=props.get("storePathRootDir"),
        ha=ha,
        store_options=store_host_options(props),
        send=send_config_from_properties(props),
        processors=ProcessorConfig.from_properties(props),
    )


_DLEDGER_RESERVED = {"group", "self_id", "peers", "store_base_dir", "store_type", "mapped_file_size_for_entry_data"}


def dledger_broker_config_from_properties(props: dict[str, str]):
    """The DLedgerBrokerConfig of ``enableDLegerCommitLog=true`` (see the module docstring)."""

    dledger: dict[str, str] = {}
    for f in dataclasses.fields(DLedgerConfig):
        if not f.init or f.name in _DLEDGER_RESERVED:
            continue
        camel = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), f.name)
        if camel in props:
            dledger[f.name] = props[camel]
    if "preferredLeaderId" in props:
        dledger["preferred_leader_ids"] = props["preferredLeaderId"]
    if "enableBatchPush" in props:
        dledger["is_enable_batch_push"] = props["enableBatchPush"]
    profile = dledger.pop("profile", DEFAULT_PROFILE)
    for key in ("dLegerGroup", "dLegerPeers", "dLegerSelfId"):
        if key in props and not props[key].strip():
            raise ConfigError(_("{key} is empty").format(key=key))
    return DLedgerBrokerConfig(
        broker_name=props.get("brokerName", "broker-a"),
        dleger_group=props.get("dLegerGroup"),
        dleger_peers=props.get("dLegerPeers"),
        dleger_self_id=props.get("dLegerSelfId"),
        profile=profile,
        dledger=dledger,
        mapped_file_size_commit_log=_int(props, "mappedFileSizeCommitLog", 1024 * 1024 * 1024),
        slave_read_enable=_bool(props, "slaveReadEnable", False),
        store_path_root_dir=props.get("storePathRootDir"),
        store_options=store_host_options(props),
        send=send_config_from_properties(props),
        processors=ProcessorConfig.from_properties(props),
    )


def build_broker(props: dict[str, str]):
    """The NodeSpec for a broker (see module docstring)."""
    if _bool(props, "enableControllerMode", False):
        return _controller_mode_broker(props)

    if _bool(props, "enableDLegerCommitLog", False):

        dconfig = dledger_broker_config_from_properties(props)
        if "selfId" in props and "peers" in props:  # fail at start, not in the first input

            dconfig.dledger_config(props["selfId"], tuple(parse_peers(props["peers"])))
        return NodeSpec(lambda ctx: make_dledger_broker(ctx, dconfig, wall_clock=True), dledger_broker_codec())
    config = broker_config_from_properties(props)
    return NodeSpec(lambda ctx: make_broker(ctx, config, wall_clock=True), broker_codec(),
                    stream_listen_port=_int(props, "haListenPort", 0) if config.is_master else 0)


def _controller_mode_broker(props: dict[str, str]) -> NodeSpec:
    """``enableControllerMode=true``: a broker whose id and role come from the controllers
    (:mod:`rocketlab.broker.auto_switch_broker`). Keys: ``controllerIds`` (the controllers' node ids,
    comma-separated), ``brokerName``, ``brokerClusterName``, ``haListenPort`` (every broker listens: any may
    become master), ``streamPeers`` (every broker's ``id-host:haListenPort``: a slave dials its master's),
    ``allAckInSyncStateSet``, ``inSyncReplicas``, ``minInSyncReplicas``, ``haMaxTimeSlaveNotCatchup``,
    ``brokerElectionPriority``, ``controllerHeartBeatTimeoutMills``, ``mappedFileSizeCommitLog``,
    ``haSendHeartbeatInterval``,
    ``haHousekeepingInterval``, ``slaveTimeout``."""
    ids = controller_ids(props)
    ha = HAConfig(ha_send_heartbeat_interval=_int(props, "haSendHeartbeatInterval", 5000),
                  ha_housekeeping_interval=_int(props, "haHousekeepingInterval", 20000),
                  slave_timeout=_int(props, "slaveTimeout", 3000))
    config = AutoSwitchBrokerConfig(
        broker_name=props.get("brokerName", "broker-a"),
        cluster_name=props.get("brokerClusterName", "DefaultCluster"),
        election_priority=_int(props, "brokerElectionPriority", 2**31 - 1),
        all_ack_in_sync_state_set=_bool(props, "allAckInSyncStateSet", False),
        in_sync_replicas=_int(props, "inSyncReplicas", 1),
        min_in_sync_replicas=_int(props, "minInSyncReplicas", 1),
        ha_max_time_slave_not_catchup=_int(props, "haMaxTimeSlaveNotCatchup", 15000),
        controller_heart_beat_timeout_mills=_int(props, "controllerHeartBeatTimeoutMills", 10000),
        mapped_file_size_commit_log=_int(props, "mappedFileSizeCommitLog", 1024 * 1024 * 1024),
        ha=ha, store_options=store_host_options(props), send=send_config_from_properties(props),
        processors=ProcessorConfig.from_properties(props))
    port = _int(props, "haListenPort", 0)
    if port <= 0:
        raise ConfigError(_("a controller-mode broker needs haListenPort (any broker may become master)"))
    return NodeSpec(lambda ctx: AutoSwitchBrokerCore(ctx, config, controllers=ids),
                    auto_switch_broker_codec(),
                    stream_listen_port=port)
