// Comparison: frame A (pinned) against frame B (the selection), and, with `--compare OTHER`,
// the two captures' `framewise diff`. Deltas are coloured by direction only: green where the
// change is better, red where it is worse; the size of a change is never a colour.

import { DASH, fill, fmtCount, fmtMs, fmtNs, h, table } from "./api.js";

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

/** Renders /api/diff (this capture as base, OTHER as candidate): changed rows first. */
export function renderDiff(root, diff, other) {
  const changed = diff.rows.filter((row) => row.change === "better" || row.change === "worse");
  const oneSided = diff.rows.filter((row) => row.change === "only_base" || row.change === "only_candidate").length;
  const shown = changed.slice(0, 200);
  const rows = shown.map((row) => {
    const fmt = /^(frame|work)\.(fps|low_|count|jank|spike)|\.(calls|count)$|^counter\./.test(row.metric) ? fmtCount : fmtMs;
    return h(
      "tr",
      { dataset: { metric: row.metric } },
      h("td", { class: "name" }, row.metric),
      h("td", { class: "num" }, fmt(row.base)),
      h("td", { class: "num" }, fmt(row.cand)),
      h("td", { class: `num ${row.change}`, title: row.direction }, row.delta === null ? DASH : signed(fmt(row.delta), row.delta)),
      h("td", { class: "num" }, row.pct === null ? DASH : `${row.pct > 0 ? "+" : ""}${row.pct.toFixed(1)}%`),
    );
  });
  fill(
    root,
    h("h2", {}, "Compare captures ", h("span", { class: "muted" }, `base = this capture · candidate = ${other.file}`)),
    diff.timing_comparable === false
      ? h("p", { class: "warn" }, "Timing regimes differ: timing rows are shown but are not a change (counters still compare).")
      : null,
    h(
      "p",
      { class: "muted small" },
      `${changed.length} metrics changed · ${diff.rows.length - changed.length - oneSided} unchanged · ${oneSided} on one side only` +
        (changed.length > shown.length ? ` · first ${shown.length} shown` : "") +
        " · a diff reports; it has no noise floor (use framewise gate for a verdict)",
    ),
    h("div", { class: "scroll" }, table(["metric", "base", "candidate", "delta", "%"], rows, { id: "diff-table", class: "data" }, { numericFrom: 1 })),
  );
  root.dataset.rows = String(changed.length);
}
