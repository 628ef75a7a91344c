"""A message's properties as the Java broker holds them: a ``HashMap<String, String>``.

Models ``MessageAccessor`` (``putProperty``, ``clearProperty``) over ``Message.properties`` and what
``MessageDecoder.messageProperties2String`` makes of it: the broker re-writes a message's properties
string from its map (CLUSTER added, WAIT left out, REAL_TOPIC and REAL_QID for a delayed message), and a
``HashMap`` iterates its keys by the bucket of ``String.hashCode()``, in insertion order within a bucket.
:class:`PropertyMap` keeps the insertion order and the largest size reached (a ``HashMap``'s table only
grows), so :meth:`PropertyMap.java_order` is the order the Java broker writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from rocketlab.remoting.fastjson import hashmap_capacity
from rocketlab.store.message import java_string_hash


@lru_cache(maxsize=4096)
def _spread(key: str) -> int:
    """``HashMap.hash(key)``: ``h ^ (h >>> 16)`` of ``String.hashCode()`` (cached: property names repeat)."""
    h = java_string_hash(key) & 0xFFFFFFFF
    return h ^ (h >> 16)


class PropertyMap:
    """A ``new HashMap<String, String>()`` (16 buckets, grows at 0.75) filled in the order given."""

    def __init__(self, items: Mapping[str, str] | None = None) -> None:
        self.items: dict[str, str] = {}
        self.max_size = 0
        for k, v in (items or {}).items():
            self.put(k, v)

    def put(self, key: str, value: str) -> None:
        """``HashMap.put``: a new key goes to the tail of its bucket; an old key keeps its place."""
        self.items[key] = value
        self.max_size = max(self.max_size, len(self.items))

    def remove(self, key: str) -> str | None:
        return self.items.pop(key, None)

    def get(self, key: str) -> str | None:
        return self.items.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self.items

    def copy(self) -> PropertyMap:
        out = PropertyMap()
        out.items, out.max_size = dict(self.items), self.max_size
        return out

    def java_order(self) -> dict[str, str]:
        """The entries in the map's iteration order (what ``messageProperties2String`` writes)."""
        mask = hashmap_capacity(self.max_size) - 1
        items = self.items
        order = sorted(enumerate(items), key=lambda pair: (_spread(pair[1]) & mask, pair[0]))
        return {key: items[key] for _, key in order}


def decoded_properties(properties: Mapping[str, str]) -> PropertyMap:
    """``string2messageProperties`` of a stored properties string (given in its stored order): a fresh
    ``HashMap`` filled in that order."""
    return PropertyMap(properties)
