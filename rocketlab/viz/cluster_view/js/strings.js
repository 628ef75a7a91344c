// Every word the viewer shows, in one table per language: STRINGS is English (the source), each
// translation a table of its own module with the same keys (js/strings_zh_CN.js); setLanguage picks one
// (the language the kernel passes in the film's "lang"), a key it lacks shows the English. A
// value may hold {name} places that t() fills. Filter groups and navigation stops come from the trace
// vocabulary (rocketlab.trace.schema.VIEW_GROUPS, VIEW_STOPS): those without a row here show their own name.
export const STRINGS = {
  play: "play", pause: "pause", playTitle: "play / pause", playLabel: "play or pause",
  step: "step \u25b6", stepTitle: "go to the next event shown (\u2192)", stepLabel: "step to the next event",
  back: "\u25c0 back", backTitle: "go back to the previous event shown (\u2190)", backLabel: "step back to the previous event",
  speed: "speed", speedLabel: "playback speed", timeLabel: "virtual time (ms)",
  clock: "t = {t} ms of {end}",
  clientPut: "client put", replayCode: "replay code", network: "network", networkLabel: "network mode",
  latencyLabel: "latency", latencyTitle: "constant:MS, uniform:LO:HI or exponential:MEAN",
  sidesLabel: "partition sides, separated by |", sidesTitle: "the sides of a partition: node ids, sides separated by |",
  ringLabel: "the cluster: nodes and links (Tab to a node or link, Enter for its actions)",
  viewerLabel: "cluster viewer: \u2190 \u2192 step, \u2191 \u2193 previous / next {jump}, Home / End, Escape closes a menu",
  live: " (live)", recorded: " (recorded)", seed: "seed {seed}", scenario: "scenario {scenario}",
  jumpTo: "jump to", withKey: "{what} [{key}]", jumpLabel: "what the previous / next buttons and the \u2191 \u2193 keys jump to",
  prev: "\u25c0 previous", next: "next \u25b6", prevTitle: "the previous {what} (\u2191 or Shift+{key})",
  nextTitle: "the next {what} (\u2193 or {key})",
  show: "show", showLabel: "which events the list shows and step stops at",
  bookmarks: "stops", bookmarkTitle: "{name}: {text}", bookmarkAt: "{name} (t = {t} ms): {text}",
  noMore: "no {what} after t = {t} ms", noneBefore: "no {what} before t = {t} ms",
  noEvent: "no event yet", noLog: "no log entries yet", index: "index", endPos: "end pos {pos}",
  crossedHere: "entry {index} of term {term} was cut here",
  committedPos: "committed pos {pos}", node: "node", role: "role", maxOffset: "max offset",
  ackedBySlaves: "acked by slaves (lag)", noPut: "no put yet", down: "down", up: "up", term: "term {term}",
  paused: " (paused)", leaderOf: "leader {leader}", voted: "voted {node}", maxOffsetLine: "max offset {offset}",
  acked: "{slave} acked {offset}", lag: ", lag {lag} B",
  violations: "\u26a0 {n} invariant violation(s) so far", failedAt: "\u26a0 test failed at t = {t} ms",
  networkShown: "network: {network}", close: "close", putVia: "client put through this node",
  nodeMenu: "{node} at t = {t} ms", linkMenu: "link {src} -> {dst}", linkLabel: "link {src} to {dst}, {state}",
  "kind:namesrv": "name server", "kind:producer": "producer", "kind:consumer": "consumer",
  sentOk: "{n} sends acked", sendTrouble: "{retried} attempts failed, {failed} sends lost",
  consumedLine: "{n} consumed", queuesLine: ", {n} queues", brokersLine: "{n} brokers registered",
  mastersLine: "masters {list}", kindHead: "process", appHead: "what it did",
  open: "open", cut: "cut", cutTitle: " (cut)", timerLeft: "{what}: {ms} ms left", started: "the viewer could not start: {error}",
  // what each stop and filter group is called (keys: the vocabulary's names)
  "stop:bookmark": "named stop", "stop:fault": "fault", "stop:vote round": "vote round", "stop:leader change": "leader change",
  "stop:commit": "commit", "stop:violation": "violation",
  "group:lost messages": "lost messages", "group:ha": "HA", "group:routes": "name server routes",
  "group:retries": "retries and delays", "group:client": "clients",
  "group:faults": "faults", "group:violations": "violations", "group:roles": "roles", "group:elections": "elections",
  "group:heartbeats": "heartbeats", "group:replication": "replication", "group:commits": "commits",
  "group:network": "network", "group:other": "other",
  // the network modes; the fault actions' labels come from rocketlab.trace.faults (node, link and bar menus)
  // and are their own English words (named("action", label)): only another language's table has rows for them
  "network:reliable": "reliable", "network:unreliable": "unreliable", "network:reordering": "reordering",
  "network:long-delays": "long-delays",
};

// the key that jumps to the next stop of a kind (Shift: the previous one); a stop without a key is
// reached with the jump menu and the arrow keys
export const STOP_KEYS = { bookmark: "b", fault: "f", "vote round": "v", "leader change": "l", commit: "c", violation: "x" };

import { STRINGS_ZH_CN } from "./strings_zh_CN.js";

export const TABLES = { en: STRINGS, "zh-CN": STRINGS_ZH_CN };
let current = STRINGS;

// the words of lang from now on (a tag the viewer has no table for: English); returns the tag used
export function setLanguage(lang) {
  const tag = TABLES[lang] ? lang : "en";
  current = TABLES[tag];
  return tag;
}

function word(key) {
  if (current[key] !== undefined) return current[key];
  return STRINGS[key];
}

export function t(key, vars) {
  const text = word(key) !== undefined ? word(key) : key;
  return vars ? text.replace(/\{(\w+)\}/g, (m, name) => (vars[name] !== undefined ? String(vars[name]) : m)) : text;
}

export function named(prefix, name) {  // a vocabulary name in words: its row in STRINGS, else the name itself
  const key = prefix + ":" + name;
  return word(key) !== undefined ? word(key) : name;
}
