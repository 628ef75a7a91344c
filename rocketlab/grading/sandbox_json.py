"""The judge's end of the sandbox's channel as text: one JSON message a line, written and read with ``orjson``
where it gives what ``json`` would (the sandbox binds its own copies before a submission runs:
:mod:`rocketlab.grading.sandbox_child`). rocketlab's own addition."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_LONG_INT = re.compile(rb"\d{19}")
"""Digits enough for an integer past 64 bits, which ``orjson.loads`` would read as a float."""


def dumps(message: dict[str, Any]) -> bytes:
    """A message of the judge's as one JSON text (``orjson``; ``json`` for what it refuses, such as a
    string with a lone surrogate or a dict with non-string keys)."""
    try:
        return orjson.dumps(message)
    except TypeError:
        return json.dumps(message).encode()


def loads(line: bytes) -> Any:
    """A line from the sandbox, read as ``json.loads`` reads it: ``orjson`` where that gives the same value
    (no integer of 19 digits or more, which it reads as a float; nothing it refuses, such as ``NaN`` or a
    lone surrogate), else ``json`` (ValueError for garbage)."""
    if not _LONG_INT.search(line):
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
    return json.loads(line)
