"""RocketMQ-style ``key=value`` properties files (broker.conf, DLedger's ``currterm``), read and written.

Blank lines and lines starting with ``#`` or ``!`` are comments; the first ``=`` (or ``:``) separates
key and value; whitespace around both is stripped. Simplified: no line continuations or escapes.
"""

from __future__ import annotations

import os
from pathlib import Path

from rocketlab.errors import ConfigError


def parse_properties(text: str, source: str = "<properties>") -> dict[str, str]:
    props: dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        cut = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if cut <= 0:
            raise ConfigError(f"{source} line {lineno}: expected key=value, got {raw.strip()!r}")
        key, value = line[:cut].strip(), line[cut + 1:].strip()
        if key in props:
            raise ConfigError(f"{source} line {lineno}: {key} is set twice")
        props[key] = value
    return props


def load_properties(path: str | Path) -> dict[str, str]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file {p} does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"config file {p} cannot be read: {e}") from None
    return parse_properties(text, str(p))


def write_properties(path: str | Path, props: dict[str, object]) -> None:
    """Write atomically: a temporary file, fsync, rename (as DLedger persists ``currterm``)."""
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for key, value in props.items():
            f.write(f"{key}={value}\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, p)
