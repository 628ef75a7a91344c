"""``nodeKind=broker``: a broker from RocketMQ-style properties, for ``rocketlab node --config FILE``.

Keys (RocketMQ's spelling): ``brokerName``, ``brokerId``, ``brokerRole`` (ASYNC_MASTER, SYNC_MASTER,
SLAVE), ``haListenPort`` (the master's HA port), ``haMasterAddress`` (a slave's ``host:port`` of the
master's haListenPort), ``storePathRootDir``, ``mappedFileSizeCommitLog``, ``flushDiskType``,
``slaveReadEnable``, ``flushIntervalCommitLog``, ``haSendHeartbeatInterval``,
``haHousekeepingInterval``, ``slaveTimeout``; plus the node keys ``selfId`` and ``peers`` (the
group's message addresses: producers and consumers connect to ``selfId``'s address, a slave pulls
metadata from ``masterId``, default ``n0``).
"""

from __future__ import annotations

from rocketlab.errors import ConfigError
from rocketlab.ha.config import HAConfig


def _int(props: dict[str, str], key: str, default: int) -> int:
    text = props.get(key)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"{key}={text!r} is not a whole number") from None


def _bool(props: dict[str, str], key: str, default: bool) -> bool:
    text = props.get(key)
    if text is None:
        return default
    if text.lower() not in ("true", "false"):
        raise ConfigError(f"{key}={text!r} is not true or false")
    return text.lower() == "true"


def broker_config_from_properties(props: dict[str, str]):
    from rocketlab.broker.broker import BrokerConfig

    role = props.get("brokerRole", "ASYNC_MASTER")
    if role == "SLAVE" and len(props.get("haMasterAddress", "")) < 6:
        raise ConfigError("a SLAVE needs haMasterAddress=host:port (the master's haListenPort)")
    ha = HAConfig(
        ha_send_heartbeat_interval=_int(props, "haSendHeartbeatInterval", 5000),
        ha_housekeeping_interval=_int(props, "haHousekeepingInterval", 20000),
        slave_timeout=_int(props, "slaveTimeout", 3000),
    )
    return BrokerConfig(
        broker_name=props.get("brokerName", "broker-a"),
        broker_id=_int(props, "brokerId", 0 if role != "SLAVE" else 1),
        broker_role=role,
        ha_master_address=props.get("haMasterAddress"),
        master_id=props.get("masterId", "n0") if role == "SLAVE" else None,
        slave_read_enable=_bool(props, "slaveReadEnable", False),
        flush_disk_type=props.get("flushDiskType", "ASYNC_FLUSH"),
        mapped_file_size_commit_log=_int(props, "mappedFileSizeCommitLog", 1024 * 1024 * 1024),
        flush_interval_commit_log=_int(props, "flushIntervalCommitLog", 500),
        store_path_root_dir=props.get("storePathRootDir"),
        ha=ha,
    )


def build_broker(props: dict[str, str]):
    """The NodeSpec for a broker (see module docstring)."""
    from rocketlab.broker.broker import make_broker
    from rocketlab.broker.protocol import broker_codec
    from rocketlab.net.node import NodeSpec

    config = broker_config_from_properties(props)
    return NodeSpec(lambda ctx: make_broker(ctx, config, wall_clock=True), broker_codec(),
                    stream_listen_port=_int(props, "haListenPort", 0) if config.is_master else 0)
