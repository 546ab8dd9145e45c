// The Issues panel: the game's incident log folded by footprint (`/api/issues`, the JSON of
// `framewise issues`), shown when the capture sits in a project with `.framewise/`. Each
// issue: its glyph and label, how often, when last, how bad at worst, the situation as
// chips, the fixes recorded against it, and the occurrences this capture recorded — a
// click selects that frame.

import { ago } from "./ago.js";
import { DASH, fill, fmtCount, h, plural } from "./api.js";

function worst(issue) {
  const w = issue.worst;
  if (!w) return DASH;
  return w.unit === "ms" ? `${w.value.toFixed(1)} ms` : `${w.value.toFixed(3)} ${w.unit}`;
}

/**
 * Draws the panel into `element` from the issues document `doc`. `rowOfIndex` maps a frame
 * index to its row in this capture; `onSelect(row)` selects a frame.
 */
export function renderIssues(element, doc, rowOfIndex, onSelect) {
  const issues = doc.issues;
  const skipped = doc.ledger.malformed + doc.ledger.unknown_type + (doc.ledger.torn_last_line ? 1 : 0);
  const head = h(
    "h2",
    {},
    "Issues ",
    h("span", { class: "muted" }, `${issues.length} from ${plural(doc.incidents, "incident", "incidents")} in ${doc.ledger.dir}`),
  );
  const notes = [];
  if (doc.automated_left_out > 0) notes.push(`${fmtCount(doc.automated_left_out)} automated (bench, CI) left out`);
  if (skipped > 0) notes.push(`${fmtCount(skipped)} unreadable lines skipped`);
  const rows = issues.map((issue) => {
    const here = (issue.occurrences ?? [])
      .map((o) => ({ o, row: rowOfIndex.get(o.frame) }))
      .filter(({ row }) => row !== undefined);
    return h(
      "li",
      { class: "issue", id: `issue-${issue.id}`, dataset: { id: issue.id, count: String(issue.count) } },
      h(
        "div",
        { class: "issue-head" },
        h("span", { class: "glyph" }, issue.glyph),
        h("b", { title: issue.key }, issue.label),
        h("span", { class: "count" }, `×${fmtCount(issue.count)}`),
        h("span", { class: "muted", title: `last ${issue.last} · first ${issue.first}` }, `last ${ago(issue.last_ago_ms) ?? DASH}`),
        h("span", { class: "muted" }, `worst ${worst(issue)}`),
        h("code", { class: "muted small" }, issue.id),
      ),
      issue.situation.length
        ? h("div", { class: "chips" }, issue.situation.map(([k, v]) => h("span", { class: "chip", title: "situation facet" }, `${k}=${v}`)))
        : null,
      issue.last_guess
        ? h("div", { class: "evidence small", title: issue.last_guess.evidence }, h("b", {}, issue.last_guess.guess), ` (${issue.last_guess.confidence}) · ${issue.last_guess.evidence}`)
        : null,
      h(
        "div",
        { class: "fixes small" },
        issue.fixes.length
          ? issue.fixes.map((f) => h("div", { class: "fix" }, `fix ${f.at.slice(0, 10)}: ${f.title}`, f.commit ? h("code", {}, ` ${f.commit}`) : null))
          : h("span", { class: "muted" }, `no fix recorded · framewise fix --footprints ${issue.id} --title "…"`),
      ),
      here.length
        ? h(
            "div",
            { class: "here small" },
            "in this capture: ",
            here.map(({ o, row }) =>
              h("button", { class: "occurrence", type: "button", title: `${o.at}${o.guess ? ` · ${o.guess}` : ""}`, dataset: { row: String(row), frame: String(o.frame) }, onclick: () => onSelect(row) }, `frame ${o.frame}`),
            ),
          )
        : null,
    );
  });
  fill(
    element,
    head,
    notes.length ? h("p", { class: "muted small" }, notes.join(" · ")) : null,
    rows.length ? h("ul", { class: "issues scroll" }, rows) : h("p", {}, "No incidents recorded yet."),
  );
  element.dataset.count = String(issues.length);
}
