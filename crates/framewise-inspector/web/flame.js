// The flame graph (an icicle: callers above callees) of any selection — the selected frame,
// the strip's range, or every frame; threads merged or one — as framewise-analysis folds it
// (/api/flame), with the totals per name beside it. "Set as A" keeps the selection as a base:
// from then on the graph is the differential one (/api/flame-diff), B (the selection) against
// A, each path coloured by the direction of its change only (red slower, green faster, grey
// unchanged), sized by the larger of its two per-frame means. Click a node to zoom into it,
// click the top bar (or double-click) to zoom out.

import { clip, fill, fitCanvas, fmtCount, fmtNs, get, h, nameColour, nsExact, palette, plural, showTooltip } from "./api.js";
import { dataTable, keyOf } from "./tables.js";

const ROW = 17;
const MAX_ROWS = 28;

export class Flame {
  /** `root` is the panel; `selection()` gives `{ row, range, frames }` of the page. */
  constructor(root, tooltip, threads, selection) {
    this.root = root;
    this.tooltip = tooltip;
    this.threads = threads;
    this.selection = selection;
    this.mode = "frame";
    this.thread = "";
    this.base = null;
    this.doc = null;
    this.focus = null;
    this.seq = 0;
    const option = (value, label) => h("option", { value }, label);
    this.modeSelect = h(
      "select",
      { id: "flame-mode", "aria-label": "what the flame graph folds", onchange: (e) => this.setMode(e.target.value) },
      option("frame", "selected frame"),
      option("range", "strip range"),
      option("all", "all frames"),
    );
    this.threadSelect = h(
      "select",
      { id: "flame-thread", "aria-label": "thread", onchange: (e) => ((this.thread = e.target.value), this.load().catch((error) => this.fail(error))) },
      option("", "threads merged"),
      threads.map((t) => option(t, t)),
    );
    this.baseButton = h("button", { id: "flame-base", type: "button", onclick: () => this.setBase() }, "Set as A");
    this.caption = h("span", { class: "muted small", id: "flame-caption" });
    this.canvas = h("canvas", { id: "flame", "aria-label": "flame graph" });
    this.names = h("div", { id: "flame-names" });
    // Said when a scope ran in the selection without its spans recorded (a .litecap's
    // phases): the graph, folded from spans, leaves it out.
    this.unrecorded = h("p", { class: "note small", id: "flame-unrecorded", hidden: true });
    fill(
      root,
      h("h2", {}, "Flame graph ", this.caption),
      h("p", { class: "controls" }, this.modeSelect, this.threadSelect, this.baseButton),
      this.unrecorded,
      this.canvas,
      h("p", { class: "legend small muted", id: "flame-legend" }, "width = inclusive time · click a node to zoom into it, the top bar or a double-click to zoom out"),
      this.names,
    );
    this.canvas.addEventListener("pointermove", (e) => this.hover(e));
    this.canvas.addEventListener("pointerleave", () => (this.tooltip.hidden = true));
    this.canvas.addEventListener("click", (e) => this.click(e));
    this.canvas.addEventListener("dblclick", () => ((this.focus = null), this.draw()));
    new ResizeObserver(() => this.doc && this.draw()).observe(this.canvas);
  }

  /** The page's selection changed (`kind`: "frame" or "range"): refold if it is what is shown. */
  changed(kind) {
    if (this.mode === kind) this.load().catch((error) => this.fail(error));
  }

  fail(error) {
    fill(this.names, h("p", { class: "error" }, `The flame graph could not be loaded: ${error.message}`));
  }

  setMode(mode) {
    this.mode = mode;
    this.modeSelect.value = mode;
    this.load().catch((error) => this.fail(error));
  }

  /** The rows folded now: `{from, to}`. */
  rows() {
    const { row, range, frames } = this.selection();
    if (this.mode === "all") return { from: 0, to: frames };
    if (this.mode === "range" && range) return { from: range.from, to: range.to };
    return { from: row, to: row + 1 };
  }

  setBase() {
    if (this.base) {
      this.base = null;
    } else {
      this.base = this.rows();
    }
    this.load().catch((error) => this.fail(error));
  }

  /** Fetches and draws the fold of the current selection (or its difference from A). */
  async load() {
    const seq = ++this.seq;
    const rows = this.rows();
    const thread = this.thread ? { thread: this.thread } : {};
    const doc = this.base
      ? await get("flame-diff", { a_from: this.base.from, a_to: this.base.to, b_from: rows.from, b_to: rows.to, ...thread })
      : await get("flame", { from: rows.from, to: rows.to, ...thread });
    if (seq !== this.seq) return;
    this.doc = doc;
    this.diff = Boolean(this.base);
    this.focus = null;
    this.baseButton.textContent = this.base ? `Clear A (rows ${this.base.from}–${this.base.to - 1})` : "Set as A";
    const what = (r) => (r.to - r.from === 1 ? `row ${r.from}` : `rows ${r.from}–${r.to - 1} (${fmtCount(r.to - r.from)} frames)`);
    this.caption.textContent = this.diff
      ? `B = ${what(rows)} against A = ${what(this.base)} · per-frame means · red slower in B, green faster`
      : `${what(rows)} · ${this.thread || "threads merged"} · ${fmtNs(doc.total_ns)} in outermost scopes`;
    this.root.dataset.from = String(rows.from);
    this.root.dataset.to = String(rows.to);
    this.root.dataset.thread = this.thread;
    this.root.dataset.kind = this.diff ? "diff" : "flame";
    this.root.dataset.spansRecorded = String(doc.spans_recorded !== false);
    this.unrecorded.hidden = doc.spans_recorded !== false;
    this.unrecorded.textContent = doc.spans_recorded === false ? doc.reason : "";
    this.renderNames();
    this.draw();
    this.root.dataset.ready = String(seq);
  }

  /** The value a node is sized by. */
  size(node) {
    return this.diff ? Math.max(node.a_ns, node.b_ns) : node.total_ns;
  }

  renderNames() {
    if (this.diff) {
      fill(this.names);
      return;
    }
    const ns = (key, label) => ({ label, numeric: true, key: (t) => keyOf(t[key]), cell: (t) => h("td", { class: "num", title: nsExact(t[key]) }, fmtNs(t[key])) });
    fill(
      this.names,
      dataTable({
        id: "flame-table",
        title: "By name over the selection",
        columns: [
          { label: "name", key: (t) => t.name, cell: (t) => h("td", { class: "name" }, t.name) },
          ns("total_ns", "total"),
          ns("self_ns", "self"),
          { label: "calls", numeric: true, key: (t) => t.calls, cell: (t) => h("td", { class: "num" }, fmtCount(t.calls)) },
        ],
        items: this.doc.names,
        name: (t) => t.name,
        initial: { column: 1, descending: true },
        row: (t, cells) => h("tr", { dataset: { name: t.name, totalNs: String(t.total_ns), selfNs: String(t.self_ns), calls: String(t.calls) } }, cells),
      }),
    );
  }

  draw() {
    const roots = this.focus ? [this.focus.node] : this.doc.roots;
    const depth = (nodes) => nodes.reduce((max, n) => Math.max(max, 1 + depth(n.children)), 0);
    const rows = Math.min(MAX_ROWS, Math.max(1, depth(roots)) + (this.focus ? 1 : 0));
    const { context: g, width } = fitCanvas(this.canvas, rows * ROW + 2);
    const colours = palette();
    const total = roots.reduce((sum, n) => sum + this.size(n), 0);
    this.boxes = [];
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "middle";
    let top = 0;
    if (this.focus) {
      // The zoomed node's callers, as one bar: a click on it zooms out.
      g.fillStyle = colours.grid;
      g.fillRect(0, 0, width, ROW - 1);
      g.fillStyle = colours.fg;
      g.fillText(`◀ ${this.focus.path.join(" › ")}`, 4, ROW / 2);
      this.boxes.push({ x: 0, y: 0, w: width, node: null });
      top = ROW;
    }
    const lay = (nodes, x0, y, scale) => {
      let x = x0;
      for (const node of nodes) {
        const w = this.size(node) * scale;
        if (w >= 0.5 && y < rows * ROW) {
          g.fillStyle = this.colour(node, colours);
          g.fillRect(x, y, Math.max(0.5, w - 1), ROW - 1);
          if (w > 30) {
            g.fillStyle = "#111";
            g.fillText(clip(g, node.name, w - 6), x + 3, y + ROW / 2);
          }
          this.boxes.push({ x, y, w, node });
          lay(node.children, x, y + ROW, scale);
        }
        x += w;
      }
    };
    if (total > 0) lay(roots, 0, top, width / total);
    else {
      g.fillStyle = colours.muted;
      g.fillText(this.doc.spans_recorded === false ? "no CPU spans recorded in this selection (see above)" : "no CPU spans in this selection", 6, ROW / 2 + top);
    }
    this.canvas.dataset.nodes = String(this.boxes.filter((b) => b.node).length);
    this.canvas.dataset.roots = JSON.stringify(roots.map((n) => (this.diff ? [n.name, n.a_ns, n.b_ns] : [n.name, n.total_ns, n.self_ns, n.calls])));
  }

  colour(node, colours) {
    if (!this.diff) return nameColour(node.name);
    if (node.delta_ns > 0) return colours.worse;
    if (node.delta_ns < 0) return colours.better;
    return colours.muted;
  }

  boxAt(event) {
    return this.boxes?.find((b) => event.offsetX >= b.x && event.offsetX < b.x + b.w && event.offsetY >= b.y && event.offsetY < b.y + ROW) ?? null;
  }

  /** The path of names from a root to `node` (searched in the unzoomed tree). */
  pathTo(node) {
    const walk = (nodes, path) => {
      for (const n of nodes) {
        if (n === node) return [...path, n.name];
        const found = walk(n.children, [...path, n.name]);
        if (found) return found;
      }
      return null;
    };
    return walk(this.doc.roots, []) ?? [node.name];
  }

  click(event) {
    const box = this.boxAt(event);
    if (!box) return;
    this.focus = box.node ? { node: box.node, path: this.pathTo(box.node) } : null;
    this.draw();
  }

  hover(event) {
    const box = this.boxAt(event);
    if (!box || !box.node) {
      this.tooltip.hidden = true;
      return;
    }
    const n = box.node;
    const whole = this.doc.total_ns ?? this.doc.b?.total_ns;
    showTooltip(
      this.tooltip,
      this.canvas,
      event,
      this.diff
      ? [
          n.name,
          `A ${fmtNs(Math.round(n.a_ns))} per frame (${plural(n.a_calls, "call", "calls")})`,
          `B ${fmtNs(Math.round(n.b_ns))} per frame (${plural(n.b_calls, "call", "calls")})`,
          `B − A ${n.delta_ns > 0 ? "+" : ""}${fmtNs(Math.round(n.delta_ns))} per frame`,
        ].join("\n")
      : [
          n.name,
          `total ${fmtNs(n.total_ns)} (${nsExact(n.total_ns)})${whole ? ` · ${((100 * n.total_ns) / whole).toFixed(1)}% of the selection` : ""}`,
          `self ${fmtNs(n.self_ns)} · ${plural(n.calls, "call", "calls")}`,
        ].join("\n"),
    );
  }
}
