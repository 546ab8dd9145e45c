// Search: a scope, pass, counter or mark by name (any part of it, any case) → the frames it
// occurs in, worst first, as the analysis ranks them (/api/search); a click on a frame (or
// Enter, for the first match's worst frame) selects it. `/` focuses the box, Esc closes the
// results.

import { DASH, fill, fmtCount, fmtNs, get, h } from "./api.js";

const LIMIT = 10;
const DEBOUNCE_MS = 120;

export class Search {
  /** `input` is the search box, `results` the box under it; `onJump(row)` selects a row. */
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
        this.jump(this.first);
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

  jump(row) {
    this.close();
    this.onJump(row);
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
    this.first = found.matches[0]?.occurrences[0]?.row ?? null;
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
    const rank = match.kind === "mark" ? "frames by period" : match.kind === "counter" ? "frames by value" : "frames by time";
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
              o.calls > 1 ? ` · ${fmtCount(o.calls)} ${match.kind === "mark" ? "marks" : "calls"}` : "",
            ),
          ),
        ),
      ),
    );
  }
}

function value(kind, o) {
  if (o.value === null || o.value === undefined) return DASH;
  if (kind === "counter") return fmtCount(o.value);
  return fmtNs(o.value);
}
