"""Figure 16's artefacts beside a sweep's ``trials.parquet``: ``figure16.html`` and ``paper.json``.

``rocketlab sweep figure16 ... --out DIR`` (or :func:`rocketlab.analysis.sweep.sweep` with ``out``) writes

* ``figure16.html``: one cumulative curve per parameter combination (the share of trials that had a leader
  again within x ms), drawn like the paper's graphs: log x when a top-graph range or DLedger's elector is in
  the sweep, linear for the bottom graph's ranges alone; a self-contained page (plotly inlined, opens offline);
* ``paper.json``: the numbers the paper states beside ours for the ranges that were run, when the sweep ran
  the ``raft`` profile and varied no parameter but ``range`` (a mixed sweep has no single "ours").
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rocketlab.scenarios.figure16 import RANGES_BOTTOM, RANGES_TOP, stated_beside_ours, summarize_trials

#: File names written into the sweep's output directory.
FIGURE_FILE, PAPER_FILE = "figure16.html", "paper.json"


def write_figure16_report(rows: Sequence[Mapping[str, Any]], out: Path) -> list[dict[str, Any]]:
    """Write :data:`FIGURE_FILE` (and :data:`PAPER_FILE` where it applies) into ``out``; return the paper
    table (empty when it does not apply). Failed trials (``error`` set) are left out of both."""
    import pandas as pd  # lazy: 0.3 s to import

    from rocketlab.viz.figures.figure16 import downtime_cdf  # lazy: loads networkx

    good = [r for r in rows if not r.get("error")]
    if not good:
        return []
    keys = sorted({k for r in good for k in r if k.startswith("param_")})
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for row in good:
        groups.setdefault(tuple(row.get(k) for k in keys), []).append(row)

    def order(item: tuple[tuple[Any, ...], list[Mapping[str, Any]]]) -> tuple[Any, ...]:
        first = item[1][0]
        return (first["lo"] is None, first["lo"] or 0, first["hi"] or 0, [str(v) for v in item[0]])

    curves = [(_label(keys, values), pd.DataFrame(trials)) for values, trials in sorted(groups.items(), key=order)]
    ranges = {(r["lo"], r["hi"]) for r in good}
    bottom_only = ranges <= set(RANGES_BOTTOM) and not ranges <= set(RANGES_TOP)
    lows = [r["lo"] for r in good if r["lo"] is not None]
    fig = downtime_cdf(curves, log_x=not bottom_only, floor_ms=min(lows) / 2 if lows else None,
                       title=f"Time without a leader after the leader crashes (Raft Figure 16's set-up), "
                             f"{len(good)} trials")
    out.mkdir(parents=True, exist_ok=True)
    fig.write_html(out / FIGURE_FILE, include_plotlyjs=True)

    varied = [k for k in keys if k != "param_range" and len({r.get(k) for r in good}) > 1]
    if varied or any(r["profile"] != "raft" for r in good):
        return []
    paper = [p for p in stated_beside_ours(summarize_trials(good)) if p["ours_ms"] is not None]
    (out / PAPER_FILE).write_text(json.dumps(paper, indent=1) + "\n")
    return paper


def _label(keys: Sequence[str], values: Sequence[Any]) -> str:
    """A curve's name from its parameters: ``150-155 ms``, ``dledger-0.3.1.2, java defaults``,
    ``150-155 ms, candidate_persist=0-0``."""
    first = ("range", "profile", "timers")
    named = sorted(((key.removeprefix("param_"), value) for key, value in zip(keys, values, strict=True)
                    if value is not None), key=lambda kv: (first.index(kv[0]) if kv[0] in first else len(first), kv[0]))
    parts = [f"{value} ms" if name == "range" else str(value) if name in first else f"{name}={value}"
             for name, value in named]
    return ", ".join(parts) or "figure16"
