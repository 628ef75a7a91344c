"""Peers strings and properties files (frames: ``tests/remoting``)."""

from __future__ import annotations

import pytest

from rocketlab.errors import ConfigError
from rocketlab.peers import format_peers, parse_address, parse_peers
from rocketlab.properties import load_properties, parse_properties, write_properties


def test_peers_parse_in_dledger_form():
    peers = parse_peers("n0-127.0.0.1:40911;n1-my-host:40912;n2-[::1]:40913;")
    assert peers == {"n0": ("127.0.0.1", 40911), "n1": ("my-host", 40912), "n2": ("::1", 40913)}
    assert parse_peers(format_peers({"a": ("h", 1)})) == {"a": ("h", 1)}


@pytest.mark.parametrize("text,problem", [
    ("", "empty"), ("n0127.0.0.1:1", "not id-host:port"), ("n0-host", "expected host:port"),
    ("n0-host:x", "not a number"), ("n0-host:70000", "1-65535"), ("n0-h:1;n0-h:2", "appears twice"),
    ("n 0-h:1", "letters, digits"),
])
def test_malformed_peers_are_named(text, problem):
    with pytest.raises(ConfigError, match=problem):
        parse_peers(text)


def test_parse_address_names_what():
    with pytest.raises(ConfigError, match="haMasterAddress"):
        parse_address("nowhere", "haMasterAddress")


def test_properties_round_trip_atomically_and_name_bad_lines(tmp_path):
    path = tmp_path / "currterm"
    write_properties(path, {"currTerm": 3, "voteLeader": "n1"})
    assert load_properties(path) == {"currTerm": "3", "voteLeader": "n1"}
    assert not (tmp_path / "currterm.tmp").exists()
    assert parse_properties("# c\n! c\n a = b \nc:d\n") == {"a": "b", "c": "d"}
    with pytest.raises(ConfigError, match="line 2: expected key=value"):
        parse_properties("a=1\nnonsense\n", "broker.conf")
    with pytest.raises(ConfigError, match="a is set twice"):
        parse_properties("a=1\na=2")
    with pytest.raises(ConfigError, match="does not exist"):
        load_properties(tmp_path / "missing.conf")
