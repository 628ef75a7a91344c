"""Tiny cores for runtime tests: each records every input it gets and does what the test scripts."""

from __future__ import annotations

import json
from typing import Any

from rocketlab.core import EMPTY, Action, BaseCore, NodeContext, Output


class JsonCodec:
    def encode(self, msg: Any) -> bytes:
        return json.dumps(msg).encode()

    def decode(self, data: bytes) -> Any:
        return json.loads(data)


class Recorder(BaseCore):
    """Logs inputs in ``log``; ``plan`` maps an input name to a function returning actions."""

    def __init__(self, ctx: NodeContext, plan: dict[str, Any]) -> None:
        self.node_id = ctx.node_id
        self.plan = plan
        self.log: list[tuple] = []
        self.deadline: int | None = plan.get("first_tick")

    def _do(self, name: str, *args: Any) -> Output:
        self.log.append((name, *args))
        fn = self.plan.get(name)
        actions: tuple[Action, ...] = tuple(fn(self, *args)) if fn else ()
        return Output(actions) if actions else EMPTY

    def next_deadline_ms(self) -> int | None:
        return self.deadline

    def on_start(self, now_ms):
        return self._do("start", now_ms)

    def on_tick(self, now_ms):
        self.deadline = None
        return self._do("tick", now_ms)

    def on_message(self, src, msg, now_ms):
        return self._do("message", src, msg, now_ms)

    def on_request(self, src, request_id, msg, now_ms):
        return self._do("request", src, request_id, msg, now_ms)

    def on_reply(self, src, request_id, msg, now_ms):
        return self._do("reply", src, request_id, msg, now_ms)

    def on_stream_open(self, stream_id, peer, accepted, now_ms):
        return self._do("open", stream_id, peer, accepted, now_ms)

    def on_stream_data(self, stream_id, data, now_ms):
        return self._do("data", stream_id, data, now_ms)

    def on_stream_closed(self, stream_id, reason, now_ms):
        return self._do("closed", stream_id, reason, now_ms)


def recorder_cluster(plans: dict[str, dict[str, Any]], **kwargs: Any):
    from rocketlab.sim import Cluster

    return Cluster(list(plans), lambda ctx: Recorder(ctx, plans[ctx.node_id]), JsonCodec(), **kwargs)


def inputs(cluster, node_id: str, name: str) -> list[tuple]:
    return [entry for entry in cluster.node(node_id).log if entry[0] == name]
