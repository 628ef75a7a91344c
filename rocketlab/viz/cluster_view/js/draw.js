// SVG and HTML helpers and the ring's geometry (no state of the viewer's own).
const SVGNS = "http://www.w3.org/2000/svg";
export const TERM_COLORS = ["#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb", "#fcbba1", "#d9d9d9", "#f7b6d2", "#dbdb8d",
  "#9edae5", "#e7cb94"];

export function svg(tag, attrs, parent) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

export function html(tag, attrs, parent, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

// a message's class by shape as well as colour (the second cue): vote diamond, heartbeat circle, push
// square, client triangle, HA square outline, transfer triangle outline, an application's (app) triangle
// pointing down, the name server's (route) ring
export function messageMark(x, y, cls, color, parent) {
  const attrs = { class: "rl-msg rl-msg-" + cls, fill: color };
  if (cls === "route") return svg("circle", { ...attrs, cx: x, cy: y, r: 5, fill: "none", style: "stroke: " + color + "; stroke-width: 2.5" }, parent);
  if (cls === "app") return svg("path", { ...attrs, d: `M${x},${y + 6}L${x + 6},${y - 5}L${x - 6},${y - 5}Z` }, parent);
  if (cls === "heartbeat" || cls === "other") return svg("circle", { ...attrs, cx: x, cy: y, r: 5 }, parent);
  if (cls === "push") return svg("rect", { ...attrs, x: x - 4.5, y: y - 4.5, width: 9, height: 9 }, parent);
  if (cls === "ha") return svg("rect", { ...attrs, x: x - 4.5, y: y - 4.5, width: 9, height: 9, fill: "none", style: "stroke: " + color }, parent);
  if (cls === "vote") return svg("path", { ...attrs, d: `M${x},${y - 6}L${x + 6},${y}L${x},${y + 6}L${x - 6},${y}Z` }, parent);
  const tri = `M${x},${y - 6}L${x + 6},${y + 5}L${x - 6},${y + 5}Z`;
  if (cls === "transfer") return svg("path", { ...attrs, d: tri, fill: "none", style: "stroke: " + color }, parent);
  return svg("path", { ...attrs, d: tri }, parent);
}

export function ringPositions(ids, cx, cy, r) {
  const pos = {};
  if (ids.length === 1) { pos[ids[0]] = [cx, cy]; return pos; }
  ids.forEach((id, i) => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / ids.length;
    pos[id] = [cx + r * Math.cos(a), cy + r * Math.sin(a)];
  });
  return pos;
}

export function linkOpen(s, a, b) {
  if (s.cuts.has(a + ">" + b)) return false;
  if (!s.partition) return true;
  const group = (id) => { const i = s.partition.findIndex((g) => g.includes(id)); return i < 0 ? -1 : i; };
  return group(a) === group(b);
}

export function lanePoints(pos, a, b, R) {
  const [x1, y1] = pos[a]; const [x2, y2] = pos[b];
  const dx = x2 - x1; const dy = y2 - y1; const len = Math.hypot(dx, dy) || 1;
  const ux = dx / len; const uy = dy / len; const off = 5;  // each direction on its own lane
  return [x1 + ux * R - uy * off, y1 + uy * R + ux * off, x2 - ux * R - uy * off, y2 - uy * R + ux * off];
}

// a node's body by what it is: a broker (or DLedger member, controller) a circle, the name server a wide
// rounded box, an application's process (producer, consumer) a square: the shape says it is no broker
export function nodeBody(kind, x, y, R, attrs, parent) {
  if (kind === "namesrv") return svg("rect", { ...attrs, x: x - R * 1.25, y: y - R * 0.8, width: R * 2.5, height: R * 1.6, rx: 8 }, parent);
  if (kind === "producer" || kind === "consumer") return svg("rect", { ...attrs, x: x - R * 0.85, y: y - R * 0.85, width: R * 1.7, height: R * 1.7, rx: 2 }, parent);
  return svg("circle", { ...attrs, cx: x, cy: y, r: R }, parent);
}
