// rocketlab cluster viewer: draws a film (rocketlab/viz/cluster_view/film.py) at any instant.
//
// One renderer for two hosts: the anywidget in JupyterLab (the Python side owns the simulator; this
// side draws and sends intents) and the offline HTML report (a recorded film, no kernel). Scrubbing
// and playing back what was recorded never need the kernel: the film is folded into node states here.
// No imports, no build step, nothing fetched from the network.

const SVGNS = "http://www.w3.org/2000/svg";
const KEYFRAME_EVERY = 256;
const SPEEDS = [0.01, 0.03, 0.1, 0.3, 1, 3, 10];
const NETWORK_MODES = ["reliable", "unreliable", "reordering", "long-delays"];
const NOTABLE = new Set(["role", "term", "vote_request", "vote_response", "vote_round", "heartbeat", "append",
  "commit", "truncate", "push_state", "put", "ha_report", "ha_transfer", "fault", "violation", "msg_drop"]);
const TERM_COLORS = ["#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb", "#fcbba1", "#d9d9d9", "#f7b6d2", "#dbdb8d",
  "#9edae5", "#e7cb94"];
// The fault kinds come as data with the film (film.faults, from rocketlab.trace.faults.FAULT_KINDS): per
// trace action its effect (one of FAULT_EFFECTS), and the entries of the node menu, link menu and live bar.
const NODE_WHEN = { alive: (n) => n.alive, down: (n) => !n.alive, running: (n) => n.alive && !n.paused,
  paused: (n) => n.alive && n.paused };
const LINK_WHEN = { open: (open) => open, cut: (open) => !open };

function svg(tag, attrs, parent) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function html(tag, attrs, parent, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

// ---------------------------------------------------------------------------------------- the film
function emptyNode() {
  return { alive: true, paused: false, role: null, term: 0, leader: null, votes: {}, log: [], starts: [], crossed: [],
    committed: -1, endPos: null, committedPos: null, putOffset: null, acked: {}, sent: {} };
}

function cloneState(s) {
  const nodes = {};
  for (const [id, n] of Object.entries(s.nodes)) {
    nodes[id] = { ...n, votes: { ...n.votes }, log: n.log.slice(), starts: n.starts.slice(), crossed: n.crossed.slice(),
      acked: { ...n.acked }, sent: { ...n.sent } };
  }
  return { nodes, partition: s.partition ? s.partition.slice() : null, cuts: new Set(s.cuts),
    network: s.network, violations: s.violations, index: s.index };
}

function crossOut(m, from, to) {  // entries from..to of a member's log are gone: keep them, crossed out
  for (let i = from; i <= to; i++) if (m.log[i] !== undefined) m.crossed.push([i, m.log[i]]);
  if (m.crossed.length > 64) m.crossed.splice(0, m.crossed.length - 64);
  if (from < m.log.length) m.log.length = from;
  if (m.committed >= from) m.committed = from - 1;
  if (m.starts[from] != null) {  // the log now ends where entry `from` started (a power failure, a truncation)
    m.endPos = m.starts[from];
    if (m.committedPos != null && m.committedPos > m.endPos) m.committedPos = m.endPos;
  }
  m.starts.length = Math.min(m.starts.length, from);
}

// what a fault event does to the drawn state (rocketlab.trace.faults.VIEWER_EFFECTS)
const FAULT_EFFECTS = {
  down: (s, targets) => targets.forEach((t) => { const m = s.nodes[t]; if (m) { m.alive = false; m.paused = false; m.role = null; } }),
  up: (s, targets) => targets.forEach((t) => { const m = s.nodes[t]; if (m) { m.alive = true; m.role = null; } }),
  paused: (s, targets) => targets.forEach((t) => { if (s.nodes[t]) s.nodes[t].paused = true; }),
  unpaused: (s, targets) => targets.forEach((t) => { if (s.nodes[t]) s.nodes[t].paused = false; }),
  split: (s, targets) => { s.partition = targets.map((g) => String(g).split(",").filter(Boolean)); },
  whole: (s) => { s.partition = null; s.cuts = new Set(); },
  cut: (s, targets) => { s.cuts.add(targets[0] + ">" + targets[1]); },
  uncut: (s, targets) => { s.cuts.delete(targets[0] + ">" + targets[1]); },
  model: (s, targets) => { s.network = targets.join(" "); },
  cross_out: (s, targets) => {  // a power failure took unflushed entries: cross them out
    const m = s.nodes[targets[0]];
    if (m) crossOut(m, Number(targets[1]), Number(targets[2]));
  },
};

function applyEvent(s, e, effects) {
  const n = e.node != null ? s.nodes[e.node] : null;
  switch (e.kind) {
    case "fault": {
      const effect = FAULT_EFFECTS[effects[e.action]];
      if (effect) effect(s, e.targets || []);
      break;
    }
    case "role": if (n) { n.role = e.role; n.term = e.term; n.leader = e.leader; } break;
    case "term": if (n) n.term = e.term; break;
    case "vote_response":
      if (e.result === "ACCEPT" && s.nodes[e.voter]) s.nodes[e.voter].votes[e.term] = e.candidate;
      break;
    case "append":
      if (n) {
        if (e.index < n.log.length) n.log.length = e.index;
        n.log[e.index] = e.term;
        n.starts.length = e.index;
        n.starts[e.index] = e.pos;
        n.endPos = e.pos + e.size;
      }
      break;
    case "truncate": if (n) crossOut(n, e.index, n.log.length - 1); break;
    case "commit": if (n) { n.committed = e.index; n.committedPos = e.pos; } break;
    case "put":
      if (n && e.status === "PUT_OK") n.putOffset = Math.max(n.putOffset || 0, e.phy_offset + e.size);
      break;
    case "ha_report": if (n) n.acked[e.slave] = e.offset; break;
    case "ha_transfer": if (n) n.sent[e.slave] = e.offset + e.size; break;
    case "violation": s.violations += 1; break;
    default: break;
  }
}

class Film {
  constructor(data) {
    this.data = data;
    this.faults = data.faults || {};
    this.effects = this.faults.effects || {};
    this.nodes = data.nodes;
    this.events = [];
    this.flights = [];
    this.flightById = new Map();
    this.timers = {};
    this.nodes.forEach((id) => { this.timers[id] = []; });
    const s = { nodes: {}, partition: null, cuts: new Set(), network: "", violations: 0, index: 0 };
    this.nodes.forEach((id) => { s.nodes[id] = emptyNode(); });
    if (data.network) s.network = [data.network.mode, data.network.latency].filter(Boolean).join(" ");
    this.keyframes = [cloneState(s)];
    this.tail = s;
    this.endMs = 0;
    this.append(data.events, data.timers, data.end_ms);
  }

  append(events, timers, endMs) {
    for (const e of events) {
      this.events.push(e);
      if (e.kind === "msg_send") {
        const f = { id: e.msg_id, src: e.src, dst: e.dst, msg: e.msg, cls: e.cls || "other", t0: e.t, t1: null, dropped: null };
        this.flights.push(f);
        this.flightById.set(e.msg_id, f);
      } else if (e.kind === "msg_recv" || e.kind === "msg_drop") {
        const f = this.flightById.get(e.msg_id);
        if (f) { f.t1 = e.t; if (e.kind === "msg_drop") f.dropped = e.reason; }
      }
      applyEvent(this.tail, e, this.effects);
      this.tail.index = this.events.length;
      if (this.events.length % KEYFRAME_EVERY === 0) this.keyframes.push(cloneState(this.tail));
    }
    for (const t of timers || []) (this.timers[t.node] = this.timers[t.node] || []).push(t);
    this.endMs = Math.max(this.endMs, endMs || 0, events.length ? events[events.length - 1].t : 0);
  }

  // index of the first event with t > T
  upper(T) {
    let lo = 0; let hi = this.events.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (this.events[mid].t <= T) lo = mid + 1; else hi = mid; }
    return lo;
  }

  stateAt(T) {
    const end = this.upper(T);
    let k = Math.floor(end / KEYFRAME_EVERY);
    if (k >= this.keyframes.length) k = this.keyframes.length - 1;
    const s = cloneState(this.keyframes[k]);
    for (let i = s.index; i < end; i++) applyEvent(s, this.events[i], this.effects);
    s.index = end;
    return s;
  }

  timerAt(node, T) {
    const list = this.timers[node] || [];
    let lo = 0; let hi = list.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (list[mid].t <= T) lo = mid + 1; else hi = mid; }
    return lo > 0 ? list[lo - 1] : null;
  }

  inFlight(T) {
    const out = [];
    let lo = 0; let hi = this.flights.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (this.flights[mid].t0 <= T) lo = mid + 1; else hi = mid; }
    for (let i = lo - 1; i >= 0; i--) {
      const f = this.flights[i];
      if (T - f.t0 > 10000) break;
      if (f.t1 === null || T < f.t1 || (f.dropped && T < f.t1 + 400)) out.push(f);
    }
    return out;
  }
}

// ---------------------------------------------------------------------------------------- layout
// a message's class by shape as well as colour (the second cue): vote diamond, heartbeat circle, push
// square, client triangle, HA square outline, transfer triangle outline
function messageMark(x, y, cls, color, parent) {
  const attrs = { class: "rl-msg rl-msg-" + cls, fill: color };
  if (cls === "heartbeat" || cls === "other") return svg("circle", { ...attrs, cx: x, cy: y, r: 5 }, parent);
  if (cls === "push") return svg("rect", { ...attrs, x: x - 4.5, y: y - 4.5, width: 9, height: 9 }, parent);
  if (cls === "ha") return svg("rect", { ...attrs, x: x - 4.5, y: y - 4.5, width: 9, height: 9, fill: "none", style: "stroke: " + color }, parent);
  if (cls === "vote") return svg("path", { ...attrs, d: `M${x},${y - 6}L${x + 6},${y}L${x},${y + 6}L${x - 6},${y}Z` }, parent);
  const tri = `M${x},${y - 6}L${x + 6},${y + 5}L${x - 6},${y + 5}Z`;
  if (cls === "transfer") return svg("path", { ...attrs, d: tri, fill: "none", style: "stroke: " + color }, parent);
  return svg("path", { ...attrs, d: tri }, parent);
}

function ringPositions(ids, cx, cy, r) {
  const pos = {};
  if (ids.length === 1) { pos[ids[0]] = [cx, cy]; return pos; }
  ids.forEach((id, i) => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / ids.length;
    pos[id] = [cx + r * Math.cos(a), cy + r * Math.sin(a)];
  });
  return pos;
}

function linkOpen(s, a, b) {
  if (s.cuts.has(a + ">" + b)) return false;
  if (!s.partition) return true;
  const group = (id) => { const i = s.partition.findIndex((g) => g.includes(id)); return i < 0 ? -1 : i; };
  return group(a) === group(b);
}

function lanePoints(pos, a, b, R) {
  const [x1, y1] = pos[a]; const [x2, y2] = pos[b];
  const dx = x2 - x1; const dy = y2 - y1; const len = Math.hypot(dx, dy) || 1;
  const ux = dx / len; const uy = dy / len; const off = 5;  // each direction on its own lane
  return [x1 + ux * R - uy * off, y1 + uy * R + ux * off, x2 - ux * R - uy * off, y2 - uy * R + ux * off];
}

// ---------------------------------------------------------------------------------------- the viewer
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
    this.showNetwork = false;
    this.waiting = false;
    this.lastFrame = null;
    this.build();
  }

  build() {
    const r = this.root;
    r.classList.add("rl-viewer");
    this.head = html("div", { class: "rl-head" }, r);
    const bar = html("div", { class: "rl-bar" }, r);
    this.playBtn = html("button", { class: "rl-play", title: "play / pause", "aria-label": "play or pause" }, bar, "play");
    this.playBtn.onclick = () => this.setPlaying(!this.playing);
    this.stepBtn = html("button", { class: "rl-step", title: "go to the next event", "aria-label": "step to the next event" }, bar, "step");
    this.stepBtn.onclick = () => this.stepEvent();
    html("span", { class: "rl-label" }, bar, "speed");
    this.speedSel = html("select", { class: "rl-speed", "aria-label": "playback speed" }, bar);
    SPEEDS.forEach((v) => { const o = html("option", { value: String(v) }, this.speedSel, v + "x"); if (v === this.speed) o.selected = true; });
    this.speedSel.onchange = () => { this.speed = Number(this.speedSel.value); };
    this.slider = html("input", { type: "range", class: "rl-slider", min: "0", max: "0", step: "1", value: "0",
      "aria-label": "virtual time (ms)" }, bar);
    this.slider.oninput = () => { this.setPlaying(false); this.goto(Number(this.slider.value)); };
    this.clock = html("span", { class: "rl-clock", "aria-live": "polite" }, bar);
    this.liveBar = html("div", { class: "rl-bar rl-live" }, r);
    const put = html("button", { class: "rl-put" }, this.liveBar, "client put");
    put.onclick = () => this.act("put", {});
    this.faultBar = null;  // the fault kinds' controls: built from the first film (buildFaultBar)
    this.codeBtn = html("button", { class: "rl-code-btn" }, this.liveBar, "replay code");
    this.codeBtn.onclick = () => { this.codeOpen = true; this.host.send({ type: "replay_code" }); };
    this.message = html("div", { class: "rl-message", role: "status", "aria-live": "polite" }, r);
    const stage = html("div", { class: "rl-stage" }, r);
    this.svg = svg("svg", { class: "rl-ring", viewBox: "0 0 660 440", width: "660", height: "440", role: "group",
      "aria-label": "the cluster: nodes and links (Tab to a node or link, Enter for its actions)" }, stage);
    this.side = html("div", { class: "rl-side" }, stage);
    this.why = html("div", { class: "rl-why" }, this.side);
    const opts = html("label", { class: "rl-opt" }, this.side);
    const cb = html("input", { type: "checkbox" }, opts);
    opts.appendChild(document.createTextNode(" show msg_send / msg_recv"));
    cb.onchange = () => { this.showNetwork = cb.checked; this.render(); };
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
          "aria-label": "partition sides, separated by |", title: "the sides of a partition: node ids, sides separated by |" }, bar);
        html("button", { class: cls }, bar, item.label).onclick = () => this.act(item.intent, { groups: this.sides.value });
      } else if (item.args === "network") {
        html("span", { class: "rl-label" }, bar, "network");
        this.netSel = html("select", { class: "rl-net", "aria-label": "network mode" }, bar);
        NETWORK_MODES.forEach((m) => html("option", { value: m }, this.netSel, m));
        this.latency = html("input", { class: "rl-latency", value: "", size: "14", "aria-label": "latency",
          title: "constant:MS, uniform:LO:HI or exponential:MEAN" }, bar);
        html("button", { class: cls }, bar, item.label).onclick = () =>
          this.act(item.intent, { mode: this.netSel.value, latency: this.latency.value });
      } else {
        html("button", { class: cls }, bar, item.label).onclick = () => this.act(item.intent, {});
      }
    }
    bar.appendChild(this.codeBtn);  // the replay code button stays last
    this.faultBar = items;
  }

  load(data, gotoMs) {
    this.film = new Film(data);
    if (this.faultBar === null) this.buildFaultBar(this.film.faults.bar_menu || []);
    this.liveBar.style.display = data.live ? "" : "none";
    const net = data.network || {};
    if (net.mode && this.netSel) this.netSel.value = net.mode;
    if (net.latency && this.latency) this.latency.value = String(net.latency);
    const where = [data.system, data.profile, data.seed != null ? "seed " + data.seed : null,
      data.scenario ? "scenario " + data.scenario : null].filter(Boolean).join(" - ");
    this.head.textContent = where + (data.live ? " (live)" : " (recorded)");
    this.T = gotoMs != null ? gotoMs : Math.min(this.T, this.film.endMs);
    this.selected = null;
    this.render();
  }

  more(msg) {
    if (!this.film || msg.generation !== this.film.data.generation || msg.start !== this.film.events.length) {
      this.host.send({ type: "hello" });  // out of step: ask for the whole film again
      return;
    }
    this.film.append(msg.events, msg.timers, msg.end_ms);
    if (msg.goto != null) this.T = msg.goto;
    this.render();
  }

  say(text, level) {
    this.message.textContent = text || "";
    this.message.className = "rl-message" + (level ? " rl-" + level : "");
  }

  setPlaying(on) {
    this.playing = on;
    this.playBtn.textContent = on ? "pause" : "play";
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
    requestAnimationFrame((t) => this.tick(t));
  }

  goto(T) {
    this.T = Math.max(0, Math.min(T, this.film ? this.film.endMs : 0));
    this.render();
  }

  stepEvent() {
    this.setPlaying(false);
    const f = this.film;
    let i = f.upper(this.T);
    // several events can share a millisecond: after the selected one, the next is the one after it
    if (this.selected !== null && this.selected < f.events.length && f.events[this.selected].t === this.T) i = this.selected + 1;
    for (let j = i; j < f.events.length; j++) {
      if (this.visible(f.events[j])) { this.T = f.events[j].t; this.selected = j; this.render(); return; }
    }
    if (this.host.live) this.host.send({ type: "step", generation: f.data.generation });
  }

  visible(e) { return this.showNetwork || NOTABLE.has(e.kind); }

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
    this.clock.textContent = "t = " + Math.round(T) + " ms of " + f.endMs;
    this.root.dataset.t = String(Math.round(T));
    this.root.dataset.end = String(f.endMs);
    this.root.dataset.generation = String(f.data.generation);
    let leader = ""; let leaderTerm = -1;
    for (const id of f.nodes) {
      const n = s.nodes[id];
      if (n.alive && (n.role === "LEADER" || n.role === "MASTER") && n.term >= leaderTerm) { leader = id; leaderTerm = n.term; }
    }
    this.root.dataset.leader = leader;
    this.root.dataset.term = leader ? String(leaderTerm) : "";
    if (this.netSel && s.network && s.network !== this.shownNetwork && document.activeElement !== this.latency) {
      const [mode, latency] = s.network.split(" ");
      if (mode) this.netSel.value = mode;
      if (latency) this.latency.value = latency;
      this.shownNetwork = s.network;
    }
    this.drawRing(s, T);
    this.drawSide(s, T);
    this.drawLogs(s);
  }

  drawRing(s, T) {
    const f = this.film; const g = this.svg;
    if (g.contains(document.activeElement)) this.refocus = this.focusKey;  // redrawn: keep the keyboard's place
    while (g.firstChild) g.removeChild(g.firstChild);
    const cx = 330; const cy = 222;
    const pos = ringPositions(f.nodes, cx, cy, f.nodes.length > 6 ? 172 : 158);
    const R = 38;
    const colors = f.data.colors;
    // links: one lane per direction; click to cut / heal / drop
    for (const a of f.nodes) for (const b of f.nodes) {
      if (a === b) continue;
      const [x1, y1, x2, y2] = lanePoints(pos, a, b, R + 6);
      const open = linkOpen(s, a, b);
      svg("line", { x1, y1, x2, y2, class: "rl-link" + (open ? "" : " rl-cut"), "data-src": a, "data-dst": b }, g);
      const hit = svg("line", { x1, y1, x2, y2, class: "rl-link-hit", "data-src": a, "data-dst": b }, g);
      const title = svg("title", {}, hit); title.textContent = a + " -> " + b + (open ? "" : " (cut)");
      hit.onclick = (ev) => this.linkMenu(ev, a, b, open);
      if (this.host.live) this.focusable(hit, "link " + a + " to " + b + (open ? ", open" : ", cut"));
    }
    // messages in flight
    for (const m of f.inFlight(T)) {
      if (!pos[m.src] || !pos[m.dst]) continue;
      const [x1, y1, x2, y2] = lanePoints(pos, m.src, m.dst, R + 6);
      let p;
      if (m.dropped && m.t1 !== null && T >= m.t1) p = m.t1 === m.t0 ? 0.12 : 0.88;
      else if (m.t1 === null) p = Math.min(0.9, (T - m.t0) / 60);
      else p = m.t1 === m.t0 ? 1 : (T - m.t0) / (m.t1 - m.t0);
      const x = x1 + (x2 - x1) * p; const y = y1 + (y2 - y1) * p;
      const color = colors.messages[m.cls] || colors.messages.other;
      if (m.dropped && m.t1 !== null && T >= m.t1) {
        const d = 5;
        svg("path", { d: `M${x - d},${y - d}L${x + d},${y + d}M${x - d},${y + d}L${x + d},${y - d}`, class: "rl-drop", stroke: color }, g);
      } else {
        const dot = messageMark(x, y, m.cls, color, g);
        dot.setAttribute("data-msg", m.msg);
        svg("title", {}, dot).textContent = m.msg + " " + m.src + " -> " + m.dst;
      }
    }
    // nodes
    for (const id of f.nodes) {
      const n = s.nodes[id]; const [x, y] = pos[id];
      const role = !n.alive ? "DOWN" : (n.role || "UP");
      const fill = colors.roles[role] || "#9467bd";
      const grp = svg("g", { class: "rl-node", "data-node": id, "data-role": role, "data-term": String(n.term),
        "data-alive": n.alive ? "1" : "0", "data-paused": n.paused ? "1" : "0" }, g);
      svg("circle", { cx: x, cy: y, r: R, fill, class: "rl-node-body" + (n.paused ? " rl-paused" : "") }, grp);
      const timer = n.alive ? f.timerAt(id, T) : null;
      if (timer && timer.what) {
        const total = Math.max(1, timer.end - timer.start);
        const left = Math.max(0, Math.min(1, (timer.end - T) / total));
        const c = 2 * Math.PI * (R + 5);
        svg("circle", { cx: x, cy: y, r: R + 5, class: "rl-timer", "stroke-dasharray": `${c * left} ${c}`,
          transform: `rotate(-90 ${x} ${y})`, "data-left": left.toFixed(3) }, grp);
        svg("title", {}, grp).textContent = `${timer.what}: ${Math.max(0, Math.round(timer.end - T))} ms left`;
      }
      svg("text", { x, y: y - 6, class: "rl-node-id" }, grp).textContent = id;
      const termless = f.data.system === "master_slave";  // classic HA has no terms: offsets and lag instead
      svg("text", { x, y: y + 10, class: "rl-node-term" }, grp).textContent = !n.alive ? "down" : termless ? "" : "term " + n.term;
      const voted = n.votes[n.term];
      const lines = [role + (n.paused ? " (paused)" : "")];
      if (n.leader && n.alive && n.leader !== id) lines.push("leader " + n.leader);
      if (voted && n.alive) lines.push("voted " + voted);
      if (n.putOffset != null) lines.push("max offset " + n.putOffset);
      for (const [slave, off] of Object.entries(n.acked)) {
        const lag = n.putOffset != null ? Math.max(0, n.putOffset - off) : null;
        lines.push(slave + " acked " + off + (lag != null ? ", lag " + lag + " B" : ""));
      }
      // the node's words go outward: below the lower nodes, above the upper ones, beside the top one
      let tx = x; let ty = y > cy ? y + R + 18 : y - R - 12 - 13 * (lines.length - 1); let anchor = "middle";
      if (f.nodes.length > 1 && y < cy && Math.abs(x - cx) < R) { tx = x + R + 12; ty = y - 6 * (lines.length - 1) + 4; anchor = "start"; }
      lines.forEach((text, i) => {
        svg("text", { x: tx, y: ty + 13 * i, class: "rl-node-info", "text-anchor": anchor }, grp).textContent = text;
      });
      grp.onclick = (ev) => this.nodeMenu(ev, id, n);
      this.focusable(grp, id + ", " + role.toLowerCase() + (termless || !n.alive ? "" : ", term " + n.term) +
        (n.paused ? ", paused" : ""));
    }
    if (s.violations) svg("text", { x: 10, y: 430, class: "rl-violation" }, g).textContent = "\u26a0 " + s.violations + " invariant violation(s) so far";
    for (const mark of f.data.marks || []) {
      if (T >= mark.t) svg("text", { x: 10, y: 16, class: "rl-violation rl-mark" }, g).textContent = "\u26a0 test failed at t = " + mark.t + " ms";
    }
    if (s.network) svg("text", { x: 650, y: 430, class: "rl-network" }, g).textContent = "network: " + s.network;
  }

  drawSide(s, T) {
    const f = this.film;
    const end = s.index;
    const shown = [];
    for (let i = end - 1; i >= 0 && shown.length < 12; i--) if (this.visible(f.events[i])) shown.push(i);
    let sel = this.selected;
    if (sel === null || sel >= end) sel = shown.length ? shown[0] : null;
    const e = sel !== null ? f.events[sel] : null;
    this.why.textContent = "";
    if (e) {
      html("div", { class: "rl-why-text" }, this.why, e.text);
      html("div", { class: "rl-why-reason" }, this.why, e.why || "");
    } else {
      html("div", { class: "rl-why-text" }, this.why, "no event yet");
    }
    this.list.textContent = "";
    for (const i of shown.reverse()) {
      const item = html("li", { class: "rl-event" + (i === sel ? " rl-selected" : "") + (f.events[i].kind === "violation" ? " rl-bad" : ""),
        "data-kind": f.events[i].kind }, this.list, f.events[i].text);
      item.onclick = () => { this.selected = i; this.render(); };
    }
  }

  drawLogs(s) {
    const f = this.film;
    let maxIndex = -1;
    for (const id of f.nodes) maxIndex = Math.max(maxIndex, s.nodes[id].log.length - 1,
      ...s.nodes[id].crossed.map((c) => c[0]));
    this.logs.textContent = "";
    if (f.data.system === "master_slave") { this.drawOffsets(s); return; }
    if (maxIndex < 0) { html("div", { class: "rl-logs-empty" }, this.logs, "no log entries yet"); return; }
    const width = 30; const first = Math.max(0, maxIndex - width + 1);
    const table = html("table", { class: "rl-log" }, this.logs);
    const head = html("tr", {}, table);
    html("th", {}, head, "index");
    for (let i = first; i <= maxIndex; i++) html("th", {}, head, String(i));
    html("th", {}, head, "");
    for (const id of f.nodes) {
      const n = s.nodes[id];
      const row = html("tr", { "data-node": id }, table);
      html("th", {}, row, id);
      const crossed = new Map(n.crossed.map((c) => [c[0], c[1]]));
      for (let i = first; i <= maxIndex; i++) {
        const term = n.log[i];
        const cell = html("td", {}, row);
        if (term !== undefined) {
          cell.textContent = String(term);
          cell.style.background = TERM_COLORS[term % TERM_COLORS.length];
          if (i <= n.committed) cell.classList.add("rl-committed");
          if (crossed.has(i)) {  // what this entry replaced stays visible, crossed out, beside it
            html("span", { class: "rl-crossed", title: "entry " + i + " of term " + crossed.get(i) + " was cut here" },
              cell, String(crossed.get(i)));
          }
        } else if (crossed.has(i)) {
          cell.textContent = String(crossed.get(i));
          cell.classList.add("rl-crossed");
        }
      }
      const tail = [];
      if (n.endPos != null) tail.push("end pos " + n.endPos);
      if (n.committedPos != null) tail.push("committed pos " + n.committedPos);
      html("td", { class: "rl-log-tail" }, row, tail.join(", "));
    }
  }

  drawOffsets(s) {  // classic HA: no entries or terms, the CommitLog's bytes: the master's end, each slave's ack
    const f = this.film;
    const table = html("table", { class: "rl-log rl-offsets" }, this.logs);
    const head = html("tr", {}, table);
    ["node", "role", "max offset", "acked by slaves (lag)"].forEach((t) => html("th", {}, head, t));
    for (const id of f.nodes) {
      const n = s.nodes[id];
      const row = html("tr", { "data-node": id }, table);
      html("th", {}, row, id);
      html("td", { class: "rl-log-tail" }, row, !n.alive ? "down" : (n.role || "up"));
      html("td", { class: "rl-log-tail" }, row, n.putOffset != null ? String(n.putOffset) : "no put yet");
      const acks = Object.entries(n.acked).map(([slave, off]) => slave + " " + off +
        (n.putOffset != null ? " (" + Math.max(0, n.putOffset - off) + " B)" : ""));
      html("td", { class: "rl-log-tail" }, row, acks.join(", "));
    }
  }

  // ------------------------------------------------------------------------------------ keyboard
  focusable(node, label) {
    node.setAttribute("tabindex", "0");
    node.setAttribute("role", "button");
    node.setAttribute("aria-label", label);
    const key = node.getAttribute("data-node") || (node.getAttribute("data-src") + ">" + node.getAttribute("data-dst"));
    node.onkeydown = (ev) => {
      if (ev.key !== "Enter" && ev.key !== " ") return;
      ev.preventDefault();
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
    menu.onkeydown = (e) => { if (e.key === "Escape") { this.closeMenu(); this.render(); } };
    menu.style.left = (ev.clientX - box.left + 8) + "px";
    menu.style.top = (ev.clientY - box.top + 8) + "px";
    html("div", { class: "rl-menu-title" }, menu, title);
    for (const [label, fn] of items) {
      const b = html("button", { "data-action": label, role: "menuitem" }, menu, label);
      b.onclick = (e) => { e.stopPropagation(); fn(); };
    }
    const close = html("button", { class: "rl-menu-close" }, menu, "close");
    close.onclick = () => this.closeMenu();
    this.menu = menu;
  }

  nodeMenu(ev, id, n) {
    ev.stopPropagation();
    const items = (this.film.faults.node_menu || []).filter((item) => (NODE_WHEN[item.when] || NODE_WHEN.alive)(n))
      .map((item) => [item.label, () => this.act(item.intent, { node: id })]);
    if (n.alive) items.push(["client put through this node", () => this.act("put", { via: id })]);
    this.openMenu(ev, id + " at t = " + Math.round(this.T) + " ms", items);
  }

  linkMenu(ev, a, b, open) {
    ev.stopPropagation();
    const items = (this.film.faults.link_menu || []).filter((item) => !LINK_WHEN[item.when] || LINK_WHEN[item.when](open))
      .map((item) => [item.label + " " + a + " -> " + b, () => this.act(item.intent, { src: a, dst: b })]);
    this.openMenu(ev, "link " + a + " -> " + b, items);
  }

  // ------------------------------------------------------------------------------------ from Python
  receive(msg) {
    if (msg.type === "film" || msg.type === "more") { this.waiting = false; delete this.root.dataset.waiting; }
    if (msg.type === "film") { this.waiting = false; this.load(msg.film, msg.goto); }
    else if (msg.type === "more") { this.waiting = false; this.more(msg); }
    else if (msg.type === "message") this.say(msg.text, msg.level);
    else if (msg.type === "code") { this.code.style.display = ""; this.code.textContent = msg.text; }
    if (msg.say !== undefined) this.say(msg.say, msg.level);
    if ((msg.type === "film" || msg.type === "more") && this.codeOpen && this.host.live) this.host.send({ type: "replay_code" });
  }
}

// ---------------------------------------------------------------------------------------- hosts
export function mountOffline(root, film) {
  const viewer = new Viewer(root, { live: false, send: () => {} });
  viewer.load(film, 0);
  root.rocketlabViewer = viewer;
  return viewer;
}

function render({ model, el }) {
  const root = document.createElement("div");
  el.appendChild(root);
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
