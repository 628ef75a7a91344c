"""The table ``rocketlab bench`` ends with: every headline figure beside its baseline from the same run.

Each benchmark script records ``benchmarks/results/NAME.json`` with a ``summary`` list (see
``benchmarks/_common.py``); one row per figure::

    {"figure": "3 DLedger members, 32 clients", "value": 1319, "unit": "appends/s",
     "baseline": 4707, "baseline_label": "1 member, same clients", "target": ">= 5000 appends/s",
     "target_value": 5000, "target_on": "value"}

``ratio`` is value / baseline. A target applies to the value (``target_on: "value"``) or to the ratio
(``"ratio"``); ``met`` is computed here, so a row cannot claim a target it missed. Rows without a target
show "-".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from rocketlab.console import render_table
from rocketlab.errors import RocketlabError

COLUMNS = ("benchmark", "figure", "value", "baseline (same run)", "ratio", "target", "met")


def summary_row(figure: str, value: float, unit: str, baseline: float | None = None, baseline_label: str = "",
                *, target: float | None = None, target_on: str = "value") -> dict[str, Any]:
    """One row of a benchmark's ``summary``: ``target`` is a lower bound on the value, or on the ratio
    with ``target_on="ratio"``."""
    if target_on not in ("value", "ratio"):
        raise RocketlabError(f"target_on must be 'value' or 'ratio', not {target_on!r}")
    if target is not None and target_on == "ratio" and not baseline:
        raise RocketlabError(f"{figure}: a ratio target needs a baseline")
    return {"figure": figure, "value": value, "unit": unit, "baseline": baseline, "baseline_label": baseline_label,
            "target_value": target, "target_on": target_on}


def evaluate(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row with ``ratio`` and ``met`` (None without a target) filled in from its numbers."""
    value, baseline, target = row["value"], row.get("baseline"), row.get("target_value")
    ratio = value / baseline if baseline else None
    met = None
    if target is not None:
        measured = ratio if row.get("target_on") == "ratio" else value
        met = measured is not None and measured >= target
    return {**row, "ratio": ratio, "met": met}


def event_budget_us(target_per_s: float, events_per_unit: float, fixed_s: float = 0.0) -> float | None:
    """What each simulated event may cost (microseconds) for ``target_per_s`` units (trials, simulated ms)
    per wall second, when each unit runs ``events_per_unit`` events and also costs ``fixed_s`` seconds
    outside them (building a trial's cluster); None when the fixed part alone is over the budget.

    Used to say how far a missed speed target is: ``1 / target`` seconds per unit, less the fixed part,
    shared by the unit's events; compare it with what an event costs now and with the bare kernel."""
    if target_per_s <= 0 or events_per_unit <= 0:
        raise RocketlabError(f"a budget needs a positive target and event count, not {target_per_s} and "
                             f"{events_per_unit}")
    left = 1 / target_per_s - fixed_s
    return left / events_per_unit * 1e6 if left > 0 else None


def load_rows(results_dir: Path, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Every summary row of the recorded results (``names``: only those benchmarks), evaluated."""
    paths = sorted(results_dir.glob("*.json"))
    if names is not None:
        wanted = set(names)
        paths = [p for p in paths if p.stem in wanted]
    rows = []
    for path in paths:
        try:
            doc = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise RocketlabError(f"{path}: not a readable results file: {e}") from None
        for row in doc.get("summary", []):
            rows.append({"benchmark": doc.get("name", path.stem), "timestamp": doc.get("timestamp", ""),
                         **evaluate(row)})
    return rows


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, int) or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:,.2f}"


def render(rows: list[dict[str, Any]]) -> str:
    """A plain-text table, one line per row, columns as :data:`COLUMNS` (:func:`rocketlab.console.render_table`)."""
    lines = []
    for r in rows:
        unit = f" {r['unit']}" if r.get("unit") else ""
        baseline = "-" if r.get("baseline") is None else f"{_number(r['baseline'])}{unit} ({r.get('baseline_label', '')})"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        if r.get("target_value") is None:
            target = "-"
        elif r.get("target_on") == "ratio":
            target = f">= {r['target_value']:g}x baseline"
        else:
            target = f">= {_number(r['target_value'])}{unit}"
        met = "-" if r["met"] is None else ("met" if r["met"] else "MISSED")
        lines.append((r["benchmark"], r["figure"], f"{_number(r['value'])}{unit}", baseline, ratio, target, met))
    return render_table(lines, COLUMNS)
