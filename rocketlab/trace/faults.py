"""The fault vocabulary as one table: every fault kind, what it is called, what it records, what the
simulator, the real runtime and the cluster viewer do with it (rocketlab's own; no Java class).

:data:`FAULT_KINDS` has one :class:`FaultKind` row per fault kind. Everything else that knows a fault
kind reads it from here:

* the fault schedule's words (:data:`rocketlab.sim.faults.ACTIONS`: the rows with ``scheduled``) and how
  a line's arguments are parsed (by the row's ``args`` shape);
* :meth:`rocketlab.sim.cluster.Cluster.apply`: a lookup of the row and a call of its ``method``;
* the trace contract's fault actions (:data:`rocketlab.trace.schema.FAULT_ACTIONS`: the rows' ``action``);
* the cluster viewer: the intents a learner can make (:data:`rocketlab.viz.cluster_view.session.ACTIONS`)
  and what the viewer (``viz/cluster_view/js/``) draws and offers (:func:`viewer_faults`, sent with every film);
* the chaos campaign's fault kinds (:data:`CAMPAIGN_FAULTS`, read by :mod:`rocketlab.chaos.schedule`),
  each naming the fault actions it records, so a row's real-runtime side is :func:`real_runtime`.

Where to add a fault kind: a row here, and the code that does the new thing (a ``Cluster`` method for
the simulator, a branch of the chaos campaign for real processes). If its arguments have a new shape,
the parsers of that shape too (:mod:`rocketlab.sim.faults` for schedules, the viewer session for
intents). ``tests/trace/test_faults.py`` checks that every place derives from this table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

NOT_IN_REAL_RUNTIME = "not in the real runtime"

ARG_SHAPES: dict[str, str] = {
    "nodes": "NODE [NODE ...]: Cluster.METHOD(*nodes); the viewer asks for one node",
    "node": "NODE: Cluster.METHOD(node)",
    "groups": "A B | C D: Cluster.METHOD(*groups); nodes named on no side form one more",
    "none": "nothing: Cluster.METHOD()",
    "link": "SRC -> DST: Cluster.METHOD(src, dst)",
    "message": "SRC -> DST [MESSAGE [CODE]] (SRC, DST may be *): Cluster.METHOD(src, dst, msg, code=code)",
    "network": "MODE LATENCY: Cluster.METHOD(mode, latency)",
    "recorded": "no call of its own: another fault's code records it",
}
"""How a fault kind's arguments are written (a schedule line, a viewer intent) and passed to its method."""

VIEWER_EFFECTS: dict[str, str] = {
    "down": "the targets are down (their role unknown, no longer paused)",
    "up": "the targets are up again, role unknown until their next role event",
    "paused": "the targets are paused",
    "unpaused": "the targets run again",
    "split": "the targets are the partition's sides (node ids joined by commas)",
    "whole": "no partition and no one-way cut is left",
    "cut": "the link targets[0] -> targets[1] is cut",
    "uncut": "the link targets[0] -> targets[1] is whole again",
    "model": "the network model is the targets (mode, latency)",
    "cross_out": "targets[0] lost its entries targets[1]..targets[2]: they are crossed out",
}
"""What a fault event does to the state the viewer draws (``FAULT_EFFECTS`` in ``viz/cluster_view/js/film.js`` implement these)."""

VIEWER_MENUS = ("node", "link", "bar")
"""Where the viewer offers a fault kind: a node's menu, a link's menu, the live bar above the ring."""


@dataclass(frozen=True)
class ViewerDrawing:
    """How the cluster viewer draws a fault kind's events and offers it to the learner."""

    effect: str | None = None
    """What an event of this action does to the drawn state (a key of :data:`VIEWER_EFFECTS`)."""
    menu: str | None = None
    """Where the learner finds it (:data:`VIEWER_MENUS`); None: the viewer does not offer it."""
    label: str = ""
    """The menu item's or button's words (a link's menu adds ``SRC -> DST``)."""
    when: str | None = None
    """When it is offered and accepted: a node ``alive``, ``down``, ``running`` (alive, not paused) or
    ``paused`` (None: any live node); a link ``open`` or ``cut`` (None: always)."""


@dataclass(frozen=True)
class FaultKind:
    """One fault kind: see the module docstring for who reads which field."""

    name: str
    """The word of a fault schedule line, and the kind's name."""
    action: str
    """The ``action`` of the ``fault`` trace event it records."""
    summary: str
    args: str
    """The shape of its arguments (:data:`ARG_SHAPES`)."""
    targets: str
    """What the trace event's ``targets`` hold."""
    method: str | None
    """The :class:`~rocketlab.sim.cluster.Cluster` method the simulator calls (None: recorded only)."""
    method_kwargs: tuple[tuple[str, Any], ...] = ()
    """Keyword arguments the method always gets for this kind (``crash!``: ``lose_unflushed=True``)."""
    scheduled: bool = False
    """Whether a fault schedule (:class:`rocketlab.sim.faults.FaultSchedule`) may name it."""
    viewer: ViewerDrawing = field(default_factory=ViewerDrawing)


FAULT_KINDS: tuple[FaultKind, ...] = (
    FaultKind("crash", "crash", "the process dies: volatile state is lost, flushed files stay; the kernel "
              "closes its connections, so its peers are told at once (on_peer_closed)",
              "nodes", "the nodes", "crash", scheduled=True,
              viewer=ViewerDrawing("down", "node", "crash", "alive")),
    FaultKind("crash!", "crash", "a crash that also loses what was written but not flushed",
              "nodes", "the nodes", "crash", (("lose_unflushed", True),), scheduled=True,
              viewer=ViewerDrawing("down")),
    FaultKind("host_down", "host_down", "the host fails (power loss, a kernel panic): the process is gone, "
              "nothing closes its connections (peers notice by their timeouts), unflushed writes are lost",
              "nodes", "the nodes", "host_down", scheduled=True,
              viewer=ViewerDrawing("down", "node", "power failure (loses unflushed writes)", "alive")),
    FaultKind("restart", "restart", "a node that is down boots again from its data directory",
              "nodes", "the nodes", "restart", scheduled=True,
              viewer=ViewerDrawing("up", "node", "restart", "down")),
    FaultKind("pause", "pause", "every input of the node waits until resume; its clock runs on, so its "
              "timers fire late", "nodes", "the nodes", "pause", scheduled=True,
              viewer=ViewerDrawing("paused", "node", "pause", "running")),
    FaultKind("resume", "resume", "a paused node takes its deferred inputs", "nodes", "the nodes", "resume",
              scheduled=True, viewer=ViewerDrawing("unpaused", "node", "resume", "paused")),
    FaultKind("timeout", "timeout", "a DLedger member's election timer expires now (RaftScope's time out; "
              "Java has no such call)", "node", "the member", "time_out",
              viewer=ViewerDrawing(None, "node", "time out now", "running")),
    FaultKind("isolate", "isolate", "one node cut off from all others (the simulator records it as a "
              "partition of that node alone; a campaign takes its interface down)",
              "node", "the node", "isolate", viewer=ViewerDrawing(None, "node", "isolate")),
    FaultKind("transfer", "transfer", "the leader hands leadership over (DLedger's LeadershipTransferRequest)",
              "node", "the leader, then the transferee", "transfer_leadership",
              viewer=ViewerDrawing(None, "node", "make leader (transfer)", "running")),
    FaultKind("heal", "heal", "the partition and every one-way cut end", "none", "nothing (a campaign: "
              "what healed)", "heal", scheduled=True, viewer=ViewerDrawing("whole", "bar", "heal all links")),
    FaultKind("partition", "partition", "every link between the groups is cut", "groups",
              "the groups, each its node ids joined by commas", "partition", scheduled=True,
              viewer=ViewerDrawing("split", "bar", "partition")),
    FaultKind("cut_link", "cut_link", "one direction of one link is cut: messages lost, stream bytes held",
              "link", "source, destination", "cut_link", viewer=ViewerDrawing("cut", "link", "cut", "open")),
    FaultKind("heal_link", "heal_link", "one direction cut by cut_link is whole again", "link",
              "source, destination", "heal_link", viewer=ViewerDrawing("uncut", "link", "heal", "cut")),
    FaultKind("drop", "drop", "the next message(s) matching source, destination, type and response code "
              "are lost (Cluster.drop(msg_id) drops one in flight by its id)", "message",
              "source, destination (or *), then the message type and code if given (or a msg_id)",
              "drop_next", scheduled=True, viewer=ViewerDrawing(None, "link", "drop next message")),
    FaultKind("network", "network", "the network model changes from now on (messages in flight keep their "
              "delays)", "network", "mode, latency", "set_network", viewer=ViewerDrawing("model", "bar", "apply")),
    FaultKind("disk", "disk", "disk pressure: a writer fills and fsyncs the disk the stores are on",
              "recorded", "the node", None),
    FaultKind("lost", "lost", "recorded at a restart after a crash that lost unflushed writes: the entries "
              "lost", "recorded", "node, first lost index, last lost index", None,
              viewer=ViewerDrawing("cross_out")),
)


@dataclass(frozen=True)
class CampaignFault:
    """One fault kind of a chaos campaign on real processes (:mod:`rocketlab.chaos`): a step that is on
    for a while and then off, recording the fault actions ``on`` and ``off``."""

    name: str
    summary: str
    on: str
    off: str
    network: bool = False
    """A fault of the network (the rest act on a process or its disk)."""
    needs_netns: bool = False
    """Only with network namespaces (on 127.0.0.1 the relays stand in for the other network faults)."""


CAMPAIGN_FAULTS: tuple[CampaignFault, ...] = (
    CampaignFault("partition", "the nodes split in two halves, a majority and a minority; nothing crosses",
                  "partition", "heal", network=True),
    CampaignFault("bridge", "two majorities that share one node (Jepsen's bridge): that node talks to all, "
                  "the others only to their side (three nodes or more)", "partition", "heal", network=True),
    CampaignFault("one-way", "one node's packets to the others vanish; theirs still reach it",
                  "cut_link", "heal_link", network=True),
    CampaignFault("isolate", "one node's interface goes down: nothing in or out, clients included",
                  "isolate", "heal", network=True, needs_netns=True),
    CampaignFault("latency", "every link (through the relays) delays each frame 50-200 ms, plus jitter",
                  "network", "network", network=True),
    CampaignFault("loss", "every link drops 5-20% of the frames (a request or its answer never arrives)",
                  "network", "network", network=True),
    CampaignFault("reorder", "every link sends 10-30% of the frames after the next one", "network", "network",
                  network=True),
    CampaignFault("pause", "SIGSTOP one node, SIGCONT at the end (its clock runs on: timers fire late)",
                  "pause", "resume"),
    CampaignFault("kill", "SIGKILL one node, restart it at the end (``rocketlab node`` again, same store)",
                  "crash", "restart"),
    CampaignFault("disk", "a writer fills and fsyncs the disk the stores are on (fsyncs take hundreds of ms)",
                  "disk", "heal"),
)


def fault_kind(name: str) -> FaultKind:
    """The row named ``name`` (KeyError when there is none)."""
    for kind in FAULT_KINDS:
        if kind.name == name:
            return kind
    raise KeyError(name)


def fault_actions() -> tuple[str, ...]:
    """Every trace action a fault event may have, in the table's order."""
    return tuple(dict.fromkeys(kind.action for kind in FAULT_KINDS))


def real_runtime(kind: FaultKind) -> str:
    """What the real runtime does for ``kind``: the campaign faults that record its action, or
    :data:`NOT_IN_REAL_RUNTIME`."""
    found = [f"{c.name} ({'on' if c.on == kind.action else 'off'}): {c.summary}" for c in CAMPAIGN_FAULTS
             if kind.action in (c.on, c.off)]
    return "; ".join(found) or NOT_IN_REAL_RUNTIME


def viewer_faults() -> dict[str, Any]:
    """What the viewer needs of the table, as JSON-ready data (a film's ``faults``): per trace action
    its effect; the node menu's, link menu's and live bar's entries (``intent`` is the Cluster method
    the viewer session calls)."""
    effects: dict[str, str] = {}
    for kind in FAULT_KINDS:
        if kind.viewer.effect is not None:
            effects.setdefault(kind.action, kind.viewer.effect)
    menus: dict[str, list[dict[str, Any]]] = {menu: [] for menu in VIEWER_MENUS}
    for kind in FAULT_KINDS:
        if kind.viewer.menu is not None:
            menus[kind.viewer.menu].append({"intent": kind.method, "label": kind.viewer.label,
                                            "when": kind.viewer.when, "args": kind.args})
    return {"effects": effects, **{f"{menu}_menu": items for menu, items in menus.items()}}
