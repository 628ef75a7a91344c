// rocketlab cluster viewer: draws a film (rocketlab/viz/cluster_view/film.py) at any instant.
//
// One renderer for two hosts: the anywidget in JupyterLab (the Python side owns the simulator; this
// side draws and sends intents) and the offline HTML page (a recorded film, no kernel). Scrubbing,
// stepping and jumping through what was recorded never need the kernel. The modules (strings, draw,
// film, ring, panels, this one) are joined into one ES module by rocketlab/viz/cluster_view/bundle.py:
// no build tool, nothing fetched from the network.
import { html, svg } from "./draw.js";
import { Film, groupOf, isStop } from "./film.js";
import { drawRing } from "./ring.js";
import { drawLogs, drawSide } from "./panels.js";
import { STOP_KEYS, named, setLanguage, t } from "./strings.js";

const SPEEDS = [0.01, 0.03, 0.1, 0.3, 1, 3, 10];
const NETWORK_MODES = ["reliable", "unreliable", "reordering", "long-delays"];
// The fault kinds come as data with the film (film.faults, from rocketlab.trace.faults.FAULT_KINDS), the
// filter groups and navigation stops too (film.view, from rocketlab.trace.schema.VIEW_GROUPS / VIEW_STOPS).
const NODE_WHEN = { alive: (n) => n.alive, down: (n) => !n.alive, running: (n) => n.alive && !n.paused,
  paused: (n) => n.alive && n.paused };
const LINK_WHEN = { open: (open) => open, cut: (open) => !open };
const BOOKMARK = "bookmark";

function button(parent, cls, text, title, label, onclick) {
  const b = html("button", { class: cls, title, "aria-label": label || title }, parent, text);
  b.onclick = onclick;
  return b;
}

class Viewer {
  constructor(root, host) {
    this.root = root;
    this.host = host;  // {live, send(intent)}
    this.film = null;
    this.T = 0;
    this.playing = false;
    this.speed = 0.1;
    this.selected = null;
    this.menu = null;
    this.waiting = false;
    this.lastFrame = null;
    this.hidden = null;  // the filter groups not listed (from the vocabulary's defaults at the first film)
    this.jumpTo = null;
    this.bookmarkIndex = -1;
    this.build();
  }

  build() {
    const r = this.root;
    r.classList.add("rl-viewer");
    r.setAttribute("tabindex", "0");
    r.setAttribute("data-lm-suppress-shortcuts", "true");  // JupyterLab: our keys move time, not cells
    r.addEventListener("keydown", (ev) => this.onKey(ev));
    this.head = html("div", { class: "rl-head" }, r);
    const bar = html("div", { class: "rl-bar" }, r);
    this.playBtn = button(bar, "rl-play", t("play"), t("playTitle"), t("playLabel"), () => this.setPlaying(!this.playing));
    this.backBtn = button(bar, "rl-back", t("back"), t("backTitle"), t("backLabel"), () => this.stepBack());
    this.stepBtn = button(bar, "rl-step", t("step"), t("stepTitle"), t("stepLabel"), () => this.stepEvent());
    html("span", { class: "rl-label" }, bar, t("speed"));
    this.speedSel = html("select", { class: "rl-speed", "aria-label": t("speedLabel") }, bar);
    SPEEDS.forEach((v) => { const o = html("option", { value: String(v) }, this.speedSel, v + "x"); if (v === this.speed) o.selected = true; });
    this.speedSel.onchange = () => { this.speed = Number(this.speedSel.value); };
    this.slider = html("input", { type: "range", class: "rl-slider", min: "0", max: "0", step: "1", value: "0",
      "aria-label": t("timeLabel") }, bar);
    this.slider.oninput = () => { this.setPlaying(false); this.goto(Number(this.slider.value)); };
    this.clock = html("span", { class: "rl-clock", "aria-live": "polite" }, bar);
    this.nav = html("div", { class: "rl-bar rl-nav" }, r);
    this.liveBar = html("div", { class: "rl-bar rl-live" }, r);
    const put = html("button", { class: "rl-put" }, this.liveBar, t("clientPut"));
    put.onclick = () => this.act("put", {});
    this.faultBar = null;  // the fault kinds' controls: built from the first film (buildFaultBar)
    this.codeBtn = html("button", { class: "rl-code-btn" }, this.liveBar, t("replayCode"));
    this.codeBtn.onclick = () => { this.codeOpen = true; this.host.send({ type: "replay_code" }); };
    this.message = html("div", { class: "rl-message", role: "status", "aria-live": "polite" }, r);
    const stage = html("div", { class: "rl-stage" }, r);
    this.svg = svg("svg", { class: "rl-ring", viewBox: "0 0 660 440", width: "660", height: "440", role: "group",
      "aria-label": t("ringLabel") }, stage);
    this.side = html("div", { class: "rl-side" }, stage);
    this.why = html("div", { class: "rl-why" }, this.side);
    this.filters = html("div", { class: "rl-filters", role: "group", "aria-label": t("showLabel") }, this.side);
    this.list = html("ol", { class: "rl-events" }, this.side);
    this.logs = html("div", { class: "rl-logs" }, r);
    this.code = html("pre", { class: "rl-code" }, r);
    this.code.style.display = "none";
  }

  // the live bar's fault controls, one per entry of film.faults.bar_menu, by the shape of its arguments
  buildFaultBar(items) {
    const bar = this.liveBar;
    for (const item of items) {
      const cls = "rl-act rl-act-" + item.intent;
      if (item.args === "groups") {
        this.sides = html("input", { class: "rl-sides", size: "14", placeholder: "n0 n1 | n2 n3 n4",
          "aria-label": t("sidesLabel"), title: t("sidesTitle") }, bar);
        html("button", { class: cls }, bar, named("action", item.label)).onclick = () => this.act(item.intent, { groups: this.sides.value });
      } else if (item.args === "network") {
        html("span", { class: "rl-label" }, bar, t("network"));
        this.netSel = html("select", { class: "rl-net", "aria-label": t("networkLabel") }, bar);
        NETWORK_MODES.forEach((m) => html("option", { value: m }, this.netSel, named("network", m)));
        this.latency = html("input", { class: "rl-latency", value: "", size: "14", "aria-label": t("latencyLabel"),
          title: t("latencyTitle") }, bar);
        html("button", { class: cls }, bar, named("action", item.label)).onclick = () =>
          this.act(item.intent, { mode: this.netSel.value, latency: this.latency.value });
      } else {
        html("button", { class: cls }, bar, named("action", item.label)).onclick = () => this.act(item.intent, {});
      }
    }
    bar.appendChild(this.codeBtn);  // the replay code button stays last
    this.faultBar = items;
  }

  // the navigation row: what "previous / next" jump to, and the film's bookmarks as named stops
  buildNav() {
    const f = this.film; const nav = this.nav;
    nav.textContent = "";
    this.bookmarks = (f.data.bookmarks || []).slice().sort((a, b) => a.t - b.t);
    const names = [...(this.bookmarks.length ? [BOOKMARK] : []), ...f.view.stops.map((s) => s.name)];
    if (!names.includes(this.jumpTo)) {  // at first: the film's stops, else the first kind of stop it has
      const has = (name) => name === BOOKMARK || f.events.some((e) => isStop(f.view.stops.find((s) => s.name === name), e));
      this.jumpTo = names.find(has) || names[0];
    }
    html("span", { class: "rl-label" }, nav, t("jumpTo"));
    this.jumpSel = html("select", { class: "rl-jump", "aria-label": t("jumpLabel") }, nav);
    for (const name of names) {
      const what = named("stop", name);
      const o = html("option", { value: name }, this.jumpSel, STOP_KEYS[name] ? t("withKey", { what, key: STOP_KEYS[name] }) : what);
      if (name === this.jumpTo) o.selected = true;
    }
    this.jumpSel.onchange = () => { this.jumpTo = this.jumpSel.value; this.titleNav(); };
    this.prevBtn = button(nav, "rl-prev", t("prev"), "", "", () => this.jump(this.jumpTo, -1));
    this.nextBtn = button(nav, "rl-next", t("next"), "", "", () => this.jump(this.jumpTo, 1));
    this.titleNav();
    if (!this.bookmarks.length) return;
    html("span", { class: "rl-label" }, nav, t("bookmarks"));
    this.bookmarkBtns = this.bookmarks.map((b, i) => {
      const el = button(nav, "rl-bookmark", b.name, t("bookmarkTitle", b), "", () => this.gotoBookmark(i));
      el.dataset.t = String(b.t);
      return el;
    });
  }

  titleNav() {
    const what = named("stop", this.jumpTo); const key = STOP_KEYS[this.jumpTo] || "";
    for (const [b, k] of [[this.prevBtn, "prevTitle"], [this.nextBtn, "nextTitle"]]) {
      b.title = t(k, { what, key: key || "\u2193" });
      b.setAttribute("aria-label", b.title);
    }
    this.root.setAttribute("aria-label", t("viewerLabel", { jump: what }));
  }

  // the filter groups present in the film, as checkboxes; rebuilt when a new group appears
  buildFilters() {
    const f = this.film;
    if (this.hidden === null) this.hidden = new Set(f.view.groups.filter((g) => !g.shown).map((g) => g.name));
    const present = new Set(f.events.map((e) => groupOf(f.view, e)));
    const groups = f.view.groups.map((g) => g.name).filter((g) => present.has(g));
    const key = groups.join("|");
    if (key === this.filterKey) return;
    this.filterKey = key;
    this.filters.textContent = "";
    html("span", { class: "rl-label" }, this.filters, t("show"));
    for (const g of groups) {
      const label = html("label", { class: "rl-opt" }, this.filters);
      const cb = html("input", { type: "checkbox", "data-group": g }, label);
      cb.checked = !this.hidden.has(g);
      label.appendChild(document.createTextNode(" " + named("group", g)));
      cb.onchange = () => { if (cb.checked) this.hidden.delete(g); else this.hidden.add(g); this.render(); };
    }
  }

  load(data, gotoMs) {
    this.film = new Film(data);
    if (this.faultBar === null) this.buildFaultBar(this.film.faults.bar_menu || []);
    this.liveBar.style.display = data.live ? "" : "none";
    const net = data.network || {};
    if (net.mode && this.netSel) this.netSel.value = net.mode;
    if (net.latency && this.latency) this.latency.value = String(net.latency);
    const where = [data.system, data.profile, data.seed != null ? t("seed", data) : null,
      data.scenario ? t("scenario", data) : null].filter(Boolean).join(" - ");
    this.head.textContent = where + t(data.live ? "live" : "recorded");
    this.T = gotoMs != null ? gotoMs : Math.min(this.T, this.film.endMs);
    this.selected = null;
    this.buildNav();
    this.buildFilters();
    this.render();
  }

  more(msg) {
    if (!this.film || msg.generation !== this.film.data.generation || msg.start !== this.film.events.length) {
      this.host.send({ type: "hello" });  // out of step: ask for the whole film again
      return;
    }
    this.film.append(msg.events, msg.timers, msg.end_ms);
    if (msg.goto != null) { this.T = msg.goto; this.selected = null; }  // on the newest event there
    this.buildFilters();
    this.render();
  }

  say(text, level) {
    this.message.textContent = text || "";
    this.message.className = "rl-message" + (level ? " rl-" + level : "");
  }

  setPlaying(on) {
    this.playing = on;
    this.playBtn.textContent = t(on ? "pause" : "play");
    this.root.dataset.playing = on ? "1" : "0";
    if (on) { this.lastFrame = null; requestAnimationFrame((ts) => this.tick(ts)); }
  }

  tick(ts) {
    if (!this.playing || !this.film) return;
    const dt = this.lastFrame === null ? 0 : Math.min(ts - this.lastFrame, 100);
    this.lastFrame = ts;
    let T = this.T + dt * this.speed;
    if (this.host.live) {
      const ahead = Math.max(200, this.speed * 1500);
      if (T + ahead > this.film.endMs && !this.waiting) {
        this.waiting = true;
        this.root.dataset.waiting = "1";
        this.host.send({ type: "advance", to: Math.ceil(T + 2 * ahead), generation: this.film.data.generation });
      }
    }
    if (T >= this.film.endMs) {
      T = this.film.endMs;
      if (!this.host.live) this.setPlaying(false);
    }
    this.T = T;
    this.render();
    requestAnimationFrame((next) => this.tick(next));
  }

  // ------------------------------------------------------------------------------------ navigation
  goto(T) {
    this.T = Math.max(0, Math.min(T, this.film ? this.film.endMs : 0));
    this.selected = null;
    this.render();
  }

  select(i) {
    this.setPlaying(false);
    this.T = this.film.events[i].t;
    this.selected = i;
    this.say("");
    this.render();
  }

  visible(e) { return !this.hidden || !this.hidden.has(groupOf(this.film.view, e)); }

  // the event the view stands on: the one selected, else the last one listed at or before T (-1: none)
  current(end) {
    const f = this.film;
    const upto = end !== undefined ? end : f.upper(this.T);
    if (this.selected !== null && this.selected < upto) return this.selected;
    for (let i = upto - 1; i >= 0; i--) if (this.visible(f.events[i])) return i;
    return -1;
  }

  stepEvent() {
    this.setPlaying(false);
    const f = this.film;
    for (let j = this.current() + 1; j < f.events.length; j++) if (this.visible(f.events[j])) { this.select(j); return; }
    if (this.host.live) this.host.send({ type: "step", generation: f.data.generation });
  }

  stepBack() {
    this.setPlaying(false);
    const f = this.film;
    for (let j = this.current() - 1; j >= 0; j--) if (this.visible(f.events[j])) { this.select(j); return; }
    this.goto(0);
  }

  jump(name, dir) {
    this.setPlaying(false);
    if (name === BOOKMARK) { this.jumpBookmark(dir); return; }
    const f = this.film;
    const stop = f.view.stops.find((s) => s.name === name);
    if (!stop) return;
    const cur = this.current();
    for (let j = cur + dir; j >= 0 && j < f.events.length; j += dir) if (isStop(stop, f.events[j])) { this.select(j); return; }
    this.say(t(dir > 0 ? "noMore" : "noneBefore", { what: named("stop", name), t: Math.round(this.T) }));
  }

  jumpBookmark(dir) {
    const bms = this.bookmarks || [];
    const here = this.bookmarkIndex >= 0 && bms[this.bookmarkIndex] && bms[this.bookmarkIndex].t === this.T ? this.bookmarkIndex : null;
    let target = -1;
    if (dir > 0) target = bms.findIndex((b, k) => b.t > this.T || (here !== null && b.t === this.T && k > here));
    else for (let k = bms.length - 1; k >= 0; k--) if (bms[k].t < this.T || (here !== null && bms[k].t === this.T && k < here)) { target = k; break; }
    if (target < 0) this.say(t(dir > 0 ? "noMore" : "noneBefore", { what: named("stop", BOOKMARK), t: Math.round(this.T) }));
    else this.gotoBookmark(target);
  }

  gotoBookmark(i) {
    const b = this.bookmarks[i];
    this.setPlaying(false);
    this.T = b.t;
    this.selected = null;
    this.bookmarkIndex = i;
    this.say(t("bookmarkAt", b));
    this.render();
  }

  act(action, args) {
    if (!this.host.live || !this.film) return;
    this.closeMenu();
    this.setPlaying(false);
    this.host.send({ type: "act", action, args, at: Math.round(this.T), generation: this.film.data.generation });
  }

  // ------------------------------------------------------------------------------------ drawing
  render() {
    if (!this.film) return;
    const f = this.film; const T = this.T;
    const s = f.stateAt(T);
    this.slider.max = String(f.endMs);
    this.slider.value = String(Math.round(T));
    this.clock.textContent = t("clock", { t: Math.round(T), end: f.endMs });
    const d = this.root.dataset;
    d.t = String(Math.round(T));
    d.end = String(f.endMs);
    d.generation = String(f.data.generation);
    d.violations = String(s.violations);
    const cur = this.current(s.index);
    d.selected = cur >= 0 ? String(cur) : "";
    let leader = ""; let leaderTerm = -1;
    for (const id of f.nodes) {
      const n = s.nodes[id];
      if (n.alive && (n.role === "LEADER" || n.role === "MASTER") && n.term >= leaderTerm) { leader = id; leaderTerm = n.term; }
    }
    d.leader = leader;
    d.term = leader ? String(leaderTerm) : "";
    const bm = this.bookmarks && this.bookmarks[this.bookmarkIndex];
    d.bookmark = bm && bm.t === Math.round(T) ? bm.name : "";
    (this.bookmarkBtns || []).forEach((b, i) => b.classList.toggle("rl-selected", i === this.bookmarkIndex && d.bookmark !== ""));
    if (this.netSel && s.network && s.network !== this.shownNetwork && document.activeElement !== this.latency) {
      const [mode, latency] = s.network.split(" ");
      if (mode) this.netSel.value = mode;
      if (latency) this.latency.value = latency;
      this.shownNetwork = s.network;
    }
    drawRing(this, s, T);
    drawSide(this, s);
    drawLogs(this, s);
  }

  // ------------------------------------------------------------------------------------ keyboard
  // While the viewer has focus its keys are its own (stopped here, so JupyterLab does not move cells):
  // left / right step, up / down the previous / next stop, Home / End, a stop's letter, Escape closes a menu.
  onKey(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || !this.film) return;
    const target = ev.target;
    if (ev.key === "Escape") {
      if (this.menu) { ev.preventDefault(); ev.stopPropagation(); this.closeMenu(); this.render(); }
      return;
    }
    if (this.menu && this.menu.contains(target)) { this.menuKey(ev); return; }
    const tag = target.tagName;
    const arrow = ev.key.startsWith("Arrow");
    if (tag === "SELECT" || tag === "TEXTAREA" || (tag === "INPUT" && !["checkbox", "range", "button"].includes(target.type))) {
      if (arrow || ev.key === "Home" || ev.key === "End") ev.stopPropagation();  // the field's own keys
      return;
    }
    if (target.classList.contains("rl-event") && (ev.key === "ArrowUp" || ev.key === "ArrowDown")) {
      const next = ev.key === "ArrowUp" ? target.previousElementSibling : target.nextElementSibling;
      if (next) next.focus();
      ev.preventDefault(); ev.stopPropagation();
      return;
    }
    const action = this.keyAction(ev);
    if (action) { ev.preventDefault(); ev.stopPropagation(); action(); } else if (arrow) ev.stopPropagation();
  }

  keyAction(ev) {
    switch (ev.key) {
      case "ArrowRight": return () => this.stepEvent();
      case "ArrowLeft": return () => this.stepBack();
      case "ArrowDown": case "PageDown": return () => this.jump(this.jumpTo, 1);
      case "ArrowUp": case "PageUp": return () => this.jump(this.jumpTo, -1);
      case "Home": return () => { this.setPlaying(false); this.goto(0); };
      case "End": return () => { this.setPlaying(false); this.goto(this.film.endMs); };
      case " ": return ev.target === this.root ? () => this.setPlaying(!this.playing) : null;
      default: break;
    }
    const key = ev.key.toLowerCase();
    const name = Object.keys(STOP_KEYS).find((k) => STOP_KEYS[k] === key);
    const known = name === BOOKMARK ? (this.bookmarks || []).length > 0 : this.film.view.stops.some((s) => s.name === name);
    return name && known ? () => this.jump(name, ev.shiftKey ? -1 : 1) : null;
  }

  menuKey(ev) {  // inside a menu: up / down (and Home / End) move between its items, never out of it
    const items = [...this.menu.querySelectorAll("button")];
    const at = items.indexOf(document.activeElement);
    const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: items.length - 1 }[ev.key];
    if (ev.key.startsWith("Arrow") || ev.key === "Home" || ev.key === "End") { ev.preventDefault(); ev.stopPropagation(); }
    if (to !== undefined && items.length) items[(to + items.length) % items.length].focus();
  }

  focusable(node, label) {
    node.setAttribute("tabindex", "0");
    node.setAttribute("role", "button");
    node.setAttribute("aria-label", label);
    const key = node.getAttribute("data-node") || (node.getAttribute("data-src") + ">" + node.getAttribute("data-dst"));
    node.onkeydown = (ev) => {
      if (ev.key !== "Enter" && ev.key !== " ") return;
      ev.preventDefault();
      ev.stopPropagation();
      const box = node.getBoundingClientRect();
      node.onclick({ clientX: box.left + box.width / 2, clientY: box.top + box.height / 2, stopPropagation() {} });
      const first = this.menu && this.menu.querySelector("button");
      if (first) first.focus();
    };
    node.onfocus = () => { this.focusKey = key; };
    if (this.refocus === key) { this.refocus = null; node.focus(); }
  }

  // ------------------------------------------------------------------------------------ menus
  closeMenu() {
    if (this.menu) { this.menu.remove(); this.menu = null; this.refocus = this.focusKey; }
  }

  openMenu(ev, title, items) {
    this.closeMenu();
    if (!this.host.live) return;
    const box = this.root.getBoundingClientRect();
    const menu = html("div", { class: "rl-menu", role: "menu", "aria-label": title }, this.root);
    menu.style.left = (ev.clientX - box.left + 8) + "px";
    menu.style.top = (ev.clientY - box.top + 8) + "px";
    html("div", { class: "rl-menu-title" }, menu, title);
    for (const [label, fn] of items) {
      const b = html("button", { "data-action": label, role: "menuitem" }, menu, label);
      b.onclick = (e) => { e.stopPropagation(); fn(); };
    }
    const close = html("button", { class: "rl-menu-close", role: "menuitem" }, menu, t("close"));
    close.onclick = () => { this.closeMenu(); this.render(); };
    this.menu = menu;
  }

  nodeMenu(ev, id, n) {
    ev.stopPropagation();
    const items = (this.film.faults.node_menu || []).filter((item) => (NODE_WHEN[item.when] || NODE_WHEN.alive)(n))
      .map((item) => [named("action", item.label), () => this.act(item.intent, { node: id })]);
    if (n.alive) items.push([t("putVia"), () => this.act("put", { via: id })]);
    this.openMenu(ev, t("nodeMenu", { node: id, t: Math.round(this.T) }), items);
  }

  linkMenu(ev, a, b, open) {
    ev.stopPropagation();
    const items = (this.film.faults.link_menu || []).filter((item) => !LINK_WHEN[item.when] || LINK_WHEN[item.when](open))
      .map((item) => [named("action", item.label) + " " + a + " -> " + b, () => this.act(item.intent, { src: a, dst: b })]);
    this.openMenu(ev, t("linkMenu", { src: a, dst: b }), items);
  }

  // ------------------------------------------------------------------------------------ from Python
  receive(msg) {
    if (msg.type === "film" || msg.type === "more") { this.waiting = false; delete this.root.dataset.waiting; }
    if (msg.type === "film") this.load(msg.film, msg.goto);
    else if (msg.type === "more") this.more(msg);
    else if (msg.type === "message") this.say(msg.text, msg.level);
    else if (msg.type === "code") { this.code.style.display = ""; this.code.textContent = msg.text; }
    if (msg.say !== undefined) this.say(msg.say, msg.level);
    if ((msg.type === "film" || msg.type === "more") && this.codeOpen && this.host.live) this.host.send({ type: "replay_code" });
  }
}

// ---------------------------------------------------------------------------------------- hosts
export function mountOffline(root, film) {
  if (root.rocketlabViewer) return root.rocketlabViewer;  // a page with several films mounts each once
  root.lang = setLanguage(film.lang);  // the kernel's language when the film was made
  const viewer = new Viewer(root, { live: false, send: () => {} });
  viewer.load(film, film.open_at || 0);
  root.rocketlabViewer = viewer;
  return viewer;
}

export function startFailed(holder, error) { holder.textContent = t("started", { error }); }

function render({ model, el }) {
  const root = document.createElement("div");
  el.appendChild(root);
  root.lang = setLanguage(model.get("lang"));  // the kernel's language (ClusterView.lang)
  const viewer = new Viewer(root, { live: true, send: (m) => model.send(m) });
  viewer.speed = Number(model.get("speed")) || 0.1;
  viewer.speedSel.value = String(viewer.speed);
  root.rocketlabViewer = viewer;
  const onMsg = (msg) => viewer.receive(msg);
  model.on("msg:custom", onMsg);
  model.send({ type: "hello" });
  return () => { viewer.setPlaying(false); model.off("msg:custom", onMsg); };
}

export default { render };
