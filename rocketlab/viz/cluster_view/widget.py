"""ClusterView: a RaftScope-style cluster widget for JupyterLab, built on anywidget.

The Python side owns the simulator (:class:`~rocketlab.viz.cluster_view.session.ViewSession`); the
JavaScript side (the modules of ``js/`` joined by ``bundle.py``, shipped in the package: no CDN, no build tool) draws the film and
sends intents as custom messages::

    {"type": "hello"}                                     -> the whole film
    {"type": "advance", "to": MS, "generation": G}        -> the events up to MS
    {"type": "step", "generation": G}                     -> up to the next event
    {"type": "act", "action": A, "args": {...}, "at": MS, "generation": G}
    {"type": "replay_code"}                               -> the Python lines that rebuild the trace

Answers are ``film`` (everything, after a fork or when the browser is out of step), ``more`` (new
events and timer samples since ``start``) and ``message`` (a bad intent, in words). :meth:`intent` is
the same entry point for tests and scripts; it returns the answers it sent.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from rocketlab.errors import RocketlabError
from rocketlab.i18n import _
from rocketlab.scenarios import dledger_schedules as ds
from rocketlab.sim.cluster import Cluster
from rocketlab.sim.replay import Producer
from rocketlab.sim.systems import TEMPORARY_PREFIX
from rocketlab.trace.rundir import iter_events, read_meta
from rocketlab.viz.cluster_view.bundle import viewer_source
from rocketlab.viz.cluster_view.offline import run_film, viewer_assets, viewer_div, viewer_page, write_timers
from rocketlab.viz.cluster_view.session import ViewSession
from rocketlab.viz.language import kernel_language

HERE = Path(__file__).parent
SPEED_RANGE = (0.01, 10.0)
MAX_EMBEDDED_FILM = 8_000_000  # characters of film a displayed viewer carries in its output for pages without a kernel
VIEW_LATENCY = "uniform:10:40"  # messages the eye can follow at 0.1x (the cluster's own default is 0 ms)


class ClusterView(anywidget.AnyWidget):
    """Play with a simulated cluster: ``ClusterView.dledger(nodes=5, seed=1)``, then display it."""

    _esm = viewer_source()
    _css = HERE / "viewer.css"
    speed = traitlets.Float(0.1).tag(sync=True)
    lang = traitlets.Unicode("en").tag(sync=True)
    """The viewer's words: the kernel's language (:func:`rocketlab.viz.language.kernel_language`)."""

    def __init__(self, cluster: Cluster, *, speed: float = 0.1, producer: Producer | None = None,
                 base_code: Callable[[int], str] | None = None, **kwargs: Any) -> None:
        """Open ``cluster`` as it stands: fresh, or after it has run (the view opens at the present, the
        past is a film to scrub; acting in the past rebuilds the run to that instant, with ``producer``
        (the code that drove it) or from the calls made on it)."""
        if not SPEED_RANGE[0] <= speed <= SPEED_RANGE[1]:
            raise RocketlabError(f"speed {speed} is out of range: {SPEED_RANGE[0]}x to {SPEED_RANGE[1]:g}x real time")
        self.session = ViewSession(cluster, producer=producer, base_code=base_code)
        self._unplug = getattr(cluster, "unplug", None)  # a replay's: the learner's code leaves with the view
        failure = getattr(cluster, "failure", None)  # set by rocketlab.grading.replay when the test failed
        if isinstance(failure, dict):
            self.session.marks.append({"t": int(failure.get("t", cluster.now_ms)), "text": str(failure.get("text"))})
        kwargs.setdefault("lang", kernel_language())
        super().__init__(speed=speed, **kwargs)
        self._greeted = False
        self._sent_events = 0
        self._sent_timers = 0
        self.replies: list[dict[str, Any]] = []  # the last intent's answers (tests read them)
        self.on_msg(self._on_custom_msg)

    def close(self) -> None:
        """Close the view; a graded replay's cluster (:func:`rocketlab.grading.replay`) takes the learner's
        function it plugged in back out (the kit's own runs again)."""
        unplug = self.__dict__.pop("_unplug", None)  # absent when the constructor raised (then __del__ closes)
        self._unplug = None
        if callable(unplug):
            unplug()
        super().close()

    # --- constructors -----------------------------------------------------------------------
    @classmethod
    def dledger(cls, nodes: int = 5, seed: int = 1, profile: str = "dledger-0.3.1.2", *,
                latency: str = VIEW_LATENCY, speed: float = 0.1, **kwargs: Any) -> ClusterView:
        """A DLedger group with memory stores; invariant violations are shown, not raised."""
        _check_seed(seed)
        kwargs.setdefault("raise_on_violation", False)
        return cls(Cluster.dledger(nodes=nodes, seed=seed, profile=profile, memory=True, latency=latency, **kwargs),
                   speed=speed)

    @classmethod
    def dledger_brokers(cls, nodes: int = 3, seed: int = 1, profile: str = "dledger-0.3.1.2", *,
                        latency: str = VIEW_LATENCY, speed: float = 0.1, **kwargs: Any) -> ClusterView:
        """Brokers on DLedger (RocketMQ 4.9.5's DLedgerCommitLog)."""
        _check_seed(seed)
        kwargs.setdefault("raise_on_violation", False)
        return cls(Cluster.dledger_brokers(nodes=nodes, seed=seed, profile=profile, latency=latency, **kwargs),
                   speed=speed)

    @classmethod
    def applications(cls, seed: int = 1, *, latency: str = VIEW_LATENCY, speed: float = 0.1,
                     **kwargs: Any) -> ClusterView:
        """A name server, two DLedger broker groups, a classic pair, a producer and a consumer group of three
        (:mod:`rocketlab.sim.applications`): the name server and the clients drawn as boxes, not brokers."""
        _check_seed(seed)
        kwargs.setdefault("raise_on_violation", False)
        return cls(Cluster.applications(seed=seed, latency=latency, **kwargs), speed=speed)

    @classmethod
    def master_slave(cls, role: str = "SYNC_MASTER", slaves: int = 1, seed: int = 1, *,
                     latency: str = VIEW_LATENCY, speed: float = 0.1, **kwargs: Any) -> ClusterView:
        """A classic master-slave pair (or more slaves): offsets and lag instead of terms."""
        _check_seed(seed)
        kwargs.setdefault("raise_on_violation", False)
        return cls(Cluster.master_slave(role=role, slaves=slaves, seed=seed, latency=latency, **kwargs), speed=speed)

    @classmethod
    def schedule(cls, name: str, profile: str = "dledger-0.3.1.2", seed: int = 1, *, speed: float = 0.1,
                 **kwargs: Any) -> ClusterView:
        """One of DLedger's known schedules, played to its end: ``"figure8"`` (Raft's Figure 8),
        ``"issue247"`` or ``"issue251"`` under ``profile``. Scrub it, step it, fork it anywhere."""
        _check_seed(seed)
        makers: dict[str, tuple[str, str, Callable[..., Cluster], Producer]] = {
            "figure8": ("figure8_cluster", "run_figure8", ds.figure8_cluster, ds.run_figure8),
            "issue247": ("issue247_cluster", "run_issue247", ds.issue247_cluster, ds.run_issue247),
            "issue251": ("issue251_cluster", "run_issue251", ds.issue251_cluster, ds.run_issue251),
        }
        if name not in makers:
            raise RocketlabError(f"unknown schedule {name!r}: one of {', '.join(makers)}")
        make_name, run_name, make, run = makers[name]
        args: dict[str, Any] = {"seed": seed, "profile": profile}
        if name == "issue251":  # a power loss needs file stores: a directory the cluster removes when closed
            args["data_dir"] = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX + "view-")
        cluster = make(**args)
        report = run(cluster)
        shown = ", ".join(f"{k}={v!r}" for k, v in args.items() if k != "data_dir")
        if name == "issue251":
            shown += ", data_dir=tempfile.mkdtemp()"

        def base_code(at_ms: int) -> str:
            return "\n".join([
                *(["import tempfile"] if name == "issue251" else []),
                f"from rocketlab.scenarios.dledger_schedules import {make_name}, {run_name}", "",
                f"cluster = run_to({make_name}({shown}), {run_name}, {at_ms})"])

        view = cls(cluster, speed=speed, producer=run, base_code=base_code, **kwargs)
        if name == "figure8":  # (a)-(e) as named stops: the jump menu's "stop", Home then down arrow
            for stop in ds.figure8_stops(cluster, report.names, report.x_index):
                view.bookmark(stop["t"], stop["name"], stop["text"])
        return view

    @classmethod
    def open_run(cls, run_dir: str | Path, *, speed: float = 0.1, **kwargs: Any) -> ClusterView:
        """A saved run (``Cluster.save``, ``rocketlab run``, the ``data/`` runs; ``open`` is the widget's own): a run of one of the named
        schedules is rebuilt live when the rebuild repeats its trace event for event (then "fork here"
        works); any other run opens as a recorded film (scrub, step, play)."""
        film = run_film(run_dir)
        meta = read_meta(run_dir)
        names = {"dledger-figure8": "figure8", "dledger-247": "issue247", "dledger-251": "issue251"}
        name = names.get(str(meta.get("scenario")))
        if name is not None and isinstance(meta.get("seed"), int) and meta.get("profile"):
            view = cls.schedule(name, profile=meta["profile"], seed=meta["seed"], speed=speed, **kwargs)
            saved = [(e["t"], e["kind"], e.get("node")) for e in iter_events(run_dir)]
            rebuilt = [(e["t"], e["kind"], e.get("node")) for e in view.cluster.events]
            if saved == rebuilt:
                return view
            view.cluster.close()
        return RecordedView(film, speed=speed, **kwargs)

    # --- intents ----------------------------------------------------------------------------
    @property
    def open_at(self) -> int:
        """Where the view opens: the marked moment (a grader's failure), else the present."""
        return self.session.marks[0]["t"] if self.session.marks else self.session.now_ms

    def _opening_words(self) -> str | None:
        if self.session.marks:
            mark = self.session.marks[0]
            return _("opened at t = {t} ms, where the test failed: {text}").format(t=mark["t"], text=mark["text"])
        if self.session.now_ms:
            return _("opened at the present (t = {t} ms): scrub back to see the past; acting in the past forks "
                     "it").format(t=self.session.now_ms)
        return None

    def _on_custom_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        self.intent(content)

    def intent(self, content: Any) -> list[dict[str, Any]]:
        """Handle one intent from the browser (or a test); returns the answers sent back."""
        self.replies = []
        try:
            self._handle(content)
        except RocketlabError as e:  # a bad intent: say so, keep the widget alive
            self._reply({"type": "message", "level": "error", "text": str(e)})
            self._send_more()
        except Exception as e:  # noqa: BLE001 - never a dead widget: report anything else in words too
            self._reply({"type": "message", "level": "error", "text": f"{type(e).__name__}: {e}"})
            self._send_more()
        return self.replies

    def _handle(self, content: Any) -> None:
        if not isinstance(content, dict) or not isinstance(content.get("type"), str):
            raise RocketlabError(f"an intent is an object with a 'type', got {content!r}")
        kind = content["type"]
        if kind == "hello":  # the first view opens at the present (or the failing moment); later ones keep their place
            first, self._greeted = not self._greeted, True
            self._send_film(goto=self.open_at if first else None, say=self._opening_words() if first else None)
            return
        if kind == "replay_code" and self.session is not None:
            self._reply({"type": "code", "text": self.replay_code()})
            return
        if self.session is None:
            raise RocketlabError(_("this run is recorded: scrub, step and play it; to act in it, open it from the "
                                   "code that made it (ClusterView(cluster) or ClusterView.schedule(...))"))
        if kind not in ("advance", "step", "act"):
            raise RocketlabError(f"unknown intent type {kind!r}: hello, advance, step, act or replay_code")
        if content.get("generation") != self.session.generation:
            self._send_film(say=_("that was aimed at a history that has since been forked: the view is up to date now"))
            return
        if kind == "advance":
            self.session.advance(_whole_ms(content.get("to"), "advance: 'to'"))
            self._send_more()
        elif kind == "step":
            at = self.session.step_event()
            self._send_more(goto=at)
        else:
            generation = self.session.generation
            at = _whole_ms(content.get("at"), "act: 'at'")
            args = content.get("args") or {}
            if not isinstance(args, dict):
                raise RocketlabError(f"act: 'args' must be an object, got {args!r}")
            dropped = sum(1 for i in self.session.intents if i.at_ms > at)
            self.session.act(at, str(content.get("action")), **args)
            if self.session.generation != generation:
                say = (_("forked history at t = {t} ms: {n} later action(s) dropped").format(t=at, n=dropped)
                       if dropped else _("history after t = {t} ms rewritten").format(t=at))
                self._send_film(goto=at, say=say)
            else:
                self._send_more(goto=at)

    # --- answers ----------------------------------------------------------------------------
    def _reply(self, message: dict[str, Any]) -> None:
        self.replies.append(message)
        self.send(message)

    def _send_film(self, goto: int | None = None, say: str | None = None) -> None:
        film = self.session.film()
        self._sent_events, self._sent_timers = len(self.session.cluster.events), len(self.session.timers)
        message: dict[str, Any] = {"type": "film", "film": film, "goto": goto}
        if say is not None:
            message["say"] = say
        self._reply(message)

    def _send_more(self, goto: int | None = None) -> None:
        if self.session is None:
            return
        events = self.session.film_events(self._sent_events)
        timers = self.session.timers[self._sent_timers:]
        message = {"type": "more", "generation": self.session.generation, "start": self._sent_events,
                   "events": events, "timers": timers, "end_ms": self.session.now_ms, "goto": goto}
        self._sent_events += len(events)
        self._sent_timers += len(timers)
        self._reply(message)

    # --- for learners -----------------------------------------------------------------------
    @property
    def cluster(self) -> Cluster:
        """The cluster as it stands now (a fork replaces it)."""
        return self.session.cluster

    def replay_code(self) -> str:
        """The Python lines that rebuild this view's trace event for event."""
        return self.session.replay_code()

    def act(self, action: str, at_ms: int | None = None, **args: Any) -> None:
        """Do what a click does, from Python: ``view.act("crash", node="n1")`` (now) or at ``at_ms``."""
        self.intent({"type": "act", "action": action, "args": args, "generation": self.session.generation,
                     "at": self.session.now_ms if at_ms is None else at_ms})
        errors = [r["text"] for r in self.replies if r["type"] == "message" and r.get("level") == "error"]
        if errors:
            raise RocketlabError(errors[0])

    @property
    def bookmarks(self) -> list[dict[str, Any]]:
        """The named stops set so far (:meth:`bookmark`), in time order."""
        return list(self.session.bookmarks if self.session is not None else self.recorded.get("bookmarks", []))

    def bookmark(self, t_ms: int, name: str, text: str = "") -> None:
        """A named stop at ``t_ms`` (a lab's "(a)", "(b)", ...): the viewer's stop buttons, its jump menu's
        "stop" and the up / down arrow keys go there, in time order; ``text`` is said when there."""
        t_ms = _whole_ms(t_ms, "bookmark: t_ms")
        if not isinstance(name, str) or not name.strip():
            raise RocketlabError(f"bookmark: a name is a non-empty string, got {name!r}")
        marks = self.session.bookmarks if self.session is not None else self.recorded.setdefault("bookmarks", [])
        marks.append({"t": t_ms, "name": name, "text": str(text)})
        marks.sort(key=lambda b: b["t"])
        if self._greeted:
            self._send_film()

    def save(self, run_dir: str | Path) -> Path:
        """Write the run (meta, events) and the viewer's timer samples: ``rocketlab view RUN_DIR``."""
        path = self.cluster.save(run_dir)
        write_timers(path, self.session.timers)
        return path

    def offline_film(self) -> dict[str, Any]:
        """The view as it stands as a recorded film (no kernel behind it), opening where the view opens."""
        film = self.recorded if self.session is None else self.session.film()
        return {**film, "live": False, "open_at": self.open_at, "lang": self.lang}

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget, and the same view as a recorded film in ``text/html``: what a page without the
        widget's kernel shows (nbconvert's HTML export, which skips a widget it has no state for)."""
        bundle = super()._repr_mimebundle_(**kwargs)  # anywidget: (data, metadata)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if data is not None:
            film = viewer_div(self.offline_film(), f"rocketlab-film-{self.model_id}")
            data["text/html"] = film + "\n" + viewer_assets() if len(film) <= MAX_EMBEDDED_FILM else (
                "<p>" + _("The cluster viewer: this run is too long to carry in the notebook ({mb} MB); {code} writes it "
                          "as a page of its own.").format(mb=f"{len(film) / 1e6:.0f}", code="<code>view.save_html(PATH)</code>")
                + "</p>")
        return bundle

    def save_html(self, path: str | Path, title: str | None = None) -> Path:
        """The view as it stands, read-only, in one HTML file (no kernel, no network); ``title`` defaults to
        "rocketlab cluster" in the kernel's language."""
        film = self.offline_film()
        title = _("rocketlab cluster") if title is None else title
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(viewer_page(film, title), encoding="utf-8")
        return out

    def run_for(self, duration_ms: int) -> None:
        """Advance the cluster (and what the view can show) by ``duration_ms``."""
        self.intent({"type": "advance", "to": self.session.now_ms + duration_ms, "generation": self.session.generation})


def _check_seed(seed: Any) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise RocketlabError(f"seed must be a whole number from 0 to 2**63-1, got {seed!r}")


def _whole_ms(value: Any, what: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RocketlabError(f"{what} must be a whole number of ms >= 0, got {value!r}")
    return value


class RecordedView(ClusterView):
    """A recorded film in the widget: scrub, step and play; no simulation behind it to act on."""

    def __init__(self, film: dict[str, Any], *, speed: float = 0.1, **kwargs: Any) -> None:
        if not SPEED_RANGE[0] <= speed <= SPEED_RANGE[1]:
            raise RocketlabError(f"speed {speed} is out of range: {SPEED_RANGE[0]}x to {SPEED_RANGE[1]:g}x real time")
        self.session = None  # type: ignore[assignment]
        self.recorded = {**film, "live": False}
        violation = next((e for e in film["events"] if e["kind"] == "violation"), None)
        self._open_at = violation["t"] if violation is not None else 0
        kwargs.setdefault("lang", kernel_language())
        anywidget.AnyWidget.__init__(self, speed=speed, **kwargs)
        self._greeted = False
        self._sent_events = self._sent_timers = 0
        self.replies = []
        self.on_msg(self._on_custom_msg)

    @property
    def open_at(self) -> int:
        return self._open_at

    def _opening_words(self) -> str | None:
        if self.open_at:
            return _("a recorded run: scrub, step and play it (opened at the first invariant violation, t = {t} ms)"
                     ).format(t=self.open_at)
        return _("a recorded run: scrub, step and play it")

    def _send_film(self, goto: int | None = None, say: str | None = None) -> None:
        message: dict[str, Any] = {"type": "film", "film": self.recorded, "goto": goto}
        if say is not None:
            message["say"] = say
        self._reply(message)

    @property
    def cluster(self) -> Cluster:
        raise RocketlabError("a recorded run has no cluster behind it")
