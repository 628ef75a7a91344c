"""The node kinds of ``rocketlab node``: builders the runtime imports, and programs registered by their owner."""

from __future__ import annotations

import pytest

import rocketlab.cli  # noqa: F401 - what `rocketlab node` runs under: it makes the oracle register its kind
from rocketlab.errors import ConfigError
from rocketlab.net import node
from rocketlab.oracle.member_kind import JAVA_KINDS, exec_java_member


def test_every_hosted_kind_is_a_core_builder_and_the_java_member_is_registered_by_the_oracle():
    assert set(node.NODE_KINDS) == {"pingpong", "broker", "dledger", "controller", "namesrv"}
    assert all(callable(build) for build in node.NODE_KINDS.values())
    assert set(JAVA_KINDS) <= set(node.EXEC_KINDS) and node.EXEC_KINDS["java-dledger"] is exec_java_member


def test_an_unknown_kind_names_every_known_one():
    with pytest.raises(ConfigError, match="nodeKind='nope' is not one of pingpong, broker, dledger, controller, "
                                          "namesrv, java-dledger"):
        node.node_spec("nope", {}, "x.conf")


def test_a_program_cannot_take_over_a_kind_the_runtime_hosts():
    with pytest.raises(ValueError, match="hosted by this runtime"):
        node.register_exec_kind("broker", exec_java_member)
