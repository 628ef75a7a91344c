"""The kit's exception hierarchy: every error says whose fault it is and what went wrong.

``RocketlabError`` is the root; the CLI turns any of them into a one-line message and exit code 2.
"""

from __future__ import annotations


class RocketlabError(Exception):
    """Root of every error the kit raises on purpose."""


class ConfigError(RocketlabError, ValueError):
    """A configuration value is missing or malformed; the message names the field."""


class CodecError(RocketlabError, ValueError):
    """Bytes could not be decoded; the message says what was wrong and at which offset (``detail``: what was
    wrong alone, for a caller that names the place itself)."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        self.offset = offset
        self.detail = message
        super().__init__(message if offset is None else f"{message} (at offset {offset})")


class LocalProtocolError(RocketlabError):
    """The caller misused a protocol core (our own bug or a test's)."""


class RemoteProtocolError(RocketlabError):
    """A peer sent something invalid; the connection to it must be closed."""


class StoreError(RocketlabError):
    """A store's files are unusable (wrong size, unreadable directory, ...)."""


class UnknownNodeError(RocketlabError, KeyError):
    """A node id that the cluster does not have."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "unknown node"


class InvariantViolation(RocketlabError, AssertionError):
    """A checker found a safety property broken; carries the seed and scenario to replay it."""

    def __init__(self, invariant: str, detail: str, seed: int | None = None, scenario: str | None = None):
        self.invariant, self.detail, self.seed, self.scenario = invariant, detail, seed, scenario
        replay = f" (replay: rocketlab sim {scenario} --seed {seed})" if scenario and seed is not None else ""
        super().__init__(f"invariant {invariant} violated: {detail}{replay}")
