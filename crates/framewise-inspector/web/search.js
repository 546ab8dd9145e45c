// Search: a scope, pass, counter or mark by name (any part of it, any case) → its
// occurrences, as the analysis ranks them (/api/search): a scope's or pass's single runs
// (frame, thread, start, duration), longest first, with a count of the rest; a counter's
// frames by value; a mark's frames by period. A click on a run (or Enter, for the first
// match's first occurrence) selects its frame and the run in the timeline; a click on a
// frame selects the frame. `/` focuses the box, Esc closes the results.

import { DASH, fill, fmtCount, fmtNs, get, h } from "./api.js";

const LIMIT = 10;
const DEBOUNCE_MS = 120;

export class Search {
  /**
   * `input` is the search box, `results` the box under it; `onJump(row, run)` selects a row
   * and, given a run (`{kind, name, row, thread, depth, start_ns, dur_ns}`), that span.
   */
  constructor(input, results, onJump) {
    this.input = input;
    this.results = results;
    this.onJump = onJump;
    this.seq = 0;
    this.timer = null;
    this.first = null;
    input.addEventListener("input", () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.run().catch((error) => this.fail(error)), DEBOUNCE_MS);
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && this.first !== null) {
        event.preventDefault();
        this.jump(this.first.row, this.first.run);
      } else if (event.key === "Escape") {
        this.close();
        input.blur();
      }
    });
    input.addEventListener("focus", () => {
      if (this.results.childElementCount > 0) this.results.hidden = false;
    });
    document.addEventListener("pointerdown", (event) => {
      if (!this.results.contains(event.target) && event.target !== input) this.close();
    });
  }

  focus() {
    this.input.focus();
    this.input.select();
  }

  close() {
    this.results.hidden = true;
  }

  jump(row, run = null) {
    this.close();
    this.onJump(row, run);
  }

  fail(error) {
    fill(this.results, h("p", { class: "error" }, `Search failed: ${error.message}`));
    this.results.hidden = false;
  }

  async run() {
    const text = this.input.value.trim();
    const seq = ++this.seq;
    if (!text) {
      fill(this.results);
      this.first = null;
      this.close();
      return;
    }
    const found = await get("search", { q: text, limit: LIMIT });
    if (seq !== this.seq) return;
    const top = found.matches[0];
    const run = top?.spans?.longest[0];
    this.first = run ? { row: run.row, run: { kind: top.kind, name: top.name, ...run } } : top?.occurrences[0] ? { row: top.occurrences[0].row, run: null } : null;
    fill(
      this.results,
      found.matches.length === 0
        ? h("p", { class: "muted" }, `Nothing named like “${text}”.`)
        : found.matches.map((match) => this.group(match)),
    );
    this.results.dataset.query = text;
    this.results.dataset.matches = String(found.matches.length);
    this.results.hidden = false;
  }

  group(match) {
    const what = { scope: "scope", pass: "GPU pass", counter: "counter", mark: "mark" }[match.kind] ?? match.kind;
    if (match.spans) return this.runs(match, what);
    const rank = match.kind === "mark" ? "frames by period" : "frames by value";
    return h(
      "section",
      { class: "search-group", dataset: { kind: match.kind, name: match.name } },
      h("h3", {}, h("span", { class: "muted" }, `${what} `), match.name, h("span", { class: "muted small" }, ` · in ${fmtCount(match.frames)} frames · worst ${rank}`)),
      h(
        "ol",
        {},
        match.occurrences.map((o) =>
          h(
            "li",
            {},
            h(
              "button",
              { type: "button", class: "occurrence", dataset: { row: String(o.row) }, onclick: () => this.jump(o.row) },
              h("span", { class: "num" }, value(match.kind, o)),
              ` frame ${o.index} (row ${o.row})`,
              match.kind === "mark" ? ` · at +${fmtNs(o.at_ns)}` : "",
              o.calls > 1 ? ` · ${fmtCount(o.calls)} marks` : "",
            ),
          ),
        ),
      ),
    );
  }

  /** A scope's or pass's runs, longest first, and how many more there are. */
  runs(match, what) {
    const { total, longest, complete, frames_read: read } = match.spans;
    const rest = total - longest.length;
    return h(
      "section",
      { class: "search-group", dataset: { kind: match.kind, name: match.name, total: String(total) } },
      h(
        "h3",
        {},
        h("span", { class: "muted" }, `${what} `),
        match.name,
        h("span", { class: "muted small" }, ` · ${fmtCount(total)} ${total === 1 ? "run" : "runs"} in ${fmtCount(match.frames)} frames · longest first`),
      ),
      complete ? null : h("p", { class: "muted small" }, `The longest in the ${fmtCount(read)} frames with the largest totals (the search stopped there).`),
      h(
        "ol",
        {},
        longest.map((run) =>
          h(
            "li",
            {},
            h(
              "button",
              {
                type: "button",
                class: "occurrence run",
                dataset: { row: String(run.row), thread: run.thread ?? "", startNs: String(run.start_ns), durNs: String(run.dur_ns), depth: String(run.depth) },
                onclick: () => this.jump(run.row, { kind: match.kind, name: match.name, ...run }),
              },
              h("span", { class: "num" }, fmtNs(run.dur_ns)),
              ` frame ${run.index} (row ${run.row}) · ${run.thread ?? "GPU (nominal)"} · +${fmtNs(run.start_ns)}${run.depth > 0 ? ` · depth ${run.depth}` : ""}`,
            ),
          ),
        ),
      ),
      rest > 0 ? h("p", { class: "muted small rest" }, `and ${fmtCount(rest)} more ${rest === 1 ? "run" : "runs"}`) : null,
    );
  }
}

function value(kind, o) {
  if (o.value === null || o.value === undefined) return DASH;
  if (kind === "counter") return fmtCount(o.value);
  return fmtNs(o.value);
}
