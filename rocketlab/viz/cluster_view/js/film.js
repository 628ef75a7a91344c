// The film (rocketlab/viz/cluster_view/film.py) folded into node states at any instant, and what the
// trace vocabulary says of each event (its filter group, whether it is a navigation stop).
const KEYFRAME_EVERY = 256;

// ---------------------------------------------------------------------------------------- the film
function emptyNode() {
  return { alive: true, paused: false, role: null, term: 0, leader: null, votes: {}, log: [], starts: [], crossed: [],
    committed: -1, endPos: null, committedPos: null, putOffset: null, acked: {}, sent: {},
    // an application's process (a producer, a consumer) and the name server (film.node_kinds says which)
    sendOk: 0, sendFailed: 0, retried: 0, consumed: 0, queues: null, brokers: {} };
}

function cloneState(s) {
  const nodes = {};
  for (const [id, n] of Object.entries(s.nodes)) {
    nodes[id] = { ...n, votes: { ...n.votes }, log: n.log.slice(), starts: n.starts.slice(), crossed: n.crossed.slice(),
      acked: { ...n.acked }, sent: { ...n.sent }, brokers: { ...n.brokers } };
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
    case "client_send":
      if (n) { if (e.status === "SEND_OK") n.sendOk += 1; else n.retried += 1; }
      break;
    case "client_send_failed": if (n) n.sendFailed += 1; break;
    case "client_consume": if (n) n.consumed += 1; break;
    case "client_rebalance": if (n && !String(e.topic).startsWith("%")) n.queues = (e.targets || []).length; break;
    case "broker_registered": if (n) n.brokers[e.broker_addr] = [e.broker_name, e.broker_id]; break;
    case "broker_unregistered": case "broker_expired": if (n) delete n.brokers[e.broker_addr]; break;
    default: break;
  }
}

export class Film {
  constructor(data) {
    this.data = data;
    this.faults = data.faults || {};
    this.effects = this.faults.effects || {};
    this.view = data.view || { groups: [], kinds: {}, stops: [] };
    this.nodes = data.nodes;
    this.events = [];
    this.flights = [];
    this.flightById = new Map();
    this.talked = new Set();  // "a>b": a sent b a message (an applications film draws only these links)
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
        this.talked.add(e.src + ">" + e.dst);
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

// the vocabulary (film.view, from rocketlab.trace.schema): an event's filter group, whether it is a stop
export function groupOf(view, e) { return (view.kinds && view.kinds[e.kind]) || "other"; }

export function isStop(stop, e) {
  if (e.kind !== stop.kind) return false;
  return Object.entries(stop.when || {}).every(([field, values]) => values.includes(e[field]));
}
