"""Controller mode over time: the master epoch each broker acts under and the SyncStateSet the
controllers committed (RocketMQ 5's ReplicasInfoManager, ``ELECT_MASTER_EVENT`` and
``ALTER_SYNC_STATE_SET_EVENT``).

Rocketlab's own figure, from the brokers' ``role`` events, ``fault`` events and the controllers'
``controller_apply`` events.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rocketlab.i18n import _
from rocketlab.viz.style import (
    TIME_AXIS_TITLE,
    base_layout,
    empty_figure,
    mark_faults,
    series_colors,
    whole_number_ticks,
)
from rocketlab.viz.timeline import (
    Event,
    Events,
    as_records,
    node_ids,
    of_kind,
    run_range,
)

EPOCH_PANEL_PX = 200  # the epoch panel's height in a 620 px figure, about
SyncStateSetChange = tuple[int, set[int]]  # when, and the broker ids in the set from then on


def epochs_and_sync_state_set(events: Events) -> go.Figure:
    """Controller mode over time: the master epoch each broker acts under (a line per broker and role, cut
    where it crashes), and the SyncStateSet the controllers committed (a bar per broker id while it is a
    member), from the brokers' ``role`` events, ``fault`` events and the controllers' ``controller_apply``
    events."""
    records = as_records(events)
    applied = {}
    for e in of_kind(records, "controller_apply"):
        applied.setdefault(e.get("index"), e)  # every controller applies the same entry: keep the first
    roles = [e for e in of_kind(records, "role") if e.get("role") in ("MASTER", "SLAVE", "FENCED")]
    if not applied and not roles:
        return empty_figure(_("Epochs and SyncStateSet"), ["role", "controller_apply"])
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.16,
                        subplot_titles=[_("master epoch each broker acts under (MASTER solid, SLAVE dashed; "
                                          "brokers drawn slightly apart)"),
                                        _("SyncStateSet committed by the controllers (a bar while a member)")])
    colors = series_colors(node_ids(roles))
    end = run_range(records)[1]
    _add_epoch_lines(fig, records, roles, colors, end)
    changes = _sync_state_set_changes(applied.values())
    members = sorted({m for _, s in changes for m in s})
    node_of = {e.get("broker_id"): e.get("node") for e in of_kind(records, "replicas_state")}
    _add_member_bars(fig, changes, members, node_of, colors, end)
    fig.update_yaxes(title=_("master epoch"), dtick=1, row=1, col=1)
    fig.update_yaxes(title=_("broker id"), row=2, col=1)
    if members:
        whole_number_ticks(fig, max(members), row=2, col=1)
    fig.update_xaxes(range=run_range(records))
    lanes = mark_faults(fig, of_kind(records, "fault"), row="all", col=1)  # after the range: laid out over it
    fig.update_xaxes(title=_(TIME_AXIS_TITLE), row=2, col=1)
    top = max((e.get("term") or 0 for e in roles), default=0)
    if lanes and roles:  # room above the epoch lines for the fault labels' lanes
        low, high = min(e.get("term") or 0 for e in roles) - 0.4, top + 0.4
        share = min(0.6, (14 * lanes + 12) / EPOCH_PANEL_PX)
        fig.update_yaxes(range=[low, high + (high - low) * share / (1 - share)], row=1, col=1,
                         tickvals=list(range(max(0, round(low + 0.4)), top + 1)))  # no tick for the room
    return base_layout(fig, _("Epochs and SyncStateSet: highest master epoch {top}, {n} SyncStateSet changes")
                       .format(top=top, n=len(changes)), 620)


def _add_epoch_lines(fig: go.Figure, records: Sequence[Event], roles: Sequence[Event], colors: dict[str, str],
                     end: int) -> None:
    """Per broker and role (MASTER solid, SLAVE dashed) a line at the epoch it acts under, cut where its
    next role event or a crash ends it; brokers at the same epoch drawn slightly apart."""
    brokers = node_ids(roles)
    crashes = [(e["t"], target) for e in of_kind(records, "fault") if e.get("action") == "crash"
               for target in (e.get("targets") or ())]
    for k, node in enumerate(brokers):
        lift = 0.08 * (k - (len(brokers) - 1) / 2)  # brokers at the same epoch stay visible side by side
        mine = sorted([e for e in roles if e.get("node") == node]
                      + [{"t": t, "role": "DOWN", "node": node} for t, target in crashes if target == node],
                      key=lambda e: e["t"])
        for role, dash in (("MASTER", "solid"), ("SLAVE", "dash")):
            xs: list[int | None] = []
            ys: list[float | None] = []
            for i, e in enumerate(mine):
                if e["role"] == role:
                    stop = mine[i + 1]["t"] if i + 1 < len(mine) else end
                    xs += [e["t"], stop, None]
                    ys += [e.get("term", 0) + lift, e.get("term", 0) + lift, None]
            if xs:
                fig.add_trace(go.Scatter(
                    x=xs, y=ys, mode="lines", name=f"{node} {role.lower()}", legendgroup=node,
                    line=dict(color=colors[node], dash=dash, width=3),
                    hovertemplate=_("{node} {role} at epoch {epoch}").format(node=node, role=role, epoch="%{y:.0f}")
                    + "<extra></extra>"), row=1, col=1)


def _sync_state_set_changes(applied: Iterable[Event]) -> list[SyncStateSetChange]:
    """The SyncStateSet after each committed event that sets it, in time order: ALTER_SYNC_STATE_SET_EVENT
    names the members, ELECT_MASTER_EVENT leaves the new master alone in it."""
    changes = []
    current: set[int] = set()
    for e in sorted(applied, key=lambda e: e["t"]):
        if e.get("event") == "ALTER_SYNC_STATE_SET_EVENT" and e.get("members") is not None:
            current = set(e["members"])
        elif e.get("event") == "ELECT_MASTER_EVENT" and e.get("master") is not None:
            current = {e["master"]}
        else:
            continue
        changes.append((e["t"], set(current)))
    return changes


def _add_member_bars(fig: go.Figure, changes: Sequence[SyncStateSetChange], members: Sequence[int],
                     node_of: dict[int, str], colors: dict[str, str], end: int) -> None:
    """A bar per broker id while it is in the SyncStateSet, in its broker's colour."""
    for member in members:
        owner = node_of.get(member)
        xs: list[int | None] = []
        ys: list[int | None] = []
        for i, (t, s) in enumerate(changes):
            if member in s:
                stop = changes[i + 1][0] if i + 1 < len(changes) else end
                xs += [t, stop, None]
                ys += [member, member, None]
        label = _("broker id {member}").format(member=member) + (f" ({owner})" if owner else "")
        short = f"id {member}" + (f" ({owner})" if owner else "")  # the legend's width: it fits a notebook's
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=_("{member} in sync").format(member=short), legendgroup=owner or label,
                                 line=dict(color=colors.get(owner, "#888888"), width=10),
                                 hovertemplate=_("{member} in the SyncStateSet").format(member=label) + "<extra></extra>"), row=2, col=1)


__all__ = ["epochs_and_sync_state_set"]
