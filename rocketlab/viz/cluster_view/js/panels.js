// Beside and below the ring: the selected event and why it happened, the event list (every item
// focusable), and the logs (DLedger's entries per member, or classic HA's offsets).
import { html, TERM_COLORS } from "./draw.js";
import { t } from "./strings.js";

export function drawSide(viewer, s) {
  const f = viewer.film;
  const end = s.index;
  const shown = [];
  const current = viewer.current(s.index);
  for (let i = end - 1; i >= 0 && shown.length < 12; i--) if (viewer.visible(f.events[i]) || i === current) shown.push(i);
  const sel = current >= 0 ? current : null;
  const e = sel !== null ? f.events[sel] : null;
  viewer.why.textContent = "";
  if (e) {
    html("div", { class: "rl-why-text" }, viewer.why, e.text);
    html("div", { class: "rl-why-reason" }, viewer.why, e.why || "");
  } else {
    html("div", { class: "rl-why-text" }, viewer.why, t("noEvent"));
  }
  const focused = viewer.list.contains(document.activeElement) ? Number(document.activeElement.dataset.index) : null;
  viewer.list.textContent = "";
  for (const i of shown.reverse()) {
    const item = html("li", { class: "rl-event" + (i === sel ? " rl-selected" : "") + (f.events[i].kind === "violation" ? " rl-bad" : ""),
      "data-kind": f.events[i].kind, "data-index": String(i), tabindex: "0" }, viewer.list, f.events[i].text);
    if (i === sel) item.setAttribute("aria-current", "true");
    item.onclick = () => viewer.select(i);
    item.onkeydown = (ev) => {
      if (ev.key !== "Enter" && ev.key !== " ") return;
      ev.preventDefault(); ev.stopPropagation();
      viewer.select(i);
    };
    if (i === focused) item.focus();
  }
}

function drawOffsets(viewer, s) {  // classic HA: no entries or terms, the CommitLog's bytes: the master's end, each slave's ack
  const f = viewer.film;
  const table = html("table", { class: "rl-log rl-offsets" }, viewer.logs);
  const head = html("tr", {}, table);
  ["node", "role", "maxOffset", "ackedBySlaves"].forEach((k) => html("th", {}, head, t(k)));
  for (const id of f.nodes) {
    const n = s.nodes[id];
    const row = html("tr", { "data-node": id }, table);
    html("th", {}, row, id);
    html("td", { class: "rl-log-tail" }, row, !n.alive ? t("down") : (n.role || t("up")));
    html("td", { class: "rl-log-tail" }, row, n.putOffset != null ? String(n.putOffset) : t("noPut"));
    const acks = Object.entries(n.acked).map(([slave, off]) => slave + " " + off +
      (n.putOffset != null ? " (" + Math.max(0, n.putOffset - off) + " B)" : ""));
    html("td", { class: "rl-log-tail" }, row, acks.join(", "));
  }
}

function drawApps(viewer, s, apps) {  // the application's processes: what each sent, consumed, owns
  const table = html("table", { class: "rl-log rl-apps" }, viewer.logs);
  const head = html("tr", {}, table);
  ["node", "kindHead", "appHead"].forEach((k) => html("th", {}, head, t(k)));
  for (const [id, kind] of apps) {
    const n = s.nodes[id];
    const row = html("tr", { "data-node": id, "data-kind": kind }, table);
    html("th", {}, row, id);
    html("td", { class: "rl-log-tail" }, row, t("kind:" + kind) + (n.alive ? "" : " (" + t("down") + ")"));
    const words = kind === "producer" ? [t("sentOk", { n: n.sendOk }), t("sendTrouble", { retried: n.retried, failed: n.sendFailed })]
      : kind === "consumer" ? [t("consumedLine", { n: n.consumed }) + (n.queues != null ? t("queuesLine", { n: n.queues }) : "")]
        : [t("brokersLine", { n: Object.keys(n.brokers).length })];
    html("td", { class: "rl-log-tail" }, row, words.join(", "));
  }
}

export function drawLogs(viewer, s) {
  const f = viewer.film;
  viewer.logs.textContent = "";
  const kinds = f.data.node_kinds || {};
  const apps = f.nodes.filter((id) => kinds[id]).map((id) => [id, kinds[id]]);
  if (apps.length) drawApps(viewer, s, apps);
  const nodes = f.nodes.filter((id) => !kinds[id]);
  let maxIndex = -1;
  for (const id of nodes) maxIndex = Math.max(maxIndex, s.nodes[id].log.length - 1,
    ...s.nodes[id].crossed.map((c) => c[0]));
  if (f.data.system === "master_slave") { drawOffsets(viewer, s); return; }
  if (maxIndex < 0) { html("div", { class: "rl-logs-empty" }, viewer.logs, t("noLog")); return; }
  const width = 30; const first = Math.max(0, maxIndex - width + 1);
  const table = html("table", { class: "rl-log" }, viewer.logs);
  const head = html("tr", {}, table);
  html("th", {}, head, t("index"));
  for (let i = first; i <= maxIndex; i++) html("th", {}, head, String(i));
  html("th", {}, head, "");
  for (const id of nodes) {
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
          html("span", { class: "rl-crossed", title: t("crossedHere", { index: i, term: crossed.get(i) }) },
            cell, String(crossed.get(i)));
        }
      } else if (crossed.has(i)) {
        cell.textContent = String(crossed.get(i));
        cell.classList.add("rl-crossed");
      }
    }
    const tail = [];
    if (n.endPos != null) tail.push(t("endPos", { pos: n.endPos }));
    if (n.committedPos != null) tail.push(t("committedPos", { pos: n.committedPos }));
    html("td", { class: "rl-log-tail" }, row, tail.join(", "));
  }
}
