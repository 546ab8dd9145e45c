// Statistics over the selected range: `framewise summarize` restricted to those rows, shown
// as the analysis computed them (milliseconds), never recomputed. A null is "—" with its
// reason. Clicking a scope, pass or counter opens its per-frame series (series.js).

import { DASH, cell, fill, fmtCount, fmtMs, fmtPct, h, plural, table } from "./api.js";
import { dataTable, keyOf } from "./tables.js";

export const QUANTIZATION_NOTE =
  "A single GPU frame's times may be quantized by the device's timestamp resolution; " +
  "aggregates over many frames are the honest reading.";

const FRAME_STATS = ["count", "avg", "min", "p01", "p50", "p90", "p95", "p99", "p999", "max"];
/** How a statistic's key is printed: `p999` is the 99.9th percentile. */
const LABELS = { p01: "p1", p999: "p99.9", low_1pct_fps: "1% low", low_01pct_fps: "0.1% low", jank_ratio: "jank", spike_ratio: "spike" };
/** The order the page prints the frame's statistics in (the null reasons' list follows it). */
const NOTE_ORDER = [...FRAME_STATS, "fps", "low_1pct_fps", "low_01pct_fps", "class", "jank_ratio", "spike_ratio"];
const label = (key) => LABELS[key] ?? key;
const TIMED_COLUMNS = ["p50", "p95", "max", "total", "self"];

/** Renders /api/stats into `root`; `onPick(kind, name)` opens a series. */
export function renderStats(root, stats, onPick) {
  const frame = stats.frame;
  const reasons = { ...(frame.null_reasons ?? {}) };
  const rows = stats.range.to - stats.range.from;
  const rangeText = `${rows === 1 ? `row ${stats.range.from}` : `rows ${stats.range.from}–${stats.range.to - 1}`} (${plural(rows, "row", "rows")}, ` +
    `${plural(frame.count, "frame", "frames")} with a period, paused excluded)`;
  const frameRow = (label, block, id) =>
    h(
      "tr",
      { id },
      h("th", {}, label),
      FRAME_STATS.map((key) =>
        key === "count"
          ? cell(fmtCount(block[key]))
          : cell(fmtMs(block[key]), { reason: block.null_reasons?.[key], id: id === "stat-frame" ? `stat-frame-${key}` : null }),
      ),
    );
  const lows = h(
    "p",
    { class: "lows", id: "stat-lows" },
    h("span", {}, "fps ", h("b", { id: "stat-fps" }, fmtFps(frame.fps))),
    h("span", { title: reasons.low_1pct_fps }, "1% low ", h("b", { id: "stat-low1" }, fmtFps(frame.low_1pct_fps))),
    h("span", { title: reasons.low_01pct_fps }, "0.1% low ", h("b", { id: "stat-low01" }, fmtFps(frame.low_01pct_fps))),
    h(
      "span",
      { class: `class class-${frame.class ?? "none"}`, id: "stat-class", title: "a label, not a verdict" },
      frame.class ?? DASH,
    ),
    h("span", { class: "muted" }, `jank ${fmtPct(frame.jank_ratio)} · spike ${fmtPct(frame.spike_ratio)}`),
  );
  // In the order the page prints them, by the names it prints (p1, p99.9, 1% low), never the JSON keys.
  const order = (key) => (NOTE_ORDER.includes(key) ? NOTE_ORDER.indexOf(key) : NOTE_ORDER.length);
  const nullNotes = Object.entries(reasons)
    .sort(([a], [b]) => order(a) - order(b))
    .map(([key, reason]) => h("li", { dataset: { key } }, `${label(key)}: ${DASH} ${reason}`));
  fill(
    root,
    h("h2", {}, "Statistics ", h("span", { class: "muted", id: "stats-range" }, rangeText)),
    h("p", { class: "note", id: "quant-note" }, QUANTIZATION_NOTE),
    table(
      ["", ...FRAME_STATS.map(label)],
      [frameRow("frame (period)", frame, "stat-frame"), frameRow("work", stats.work, "stat-work")],
      { id: "frame-table" },
      { numericFrom: 1 },
    ),
    lows,
    nullNotes.length ? h("ul", { class: "null-reasons" }, nullNotes) : null,
    h("p", { class: "muted small" }, stats.methods?.percentile ?? "", " · ", stats.methods?.low_fps ?? ""),
    timedTable("Scopes (CPU, per-frame inclusive totals)", "scope", stats.scopes, onPick),
    timedTable("GPU passes (per-frame totals, as measured)", "pass", stats.passes, onPick),
    counterTable(stats.counters, onPick),
  );
}

/** `crates/game/src/render/mod.rs:42` → `mod.rs:42` (the full site is the cell's title). */
function shortSite(site) {
  return site.split(/[\\/]/).pop();
}

function fmtFps(fps) {
  return fps === null || fps === undefined ? DASH : `${fps.toFixed(1)}`;
}

function timedTable(title, kind, block, onPick) {
  const entries = Object.entries(block ?? {});
  if (entries.length === 0) return h("p", { class: "muted" }, `${title}: none recorded in this range.`);
  const ms = (key) => ({ label: key, numeric: true, key: ([, stat]) => keyOf(stat[key]), cell: ([, stat]) => cell(fmtMs(stat[key]), { reason: stat.null_reasons?.[key] }) });
  const count = (key, label) => ({ label, numeric: true, key: ([, stat]) => keyOf(stat[key]), cell: ([, stat]) => cell(fmtCount(stat[key])) });
  const columns = [
    {
      label: "name",
      key: ([name]) => name,
      cell: ([name, stat]) =>
        h(
          "td",
          { class: "name" },
          name,
          stat.sites?.length ? h("span", { class: "site", title: stat.sites.join("\n") }, ` ${stat.sites.map(shortSite).join(", ")}`) : null,
        ),
    },
    ...TIMED_COLUMNS.map(ms),
    count("calls", "calls"),
    count("count", "frames"),
  ];
  return dataTable({
    id: `${kind}-table`,
    title,
    columns,
    items: entries,
    name: ([name]) => name,
    // Largest total first: where the time went.
    initial: { column: 1 + TIMED_COLUMNS.indexOf("total"), descending: true },
    row: ([name], cells) =>
      h("tr", { class: "pick", dataset: { kind, name }, title: `${name}: click for its value per frame`, onclick: () => onPick(kind, name) }, cells),
  });
}

/**
 * Counters in two tables: sums (summed over frames: the total, and per frame) and gauges (a
 * level sampled each frame: a sum over frames means nothing, so a gauge shows its level's
 * statistics only).
 */
function counterTable(block, onPick) {
  const entries = Object.entries(block ?? {});
  if (entries.length === 0) return h("p", { class: "muted" }, "Counters: none recorded in this range.");
  const kindTable = (title, id, kind, fields) => {
    const items = entries.filter(([, stat]) => (kind === "gauge") === (stat.kind === "gauge"));
    if (items.length === 0) return null;
    const columns = [
      { label: "name", key: ([name]) => name, cell: ([name]) => h("td", { class: "name" }, name) },
      ...fields.map(([key, heading]) => ({
        label: heading,
        numeric: true,
        key: ([, stat]) => keyOf(stat[key]),
        cell: ([, stat]) => cell(fmtCount(stat[key]), { reason: stat.null_reasons?.[key] }),
      })),
    ];
    return dataTable({
      id,
      title,
      columns,
      items,
      name: ([name]) => name,
      // Natural name order (counter_2 before counter_10) until a header is clicked.
      initial: { column: 0, descending: false },
      row: ([name], cells) =>
        h("tr", { class: "pick", dataset: { kind: "counter", name }, title: `${name}: click for its value per frame`, onclick: () => onPick("counter", name) }, cells),
    });
  };
  return [
    kindTable("Counters (exact, summed per frame)", "counter-table", "sum", [
      ["sum", "total"],
      ["avg", "avg/frame"],
      ["min", "min"],
      ["p50", "p50"],
      ["p99", "p99"],
      ["max", "max"],
    ]),
    kindTable("Gauges (exact, the level each frame)", "gauge-table", "gauge", [
      ["avg", "avg"],
      ["min", "min"],
      ["p50", "p50"],
      ["p99", "p99"],
      ["max", "max"],
      ["last", "last"],
    ]),
  ];
}
