"""RocketMQ-style ``key=value`` properties files (broker.conf, DLedger's ``currterm``), read and written.

Blank lines and lines starting with ``#`` or ``!`` are comments; the first ``=``, ``:`` or run of blanks
separates key and value (as ``java.util.Properties``); whitespace around both is stripped. Simplified:
no line continuations or escapes, and a key with no value at all is an error rather than "".
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from rocketlab.errors import ConfigError
from rocketlab.i18n import _

# key, then '=' or ':' (with optional blanks around) or blanks alone, then the value (java.util.Properties)
_PAIR = re.compile(r"^([^=:\s]+)(?:\s*[=:]\s*|\s+)(.*)$")


def parse_properties(text: str, source: str = "<properties>") -> dict[str, str]:
    props: dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        match = _PAIR.match(line)
        if match is None:
            raise ConfigError(_("{source} line {lineno}: expected key=value, got {line!r}").format(
                source=source, lineno=lineno, line=raw.strip()))
        key, value = match.group(1), match.group(2).strip()
        if key in props:
            raise ConfigError(_("{source} line {lineno}: {key} is set twice").format(
                source=source, lineno=lineno, key=key))
        props[key] = value
    return props


def load_properties(path: str | Path) -> dict[str, str]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(_("config file {path} does not exist").format(path=p)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(_("config file {path} cannot be read: {why}").format(path=p, why=e)) from None
    return parse_properties(text, str(p))


def int_property(props: dict[str, str], key: str, default: int) -> int:
    """``props[key]`` as an int (``default`` when absent); ConfigError names the key when it is not one."""
    text = props.get(key)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise ConfigError(_("{key}={text!r} is not a whole number").format(key=key, text=text)) from None


def bool_property(props: dict[str, str], key: str, default: bool) -> bool:
    """``props[key]`` as a bool (``true``/``false``, any case; ``default`` when absent)."""
    text = props.get(key)
    if text is None:
        return default
    if text.lower() not in ("true", "false"):
        raise ConfigError(_("{key}={text!r} is not true or false").format(key=key, text=text))
    return text.lower() == "true"


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
