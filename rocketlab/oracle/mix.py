"""The messages the oracle tests put through both stores: a seeded mix of what a real broker meets.

Four topics (one a retry topic), tags and keys with non-ASCII text, properties with non-ASCII names and
values in the producer's order, bodies from empty to 4 KiB, transaction flags (prepared, commit,
rollback), IPv4 and IPv6 born hosts, batches (with and without batch properties), and properties at the
32,767-byte limit and one byte over it. No delay levels: Java's CommitLog moves a delayed message to
``SCHEDULE_TOPIC_XXXX`` and the kit has no schedule service (a deliberate difference).
"""

from __future__ import annotations

import random

from rocketlab.store.message import Message, MessageSysFlag, message_properties_to_string

TOPICS = ("TopicA", "TopicB", "orders_2026", "%RETRY%group-1")
BORN_HOSTS = (("127.0.0.1", 50000), ("10.1.2.3", 61234), ("::1", 50001), ("2001:db8::7", 4321))
TAGS = ("A", "B", "标签-α", "tag with spaces")
MAX_PROPERTIES = 32767

Item = Message | list[Message]


def _properties_of_length(length: int, last_separator: bool) -> dict[str, str]:
    """Properties whose string (of a release with or without the last separator) is ``length`` bytes."""
    props = {"TAGS": "big", "KEYS": "big-one"}
    fixed = len(message_properties_to_string({**props, "filler": ""}, last_separator=last_separator).encode())
    props["filler"] = "x" * (length - fixed)
    return props


def mixed_messages(seed: int = 1, n: int = 240, *, last_separator: bool = False, born_ms: int = 1_700_000_000_000,
                   batches: bool = True) -> list[Item]:
    """``n`` puts (a batch counts once): messages, and lists of messages sent as one batch."""
    rng = random.Random(seed)
    out: list[Item] = []
    for i in range(n):
        topic = TOPICS[rng.randrange(len(TOPICS))]
        queue_id = rng.randrange(4)
        host = BORN_HOSTS[rng.randrange(len(BORN_HOSTS))]
        born = born_ms + i * 7
        roll = rng.random()
        if batches and roll < 0.08:
            size = rng.randint(2, 5)
            out.append([Message(topic, rng.randbytes(rng.randint(0, 300)), queue_id, tags=TAGS[rng.randrange(4)],
                                keys=[f"b{i}-{j}"], properties={"UNIQ_KEY": f"U{i:04d}{j}"},
                                flag=rng.randrange(8), born_timestamp=born, born_host=host) for j in range(size)])
            continue
        props: dict[str, str] = {}
        if rng.random() < 0.9:
            props["UNIQ_KEY"] = f"AC1100{seed:02d}{i:08X}"
        if rng.random() < 0.4:
            props["名前"] = rng.choice(("値", "βῆτα", "🚀 launch", "plain"))
        if rng.random() < 0.3:
            props["user-prop"] = "v" * rng.randint(1, 40)
        keys = [f"k{i}"] + ([f"κλειδί-{i % 5}"] if rng.random() < 0.5 else [])
        body = rng.randbytes(rng.choice((0, 1, 16, 100, 1024, 4096, rng.randint(0, 4096))))
        sys_flag = 0
        prepared = 0
        if roll > 0.93:
            sys_flag = rng.choice((MessageSysFlag.TRANSACTION_PREPARED_TYPE, MessageSysFlag.TRANSACTION_COMMIT_TYPE,
                                   MessageSysFlag.TRANSACTION_ROLLBACK_TYPE))
            if sys_flag != MessageSysFlag.TRANSACTION_PREPARED_TYPE:
                prepared = rng.randrange(1 << 20)
        out.append(Message(topic, body, queue_id, tags=TAGS[rng.randrange(len(TAGS))] if rng.random() < 0.8 else None,
                           keys=keys, properties=props, flag=rng.randrange(1 << 16), born_timestamp=born,
                           born_host=host, sys_flag=sys_flag, reconsume_times=rng.randrange(3),
                           prepared_transaction_offset=prepared))
    # at the properties limit, and one byte over it
    for extra, length in ((0, MAX_PROPERTIES), (1, MAX_PROPERTIES + 1)):
        out.insert(n // 3 + extra, Message("TopicA", b"at the limit", 1, born_timestamp=born_ms + 5 + extra,
                                           properties=_properties_of_length(length, last_separator)))
    return out


def keys_of(items: list[Item]) -> list[tuple[str, str]]:
    """Every (topic, key) the index holds for ``items``: each of KEYS and UNIQ_KEY."""
    out = set()
    for item in items:
        for m in item if isinstance(item, list) else [item]:
            for k in (m.keys or "").split(" ") + [m.uniq_key or ""]:
                if k:
                    out.add((m.topic, k))
    return sorted(out)
