"""The blocking facade for notebook cells: the client's asyncio runtime on an event loop of its own thread.

A kernel already runs an event loop, so a cell cannot ``asyncio.run`` the client: :class:`ClientThread` starts one
loop on a daemon thread and runs every call there (``asyncio.run_coroutine_threadsafe``), waiting at most the call's
own timeout plus a margin, so a cell never hangs. :func:`producer`, :func:`push_consumer` and :func:`pull_consumer`
return objects whose methods are the async ones, blocking.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any

from rocketlab.client.consumers import PullConsumer, PushConsumer
from rocketlab.client.instance import MQClientInstance, Producer
from rocketlab.client.producer import ProducerConfig
from rocketlab.errors import RocketlabError


class ClientThread:
    """One event loop on a daemon thread; ``run(coro, timeout_s)`` runs a coroutine there and returns its result."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="rocketlab-client", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, Any], timeout_s: float = 60.0) -> Any:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout_s)
        except TimeoutError:
            future.cancel()
            raise RocketlabError(f"the client did not finish in {timeout_s} s") from None

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


class Blocking:
    """Every coroutine method of ``target`` as a blocking call on ``thread``."""

    def __init__(self, thread: ClientThread, target: Any) -> None:
        self._thread = thread
        self._target = target

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if not asyncio.iscoroutinefunction(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._thread.run(attr(*args, **kwargs))
        return call


def _instance(thread: ClientThread, namesrv_addr: str, **kw: Any) -> MQClientInstance:
    async def make() -> MQClientInstance:
        return MQClientInstance(namesrv_addr, **kw)
    return thread.run(make())


def producer(thread: ClientThread, namesrv_addr: str, config: ProducerConfig | None = None,
             **instance_kw: Any) -> Blocking:
    p = Producer(_instance(thread, namesrv_addr, **instance_kw), config)
    thread.run(p.start())
    return Blocking(thread, p)


def push_consumer(thread: ClientThread, namesrv_addr: str, group: str, topic: str, listener: Any,
                  expression: str = "*", instance_kw: dict[str, Any] | None = None, **kw: Any) -> Blocking:
    async def make() -> PushConsumer:
        c = PushConsumer(MQClientInstance(namesrv_addr, **(instance_kw or {})), group, listener, **kw)
        c.subscribe(topic, expression)
        await c.start()
        return c
    return Blocking(thread, thread.run(make()))


def pull_consumer(thread: ClientThread, namesrv_addr: str, group: str, instance_kw: dict[str, Any] | None = None,
                  **kw: Any) -> Blocking:
    async def make() -> PullConsumer:
        return PullConsumer(MQClientInstance(namesrv_addr, **(instance_kw or {})), group, **kw)
    return Blocking(thread, thread.run(make()))
