"""ControllerConfig, RocketMQ 5.3.3 (``common/.../ControllerConfig.java``): the keys the kit models, with
Java's defaults and names in snake_case. ``ControllerConfig.load({...})`` also takes the camelCase
property names (``enableElectUncleanMaster=true``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from rocketlab.errors import ConfigError
from rocketlab.i18n import _

DEFAULT_BROKER_CHANNEL_EXPIRED_TIME = 10_000
"""``BrokerHeartbeatManager.DEFAULT_BROKER_CHANNEL_EXPIRED_TIME``: a heartbeat without a timeout lasts 10 s."""


@dataclass(frozen=True)
class ControllerConfig:
    """Models ControllerConfig (the part that shapes behaviour; paths, thread pools and metrics are not)."""

    scan_not_active_broker_interval: int = 5_000
    """ms between scans of the heartbeat table (the first scan runs 2 s after start)."""
    elect_master_max_retry_count: int = 3
    enable_elect_unclean_master: bool = False
    """Also elect replicas outside the SyncStateSet when none inside is alive (may lose messages)."""
    is_process_read_event: bool = False
    notify_broker_role_changed: bool = True
    scan_inactive_master_interval: int = 5_000
    """ms between the leader's scans for broker sets whose master is dead while a replica lives."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            expected = bool if f.type == "bool" else int
            if type(value) is not expected:
                raise ConfigError(_("ControllerConfig.{name} must be {type}, got {value!r}").format(
                    name=f.name, type=expected.__name__, value=value))
            if expected is int and value <= 0:
                raise ConfigError(_("ControllerConfig.{name} must be positive, got {value}").format(name=f.name, value=value))

    @classmethod
    def load(cls, values: Mapping[str, Any]) -> ControllerConfig:
        """From snake_case or camelCase keys; strings (``"true"``, ``"5000"``) as a properties file gives them."""
        known = {f.name: f for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in values.items():
            name = key if key in known else re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()
            if name not in known:
                raise ConfigError(_("{key}: unknown controller config key").format(key=key))
            if isinstance(value, str):
                if known[name].type == "bool":
                    if value.lower() not in ("true", "false"):
                        raise ConfigError(_("{key}={value!r}: expected true or false").format(key=key, value=value))
                    value = value.lower() == "true"
                else:
                    try:
                        value = int(value)
                    except ValueError:
                        raise ConfigError(_("{key}={value!r}: expected an integer").format(key=key, value=value)) from None
            kwargs[name] = value
        return cls(**kwargs)
