"""The simulated network's rules: latency, loss and reordering, with MIT 6.5840 labrpc's numbers.

Modes (``NetworkModel.named``):

* ``reliable`` — no loss; latency from the distribution (``constant:0`` unless given).
* ``unreliable`` — every message first waits 0-26 ms; 10 % of requests and 10 % of replies (and of
  one-way messages) are dropped.
* ``reordering`` — unreliable plus long reordering: about 2/3 of replies are held
  200 + rand(0..rand(2000)) ms (labrpc ``LongReordering``).
* ``long-delays`` — reliable, but a call to a dead or cut-off peer fails after 0-6999 ms instead of
  0-99 ms (labrpc ``LongDelays``).

Latency distributions: ``constant:MS``, ``uniform:LO:HI``, ``exponential:MEAN`` (added to every message).
``reply_latency`` (optional) gives replies their own distribution, e.g. to model a responder's disk write
before it answers (Raft's Figure 16 set-up: broadcast time = round trip + disk write).
All draws come from the network's own seeded RNG. This module only decides; ``rocketlab.sim.cluster``
moves the messages.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from rocketlab.errors import ConfigError
from rocketlab.i18n import _

NETWORK_MODES = ("reliable", "unreliable", "reordering", "long-delays")


@dataclass(frozen=True)
class Latency:
    """A latency distribution in ms: ``kind`` is constant, uniform or exponential."""

    kind: str = "constant"
    a: float = 0.0
    b: float = 0.0

    @classmethod
    def parse(cls, text: str) -> Latency:
        """Parse ``constant:1``, ``uniform:1:5`` or ``exponential:2``."""
        parts = text.split(":")
        try:
            numbers = [float(p) for p in parts[1:]]
        except ValueError:
            raise ConfigError(_("latency {text!r}: numbers expected after the kind").format(text=text)) from None
        kind = parts[0]
        expected = {"constant": 1, "uniform": 2, "exponential": 1}
        if kind not in expected:
            raise ConfigError(_("latency {text!r}: kind must be constant, uniform or exponential").format(text=text))
        if len(numbers) != expected[kind]:
            raise ConfigError(_("latency {text!r}: {kind} takes {n} number(s)").format(
                text=text, kind=kind, n=expected[kind]))
        if any(n < 0 for n in numbers) or (kind == "uniform" and numbers[0] > numbers[1]):
            raise ConfigError(_("latency {text!r}: values must be >= 0 and LO <= HI").format(text=text))
        return cls(kind, numbers[0], numbers[1] if len(numbers) > 1 else 0.0)

    def draw(self, rng: random.Random) -> int:
        if self.kind == "constant":
            return int(self.a)
        if self.kind == "uniform":
            return int(rng.uniform(self.a, self.b))
        return int(rng.expovariate(1.0 / self.a)) if self.a > 0 else 0

    def __str__(self) -> str:
        if self.kind == "uniform":
            return f"uniform:{self.a:g}:{self.b:g}"
        return f"{self.kind}:{self.a:g}"


@dataclass(frozen=True)
class NetworkModel:
    """The knobs of the simulated network (see module docstring for the named modes)."""

    mode: str = "reliable"
    latency: Latency = Latency()
    reply_latency: Latency | None = None
    short_delay_ms_max: int = 0
    drop_request: float = 0.0
    drop_reply: float = 0.0
    long_reordering: bool = False
    long_delays: bool = False
    stream_split: float = 0.3

    @classmethod
    def named(cls, mode: str, latency: str | Latency | None = None) -> NetworkModel:
        if mode not in NETWORK_MODES:
            raise ConfigError(_("network {mode!r} is not one of {choices}").format(
                mode=mode, choices=", ".join(NETWORK_MODES)))
        lat = Latency.parse(latency) if isinstance(latency, str) else (latency or Latency())
        model = cls(mode=mode, latency=lat)
        if mode in ("unreliable", "reordering"):
            model = replace(model, short_delay_ms_max=26, drop_request=0.1, drop_reply=0.1)
        if mode == "reordering":
            model = replace(model, long_reordering=True)
        if mode == "long-delays":
            model = replace(model, long_delays=True)
        return model

    def describe(self) -> dict[str, object]:
        return {"mode": self.mode, "latency": str(self.latency),
                **({"reply_latency": str(self.reply_latency)} if self.reply_latency is not None else {}),
                "drop_request": self.drop_request,
                "drop_reply": self.drop_reply, "long_reordering": self.long_reordering,
                "long_delays": self.long_delays}

    # --- decisions -----------------------------------------------------------------------------
    def request_delay(self, rng: random.Random) -> int | None:
        """Delay of a request or one-way message, or None if the network drops it."""
        delay = self.latency.draw(rng)
        if self.short_delay_ms_max:
            delay += rng.randint(0, self.short_delay_ms_max)
        if self.drop_request and rng.random() < self.drop_request:
            return None
        return delay

    def reply_delay(self, rng: random.Random) -> int | None:
        """Delay of a reply (long reordering holds about 2/3 of them), or None if dropped."""
        delay = (self.reply_latency or self.latency).draw(rng)
        if self.drop_reply and rng.random() < self.drop_reply:
            return None
        if self.long_reordering and rng.randrange(900) < 600:
            delay += 200 + rng.randint(0, rng.randint(0, 2000))
        return delay

    def failure_delay(self, rng: random.Random) -> int:
        """How long a call to a dead or unreachable peer takes to fail (labrpc: 0-99 or 0-6999 ms)."""
        return rng.randint(0, 6999) if self.long_delays else rng.randint(0, 99)

    def stream_delay(self, rng: random.Random) -> int:
        """One-way delay of bytes on a stream (no loss: TCP retransmits)."""
        delay = self.latency.draw(rng)
        if self.short_delay_ms_max:
            delay += rng.randint(0, self.short_delay_ms_max)
        return delay
