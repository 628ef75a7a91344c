// The ring: links, messages in flight and nodes at instant T. In the DOM (so in tab order) the nodes come
// before the links' hit lanes; links are drawn first, under everything.
import { svg, messageMark, nodeBody, ringPositions, linkOpen, lanePoints } from "./draw.js";
import { t } from "./strings.js";

function drawFlights(g, f, T, pos, R) {
  const colors = f.data.colors;
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
}

// an application's process and the name server: what they are and what they did, no role or term
function appLines(n, kind) {
  const lines = [t("kind:" + kind) + (n.paused ? t("paused") : "")];
  if (kind === "producer") {
    lines.push(t("sentOk", { n: n.sendOk }));
    if (n.retried || n.sendFailed) lines.push(t("sendTrouble", { retried: n.retried, failed: n.sendFailed }));
  } else if (kind === "consumer") {
    lines.push(t("consumedLine", { n: n.consumed }) + (n.queues != null ? t("queuesLine", { n: n.queues }) : ""));
  } else if (kind === "namesrv") {
    const masters = Object.entries(n.brokers).filter(([, b]) => b[1] === 0).map(([addr]) => addr.split(":")[0]).sort();
    lines.push(t("brokersLine", { n: Object.keys(n.brokers).length }));
    if (masters.length) lines.push(t("mastersLine", { list: masters.join(" ") }));
  }
  return lines;
}

function nodeLines(n, id, role) {
  const lines = [role + (n.paused ? t("paused") : "")];
  if (n.leader && n.alive && n.leader !== id) lines.push(t("leaderOf", { leader: n.leader }));
  const voted = n.votes[n.term];
  if (voted && n.alive) lines.push(t("voted", { node: voted }));
  if (n.putOffset != null) lines.push(t("maxOffsetLine", { offset: n.putOffset }));
  for (const [slave, off] of Object.entries(n.acked)) {
    const lag = n.putOffset != null ? Math.max(0, n.putOffset - off) : null;
    lines.push(t("acked", { slave, offset: off }) + (lag != null ? t("lag", { lag }) : ""));
  }
  return lines;
}

function drawNode(viewer, g, s, T, id, [x, y], geometry) {
  const f = viewer.film; const { R, cx, cy } = geometry;
  const n = s.nodes[id];
  const kind = (f.data.node_kinds || {})[id] || "broker";
  const app = kind !== "broker";
  const role = !n.alive ? "DOWN" : (n.role || "UP");
  const fill = app && n.alive ? (kind === "namesrv" ? "#fff7bc" : "#f0f0f0") : (f.data.colors.roles[role] || "#9467bd");
  const grp = svg("g", { class: "rl-node rl-node-" + kind, "data-node": id, "data-kind": kind, "data-role": role,
    "data-term": String(n.term), "data-alive": n.alive ? "1" : "0", "data-paused": n.paused ? "1" : "0" }, g);
  nodeBody(kind, x, y, R, { fill, class: "rl-node-body" + (n.paused ? " rl-paused" : "") }, grp);
  const timer = n.alive ? f.timerAt(id, T) : null;
  if (timer && timer.what) {
    const total = Math.max(1, timer.end - timer.start);
    const left = Math.max(0, Math.min(1, (timer.end - T) / total));
    const c = 2 * Math.PI * (R + 5);
    svg("circle", { cx: x, cy: y, r: R + 5, class: "rl-timer", "stroke-dasharray": `${c * left} ${c}`,
      transform: `rotate(-90 ${x} ${y})`, "data-left": left.toFixed(3) }, grp);
    svg("title", {}, grp).textContent = t("timerLeft", { what: timer.what, ms: Math.max(0, Math.round(timer.end - T)) });
  }
  svg("text", { x, y: y - 6, class: "rl-node-id" }, grp).textContent = id;
  const termless = app || f.data.system === "master_slave" || (f.data.system === "applications" && !n.term);  // classic HA has no terms: offsets and lag instead
  svg("text", { x, y: y + 10, class: "rl-node-term" }, grp).textContent = !n.alive ? t("down") : termless ? "" : t("term", { term: n.term });
  const lines = app ? appLines(n, kind) : nodeLines(n, id, role).slice(0, f.nodes.length > 8 ? 2 : undefined);
  // the node's words go outward: below the lower nodes, above the upper ones, beside the top one
  let tx = x; let ty = y > cy ? y + R + 18 : y - R - 12 - 13 * (lines.length - 1); let anchor = "middle";
  if (f.nodes.length > 1 && y < cy && Math.abs(x - cx) < R) { tx = x + R + 12; ty = y - 6 * (lines.length - 1) + 4; anchor = "start"; }
  lines.forEach((text, i) => {
    svg("text", { x: tx, y: ty + 13 * i, class: "rl-node-info", "text-anchor": anchor }, grp).textContent = text;
  });
  grp.onclick = (ev) => viewer.nodeMenu(ev, id, n);
  viewer.focusable(grp, id + ", " + (app ? t("kind:" + kind) + (n.alive ? "" : ", " + t("down")) : role.toLowerCase()) +
    (termless || !n.alive ? "" : ", " + t("term", { term: n.term })) + (n.paused ? t("paused") : ""));
}

export function drawRing(viewer, s, T) {
  const f = viewer.film; const g = viewer.svg;
  if (g.contains(document.activeElement)) viewer.refocus = viewer.focusKey;  // redrawn: keep the keyboard's place
  while (g.firstChild) g.removeChild(g.firstChild);
  const many = f.nodes.length > 8;  // an applications cluster (13 processes): smaller nodes on a wider ring
  const cx = 330; const cy = 222; const R = many ? 24 : 38;
  const pos = ringPositions(f.nodes, cx, cy, many ? 180 : f.nodes.length > 6 ? 172 : 158);
  const lanes = [];
  const sparse = Object.keys(f.data.node_kinds || {}).length > 0;  // brokers of other groups never talk: no link
  for (const a of f.nodes) for (const b of f.nodes) {
    if (a === b || (sparse && !f.talked.has(a + ">" + b) && !f.talked.has(b + ">" + a))) continue;
    const [x1, y1, x2, y2] = lanePoints(pos, a, b, R + 6);
    const open = linkOpen(s, a, b);
    svg("line", { x1, y1, x2, y2, class: "rl-link" + (open ? "" : " rl-cut"), "data-src": a, "data-dst": b }, g);
    lanes.push([a, b, open, { x1, y1, x2, y2 }]);
  }
  drawFlights(g, f, T, pos, R);
  for (const id of f.nodes) drawNode(viewer, g, s, T, id, pos[id], { R, cx, cy });
  // the links' hit lanes after the nodes: Tab reaches every node before the first link
  for (const [a, b, open, line] of lanes) {
    const hit = svg("line", { ...line, class: "rl-link-hit", "data-src": a, "data-dst": b }, g);
    svg("title", {}, hit).textContent = a + " -> " + b + (open ? "" : t("cutTitle"));
    hit.onclick = (ev) => viewer.linkMenu(ev, a, b, open);
    if (viewer.host.live) viewer.focusable(hit, t("linkLabel", { src: a, dst: b, state: t(open ? "open" : "cut") }));
  }
  if (s.violations) svg("text", { x: 10, y: 430, class: "rl-violation" }, g).textContent = t("violations", { n: s.violations });
  for (const mark of f.data.marks || []) {
    if (T >= mark.t) svg("text", { x: 10, y: 16, class: "rl-violation rl-mark" }, g).textContent = t("failedAt", { t: mark.t });
  }
  if (s.network) svg("text", { x: 650, y: 430, class: "rl-network" }, g).textContent = t("networkShown", { network: s.network });
}
