// Comparison: frame A (pinned) against frame B (the selection), and, with `--compare OTHER`,
// the two captures' comparison (/api/comparison: the gate's verdict first, then every metric
// of `framewise diff` ranked by significance). Deltas are coloured by direction only: green where the
// change is better, red where it is worse; the size of a change is never a colour.

import { DASH, fill, fmtCount, fmtMs, fmtNs, h, plural, table } from "./api.js";
import { dataTable } from "./tables.js";

/** The colour class of a delta under its direction; none for zero or unknown. */
function deltaClass(delta, direction) {
  if (delta === null || delta === undefined || delta === 0) return null;
  const lowerIsBetter = direction !== "higher-is-better" && direction !== "higher_is_better";
  return (delta < 0) === lowerIsBetter ? "better" : "worse";
}

function signed(text, delta) {
  return delta > 0 ? `+${text}` : text;
}

/** Renders /api/compare (or the prompt to pin a frame) into `root`. */
export function renderCompare(root, { pinned, selected, compare, onPin, onUnpin }) {
  const controls = h(
    "p",
    { class: "controls" },
    h("button", { id: "pin", type: "button", onclick: onPin }, `Pin row ${selected ?? DASH} as A`),
    pinned !== null ? h("button", { id: "unpin", type: "button", onclick: onUnpin }, "Unpin") : null,
    h("span", { class: "muted" }, pinned === null ? " Pin a frame (key P), then select another to compare." : ` A = row ${pinned}; B = the selection.`),
  );
  if (!compare) {
    fill(root, h("h2", {}, "Compare frames"), controls);
    root.dataset.rows = "0";
    return;
  }
  const rows = compare.rows.map((row) => {
    const fmt = row.kind === "counter" ? fmtCount : fmtNs;
    const cls = deltaClass(row.delta, row.direction);
    return h(
      "tr",
      { dataset: { kind: row.kind, name: row.name } },
      h("td", {}, row.kind),
      h("td", { class: "name" }, row.name),
      h("td", { class: "num" }, fmt(row.a)),
      h("td", { class: "num" }, fmt(row.b)),
      h("td", { class: ["num", cls].filter(Boolean).join(" "), title: row.direction }, row.delta === null ? DASH : signed(fmt(row.delta), row.delta)),
    );
  });
  fill(
    root,
    h("h2", {}, "Compare frames ", h("span", { class: "muted" }, `A = frame ${compare.a.index} (row ${compare.a.row}) · B = frame ${compare.b.index} (row ${compare.b.row})`)),
    controls,
    h("div", { class: "scroll" }, table(["", "name", "A", "B", "B − A"], rows, { id: "compare-table", class: "data" }, { numericFrom: 2 })),
  );
  root.dataset.rows = String(compare.rows.length);
}

const VERDICT_WORDS = { pass: "PASS", fail: "FAIL", inconclusive: "INCONCLUSIVE", incomparable: "INCOMPARABLE", error: "ERROR" };

/** A value in its metric's unit. */
function fmtUnit(unit, value) {
  if (value === null || value === undefined) return DASH;
  switch (unit) {
    case "ms": return fmtMs(value);
    case "fps": return `${value.toFixed(1)} fps`;
    case "ratio": return `${(value * 100).toFixed(2)}%`;
    default: return fmtCount(value);
  }
}

/** A metric path that breaks only after its dots, never inside a name. */
function metricName(metric) {
  const parts = metric.split(".");
  return parts.flatMap((part, i) => [h("span", { class: "seg" }, i < parts.length - 1 ? `${part}.` : part), i < parts.length - 1 ? h("wbr", {}) : null]);
}

function pctText(row) {
  if (row.per_frame_pct !== null && row.per_frame_pct !== undefined) return `${row.per_frame_pct > 0 ? "+" : ""}${row.per_frame_pct.toFixed(1)}%/frame`;
  return row.pct === null || row.pct === undefined ? DASH : `${row.pct > 0 ? "+" : ""}${row.pct.toFixed(1)}%`;
}

function significanceText(row) {
  if (row.significance === null || row.significance === undefined) return DASH;
  return row.basis === "spread" ? `${row.significance.toFixed(2)}×spread` : `${(row.significance * 100).toFixed(1)}%`;
}

/** The cells of one ranked row: metric, base, candidate, delta, %, significance. */
function rowCells(row) {
  const cls = row.coloured ? row.change : null;
  const title = row.not_judged ?? (row.basis === "spread" ? `spread ${fmtUnit(row.unit, row.spread)} (p95 − p50, pooled)` : row.direction);
  return [
    h("td", { class: "metric" }, metricName(row.metric)),
    h("td", { class: "num" }, fmtUnit(row.unit, row.base)),
    h("td", { class: "num" }, fmtUnit(row.unit, row.cand)),
    h("td", { class: ["num", cls, row.not_judged ? "not-judged" : null].filter(Boolean).join(" "), title }, row.delta === null ? DASH : signed(fmtUnit(row.unit, row.delta), row.delta)),
    h("td", { class: ["num", cls].filter(Boolean).join(" "), title }, pctText(row)),
  ];
}

/**
 * Renders /api/comparison (this capture as base, OTHER as candidate): `framewise gate`'s
 * verdict and the headline metrics first, then every row ranked by significance (sortable,
 * filterable); a row is coloured only when its change is judged (never a run-length artefact).
 */
export function renderComparison(root, doc) {
  const verdict = doc.verdict;
  const word = verdict ? VERDICT_WORDS[verdict.verdict] ?? verdict.verdict : "NO VERDICT";
  const tolerances = verdict ? verdict.checks.map((c) => `${c.metric} +${(c.tolerance * 100).toFixed(0)}%`).join(", ") : "";
  const rankOf = new Map(doc.rows.map((row, i) => [row.metric, i + 1]));
  const headline = doc.headline.map((row) => h("tr", { dataset: { metric: row.metric } }, rowCells(row)));
  const c = doc.counts;
  fill(
    root,
    h("h2", {}, "Compare captures ", h("span", { class: "muted" }, `base = this capture (${plural(doc.base.frames_judged, "frame", "frames")} judged) · candidate = ${doc.cand.file} (${fmtCount(doc.cand.frames_judged)})`)),
    h(
      "div",
      { id: "verdict", class: `verdict verdict-${verdict?.verdict ?? "error"}`, dataset: { verdict: verdict?.verdict ?? "" } },
      h("strong", {}, word),
      h("span", { class: "muted small" }, verdict ? ` framewise gate, default tolerances (${tolerances}) · exit ${verdict.exit_code}` : ` ${doc.gate_error ?? ""}`),
      verdict?.reasons.length ? h("ul", {}, verdict.reasons.map((reason) => h("li", {}, reason))) : null,
    ),
    doc.timing_comparable === false ? h("p", { class: "warn" }, "Timing regimes differ: timing rows are listed but not judged (counters still compare).") : null,
    doc.frame_times_comparable === false ? h("p", { class: "warn" }, "Frame times differ in kind (a .litecap's are work times, the other's periods): frame.* rows are listed but not judged (work.* still compares).") : null,
    h("table", { id: "headline-table", class: "data" }, h("thead", {}, h("tr", {}, ["metric", "base", "candidate", "delta", "%"].map((label, i) => h("th", { class: i ? "num" : null }, label)))), h("tbody", {}, headline)),
    h(
      "p",
      { class: "muted small", id: "comparison-counts" },
      `${fmtCount(c.judged)} changes judged · ${fmtCount(c.not_judged)} not judged (run-length totals, other regimes) · ${fmtCount(c.one_sided)} on one side only · ${fmtCount(c.unchanged)} unchanged · ranked by |Δ| against the metric's spread, else by |%|`,
    ),
    h(
      "div",
      { class: "scroll", id: "comparison-rows" },
      dataTable({
        id: "comparison-table",
        title: `Every metric (${fmtCount(doc.rows.length)})`,
        columns: [
          { label: "#", numeric: true, key: (row) => rankOf.get(row.metric), cell: (row) => h("td", { class: "num muted" }, String(rankOf.get(row.metric))) },
          { label: "metric", key: (row) => row.metric, cell: (row) => rowCells(row)[0] },
          { label: "base", numeric: true, key: (row) => row.base, cell: (row) => rowCells(row)[1] },
          { label: "candidate", numeric: true, key: (row) => row.cand, cell: (row) => rowCells(row)[2] },
          { label: "delta", numeric: true, key: (row) => row.delta, cell: (row) => rowCells(row)[3] },
          { label: "%", numeric: true, key: (row) => row.per_frame_pct ?? row.pct, cell: (row) => rowCells(row)[4] },
          { label: "significance", numeric: true, key: (row) => row.significance, cell: (row) => h("td", { class: "num", title: row.basis }, significanceText(row)) },
        ],
        items: doc.rows,
        name: (row) => row.metric,
        initial: { column: 0, descending: false },
        row: (row, cells) => h("tr", { dataset: { metric: row.metric, change: row.change, coloured: String(row.coloured) }, class: row.not_judged ? "not-judged" : null }, cells),
      }),
    ),
  );
  root.dataset.rows = String(doc.rows.length);
}
