"""The cluster viewer's responsiveness, measured in Debian's Chromium (Playwright).

A 5-member DLedger group under the ``unreliable`` network runs 60 simulated seconds (30 with --quick)
with a client put every 400 ms and a leader crash and restart every 12 s, through a ClusterView.

* **scrub latency**: the slider moved to 50 random instants of the recorded run in the offline page; time
  from the input event to the end of the next animation frame (the frame that shows it). Target <= 50 ms
  median. Baseline in the same page: one animation frame with no work.
* **fork latency**: an action at the run's midpoint (a fork: rebuild from the seed and replay the
  intents, then the whole film redrawn); the Python side and the page's load of the new film, summed.
  Target <= 1 s. Baseline: the same action at the present instant (no fork).
* **fork of a cluster that has run**: the same run made by plain Cluster calls, then opened with
  ``ClusterView(cluster)``; an action at its midpoint rebuilds the run from its calls (``Cluster.calls``,
  the kernel's horizon) and checks the rebuilt trace. Baseline: the viewer-made run's fork above.
* **animation**: frames per second playing at 1x. Target >= 30. Baseline: an empty page's frame rate.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import line, record  # noqa: E402

from rocketlab.viz.cluster_view import ClusterView  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def build_plain_run(duration_ms: int) -> ClusterView:
    """The same schedule as :func:`build_run` by Cluster calls alone, opened in the viewer afterwards."""
    from rocketlab.sim import Cluster
    from rocketlab.viz.cluster_view.widget import VIEW_LATENCY

    c = Cluster.dledger(nodes=5, seed=1, network="unreliable", memory=True, latency=VIEW_LATENCY,
                        raise_on_violation=False)
    t = 0
    while t < duration_ms:
        c.run_for(400)
        t += 400
        if c.leader():
            c.put(b"m", wait=False)
        if t % 12_000 == 0 and c.leader():
            c.crash(c.leader())
        if t % 12_000 == 6_000:
            for node in c.node_ids:
                if not c.alive(node):
                    c.restart(node)
    return ClusterView(c)


def build_run(duration_ms: int) -> ClusterView:
    view = ClusterView.dledger(nodes=5, seed=1, network="unreliable")
    t = 0
    while t < duration_ms:
        view.run_for(400)
        t += 400
        if view.cluster.leader():
            view.act("put")
        if t % 12_000 == 0:
            leader = view.cluster.leader()
            if leader:
                view.act("crash", node=leader)
        if t % 12_000 == 6_000:
            for node in view.cluster.node_ids:
                if not view.cluster.alive(node):
                    view.act("restart", node=node)
    return view


SCRUB = """async (instants) => {
  const slider = document.querySelector('.rl-slider');
  const out = [];
  for (const t of instants) {
    const start = performance.now();
    slider.value = String(t);
    slider.dispatchEvent(new Event('input'));
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    out.push(performance.now() - start);
  }
  return out;
}"""
EMPTY_FRAMES = """async (n) => {
  const out = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    out.push(performance.now() - start);
  }
  return out;
}"""
FPS = """async (ms) => {
  let frames = 0; const start = performance.now();
  await new Promise(done => { const f = () => { frames++; if (performance.now() - start < ms) requestAnimationFrame(f); else done(); };
                             requestAnimationFrame(f); });
  return frames / ((performance.now() - start) / 1000);
}"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"bench_viewer: needs {CHROMIUM} (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    duration = 30_000 if args.quick else 60_000
    t0 = time.perf_counter()
    view = build_run(duration)
    build_s = time.perf_counter() - t0
    events = len(view.cluster.events)
    tmp = Path(tempfile.mkdtemp(prefix="bench-viewer-"))
    page_path = view.save_html(tmp / "view.html")
    rng = random.Random(7)
    instants = [rng.randint(0, view.session.now_ms) for _ in range(50)]

    # fork latency, Python side: an action at the midpoint (fork) against one at the present (no fork)
    now_film_ms = view.session.now_ms
    t0 = time.perf_counter()
    view.intent({"type": "act", "action": "put", "args": {}, "at": now_film_ms, "generation": view.session.generation})
    no_fork_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    replies = view.intent({"type": "act", "action": "time_out", "args": {"node": "n2"}, "at": now_film_ms // 2,
                           "generation": view.session.generation})
    fork_python_s = time.perf_counter() - t0
    forked = next(r for r in replies if r["type"] == "film")["film"]
    plain = build_plain_run(duration)
    t0 = time.perf_counter()
    replies = plain.intent({"type": "act", "action": "time_out", "args": {"node": "n2"}, "at": plain.session.now_ms // 2,
                            "generation": plain.session.generation})
    fork_plain_s = time.perf_counter() - t0
    assert plain.session.generation == 1, replies

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        page.goto(page_path.as_uri())
        page.wait_for_selector(".rl-node")
        scrub = page.evaluate(SCRUB, instants)
        frames = page.evaluate(EMPTY_FRAMES, 50)
        load_ms = page.evaluate("""(film) => { const v = document.querySelector('.rl-viewer').rocketlabViewer;
            const s = performance.now(); v.load(film, film.end_ms / 2); return performance.now() - s; }""", forked)
        page.evaluate("""() => { const v = document.querySelector('.rl-viewer').rocketlabViewer;
            v.goto(0); v.speed = 1; v.setPlaying(true); }""")
        fps = page.evaluate(FPS, 3000)
        blank = browser.new_page()
        blank.set_content("<html><body></body></html>")
        fps_empty = blank.evaluate(FPS, 3000)
        browser.close()

    scrub_median = statistics.median(scrub)
    fork_total_ms = fork_python_s * 1000 + load_ms
    print(f"viewer: 5 members, unreliable network, {duration // 1000} simulated s, {events} events "
          f"(built in {build_s:.1f} s)")
    line("scrub latency, median of 50", scrub_median, "ms",
         f"p90 {statistics.quantiles(scrub, n=10)[-1]:.1f} ms; baseline one empty frame "
         f"{statistics.median(frames):.1f} ms; target <= 50 ms: {'met' if scrub_median <= 50 else 'missed'}")
    line("fork latency (rebuild + redraw)", fork_total_ms, "ms",
         f"Python {fork_python_s * 1000:.0f} ms + page {load_ms:.0f} ms; baseline no-fork action "
         f"{no_fork_s * 1000:.1f} ms; target <= 1000 ms: {'met' if fork_total_ms <= 1000 else 'missed'}")
    line("fork of a cluster that has run (Python)", fork_plain_s * 1000, "ms",
         f"{len(plain.session.base_calls)} calls replayed to t = {plain.session.now_ms} ms and checked; baseline the "
         f"viewer-made run's fork {fork_python_s * 1000:.0f} ms")
    line("animation at 1x", fps, "frames/s",
         f"baseline empty page {fps_empty:.1f} frames/s; target >= 30: {'met' if fps >= 30 else 'missed'}")
    record("viewer_quick" if args.quick else "viewer", {
        "simulated_ms": duration, "events": events,
        "scrub_ms_median": round(scrub_median, 2), "scrub_ms_p90": round(statistics.quantiles(scrub, n=10)[-1], 2),
        "empty_frame_ms_median": round(statistics.median(frames), 2),
        "fork_ms": round(fork_total_ms, 1), "fork_python_ms": round(fork_python_s * 1000, 1),
        "fork_page_ms": round(load_ms, 1), "no_fork_action_ms": round(no_fork_s * 1000, 2),
        "fps_1x": round(fps, 1), "fps_empty_page": round(fps_empty, 1),
        "fork_run_cluster_python_ms": round(fork_plain_s * 1000, 1),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
