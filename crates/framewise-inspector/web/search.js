// Search: a scope, pass, counter or mark by name (any part of it, any case) → its
// occurrences, as the analysis ranks them (/api/search): a scope's or pass's single runs
// (frame, thread, start, duration), longest first, with a count of the rest; a counter's
// frames by value; a mark's frames by period. A click on a run (or Enter, for the first
// match's first occurrence) selects its frame and the run in the timeline; a click on a
// frame selects the frame, and the keys go back to the page. `/` focuses the box, Esc closes
// the results and cancels a search not yet answered (its answer does not reopen them).

import { DASH, fill, fmtCount, fmtNs, get, h, plural } from "./api.js";

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
    input.addEventListener("input", () => this.schedule());
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        this.enter().catch((error) => this.fail(error));
      } else if (event.key === "Escape") {
        this.close();
        input.blur();
      }
    });
    input.addEventListener("focus", () => {
      // A search cancelled by Esc (or a click away) before it answered runs again.
      if (this.stale()) this.schedule();
      else if (this.results.childElementCount > 0) this.results.hidden = false;
    });
    document.addEventListener("pointerdown", (event) => {
      if (!this.results.contains(event.target) && event.target !== input) this.close();
    });
  }

  focus() {
    this.input.focus();
    this.input.select();
  }

  /** Whether the results shown are not those of the text in the box (not searched yet, or cancelled). */
  stale() {
    return this.input.value.trim() !== (this.results.dataset.query ?? "");
  }

  /** Runs the search once the typing pauses. */
  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run().catch((error) => this.fail(error)), DEBOUNCE_MS);
  }

  /** Hides the results; a search typed but not yet answered is cancelled, so that its answer cannot reopen them. */
  close() {
    clearTimeout(this.timer);
    this.seq += 1;
    this.results.hidden = true;
  }

  /** Selects the row (and the run); the keys go back to the page (arrows step frames from there). */
  jump(row, run = null) {
    this.close();
    this.input.blur();
    this.onJump(row, run);
  }

  /** Enter: the first match's first occurrence, of the text in the box (searched now if its answer is not in yet). */
  async enter() {
    if (this.stale()) {
      clearTimeout(this.timer);
      await this.run();
    }
    if (this.first !== null && !this.stale()) this.jump(this.first.row, this.first.run);
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
      this.results.dataset.query = "";
      this.first = null;
      this.close();
      return;
    }
    let found;
    try {
      found = await get("search", { q: text, limit: LIMIT });
    } catch (error) {
      if (seq === this.seq) throw error;
      return;
    }
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
    // Runs when its spans were recorded; else its frames by value, and why there are no
    // runs (a .litecap's phases: per-frame totals only).
    const unrecorded = match.spans?.spans_recorded === false;
    if (match.spans && !unrecorded) return this.runs(match, what);
    const rank = match.kind === "mark" ? "frames by period" : "frames by value";
    return h(
      "section",
      { class: "search-group", dataset: { kind: match.kind, name: match.name, spansRecorded: String(!unrecorded) } },
      h("h3", {}, h("span", { class: "muted" }, `${what} `), match.name, h("span", { class: "muted small" }, ` · in ${plural(match.frames, "frame", "frames")} · worst ${rank}`)),
      unrecorded ? h("p", { class: "muted small unrecorded" }, `No single runs: spans not recorded. ${match.spans.reason ?? ""}`) : null,
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
        h("span", { class: "muted small" }, ` · ${plural(total, "run", "runs")} in ${plural(match.frames, "frame", "frames")} · longest first`),
      ),
      complete ? null : h("p", { class: "muted small" }, `The longest in the ${read === 1 ? "frame" : `${fmtCount(read)} frames`} with the largest totals (the search stopped there).`),
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
