// A span's detail, opened by a click in the timeline: its duration and self time as
// recorded, its call site, where it ran; its scope's (or pass's) distribution over the whole
// capture (framewise summarize's per-frame totals) and the frames where it was worst
// (/api/search), each a click away.

import { DASH, fill, fmtCount, fmtMs, fmtNs, get, h, nsExact, plural } from "./api.js";

const WORST = 8;

export class SpanDetail {
  /** `onJump(row)` selects a frame; `onSeries(kind, name)` opens its value per frame. */
  constructor(root, { onJump, onSeries }) {
    this.root = root;
    this.onJump = onJump;
    this.onSeries = onSeries;
    this.stats = null;
    this.seq = 0;
    root.hidden = true;
  }

  /** `hit` is `{ span, track }` from the timeline; `frameBegin` the ns its frame began at. */
  async show(hit, frame) {
    const seq = ++this.seq;
    const { span, track } = hit;
    const kind = track.gpu ? "pass" : "scope";
    this.stats ??= get("stats");
    const [stats, found] = await Promise.all([this.stats, get("search", { q: span.name, limit: WORST, spans: 0 })]);
    if (seq !== this.seq) return;
    const whole = (kind === "pass" ? stats.passes : stats.scopes)?.[span.name] ?? null;
    const match = found.matches.find((m) => m.kind === kind && m.name === span.name);
    const fact = (term, value, id) => h("div", {}, h("dt", {}, term), h("dd", { id }, value));
    fill(
      this.root,
      h("h2", {}, `${kind === "pass" ? "GPU pass" : "Span"} `, h("b", {}, span.name), h("span", { class: "muted" }, ` · ${track.label} · frame ${frame.index} (row ${span.row})`)),
      h(
        "dl",
        { class: "facts" },
        fact("duration", `${fmtNs(span.dur_ns)} (${nsExact(span.dur_ns)})`, "span-dur"),
        kind === "scope" ? fact("self", `${fmtNs(span.self_ns)} (${nsExact(span.self_ns)})`, "span-self") : null,
        fact("call site", span.site ?? (kind === "pass" ? "a GPU pass (no CPU site)" : "unknown"), "span-site"),
        fact("starts", `+${fmtNs(span.start_ns - frame.begin_ns)} into its frame · depth ${span.depth}`),
      ),
      h("h3", {}, `${kind === "pass" ? "The pass" : "Its scope"} over the whole capture `, h("span", { class: "muted small" }, "per-frame totals, paused frames excluded")),
      whole
        ? h(
            "p",
            { class: "lows", id: "span-distribution" },
            ["p50", "p95", "p99", "max"].map((key) => h("span", {}, `${key} `, h("b", { dataset: { key } }, fmtMs(whole[key])))),
            h("span", {}, `in ${plural(whole.count, "frame", "frames")} · ${plural(whole.calls, "call", "calls")}`),
            h("button", { type: "button", id: "span-series", onclick: () => this.onSeries(kind, span.name) }, "value per frame"),
          )
        : h("p", { class: "muted" }, `${DASH} not in the statistics (it ran only in paused frames)`),
      h("h3", {}, "Worst frames"),
      match
        ? h(
            "ol",
            { id: "span-worst", class: "worst" },
            match.occurrences.map((o) =>
              h(
                "li",
                {},
                h(
                  "button",
                  { type: "button", class: "occurrence", dataset: { row: String(o.row) }, onclick: () => this.onJump(o.row) },
                  h("span", { class: "num" }, fmtNs(o.value)),
                  ` frame ${o.index} (row ${o.row})${o.calls > 1 ? ` · ${fmtCount(o.calls)} calls` : ""}`,
                ),
              ),
            ),
          )
        : h("p", { class: "muted" }, DASH),
    );
    Object.assign(this.root.dataset, { name: span.name, kind, row: String(span.row), durNs: String(span.dur_ns), selfNs: String(span.self_ns ?? "") });
    this.root.hidden = false;
  }

  /** A followed capture grew: the capture's statistics are read again on the next click. */
  refresh() {
    this.stats = null;
  }
}
